# End-to-end tests of the real `tessera` binary: exit codes (0 ok, 1 check
# failed, 2 user error, 3 internal error) and outputs. Included from
# tests/CMakeLists.txt.
set(TESSERA_NODE_DATA /usr/share/libonnx-testdata/data/node)
set(CLI_EXPECT ${CMAKE_CURRENT_SOURCE_DIR}/cli_expect_exit.cmake)
set(CLI_SCRATCH ${CMAKE_CURRENT_BINARY_DIR}/cli_data)
file(MAKE_DIRECTORY ${CLI_SCRATCH})
file(WRITE ${CLI_SCRATCH}/x.onnx "this is a text file, not an ONNX model\n")

# tessera_cli_exit(NAME EXPECT <code> [STDOUT <regex>] [STDERR <regex>] [ENV <VAR=value>...]
#                  ARGS <args...>)
function(tessera_cli_exit name)
  cmake_parse_arguments(T "" "EXPECT;STDOUT;STDERR" "ARGS;ENV" ${ARGN})
  set(defs -DEXPECT=${T_EXPECT})
  if(DEFINED T_STDOUT)
    list(APPEND defs "-DSTDOUT_REGEX=${T_STDOUT}")
  endif()
  if(DEFINED T_STDERR)
    list(APPEND defs "-DSTDERR_REGEX=${T_STDERR}")
  endif()
  if(T_EXPECT EQUAL 2)
    list(APPEND defs -DONE_LINE_STDERR=1)
  endif()
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} ${defs} -P ${CLI_EXPECT} -- $<TARGET_FILE:tessera> ${T_ARGS})
  if(T_ENV)
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "${T_ENV}")
  endif()
endfunction()

# ---- conformance of the skeleton ops on ONNX's node tests.
# Cases of these ops that need features outside the skeleton are excluded by
# name (negative lookahead), never counted as passes:
#   test_maxpool_1d_default, test_maxpool_3d_default   1-D / 3-D pooling (only nn.max_pool2d)
#   test_maxpool_2d_uint8                              uint8 pooling (pooling is float32 only)
#   test_maxpool_with_argmax_*                         second output (Indices, int64)
#   test_softmax_*_expanded                            test ReduceMax/Exp/ReduceSum/Div, not Softmax
# Reshape cases feed `shape` through a graph input; conformance freezes it from
# the test data (driver::run_conformance_case), so they are included.
set(SKELETON_FILTER
    "^test_(?!maxpool_(1d|3d|2d_uint8|with_argmax)|softmax_.*_expanded$)(conv_|matmul_|gemm_|add|mul|relu$|maxpool_|globalaveragepool|flatten_|reshape_|softmax_)")
add_test(NAME cli_conformance_skeleton_ops
         COMMAND $<TARGET_FILE:tessera> conformance ${TESSERA_NODE_DATA} --filter ${SKELETON_FILTER})
set_tests_properties(cli_conformance_skeleton_ops PROPERTIES
  PASS_REGULAR_EXPRESSION "\n[1-9][0-9]* passed, 0 failed, 0 skipped"
  FAIL_REGULAR_EXPRESSION "FAIL test_")

# ---- the four ONNX conformance suites: fail when the pass count drops below the
# committed floor (tests/conformance_floor.cmake). Unsupported ops and dtypes
# are skipped with a reason and never count as passes.
set(TESSERA_ONNX_SUITES /usr/share/libonnx-testdata/data)
foreach(suite_floor "node=915" "pytorch-converted=82" "pytorch-operator=35" "simple=23")
  string(REPLACE "=" ";" sf ${suite_floor})
  list(GET sf 0 suite)
  list(GET sf 1 floor)
  add_test(NAME conformance_${suite}
           COMMAND ${CMAKE_COMMAND} -DTESSERA=$<TARGET_FILE:tessera>
                   -DSUITE=${TESSERA_ONNX_SUITES}/${suite} -DFLOOR=${floor}
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/conformance_floor.cmake)
  set_tests_properties(conformance_${suite} PROPERTIES LABELS conformance TIMEOUT 300)
endforeach()

# ---- saving as ONNX (the studio's File > Save model as ONNX): every node case
# that imports is saved (ops without a standard ONNX form in the ai.tessera
# domain), read back, and must still match ONNX's expected outputs. 873 = the
# 909 passing cases less the 36 whose values are sequences or optionals (not
# graph tensors, so not saved); the 8 that fail without saving fail alike.
add_test(NAME conformance_node_round_trip
         COMMAND ${CMAKE_COMMAND} -DTESSERA=$<TARGET_FILE:tessera>
                 -DSUITE=${TESSERA_ONNX_SUITES}/node -DFLOOR=873 -DEXTRA=--round-trip
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/conformance_floor.cmake)
set_tests_properties(conformance_node_round_trip PROPERTIES LABELS conformance TIMEOUT 300)

# ---- node cases of opsets 18..28, written by the newest onnx release's own
# generators (bench/onnx_suite/generate_node_cases.py, onnx 1.23.2) with ONNX's
# expected outputs: read through their opset-17 forms (onnx_opset_adapter.h):
# Reduce* with axes as an input, Split-18, Resize-19, Gelu-20 (erf and tanh),
# Mish, Swish-24, and ops whose newer versions only add dtypes; Mod with
# fmod=0 on floats (numpy's mod, edge cases with infinities) and signed
# BitShift past the width or by a negative amount (onnx 1.23's cases); the
# ops the importer composes (Attention-23/24 with masks, GQA, caches, softcap,
# windows and a fully masked row; RMSNormalization, RotaryEmbedding,
# GroupNormalization, CenterCropPad, AffineGrid, SwiGLU, LpNormalization,
# LpPool), CumProd, SpaceToDepth-28 CRD, Range-27, Pad-18 axes, bfloat16
# Cast-19 rounding, and function-expanded models whose Reduce axes come from
# a Constant node or are computed from shapes; the 8-, 4- and 2-bit types
# (float8 with and without saturation, float4, E8M0, int4/uint4/int2/uint2)
# through Cast, QuantizeLinear and DequantizeLinear; Resize-18/19 axes,
# keep_aspect_ratio_policy and half_pixel_symmetric; a 1-D grouped Conv
# without strides/dilations attributes (CausalConvWithState's expansion);
# CausalConvWithState, TensorScatter, Col2Im and DFT-20 themselves;
# reductions over an empty axis (their identities), AveragePool-19 and
# LpPool-18 with dilations, ceil_mode's dropped last window, the preview
# training optimizers (Adagrad, Adam, Momentum, Nesterov); BitwiseAnd/Or/Xor/
# Not (bitwise intrinsics of the loop IR); LinearAttention-27; GridSample-20
# (3-D too); OptionalHasElement-18 on a tensor; BitCast-26 (a reinterpret
# intrinsic of the loop IR); blocked Quantize/DequantizeLinear-21, an
# explicit output_dtype, a float16 scale; Pad-19 wrap; DFT-19/20 inverse one-sided
# (irfft); Col2Im-18 of a 3-D image; Resize-19 antialias (linear, cubic);
# float64 MatMul and Softmax in two expanded attention cases.
add_test(NAME conformance_opset18plus_cases
         COMMAND $<TARGET_FILE:tessera> conformance ${PROJECT_SOURCE_DIR}/tests/data/onnx_node_opset18plus)
set_tests_properties(conformance_opset18plus_cases PROPERTIES
  PASS_REGULAR_EXPRESSION "\n100 passed, 0 failed, 0 skipped"
  FAIL_REGULAR_EXPRESSION "FAIL test_")
# ... and each saved as ONNX by Tessera, reloaded and run again.
add_test(NAME conformance_opset18plus_cases_round_trip
         COMMAND $<TARGET_FILE:tessera> conformance ${PROJECT_SOURCE_DIR}/tests/data/onnx_node_opset18plus --round-trip)
set_tests_properties(conformance_opset18plus_cases_round_trip PROPERTIES
  PASS_REGULAR_EXPRESSION "\n100 passed, 0 failed, 0 skipped"
  FAIL_REGULAR_EXPRESSION "FAIL test_")

# ---- Resize antialias beyond ONNX's four cases: other coordinate
# transformations, exclude_outside, a cubic coefficient, sizes on a subset of
# axes with keep_aspect_ratio_policy, an axis upsampled beside one downsampled
# (expected outputs from ONNX's reference,
# tests/data/onnx_models/make_resize_antialias_models.py).
add_test(NAME conformance_resize_antialias
         COMMAND $<TARGET_FILE:tessera> conformance
                 ${PROJECT_SOURCE_DIR}/tests/data/onnx_models/resize_antialias_linear_align_corners
                 ${PROJECT_SOURCE_DIR}/tests/data/onnx_models/resize_antialias_cubic_sizes_axes)
set_tests_properties(conformance_resize_antialias PROPERTIES
  PASS_REGULAR_EXPRESSION "\n2 passed, 0 failed, 0 skipped"
  FAIL_REGULAR_EXPRESSION "FAIL resize_")

# ---- ONNX Runtime's com.microsoft fused ops (FusedConv, FusedGemm, the GELUs,
# QuickGelu, SkipLayerNormalization, the QLinear elementwise ops with uint8 and
# int8, DynamicQuantizeLSTM against ORT's float LSTM over its dequantized
# weights; the transformers optimizer's EmbedLayerNormalization, Attention and
# MultiHeadAttention with each mask form, the RMS norms, LayerNormalization
# before opset 17; what ORT's offline optimizer writes for quantized and
# attention products: DynamicQuantizeMatMul, MatMulIntegerToFloat,
# FusedMatMul) against ONNX
# Runtime's own outputs
# (tests/data/onnx_models/make_contrib_models.py).
set(CONTRIB_MODELS ${PROJECT_SOURCE_DIR}/tests/data/onnx_models)
add_test(NAME conformance_contrib_ops
         COMMAND $<TARGET_FILE:tessera> conformance ${CONTRIB_MODELS}/contrib_fused_conv
                 ${CONTRIB_MODELS}/contrib_fused_gemm ${CONTRIB_MODELS}/contrib_gelus
                 ${CONTRIB_MODELS}/contrib_skip_layer_norm ${CONTRIB_MODELS}/contrib_qlinear_uint8
                 ${CONTRIB_MODELS}/contrib_qlinear_int8 ${CONTRIB_MODELS}/contrib_dynamic_quantize_lstm
                 ${CONTRIB_MODELS}/contrib_dynamic_quantize_lstm_per_channel
                 ${CONTRIB_MODELS}/contrib_bert_embed_attention ${CONTRIB_MODELS}/contrib_attention_masks
                 ${CONTRIB_MODELS}/contrib_multi_head_attention
                 ${CONTRIB_MODELS}/contrib_simplified_layer_norm
                 ${CONTRIB_MODELS}/contrib_integer_matmuls
                 ${CONTRIB_MODELS}/contrib_layer_norm_opset13
                 ${CONTRIB_MODELS}/contrib_attention_ends_starts)
set_tests_properties(conformance_contrib_ops PROPERTIES
  PASS_REGULAR_EXPRESSION "\n15 passed, 0 failed, 0 skipped"
  FAIL_REGULAR_EXPRESSION "FAIL contrib_")

# QDQ models folded into integer ops (onnx_qdq_fold.h) against ONNX Runtime's
# float reading of the pairs (tests/data/onnx_models/make_qdq_models.py): the
# MatMuls become integer GEMMs (nn.matmul_u8i8), the 8-channel Conv an integer
# GEMM on its windows (nn.im2col_int8x4 + nn.matmul_i8u8), and so does the
# 3-channel stem (no float conv). And convs quantize_dynamic wrote
# (DynamicQuantizeLinear + ConvInteger): the activations' zero point computed
# at run time pads the windows, the weights' (per tensor, per channel) comes
# out through the windows' sums; against ORT (per-channel zero points, which
# ORT refuses: ONNX's reference evaluator). Depthwise and grouped QDQ convs
# (uint8 and int8 activations with zero points the padding holds, per-channel
# and uint8 weights) run on the 8-bit data; classifier Gemms (transB, per-row
# weights, a bias) as integer GEMMs, one with alpha 0.5 stays float. MaxPools
# between a DequantizeLinear and a QuantizeLinear of one scale and zero point
# pool the 8-bit data (uint8 and int8; one quantized otherwise, or without
# zero points, stays float).
set(QDQ_MODELS ${PROJECT_SOURCE_DIR}/tests/data/onnx_models)
add_test(NAME conformance_qdq_models
         COMMAND $<TARGET_FILE:tessera> conformance ${QDQ_MODELS}/qdq_matmul ${QDQ_MODELS}/qdq_conv
                 ${QDQ_MODELS}/dynamic_conv_uint8_weights ${QDQ_MODELS}/dynamic_conv_int8_per_channel
                 ${QDQ_MODELS}/dynamic_conv_uint8_channel_zero_points
                 ${QDQ_MODELS}/qdq_depthwise ${QDQ_MODELS}/qdq_depthwise_int8 ${QDQ_MODELS}/qdq_gemm
                 ${QDQ_MODELS}/qdq_max_pool)
set_tests_properties(conformance_qdq_models PROPERTIES
  PASS_REGULAR_EXPRESSION "\n9 passed, 0 failed, 0 skipped"
  FAIL_REGULAR_EXPRESSION "FAIL (qdq|dynamic)_")
add_test(NAME cli_qdq_matmul_runs_as_integer_gemm
         COMMAND $<TARGET_FILE:tessera> inspect ${QDQ_MODELS}/qdq_matmul/model.onnx --print graph)
set_tests_properties(cli_qdq_matmul_runs_as_integer_gemm PROPERTIES
  PASS_REGULAR_EXPRESSION "nn.matmul_u8i8\\(.*\n(.*\n)*.*nn.matmul_u8i8\\(")
add_test(NAME cli_qdq_conv_runs_as_integer_gemm
         COMMAND $<TARGET_FILE:tessera> inspect ${QDQ_MODELS}/qdq_conv/model.onnx --print graph)
set_tests_properties(cli_qdq_conv_runs_as_integer_gemm PROPERTIES
  PASS_REGULAR_EXPRESSION "nn.im2col_int8x4\\(.*\n(.*\n)*.*nn.matmul_i8u8\\(.*\n(.*\n)*.*nn.im2col_int8x4\\(.*\n(.*\n)*.*nn.matmul_i8u8\\("
  FAIL_REGULAR_EXPRESSION "nn.conv2d\\(")
add_test(NAME cli_qdq_gemm_runs_as_integer_gemm
         COMMAND $<TARGET_FILE:tessera> inspect ${QDQ_MODELS}/qdq_gemm/model.onnx --print graph)
set_tests_properties(cli_qdq_gemm_runs_as_integer_gemm PROPERTIES
  PASS_REGULAR_EXPRESSION "nn.matmul_u8i8\\(.*\n(.*\n)*.*nn.matmul_u8i8\\(.*\n(.*\n)*.*nn.gemm\\([^\n]*alpha=0.5"
  FAIL_REGULAR_EXPRESSION "nn.gemm\\(%h_dq|nn.gemm\\(%xa_dq")
add_test(NAME cli_qdq_depthwise_conv_reads_bytes
         COMMAND $<TARGET_FILE:tessera> inspect ${QDQ_MODELS}/qdq_depthwise/model.onnx --print graph)
set_tests_properties(cli_qdq_depthwise_conv_reads_bytes PROPERTIES
  PASS_REGULAR_EXPRESSION "nn.conv2d\\(%xa_q, [^\n]*groups=16, pad_value=64"
  FAIL_REGULAR_EXPRESSION "nn.conv2d\\(%(xa|r1|c2)_dq")
add_test(NAME cli_qdq_max_pool_reads_bytes
         COMMAND $<TARGET_FILE:tessera> inspect ${QDQ_MODELS}/qdq_max_pool/model.onnx --print graph)
set_tests_properties(cli_qdq_max_pool_reads_bytes PROPERTIES
  PASS_REGULAR_EXPRESSION "%pb_q = nn.max_pool2d\\(%c0_q, [^\n]*int8"
  FAIL_REGULAR_EXPRESSION "%pa = |%pb = |%pa_q = nn.max_pool2d\\(%r0_dq")
add_test(NAME cli_dynamic_conv_runs_as_integer_gemm
         COMMAND $<TARGET_FILE:tessera> inspect
                 ${QDQ_MODELS}/dynamic_conv_uint8_channel_zero_points/model.onnx --print graph)
set_tests_properties(cli_dynamic_conv_runs_as_integer_gemm PROPERTIES
  PASS_REGULAR_EXPRESSION "nn.im2col_int8x4\\(.*\n(.*\n)*.*nn.im2col_int8x4\\("
  FAIL_REGULAR_EXPRESSION "nn.conv2d\\(")

# A -1 input dim (Paddle2ONNX's dynamic dim) reads as unknown, fixed by the
# input files; GlobalMaxPool over (N, C, L). Expected outputs by ONNX Runtime.
add_test(NAME conformance_minus_one_dim_global_pool_1d
         COMMAND $<TARGET_FILE:tessera> conformance
                 ${PROJECT_SOURCE_DIR}/tests/data/onnx_models/minus_one_batch_global_max_pool_1d)
set_tests_properties(conformance_minus_one_dim_global_pool_1d PROPERTIES
  PASS_REGULAR_EXPRESSION "\n1 passed, 0 failed, 0 skipped")
tessera_cli_exit(cli_minus_one_dim_needs_a_shape EXPECT 2
                 STDERR "input 'x' dimension 0 is unknown; Tessera needs static input shapes"
                 ARGS run ${PROJECT_SOURCE_DIR}/tests/data/onnx_models/minus_one_batch_global_max_pool_1d/model.onnx)

# A filter matching nothing runs nothing; an unsupported op is a skip, not a failure.
tessera_cli_exit(cli_conformance_empty_filter EXPECT 0 STDOUT "0 passed, 0 failed, 0 skipped"
                 ARGS conformance ${TESSERA_NODE_DATA} --filter "^no_such_case$")
tessera_cli_exit(cli_conformance_unsupported_is_skip EXPECT 0 STDOUT "SKIP test_bernoulli: unsupported op Bernoulli"
                 ARGS conformance ${TESSERA_NODE_DATA}/test_bernoulli)

# ---- user errors: exit 2 with one "error: ..." line on stderr.
tessera_cli_exit(cli_missing_file_exit2 EXPECT 2 STDERR "^error: .*no_such_model.onnx"
                 ARGS run ${CLI_SCRATCH}/no_such_model.onnx)
tessera_cli_exit(cli_text_file_exit2 EXPECT 2 STDERR "^error: .*x.onnx"
                 ARGS run ${CLI_SCRATCH}/x.onnx)
tessera_cli_exit(cli_unsupported_op_exit2 EXPECT 2 STDERR "^error: .*unsupported op Bernoulli"
                 ARGS run ${TESSERA_NODE_DATA}/test_bernoulli/model.onnx)
if(EXISTS ${PROJECT_SOURCE_DIR}/tests/data/bad_inputs/unsupported_op.onnx)
  tessera_cli_exit(cli_bad_input_unsupported_op_exit2 EXPECT 2 STDERR "^error: .*unsupported op"
                   ARGS run ${PROJECT_SOURCE_DIR}/tests/data/bad_inputs/unsupported_op.onnx)
endif()
# Every broken or hostile model exits 2 with one "error: ..." line naming the
# file (the exact diagnostics: tests/data/bad_inputs/README.md, checked by
# tessera_frontend_tests).
file(GLOB TESSERA_BAD_INPUTS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/data/bad_inputs/*.onnx)
foreach(path ${TESSERA_BAD_INPUTS})
  get_filename_component(bad ${path} NAME_WE)
  tessera_cli_exit(cli_bad_model_${bad}_exit2 EXPECT 2 STDERR "^error: .*${bad}.onnx"
                   ARGS inspect ${path})
endforeach()
# --input-shape fixes a symbolic dim; a bad spec or an unknown input is a user error.
tessera_cli_exit(cli_input_shape_run EXPECT 0 STDOUT "latency"
                 ARGS run ${PROJECT_SOURCE_DIR}/tests/data/onnx_models/shape_subgraph.onnx --input-shape x:2x3x4 --repeat 1)
tessera_cli_exit(cli_input_shape_inspect EXPECT 0 STDOUT "reshape\\(%x, newshape=\\[4, 12\\]\\)"
                 ARGS inspect ${PROJECT_SOURCE_DIR}/tests/data/onnx_models/shape_subgraph.onnx --input-shape x:4x3x4)
tessera_cli_exit(cli_input_shape_missing_exit2 EXPECT 2 STDERR "^error: .*input 'x' dimension 0 is symbolic .*--input-shape x:"
                 ARGS inspect ${PROJECT_SOURCE_DIR}/tests/data/onnx_models/shape_subgraph.onnx)
tessera_cli_exit(cli_input_shape_bad_spec_exit2 EXPECT 2 STDERR "^error: --input-shape 'x:2xq'"
                 ARGS inspect ${PROJECT_SOURCE_DIR}/tests/data/onnx_models/shape_subgraph.onnx --input-shape x:2xq)
tessera_cli_exit(cli_unknown_node_exit2 EXPECT 2 STDERR "^error: no node named 'nope' in .*; nodes are: Conv_0"
                 ARGS inspect ${TESSERA_NODE_DATA}/test_conv_with_strides_padding --print loop --op nope)
tessera_cli_exit(cli_bad_flag_exit2 EXPECT 2 STDERR "^error: "
                 ARGS run ${TESSERA_NODE_DATA}/test_relu --repeat 0)
tessera_cli_exit(cli_no_subcommand_exit2 EXPECT 2 STDERR "^error: " ARGS)
tessera_cli_exit(cli_bad_filter_exit2 EXPECT 2 STDERR "^error: --filter"
                 ARGS conformance ${TESSERA_NODE_DATA} --filter "(")
tessera_cli_exit(cli_compare_dir_missing_exit2 EXPECT 2 STDERR "^error: "
                 ARGS run ${TESSERA_NODE_DATA}/test_relu --compare-dir ${CLI_SCRATCH}/nothing_here)

# ---- a numeric check that fails exits 1: compare relu's outputs with add's.
tessera_cli_exit(cli_compare_mismatch_exit1 EXPECT 1 STDERR "check failed: output 0"
                 ARGS run ${TESSERA_NODE_DATA}/test_relu --compare-dir ${TESSERA_NODE_DATA}/test_add/test_data_set_0)

# ---- successful runs.
tessera_cli_exit(cli_inspect_loop EXPECT 0 STDOUT "def Conv_0"
                 ARGS inspect ${TESSERA_NODE_DATA}/test_conv_with_strides_padding/model.onnx --print loop)
tessera_cli_exit(cli_inspect_graph_json EXPECT 0 STDOUT "nn.conv2d.*\n\\{\"graph\":"
                 ARGS inspect ${TESSERA_NODE_DATA}/test_conv_with_strides_padding/model.onnx --json)
tessera_cli_exit(cli_inspect_llvm EXPECT 0 STDOUT "define"
                 ARGS inspect ${TESSERA_NODE_DATA}/test_gemm_all_attributes --print llvm --op Gemm_0)
# A model with integer GEMMs reports G operations/s, not GFLOP/s (its int8 dot
# products are no float work; the float peak would read as exceeded).
tessera_cli_exit(cli_run_int8_model_reports_gops EXPECT 0
                 STDOUT "throughput: [0-9.]+ GOP/s \\(int8 and float operations\\) \\([0-9.]+ MOP per run\\)"
                 ARGS run ${PROJECT_SOURCE_DIR}/tests/data/onnx_models/int8_dense.onnx --repeat 2)
tessera_cli_exit(cli_run_compare_dir EXPECT 0 STDOUT "\"max_abs_err\""
                 ARGS run ${TESSERA_NODE_DATA}/test_conv_with_strides_padding
                      --compare-dir ${TESSERA_NODE_DATA}/test_conv_with_strides_padding/test_data_set_0 --json)
tessera_cli_exit(cli_run_reshape_shape_input EXPECT 0 STDOUT "check: +ok"
                 ARGS run ${TESSERA_NODE_DATA}/test_reshape_negative_dim
                      --compare-dir ${TESSERA_NODE_DATA}/test_reshape_negative_dim/test_data_set_0)
tessera_cli_exit(cli_run_check_random EXPECT 0 STDOUT "\"profile\":.*\"kernel\":\"Gemm_0\""
                 ARGS run ${TESSERA_NODE_DATA}/test_gemm_all_attributes/model.onnx --check --profile
                      --repeat 3 --threads 2 --seed 7 --json)

# ---- the end-to-end example model (made by resources/models/make_small_cnn.py).
set(SMALL_CNN ${PROJECT_SOURCE_DIR}/resources/models/small_cnn)
if(EXISTS ${SMALL_CNN}/model.onnx)
  tessera_cli_exit(cli_small_cnn_compare_dir EXPECT 0 STDOUT "\"max_abs_err\""
                   ARGS run ${SMALL_CNN}/model.onnx --input-dir ${SMALL_CNN}/test_data_set_0
                        --compare-dir ${SMALL_CNN}/test_data_set_0 --json)
  tessera_cli_exit(cli_small_cnn_check EXPECT 0 STDOUT "check: +ok"
                   ARGS run ${SMALL_CNN}/model.onnx --input-dir ${SMALL_CNN}/test_data_set_0 --check)
  # With --opt-level, inspect prints the kernels that run: fused and scheduled.
  tessera_cli_exit(cli_inspect_scheduled_kernels EXPECT 0
                   STDOUT "def fused_conv1_relu1.*T\\.vectorized"
                   ARGS inspect ${SMALL_CNN}/model.onnx --opt-level 2 --print loop)
endif()

# ---- CUDA target (helper "cuda"): the source prints without a GPU; running
# needs a driver, so the expected outcome depends on this machine.
if(TARGET tessera_cuda)
  tessera_cli_exit(cli_inspect_cuda EXPECT 0 STDOUT "extern \"C\" __global__ void __launch_bounds__"
                   ARGS inspect ${TESSERA_NODE_DATA}/test_softmax_axis_1 --print cuda)
  # Without NVRTC (no CUDA toolkit) the CUDA C still prints, and compiling
  # it says what to install (forced here with TESSERA_NVRTC_LIBRARY=none).
  if(EXISTS ${SMALL_CNN}/model.onnx)
    tessera_cli_exit(cli_compile_cuda_without_nvrtc_exit2 EXPECT 2
                     STDERR "^error: NVRTC \\(libnvrtc.so.\\*\\) not found: install the CUDA toolkit"
                     ENV TESSERA_NVRTC_LIBRARY=none
                     ARGS compile ${SMALL_CNN}/model.onnx --target cuda -o ${CLI_SCRATCH}/no_nvrtc.tar)
    tessera_cli_exit(cli_run_cpu_without_nvrtc EXPECT 0 STDOUT "check: +ok"
                     ENV TESSERA_NVRTC_LIBRARY=none
                     ARGS run ${SMALL_CNN}/model.onnx --input-dir ${SMALL_CNN}/test_data_set_0 --check)
  endif()
endif()
# Compiling CUDA C to PTX needs NVRTC: these run where the build found it.
if(TARGET tessera_cuda AND TESSERA_NVRTC_LIBRARY)
  find_library(TESSERA_LIBCUDA NAMES libcuda.so.1 cuda PATHS /usr/lib/x86_64-linux-gnu /usr/lib64)
  if(NOT TESSERA_LIBCUDA)
    tessera_cli_exit(cli_run_cuda_without_driver_exit2 EXPECT 2
                     STDOUT "target: +cuda \\(compute_90"
                     STDERR "^error: .*no CUDA device is available \\(libcuda.so.1 not found\\)"
                     ARGS run ${TESSERA_NODE_DATA}/test_relu --target cuda)
  else()
    tessera_cli_exit(cli_run_cuda_check EXPECT 0 STDOUT "check: +ok"
                     ARGS run ${TESSERA_NODE_DATA}/test_conv_with_strides_padding --target cuda --check)
    set_tests_properties(cli_run_cuda_check PROPERTIES LABELS gpu)
  endif()
  # CUDA packages: PTX + launch graph; running one needs a driver.
  if(EXISTS ${SMALL_CNN}/model.onnx)
    tessera_cli_exit(cli_inspect_cuda_fused EXPECT 0
                     STDOUT "__global__ void __launch_bounds__\\([0-9]+\\) fused_conv1_relu1_kernel"
                     ARGS inspect ${SMALL_CNN}/model.onnx --target cuda --print cuda)
    tessera_cli_exit(cli_compile_cuda_package EXPECT 0
                     STDOUT "target: +cuda \\(compute_90.*kernels: +7 \\(from 9 nodes\\)"
                     ARGS compile ${SMALL_CNN}/model.onnx --target cuda -o ${CLI_SCRATCH}/small_cnn_cuda.tar)
    set_tests_properties(cli_compile_cuda_package PROPERTIES FIXTURES_SETUP cuda_package)
    # --records applies "cuda" records (helper "gpu_tune"); with none that
    # applies, every kernel keeps its default GPU schedule and the note says so.
    file(WRITE ${CLI_SCRATCH}/empty_records.jsonl "")
    tessera_cli_exit(cli_compile_cuda_records_fallback EXPECT 0
                     STDOUT "kernels: +7 \\(from 9 nodes\\)"
                     STDERR "tuning records '[^']*empty_records.jsonl': 0 of 7 kernels tuned, 7 use the default GPU schedule"
                     ARGS compile ${SMALL_CNN}/model.onnx --target cuda
                          --records ${CLI_SCRATCH}/empty_records.jsonl
                          -o ${CLI_SCRATCH}/small_cnn_cuda_records.tar)
    if(NOT TESSERA_LIBCUDA)
      tessera_cli_exit(cli_run_cuda_package_without_driver_exit2 EXPECT 2
                       STDERR "^error: cannot run CUDA package .*no CUDA device is available"
                       ARGS run ${CLI_SCRATCH}/small_cnn_cuda.tar)
      set_tests_properties(cli_run_cuda_package_without_driver_exit2 PROPERTIES FIXTURES_REQUIRED cuda_package)
    else()
      tessera_cli_exit(cli_run_cuda_package_compare EXPECT 0 STDOUT "check: +ok"
                       ARGS run ${CLI_SCRATCH}/small_cnn_cuda.tar --compare-dir ${SMALL_CNN}/test_data_set_0
                            --input-dir ${SMALL_CNN}/test_data_set_0)
      set_tests_properties(cli_run_cuda_package_compare PROPERTIES LABELS gpu FIXTURES_REQUIRED cuda_package)
    endif()
  endif()
  # bench model --target cuda (helper "gpu_bench"): built as run --target cuda
  # (NVRTC needs no device), then timed with CUDA events; exit 2 without a device.
  if(EXISTS ${SMALL_CNN}/model.onnx AND TESSERA_BUILD_BENCH)
    if(NOT TESSERA_LIBCUDA)
      tessera_cli_exit(cli_bench_model_cuda_without_driver_exit2 EXPECT 2
                       STDOUT "model compiled for cuda \\(compute_90\\), 7 kernels"
                       STDERR "^error: .*no CUDA device is available \\(libcuda.so.1 not found\\)"
                       ARGS bench model ${SMALL_CNN} --target cuda --repeat 3)
    else()
      tessera_cli_exit(cli_bench_model_cuda EXPECT 0
                       STDOUT "on .*CUDA events.*tessera +: +[0-9.]+ ms median.*\"target\":\"cuda\""
                       ARGS bench model ${SMALL_CNN} --target cuda --repeat 5 --json)
      set_tests_properties(cli_bench_model_cuda PROPERTIES LABELS gpu)
    endif()
  endif()
  # GPU tuning (helper "cuda2"): measures on the device, so exit 2 without one.
  if(NOT TESSERA_LIBCUDA)
    tessera_cli_exit(cli_tune_cuda_without_driver_exit2 EXPECT 2
                     STDERR "^error: no CUDA device is available: GPU tuning measures on the device"
                     ARGS tune --gemm 64x64x64 --target cuda --trials 2
                          --records ${CLI_SCRATCH}/tune_cuda_nodevice.jsonl)
  else()
    # A fresh database, 4 trials; then resumed to 6 (2 measured); then applied.
    add_test(NAME cli_tune_cuda_gemm_clean
             COMMAND ${CMAKE_COMMAND} -E rm -f ${CLI_SCRATCH}/tune_cuda_gemm.jsonl)
    set_tests_properties(cli_tune_cuda_gemm_clean PROPERTIES LABELS gpu FIXTURES_SETUP tune_cuda_clean)
    tessera_cli_exit(cli_tune_cuda_gemm EXPECT 0 STDOUT "\"measured\":4"
                     ARGS tune --gemm 128x128x64 --target cuda --trials 4 --json
                          --records ${CLI_SCRATCH}/tune_cuda_gemm.jsonl)
    set_tests_properties(cli_tune_cuda_gemm PROPERTIES LABELS gpu
                         FIXTURES_REQUIRED tune_cuda_clean FIXTURES_SETUP tune_cuda_db)
    tessera_cli_exit(cli_tune_cuda_gemm_resume EXPECT 0 STDOUT "\"measured\":2.*\"resumed\":4"
                     ARGS tune --gemm 128x128x64 --target cuda --trials 6 --json
                          --records ${CLI_SCRATCH}/tune_cuda_gemm.jsonl)
    set_tests_properties(cli_tune_cuda_gemm_resume PROPERTIES LABELS gpu
                         FIXTURES_REQUIRED "tune_cuda_clean;tune_cuda_db" FIXTURES_SETUP tune_cuda_resumed)
    if(TESSERA_BUILD_BENCH)
    tessera_cli_exit(cli_bench_gemm_cuda_records EXPECT 0 STDOUT "tessera :"
                     STDERR "1 of 1 kernels tuned"
                     ARGS bench gemm --m 128 --n 128 --k 64 --target cuda
                          --records ${CLI_SCRATCH}/tune_cuda_gemm.jsonl)
    set_tests_properties(cli_bench_gemm_cuda_records PROPERTIES LABELS gpu
                         FIXTURES_REQUIRED "tune_cuda_db;tune_cuda_resumed")
    endif()
  endif()
  include(${CMAKE_CURRENT_LIST_DIR}/gpu_tests.cmake)
endif()

# ---- graph passes: the pass list, the graph after passes, unknown pass names.
tessera_cli_exit(cli_inspect_print_passes EXPECT 0 STDOUT "\\[x\\] fuse_ops +-O1  Group nodes"
                 ARGS inspect ${TESSERA_NODE_DATA}/test_relu --print passes)
tessera_cli_exit(cli_unknown_pass_exit2 EXPECT 2 STDERR "^error: unknown pass 'fuse'; passes are: "
                 ARGS inspect ${TESSERA_NODE_DATA}/test_relu --passes fuse)
if(EXISTS ${SMALL_CNN}/model.onnx)
  tessera_cli_exit(cli_inspect_graph_after_passes EXPECT 0
                   STDOUT "nn.relu\\(%c1, fuse_group=0\\)"
                   ARGS inspect ${SMALL_CNN}/model.onnx --print graph --passes fold_constants,fuse_ops)
  # opt 3: convert_layout keeps the pools blocked: one pack of the input, one
  # unpack (fused with flatten) after the global average pool.
  tessera_cli_exit(cli_small_cnn_opt3_check EXPECT 0 STDOUT "kernels: +8 [^\n]*\n.*check: +ok"
                   ARGS run ${SMALL_CNN}/model.onnx --input-dir ${SMALL_CNN}/test_data_set_0
                        --check --opt-level 3 --repeat 1)
endif()

# ---- schedule traces applied by `inspect --trace` (helper "schedule").
file(WRITE ${CLI_SCRATCH}/trace_ok.json [=[{"workload": "", "target": "llvm", "steps": [
  {"op": "split", "loop": "k", "factors": [2, 2], "out": ["k_0", "k_1"]},
  {"op": "reorder", "loops": ["k_0", "i0"]}]}
]=])
file(WRITE ${CLI_SCRATCH}/trace_bad_step.json [=[{"steps": [
  {"op": "split", "loop": "k", "factors": [2, 2]},
  {"op": "vectorize", "loop": "k_1"}]}
]=])
file(WRITE ${CLI_SCRATCH}/trace_bad_json.json "{\"steps\": [ {\"op\": \"split\", ")
tessera_cli_exit(cli_inspect_trace EXPECT 0
                 STDOUT "for k_0, i1, i0, k_1 in T.grid\\(2, 3, 3, 2\\):.* k = T.axis.reduce\\(4, k_0 \\* 2 \\+ k_1\\)"
                 ARGS inspect ${TESSERA_NODE_DATA}/test_matmul_2d --print loop --op MatMul_0
                      --trace ${CLI_SCRATCH}/trace_ok.json)
tessera_cli_exit(cli_inspect_trace_bad_step EXPECT 2
                 STDERR "trace_bad_step.json: schedule step 2 \\(vectorize\\): cannot vectorize loop 'k_1'"
                 ARGS inspect ${TESSERA_NODE_DATA}/test_matmul_2d --print loop --op MatMul_0
                      --trace ${CLI_SCRATCH}/trace_bad_step.json)
tessera_cli_exit(cli_inspect_trace_bad_json EXPECT 2 STDERR "trace_bad_json.json: not valid JSON"
                 ARGS inspect ${TESSERA_NODE_DATA}/test_matmul_2d --print loop --op MatMul_0
                      --trace ${CLI_SCRATCH}/trace_bad_json.json)
tessera_cli_exit(cli_inspect_trace_needs_op EXPECT 2 STDERR "--trace needs --op"
                 ARGS inspect ${TESSERA_NODE_DATA}/test_matmul_2d --print loop
                      --trace ${CLI_SCRATCH}/trace_ok.json)

# ---- memory plan and profile table (helper "package").
tessera_cli_exit(cli_inspect_memory EXPECT 0
                 STDOUT "value +offset +bytes +live calls.*peak [0-9]+ bytes \\(arena\\), [0-9]+ bytes without reuse"
                 ARGS inspect /usr/share/libonnx-testdata/data/pytorch-converted/test_Conv2d --print memory)
# (Rows are sorted by time; with every kernel timed on flushed caches, the
# layout packing kernels may take as long as the tiny conv.)
tessera_cli_exit(cli_run_profile_table EXPECT 0
                 STDOUT "kernel +nodes +calls +time ms +% +GFLOP/s +GB/s\n(.*\n)*Conv_0 +Conv_0 +1 .*\ntotal .*\neach kernel timed alone, its buffers flushed .*\"peak_bytes\":[1-9]"
                 ARGS run /usr/share/libonnx-testdata/data/pytorch-converted/test_Conv2d --profile --json --repeat 2)

# ---- autotuning: a short tune of the example model records trials, a second
# run resumes from the database, and `run --records` applies the best records
# and still matches the interpreter.
set(TUNE_DB ${CLI_SCRATCH}/tune_small_cnn.jsonl)
add_test(NAME cli_tune_small_cnn_records
         COMMAND ${CMAKE_COMMAND} -E rm -f ${TUNE_DB})
tessera_cli_exit(cli_tune_small_cnn EXPECT 0 STDOUT "\"measured\":10"
                 ARGS tune ${PROJECT_SOURCE_DIR}/resources/models/small_cnn/model.onnx
                      --trials 10 --records ${TUNE_DB} --json)
tessera_cli_exit(cli_tune_small_cnn_resume EXPECT 0 STDOUT "\"resumed\":10"
                 ARGS tune ${PROJECT_SOURCE_DIR}/resources/models/small_cnn/model.onnx
                      --trials 14 --records ${TUNE_DB} --json)
tessera_cli_exit(cli_run_with_records_check EXPECT 0 STDOUT "check: +ok"
                 STDERR "tuning records [^:]*tune_small_cnn.jsonl: [1-9][0-9]* of [0-9]+ kernels tuned"
                 ARGS run ${PROJECT_SOURCE_DIR}/resources/models/small_cnn/model.onnx
                      --records ${TUNE_DB} --threads 1 --check)
# Records tuned for 1 thread do not apply to a build for 2, and run says so.
tessera_cli_exit(cli_run_records_other_thread_count EXPECT 0
                 STDERR ": 0 of [0-9]+ kernels tuned; [1-9][0-9]* skipped: [^ ]+ \\(tuned for 1 thread\\(s\\), this build runs 2\\)"
                 ARGS run ${PROJECT_SOURCE_DIR}/resources/models/small_cnn/model.onnx
                      --records ${TUNE_DB} --threads 2)
set_tests_properties(cli_run_records_other_thread_count PROPERTIES DEPENDS cli_tune_small_cnn_resume)
set_tests_properties(cli_tune_small_cnn PROPERTIES DEPENDS cli_tune_small_cnn_records)
set_tests_properties(cli_tune_small_cnn_resume PROPERTIES DEPENDS cli_tune_small_cnn)
set_tests_properties(cli_run_with_records_check PROPERTIES DEPENDS cli_tune_small_cnn_resume)
tessera_cli_exit(cli_tune_bad_records_exit2 EXPECT 2
                 ARGS tune --gemm 8x8 --trials 2 --records ${CLI_SCRATCH}/never.jsonl)

# ---- durability: `tessera tune` killed with SIGKILL 20 times at random
# moments loses at most the record in flight each time, and a resumed run
# reads every record the file holds (tests/kill_tune.sh).
add_test(NAME tune_survives_kill_9
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/kill_tune.sh $<TARGET_FILE:tessera>
                 ${CLI_SCRATCH}/kill_tune.jsonl 20)
set_tests_properties(tune_survives_kill_9 PROPERTIES LABELS durability TIMEOUT 400
  PASS_REGULAR_EXPRESSION "kills: 20, records: [0-9]+, torn lines: [0-9]+")

# ---- names that are not UTF-8 (proto2 strings are bytes): compiled and run,
# never an internal error from the JSON writer.
tessera_cli_exit(cli_compile_non_utf8_names EXPECT 0 STDOUT "kernels"
                 ARGS compile ${PROJECT_SOURCE_DIR}/tests/data/onnx_models/non_utf8_node_name.onnx
                      -o ${CLI_SCRATCH}/non_utf8.tar)
# Range over int64 values above 2^53 is exact (it was computed through double).
tessera_cli_exit(cli_range_int64_above_2_53_exact EXPECT 0 STDOUT "\"passed\":true"
                 ARGS run ${PROJECT_SOURCE_DIR}/tests/data/onnx_models/range_int64_large
                      --compare-dir ${PROJECT_SOURCE_DIR}/tests/data/onnx_models/range_int64_large/test_data_set_0 --json)
# Two nodes with one name (and a value named like a generated helper): each
# node's helpers get their own names, so the outputs match numpy's.
tessera_cli_exit(cli_duplicate_node_names_match EXPECT 0 STDOUT "\"passed\":true"
                 ARGS run ${PROJECT_SOURCE_DIR}/tests/data/onnx_models/duplicate_node_names
                      --compare-dir ${PROJECT_SOURCE_DIR}/tests/data/onnx_models/duplicate_node_names/test_data_set_0 --json)
# A symbolic batch dim takes its value from the input files (two sets of
# different batch sizes), or from --input-shape given together with them.
set(SYMBOLIC_BATCH ${PROJECT_SOURCE_DIR}/tests/data/onnx_models/symbolic_batch)
foreach(k 0 1)
  tessera_cli_exit(cli_symbolic_dim_from_input_files_${k} EXPECT 0 STDOUT "\"passed\":true"
                   ARGS run ${SYMBOLIC_BATCH}/model.onnx --input-dir ${SYMBOLIC_BATCH}/test_data_set_${k}
                        --compare-dir ${SYMBOLIC_BATCH}/test_data_set_${k} --json)
endforeach()
tessera_cli_exit(cli_symbolic_dim_input_shape_with_input_dir EXPECT 0 STDOUT "\"passed\":true"
                 ARGS run ${SYMBOLIC_BATCH}/model.onnx --input-shape x:5x3 --input-dir ${SYMBOLIC_BATCH}/test_data_set_1
                      --compare-dir ${SYMBOLIC_BATCH}/test_data_set_1 --json)
tessera_cli_exit(cli_symbolic_dim_compile_input_shape EXPECT 0 STDOUT "kernels"
                 ARGS compile ${SYMBOLIC_BATCH}/model.onnx --input-shape x:4x3 -o ${CLI_SCRATCH}/symbolic_batch.tar)
# One process, several input shapes: a new batch compiles only the kernels
# whose shapes changed (the z path's sigmoid is reused), a shape seen before
# builds nothing, and every set matches its expected outputs.
set(SYMBOLIC_TWO_PATHS ${PROJECT_SOURCE_DIR}/tests/data/onnx_models/symbolic_two_paths)
tessera_cli_exit(cli_run_shape_sets_compile_only_changed_kernels EXPECT 0
                 STDOUT "set 1: [^\n]*\\(x: 1x8\\): built, 3 of 3 kernels compiled[^\n]*check ok.*set 2: [^\n]*\\(x: 3x8\\): built, 2 of 3 kernels compiled[^\n]*check ok.*set 3: [^\n]*\\(x: 1x8\\): seen before, nothing compiled[^\n]*check ok.*specialisations: 2 for 3 input sets"
                 ARGS run ${SYMBOLIC_TWO_PATHS} --input-dir ${SYMBOLIC_TWO_PATHS}/test_data_set_0
                      --input-dir ${SYMBOLIC_TWO_PATHS}/test_data_set_1 --input-dir ${SYMBOLIC_TWO_PATHS}/test_data_set_0 --repeat 2)

# A package of two input shapes: each test-data set runs the specialisation
# its inputs match; other shapes are refused naming the shapes it holds.
tessera_cli_exit(cli_compile_shape_sets EXPECT 0 STDOUT "shapes: +2 specialisations: x: 1x8; x: 3x8"
                 ARGS compile ${SYMBOLIC_TWO_PATHS} --shape-set x:1x8 --shape-set x:3x8 -o ${CLI_SCRATCH}/two_shapes.tar)
set_tests_properties(cli_compile_shape_sets PROPERTIES FIXTURES_SETUP two_shapes_package)
foreach(k 0 1)
  tessera_cli_exit(cli_run_shape_sets_package_${k} EXPECT 0 STDOUT "\"passed\":true"
                   ARGS run ${CLI_SCRATCH}/two_shapes.tar --input-dir ${SYMBOLIC_TWO_PATHS}/test_data_set_${k}
                        --compare-dir ${SYMBOLIC_TWO_PATHS}/test_data_set_${k} --json)
  set_tests_properties(cli_run_shape_sets_package_${k} PROPERTIES FIXTURES_REQUIRED two_shapes_package)
endforeach()
tessera_cli_exit(cli_run_shape_sets_package_other_shape_exit2 EXPECT 2
                 STDERR "holds no specialisation for the input shapes x: 5x3.*compiled for x: 1x8; x: 3x8"
                 ARGS run ${CLI_SCRATCH}/two_shapes.tar --input-dir ${SYMBOLIC_BATCH}/test_data_set_1)
set_tests_properties(cli_run_shape_sets_package_other_shape_exit2 PROPERTIES FIXTURES_REQUIRED two_shapes_package)

# inspect, compile and tune take the symbolic dims from input files too
# (--input-dir or --inputs), as run does.
tessera_cli_exit(cli_symbolic_dim_inspect_input_dir EXPECT 0 STDOUT "%x: Tensor\\[\\(batch=5, 3\\), float32\\]"
                 ARGS inspect ${SYMBOLIC_BATCH}/model.onnx --input-dir ${SYMBOLIC_BATCH}/test_data_set_1 --print graph)
tessera_cli_exit(cli_symbolic_dim_compile_inputs EXPECT 0 STDOUT "kernels"
                 ARGS compile ${SYMBOLIC_BATCH}/model.onnx --inputs ${SYMBOLIC_BATCH}/test_data_set_1/input_0.pb
                      -o ${CLI_SCRATCH}/symbolic_batch_inputs.tar)
tessera_cli_exit(cli_symbolic_dim_tune_input_dir EXPECT 0 STDOUT "\"name\":\"matmul\""
                 ARGS tune ${SYMBOLIC_BATCH}/model.onnx --input-dir ${SYMBOLIC_BATCH}/test_data_set_1 --op matmul
                      --trials 2 --records ${CLI_SCRATCH}/symbolic_batch_tune.jsonl --json)
# The graph text names the symbolic dim with the size it was given.
tessera_cli_exit(cli_symbolic_dim_named_in_graph_text EXPECT 0 STDOUT "%x: Tensor\\[\\(batch=4, 3\\), float32\\]"
                 ARGS inspect ${SYMBOLIC_BATCH}/model.onnx --input-shape x:4x3 --print graph)
# ... and on the values computed from it (ONNX's shape inference on the
# symbolic model names their dims).
tessera_cli_exit(cli_symbolic_dim_named_beyond_the_inputs EXPECT 0
                 STDOUT "%r = nn.relu\\(%x\\) /\\* ty=Tensor\\[\\(batch=4, 3\\), float32\\].*%y = nn.matmul\\(%r, %w\\) /\\* ty=Tensor\\[\\(batch=4, 2\\), float32\\]"
                 ARGS inspect ${SYMBOLIC_BATCH}/model.onnx --input-shape x:4x3 --print graph)

# ---- `tessera bench` runs tessera-bench (beside it, or on PATH); where there
# is none (the installed package), it says how to get it.
if(TESSERA_BUILD_BENCH)  # tessera-bench (bench/ is added after tests/)
  tessera_cli_exit(cli_bench_forwards_to_tessera_bench EXPECT 0 STDOUT "tessera :.*GFLOP/s"
                   ARGS bench gemm --m 16 --n 16 --k 16 --rounds 1)
  # bench model takes the symbolic dims (and the inputs) from --input-dir.
  tessera_cli_exit(cli_bench_model_input_dir EXPECT 0 STDOUT "Tensor\\[\\(5, 3\\), float32\\]"
                   ARGS bench model ${PROJECT_SOURCE_DIR}/tests/data/onnx_models/symbolic_batch/model.onnx
                        --input-dir ${PROJECT_SOURCE_DIR}/tests/data/onnx_models/symbolic_batch/test_data_set_1
                        --repeat 1)
  # -O1/-O2/-O3 of the example against each other: every level's outputs
  # match -O1's, each row says ok or SLOWER (a timing, so not asserted).
  tessera_cli_exit(cli_bench_opt_levels EXPECT 0
                   STDOUT "-O1 .* ms +6 kernels.*-O2 .* ms .*-O1's speed +(ok|SLOWER than -O1).*\"O2\":[{][^}]*\"outputs_match\":true[^}]*[}],\"O3\":[{][^}]*\"outputs_match\":true"
                   ARGS bench opt-levels ${SMALL_CNN}/model.onnx --rounds 1 --repeat 3 --json)
endif()
add_test(NAME cli_bench_without_tessera_bench_setup
         COMMAND ${CMAKE_COMMAND} -E copy $<TARGET_FILE:tessera> ${CLI_SCRATCH}/lonely/tessera)
set_tests_properties(cli_bench_without_tessera_bench_setup PROPERTIES FIXTURES_SETUP lonely_tessera)
add_test(NAME cli_bench_without_tessera_bench_exit2
         COMMAND ${CMAKE_COMMAND} -DEXPECT=2 -DONE_LINE_STDERR=1
                 "-DSTDERR_REGEX=^error: 'tessera bench' runs the tessera-bench program, which is not installed"
                 -P ${CLI_EXPECT} -- ${CLI_SCRATCH}/lonely/tessera bench gemm --m 8 --n 8 --k 8)
set_tests_properties(cli_bench_without_tessera_bench_exit2 PROPERTIES
  FIXTURES_REQUIRED lonely_tessera ENVIRONMENT "PATH=/usr/bin:/bin")

# ---- `tessera quantize`: a QDQ model of the example, calibrated on its test
# data, runs and stays close to fp32; a folder without inputs is a user error.
tessera_cli_exit(cli_quantize_small_cnn EXPECT 0
                 STDERR "quantized 3 nodes \\(3 activations uint8, 3 weights int8 per channel, 3 biases int32, 0 Relu/Clip folded into the quantization, opset 13\\).*top-1 agrees on 1 of 1 rows"
                 ARGS quantize ${PROJECT_SOURCE_DIR}/resources/models/small_cnn -o ${CLI_SCRATCH}/small_cnn_int8.onnx
                      --calib ${PROJECT_SOURCE_DIR}/resources/models/small_cnn --method percentile)
# --layers: the layers farthest from the model's float reading, with their error.
tessera_cli_exit(cli_quantize_layers_error EXPECT 0
                 STDERR "layers farthest from the float reading[^\n]*\n  [^ ]+ \\([^,]+, [^)]+\\): [0-9.]+ %"
                 ARGS quantize ${PROJECT_SOURCE_DIR}/resources/models/small_cnn -o ${CLI_SCRATCH}/small_cnn_int8_layers.onnx
                      --calib ${PROJECT_SOURCE_DIR}/resources/models/small_cnn --layers 3)
# --ops: the op types whose inputs are quantized; one that cannot be is a
# user error naming those that can.
tessera_cli_exit(cli_quantize_ops_unknown_exit2 EXPECT 2
                 STDERR "cannot quantize the inputs of op type 'Softmax': the op types are Conv, MatMul, Gemm, Add, Mul, MaxPool"
                 ARGS quantize ${PROJECT_SOURCE_DIR}/resources/models/small_cnn -o ${CLI_SCRATCH}/never_ops.onnx
                      --calib ${PROJECT_SOURCE_DIR}/resources/models/small_cnn --ops Conv,Softmax)
tessera_cli_exit(cli_quantize_no_calibration_inputs_exit2 EXPECT 2
                 STDERR "calibration folder .* holds no input_0.pb"
                 ARGS quantize ${PROJECT_SOURCE_DIR}/resources/models/small_cnn -o ${CLI_SCRATCH}/never.onnx
                      --calib ${CLI_SCRATCH})

# ---- hybrid tuning (issue #19): `tune --op NODE --pin PINS.json` keeps the
# pinned knob values and searches the others; a value that is not a legal
# choice is a user error naming the legal ones.
# conv2 (8 -> 16 channels) runs the direct NCHW[x]c conv (conv1, 3 -> 8,
# stays NCHW where a vector is 16 floats wide).
file(WRITE ${CLI_SCRATCH}/pins_conv2.json "{\"knobs\": {\"conv2d.reg_cols\": 4}}\n")
file(WRITE ${CLI_SCRATCH}/pins_bad.json "{\"knobs\": {\"conv2d.reg_cols\": 5}}\n")
add_test(NAME cli_tune_pinned_clean COMMAND ${CMAKE_COMMAND} -E rm -f ${CLI_SCRATCH}/tune_pinned.jsonl)
set_tests_properties(cli_tune_pinned_clean PROPERTIES FIXTURES_SETUP tune_pinned_clean)
tessera_cli_exit(cli_tune_pinned_op EXPECT 0
                 STDERR "conv2d.reg_cols pinned: 4"
                 STDOUT "fused_conv2_relu2 \\(conv2d, x1\\): [1-9][0-9]* trials, 0 errors"
                 ARGS tune ${PROJECT_SOURCE_DIR}/resources/models/small_cnn --op conv2
                      --pin ${CLI_SCRATCH}/pins_conv2.json --trials 6
                      --records ${CLI_SCRATCH}/tune_pinned.jsonl)
set_tests_properties(cli_tune_pinned_op PROPERTIES FIXTURES_REQUIRED tune_pinned_clean)
tessera_cli_exit(cli_tune_pin_illegal_value_exit2 EXPECT 2
                 STDERR "cannot be 5 \\(legal: [0-9, ]+\\)"
                 ARGS tune ${PROJECT_SOURCE_DIR}/resources/models/small_cnn --op conv2
                      --pin ${CLI_SCRATCH}/pins_bad.json --trials 2
                      --records ${CLI_SCRATCH}/tune_pin_bad.jsonl)
