#!/usr/bin/env python3
"""Writes small models using ONNX Runtime's com.microsoft fused ops, each a
test-case folder (model.onnx + test_data_set_0 with random inputs and the
outputs ONNX Runtime computes for them, graph optimizations off).

    .venv/bin/python tests/data/onnx_models/make_contrib_models.py   # needs onnx, onnxruntime
"""
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(7)


def f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def write(name, nodes, inputs, outputs, inits, opset=14):
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info(
                              n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape) for n, a in inputs],
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
                          [numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset),
                                            helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    d = os.path.join(HERE, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(os.path.join(d, "model.onnx"), so, providers=["CPUExecutionProvider"])
    outs = sess.run(None, {n: a for n, a in inputs})
    for vi, y in zip(m.graph.output, outs):  # declare the output shapes ORT computed
        vi.CopyFrom(helper.make_tensor_value_info(vi.name, TensorProto.FLOAT, y.shape))
    onnx.save(m, os.path.join(d, "model.onnx"))
    for i, (n, a) in enumerate(inputs):
        onnx.save_tensor(numpy_helper.from_array(a, n), os.path.join(d, "test_data_set_0", f"input_{i}.pb"))
    for i, (n, y) in enumerate(zip(outputs, outs)):
        onnx.save_tensor(numpy_helper.from_array(y, n), os.path.join(d, "test_data_set_0", f"output_{i}.pb"))
    print(name, [o.shape for o in outs])


ms = "com.microsoft"
# FusedConv: conv + bias + residual Z + Relu; a second with LeakyRelu.
write("contrib_fused_conv",
      [helper.make_node("FusedConv", ["x", "w", "b", "z"], ["c"], domain=ms, name="fc1",
                        activation="Relu", pads=[1, 1, 1, 1]),
       helper.make_node("FusedConv", ["c", "w2", "b2"], ["y"], domain=ms, name="fc2",
                        activation="LeakyRelu", activation_params=[0.1], strides=[2, 2])],
      [("x", f32(1, 3, 10, 10)), ("z", f32(1, 4, 10, 10))], ["y"],
      [("w", f32(4, 3, 3, 3, scale=0.3)), ("b", f32(4)), ("w2", f32(5, 4, 1, 1)), ("b2", f32(5))])
# FusedGemm with transB and alpha/beta, Tanh; then LeakyRelu (ORT's FusedGemm
# has no Clip).
write("contrib_fused_gemm",
      [helper.make_node("FusedGemm", ["a", "bw", "c"], ["h"], domain=ms, name="fg1", transB=1,
                        alpha=0.5, beta=2.0, activation="Tanh"),
       helper.make_node("FusedGemm", ["h", "bw2"], ["y"], domain=ms, name="fg2",
                        activation="LeakyRelu", activation_alpha=0.2)],
      [("a", f32(3, 8))], ["y"],
      [("bw", f32(6, 8)), ("c", f32(6)), ("bw2", f32(6, 4))])
# The GELU family and QuickGelu.
write("contrib_gelus",
      [helper.make_node("Gelu", ["x"], ["g1"], domain=ms, name="gelu"),
       helper.make_node("FastGelu", ["g1", "bias"], ["g2"], domain=ms, name="fast"),
       helper.make_node("BiasGelu", ["g2", "bias"], ["g3"], domain=ms, name="biasgelu"),
       helper.make_node("QuickGelu", ["g3"], ["y"], domain=ms, name="quick", alpha=1.5)],
      [("x", f32(2, 5, 16, scale=2.0))], ["y"], [("bias", f32(16))])
# SkipLayerNormalization with beta and bias, its sum output too.
write("contrib_skip_layer_norm",
      [helper.make_node("SkipLayerNormalization", ["x", "skip", "gamma", "beta", "bias"],
                        ["y", "", "", "sum"], domain=ms, name="sln", epsilon=1e-5)],
      [("x", f32(2, 7, 32)), ("skip", f32(2, 7, 32))], ["y", "sum"],
      [("gamma", f32(32)), ("beta", f32(32)), ("bias", f32(32))])


def q_init(name, values, dtype):
    return (name, np.array(values, dtype=dtype))


def qlinear_model(name, dtype, opset):
    """Every quantized elementwise op of ORT's quantizer on one chain: the
    float input quantized, then QLinearAdd (a constant operand), QLinearMul,
    QLinearSigmoid and QLinearLeakyRelu side by side, QLinearConcat of both,
    QLinearGlobalAveragePool; both ends dequantized. With int8, QLinearAdd's
    output has no zero point (a zero of the inputs' type)."""
    u8 = dtype == np.uint8
    zp = (lambda v: v) if u8 else (lambda v: v - 128)
    inits = [("sx", np.float32(0.05)), q_init("zx", zp(128), dtype),
             ("qb", (rng.integers(0, 256, (4, 1, 1)) - (0 if u8 else 128)).astype(dtype)),
             ("sb", np.float32(0.03)), q_init("zb", zp(120), dtype),
             ("sc", np.float32(0.07)), q_init("zc", zp(125 if u8 else 128), dtype),
             ("sm", np.float32(0.1)), q_init("zm", zp(128), dtype),
             ("ss", np.float32(1 / 256)), q_init("zs", zp(0 if u8 else 128), dtype),
             ("sl", np.float32(0.08)), q_init("zl", zp(100), dtype),
             ("sy", np.float32(0.1)), q_init("zy", zp(110), dtype),
             ("sg", np.float32(0.05)), q_init("zg", zp(128), dtype)]
    add_inputs = ["q", "sx", "zx", "qb", "sb", "zb", "sc"] + (["zc"] if u8 else [])
    nodes = [helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["q"], name="quant"),
             helper.make_node("QLinearAdd", add_inputs, ["a"], domain=ms, name="qadd"),
             helper.make_node("QLinearMul", ["a", "sc", "zc", "q", "sx", "zx", "sm", "zm"], ["m"],
                              domain=ms, name="qmul"),
             helper.make_node("QLinearSigmoid", ["m", "sm", "zm", "ss", "zs"], ["sig"], domain=ms,
                              name="qsigmoid"),
             helper.make_node("QLinearLeakyRelu", ["m", "sm", "zm", "sl", "zl"], ["lr"], domain=ms,
                              name="qleaky", alpha=0.2),
             helper.make_node("QLinearConcat", ["sy", "zy", "sig", "ss", "zs", "lr", "sl", "zl"],
                              ["cat"], domain=ms, name="qconcat", axis=1),
             helper.make_node("QLinearGlobalAveragePool", ["cat", "sy", "zy", "sg", "zg"], ["gap"],
                              domain=ms, name="qgap"),
             helper.make_node("DequantizeLinear", ["cat", "sy", "zy"], ["y_cat"], name="dq_cat"),
             helper.make_node("DequantizeLinear", ["gap", "sg", "zg"], ["y_gap"], name="dq_gap")]
    write(name, nodes, [("x", f32(1, 4, 6, 6, scale=2.0))], ["y_cat", "y_gap"], inits, opset)


qlinear_model("contrib_qlinear_uint8", np.uint8, 14)
qlinear_model("contrib_qlinear_int8", np.int8, 15)


def dynamic_quantize_lstm_model(name, per_channel, direction):
    """An LSTM quantized by ONNX Runtime's dynamic quantizer (its weights int8,
    a scale per direction or per direction and gate column) into
    com.microsoft DynamicQuantizeLSTM, with ORT's own outputs: it quantizes
    the inputs of all steps at once and each step's h per batch row to
    uint8, and multiplies in integers, as Tessera does. (ORT's float LSTM
    over the dequantized weights differs from those by up to ~9e-3.)"""
    import tempfile
    from onnxruntime.quantization import QuantType, quantize_dynamic
    I, H, S, B = 6, 5, 7, 2
    D = 2 if direction == "bidirectional" else 1
    W = f32(D, 4 * H, I, scale=0.4)
    R = f32(D, 4 * H, H, scale=0.4)
    bias = f32(D, 8 * H, scale=0.1)
    h0 = f32(D, B, H, scale=0.5)
    node = helper.make_node("LSTM", ["x", "W", "R", "B", "", "h0"], ["y", "yh", "yc"], name="lstm",
                            hidden_size=H, direction=direction)
    g = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [S, B, I])],
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ["y", "yh", "yc"]],
                          [numpy_helper.from_array(a, n) for n, a in [("W", W), ("R", R), ("B", bias), ("h0", h0)]])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 8
    with tempfile.TemporaryDirectory() as tmp:
        onnx.save(m, os.path.join(tmp, "f.onnx"))
        quantize_dynamic(os.path.join(tmp, "f.onnx"), os.path.join(tmp, "q.onnx"),
                         op_types_to_quantize=["LSTM"], weight_type=QuantType.QInt8,
                         per_channel=per_channel)
        q = onnx.load(os.path.join(tmp, "q.onnx"))
    assert [n.op_type for n in q.graph.node] == ["DynamicQuantizeLSTM"], [n.op_type for n in q.graph.node]
    x = f32(S, B, I)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    outs = ort.InferenceSession(q.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    for vi, y in zip(q.graph.output, outs):
        vi.CopyFrom(helper.make_tensor_value_info(vi.name, TensorProto.FLOAT, y.shape))
    d = os.path.join(HERE, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(q, os.path.join(d, "model.onnx"))
    onnx.save_tensor(numpy_helper.from_array(x, "x"), os.path.join(d, "test_data_set_0", "input_0.pb"))
    for i, y in enumerate(outs):
        onnx.save_tensor(numpy_helper.from_array(y, f"out{i}"), os.path.join(d, "test_data_set_0", f"output_{i}.pb"))
    print(name, [o.shape for o in outs])


dynamic_quantize_lstm_model("contrib_dynamic_quantize_lstm", False, "forward")
dynamic_quantize_lstm_model("contrib_dynamic_quantize_lstm_per_channel", True, "bidirectional")


# ORT's transformers optimizer's ops (BERT-style models): drawn from their
# own generator so the models above stay as they were.
rng = np.random.default_rng(11)
B, S, HID, NH, VOC = 2, 7, 32, 4, 50
ids = rng.integers(0, VOC, (B, S)).astype(np.int32)
segments = rng.integers(0, 2, (B, S)).astype(np.int32)
mask = np.array([[1] * 7, [1] * 4 + [0] * 3], dtype=np.int32)  # right padding
# EmbedLayerNormalization -> mask_index (1-D end positions) -> Attention ->
# SkipLayerNormalization: the start of an optimized BERT encoder.
write("contrib_bert_embed_attention",
      [helper.make_node("EmbedLayerNormalization",
                        ["ids", "segments", "word", "position", "segment", "g0", "b0", "mask"],
                        ["emb", "mask_index"], domain=ms, name="embed", epsilon=1e-12),
       helper.make_node("Attention", ["emb", "wqkv", "bqkv", "mask_index"], ["att"], domain=ms,
                        name="attention", num_heads=NH),
       helper.make_node("SkipLayerNormalization", ["att", "emb", "g1", "b1"], ["y"], domain=ms,
                        name="skip_ln", epsilon=1e-12)],
      [("ids", ids), ("segments", segments), ("mask", mask)], ["y"],
      [("word", f32(VOC, HID)), ("position", f32(16, HID)), ("segment", f32(2, HID)),
       ("g0", f32(HID)), ("b0", f32(HID)), ("wqkv", f32(HID, 3 * HID, scale=0.3)),
       ("bqkv", f32(3 * HID)), ("g1", f32(HID)), ("b1", f32(HID))])
# Attention with a raw [batch, keys] mask and a causal mask, an additive
# attention bias, V narrower than Q and K; a second with a 3-D raw mask and
# its own scale; EmbedLayerNormalization with position ids and no mask.
raw3 = (rng.random((B, S, S)) > 0.3).astype(np.int32)
raw3[:, :, 0] = 1
write("contrib_attention_masks",
      [helper.make_node("EmbedLayerNormalization",
                        ["ids", "", "word", "position", "", "g0", "b0", "", "position_ids"],
                        ["emb", "", "emb_sum"], domain=ms, name="embed_positions"),
       helper.make_node("Attention", ["emb", "w1", "b1", "mask", "", "attention_bias"], ["a1"],
                        domain=ms, name="causal_attention", num_heads=NH, unidirectional=1,
                        qkv_hidden_sizes=[HID, HID, HID // 2]),
       helper.make_node("Attention", ["emb_sum", "w2", "", "raw3"], ["a2"], domain=ms,
                        name="masked_attention", num_heads=2, scale=0.3, mask_filter_value=-1e4)],
      [("ids", ids), ("mask", mask), ("raw3", raw3),
       ("position_ids", rng.integers(0, 16, (B, S)).astype(np.int32)),
       ("attention_bias", f32(B, NH, S, S))], ["a1", "a2"],
      [("word", f32(VOC, HID)), ("position", f32(16, HID)), ("g0", f32(HID)), ("b0", f32(HID)),
       ("w1", f32(HID, 2 * HID + HID // 2, scale=0.3)), ("b1", f32(2 * HID + HID // 2)),
       ("w2", f32(HID, 3 * HID, scale=0.3))])
# MultiHeadAttention: cross attention (10 keys) with a packed bias and a
# [batch, keys] padding mask; self attention with 1-D end positions, causal.
L = 10
write("contrib_multi_head_attention",
      [helper.make_node("MultiHeadAttention", ["q", "k", "v", "bias", "kmask"], ["o1"], domain=ms,
                        name="cross_attention", num_heads=NH),
       helper.make_node("MultiHeadAttention", ["o1", "o1", "o1", "", "ends", "attention_bias"],
                        ["o2"], domain=ms, name="self_attention", num_heads=2, unidirectional=1,
                        scale=0.2)],
      [("q", f32(B, S, HID)), ("k", f32(B, L, HID)), ("v", f32(B, L, HID)),
       ("kmask", np.array([[1] * 10, [1] * 6 + [0] * 4], dtype=np.int32)),
       ("ends", np.array([7, 5], dtype=np.int32)), ("attention_bias", f32(1, 2, S, S))],
      ["o2"], [("bias", f32(3 * HID))])
# RMS normalization: SimplifiedLayerNormalization (ORT registers it in the
# default domain) and SkipSimplifiedLayerNormalization with a bias and its sum.
write("contrib_simplified_layer_norm",
      [helper.make_node("SimplifiedLayerNormalization", ["x", "scale"], ["n1"],
                        name="rms_norm", axis=-1, epsilon=1e-6),
       helper.make_node("SkipSimplifiedLayerNormalization", ["n1", "skip", "gamma", "bias"],
                        ["y", "", "", "sum"], domain=ms, name="skip_rms_norm", epsilon=1e-5)],
      [("x", f32(2, 5, 24, scale=3.0)), ("skip", f32(2, 5, 24))], ["y", "sum"],
      [("scale", f32(24)), ("gamma", f32(24)), ("bias", f32(24))])
# LayerNormalization in the default domain at opset 13: ORT's own op before
# ONNX defined it (17), which its optimizer writes into older models.
write("contrib_layer_norm_opset13",
      [helper.make_node("LayerNormalization", ["x", "scale", "bias"], ["n1"], name="layer_norm",
                        axis=-1, epsilon=1e-5),
       helper.make_node("LayerNormalization", ["n1", "scale"], ["y"], name="layer_norm_no_bias",
                        epsilon=1e-3)],
      [("x", f32(3, 4, 40, scale=2.0))], ["y"], [("scale", f32(40)), ("bias", f32(40))], opset=13)
# Attention's 2 x batch mask (end positions, then start positions) and
# MultiHeadAttention with key and value already split into heads.
write("contrib_attention_ends_starts",
      [helper.make_node("Attention", ["x", "w3", "b3", "ends_starts"], ["a3"], domain=ms,
                        name="windowed_attention", num_heads=NH),
       helper.make_node("MultiHeadAttention", ["a3", "k4", "v4"], ["y"], domain=ms,
                        name="heads_attention", num_heads=NH)],
      [("x", f32(B, S, HID)), ("ends_starts", np.array([6, 7, 1, 3], dtype=np.int32)),
       ("k4", f32(B, NH, L, HID // NH)), ("v4", f32(B, NH, L, HID // NH))], ["y"],
      [("w3", f32(HID, 3 * HID, scale=0.3)), ("b3", f32(3 * HID))])
# ONNX Runtime's offline optimizer on dynamically quantized and attention
# models: DynamicQuantizeMatMul (A quantized at run time; int8 weights with a
# scale and zero point per column and a bias, then uint8 weights with scalar
# ones and no bias), MatMulIntegerToFloat (A already quantized), FusedMatMul
# (scaled Q @ K^T; an operand stored [M, batch, K] read through transBatchA
# and transA).
write("contrib_integer_matmuls",
      [helper.make_node("DynamicQuantizeMatMul", ["x", "w1", "s1", "z1", "bias1"], ["y1"], domain=ms,
                        name="dynamic_quantize_matmul"),
       helper.make_node("DynamicQuantizeLinear", ["y1"], ["q", "qs", "qz"], name="quantize_y1"),
       helper.make_node("MatMulIntegerToFloat", ["q", "w2", "qs", "s2", "qz", "z2", "bias2"], ["y2"],
                        domain=ms, name="matmul_integer_to_float"),
       helper.make_node("DynamicQuantizeMatMul", ["y2", "w3", "s3", "z3"], ["y3"], domain=ms,
                        name="dynamic_quantize_matmul_uint8"),
       helper.make_node("FusedMatMul", ["y3", "y3"], ["scores"], domain=ms, name="scaled_scores",
                        transB=1, alpha=0.125),
       helper.make_node("FusedMatMul", ["at", "scores"], ["y"], domain=ms, name="batch_transposed",
                        transBatchA=1, transA=1, alpha=-0.5)],
      [("x", f32(2, 5, 16, scale=2.0)), ("at", f32(5, 2, 4))], ["y", "y2"],
      [("w1", rng.integers(-127, 128, (16, 12)).astype(np.int8)),
       ("s1", (rng.random(12) * 0.02 + 0.005).astype(np.float32)),
       ("z1", rng.integers(-3, 4, 12).astype(np.int8)), ("bias1", f32(12)),
       ("w2", rng.integers(0, 256, (12, 8)).astype(np.uint8)), ("s2", np.float32(0.01)),
       ("z2", np.uint8(131)), ("bias2", f32(8)),
       ("w3", rng.integers(0, 256, (8, 6)).astype(np.uint8)), ("s3", np.float32(0.02)),
       ("z3", np.uint8(120))])
