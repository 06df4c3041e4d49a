#!/usr/bin/python3
"""Writes the malformed/unsupported ONNX models of tests/data/bad_inputs.

Run with Debian's python (onnx 1.12):  /usr/bin/python3 make_bad_inputs.py
Each file must make tessera::frontend::import_onnx_file throw a UserError
whose message contains the substring listed in README.md.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = [helper.make_opsetid("", 13)]


def write(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


def model(nodes, inputs, outputs, initializers=(), name="bad"):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    m = helper.make_model(graph, opset_imports=OPSET, producer_name="make_bad_inputs.py")
    m.ir_version = 8
    return m


def conv_model():
    rng = np.random.default_rng(7)
    w = numpy_helper.from_array(rng.uniform(-1, 1, (8, 3, 3, 3)).astype(np.float32), "w")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 8, 8])
    conv = helper.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[1, 1, 1, 1])
    return model([conv], [x], [y], [w])


def write_unsupported_op():
    # A valid model using an op Tessera does not support: a custom-domain op
    # (LRN was used until Tessera learned it).
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 5, 5])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 5, 5])
    node = helper.make_node("FancyNorm", ["x"], ["y"], name="fancy1", domain="com.example", size=3)
    m = model([node], [x], [y])
    m.opset_import.append(helper.make_opsetid("com.example", 1))
    onnx.checker.check_model(m)
    write("unsupported_op.onnx", m.SerializeToString())


def main():
    # A text file, not protobuf.
    write("not_onnx.onnx", b"this is a text file, not an ONNX model\n")

    # A zero-byte file parses as an empty ModelProto (no graph).
    write("empty.onnx", b"")

    # A real model cut in the middle of its weight bytes.
    full = conv_model()
    onnx.checker.check_model(full)
    data = full.SerializeToString()
    write("truncated.onnx", data[: len(data) // 2])

    write_unsupported_op()

    # A valid model whose input has a symbolic batch dimension.
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])
    m = model([helper.make_node("Relu", ["x"], ["y"], name="relu1")], [x], [y])
    onnx.checker.check_model(m)
    write("symbolic_dim.onnx", m.SerializeToString())

    # A node reading a value nobody defines: ONNX's checker rejects it.
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])
    m = model([helper.make_node("Add", ["x", "ghost"], ["y"], name="add1")], [x], [y])
    write("checker_fails.onnx", m.SerializeToString())

    # Reshape whose shape is a graph input, not a constant.
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6])
    s = helper.make_tensor_value_info("shape", TensorProto.INT64, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])
    m = model([helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape1")], [x, s], [y])
    onnx.checker.check_model(m)
    write("reshape_dynamic_shape.onnx", m.SerializeToString())

    # Conv whose weight does not match the input's channels.
    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.uniform(-1, 1, (2, 5, 3, 3)).astype(np.float32), "w")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 6, 6])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 4, 4])
    m = model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv_bad")], [x], [y], [w])
    write("conv_channel_mismatch.onnx", m.SerializeToString())


def more_bad_inputs():
    """Hostile and broken models beyond the first set (issue 5)."""
    rng = np.random.default_rng(11)
    write("random_bytes.onnx", rng.integers(0, 256, 4096, dtype=np.uint8).tobytes())

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])

    # Two nodes feeding each other.
    m = model([helper.make_node("Add", ["x", "b"], ["a"], name="add_a"),
               helper.make_node("Relu", ["a"], ["b"], name="relu_b"),
               helper.make_node("Relu", ["a"], ["y"], name="relu_y")], [x], [y])
    write("graph_cycle.onnx", m.SerializeToString())

    # Conv whose weight initializer is missing.
    xi = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
    yo = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 8, 8])
    m = model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv_nw", pads=[1, 1, 1, 1])],
              [xi], [yo])
    write("missing_initializer.onnx", m.SerializeToString())

    # An attribute of the wrong protobuf type (strides as floats).
    w = numpy_helper.from_array(np.ones((8, 3, 3, 3), np.float32), "w")
    conv = helper.make_node("Conv", ["x", "w"], ["y"], name="conv_ft")
    conv.attribute.append(helper.make_attribute("strides", [1.0, 1.0]))
    m = model([conv], [xi], [yo], [w])
    write("wrong_attribute_type.onnx", m.SerializeToString())

    # An opset from the future.
    m = model([helper.make_node("Relu", ["x"], ["y"], name="relu1")], [x], [y])
    m.opset_import[0].version = 99
    write("opset_from_future.onnx", m.SerializeToString())

    # A negative input dimension.
    xn = helper.make_tensor_value_info("x", TensorProto.FLOAT, [-3, 4])
    m = model([helper.make_node("Relu", ["x"], ["y"], name="relu1")], [xn], [y])
    write("negative_dim.onnx", m.SerializeToString())

    # An initializer claiming 2^50 elements with no data.
    big = TensorProto()
    big.name = "b"
    big.data_type = TensorProto.FLOAT
    big.dims.extend([1 << 50])
    m = model([helper.make_node("Add", ["x", "b"], ["y"], name="add_big")], [x], [y], [big])
    write("enormous_dim.onnx", m.SerializeToString())

    # raw_data of the wrong size for the initializer's shape.
    bad = TensorProto()
    bad.name = "b"
    bad.data_type = TensorProto.FLOAT
    bad.dims.extend([2, 4])
    bad.raw_data = b"\x00" * 10
    m = model([helper.make_node("Add", ["x", "b"], ["y"], name="add_bad")], [x], [y], [bad])
    write("initializer_size_mismatch.onnx", m.SerializeToString())

    # External data pointing outside the model's folder.
    ext = TensorProto()
    ext.name = "b"
    ext.data_type = TensorProto.FLOAT
    ext.dims.extend([2, 4])
    ext.data_location = TensorProto.EXTERNAL
    kv = ext.external_data.add()
    kv.key = "location"
    kv.value = "../../../etc/passwd"
    m = model([helper.make_node("Add", ["x", "b"], ["y"], name="add_ext")], [x], [y], [ext])
    write("external_data_outside.onnx", m.SerializeToString())

    # An input of an element type Tessera does not compute in.
    xs = helper.make_tensor_value_info("x", TensorProto.STRING, [2, 4])
    ys = helper.make_tensor_value_info("y", TensorProto.STRING, [2, 4])
    m = model([helper.make_node("Identity", ["x"], ["y"], name="id1")], [xs], [ys])
    write("unsupported_dtype.onnx", m.SerializeToString())

    # A sequence input.
    seq = helper.make_tensor_sequence_value_info("x", TensorProto.FLOAT, [2, 4])
    yseq = helper.make_tensor_sequence_value_info("y", TensorProto.FLOAT, [2, 4])
    m = model([helper.make_node("Identity", ["x"], ["y"], name="id1")], [seq], [yseq])
    write("sequence_input.onnx", m.SerializeToString())

    # Transpose with a perm that is not a permutation.
    m = model([helper.make_node("Transpose", ["x"], ["y"], name="tr1", perm=[0, 0])], [x], [y])
    write("bad_permutation.onnx", m.SerializeToString())

    # Reshape to a constant shape with another element count.
    shp = numpy_helper.from_array(np.array([5, 5], np.int64), "shape")
    y55 = helper.make_tensor_value_info("y", TensorProto.FLOAT, [5, 5])
    m = model([helper.make_node("Reshape", ["x", "shape"], ["y"], name="rs1")], [x], [y55], [shp])
    write("reshape_count_mismatch.onnx", m.SerializeToString())

    # Two nodes writing the same value.
    m = model([helper.make_node("Relu", ["x"], ["y"], name="relu1"),
               helper.make_node("Neg", ["x"], ["y"], name="neg1")], [x], [y])
    write("duplicate_output.onnx", m.SerializeToString())

    # A valid graph with ir_version 0.
    m = model([helper.make_node("Relu", ["x"], ["y"], name="relu1")], [x], [y])
    m.ir_version = 0
    write("no_ir_version.onnx", m.SerializeToString())

    # Operands that do not broadcast.
    x3 = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    z4 = helper.make_tensor_value_info("z", TensorProto.FLOAT, [4])
    m = model([helper.make_node("Add", ["x", "z"], ["y"], name="add_nb")], [x3, z4],
              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    write("no_broadcast.onnx", m.SerializeToString())

    # Gather with a float index tensor.
    gi = numpy_helper.from_array(np.array([0.0, 1.0], np.float32), "idx")
    m = model([helper.make_node("Gather", ["x", "idx"], ["y"], name="g1")], [x], [y], [gi])
    write("gather_float_indices.onnx", m.SerializeToString())

    # A model whose graph output is never produced.
    m = model([helper.make_node("Relu", ["x"], ["t"], name="relu1")], [x], [y])
    write("output_never_produced.onnx", m.SerializeToString())

    # Split sizes that do not add up.
    sp = numpy_helper.from_array(np.array([1, 1], np.int64), "split")
    m = model([helper.make_node("Split", ["x", "split"], ["y", "y2"], name="sp1", axis=1)], [x],
              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 1]),
               helper.make_tensor_value_info("y2", TensorProto.FLOAT, [2, 1])], [sp])
    write("split_bad_sizes.onnx", m.SerializeToString())


def hostile_inputs():
    """Models that ask the importer for huge work or memory (session 2 fuzzing)."""
    f = TensorProto.FLOAT
    x2 = helper.make_tensor_value_info("x", f, [2])
    y2 = helper.make_tensor_value_info("y", f, [2])

    def loop_body(nodes, name, p):
        return helper.make_graph(
            nodes, name,
            [helper.make_tensor_value_info(p + "i", TensorProto.INT64, []),
             helper.make_tensor_value_info(p + "c", TensorProto.BOOL, []),
             helper.make_tensor_value_info(p + "v", f, [2])],
            [helper.make_tensor_value_info(p + "c_out", TensorProto.BOOL, []),
             helper.make_tensor_value_info(p + "v_out", f, [2])])

    # A 4096-trip Loop inside a 4096-trip Loop: 16M body copies when unrolled.
    inner = loop_body([helper.make_node("Identity", ["ic"], ["ic_out"]),
                       helper.make_node("Add", ["iv", "iv"], ["iv_out"])], "inner", "i")
    trips = numpy_helper.from_array(np.array(4096, np.int64))
    outer = loop_body([helper.make_node("Identity", ["oc"], ["oc_out"]),
                       helper.make_node("Constant", [], ["m2"], value=trips),
                       helper.make_node("Loop", ["m2", "", "ov"], ["ov_out"], body=inner,
                                        name="inner_loop")], "outer", "o")
    m = model([helper.make_node("Loop", ["m", "", "x"], ["y"], body=outer, name="outer_loop")],
              [x2], [y2], [numpy_helper.from_array(np.array(4096, np.int64), "m")])
    write("nested_loop_unroll.onnx", m.SerializeToString())

    # SplitToSequence into 100000 one-element tensors.
    xs = helper.make_tensor_value_info("x", f, [100000, 1])
    m = model([helper.make_node("SplitToSequence", ["x"], ["s"], keepdims=0, name="sts"),
               helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0, name="cfs")],
              [xs], [helper.make_tensor_value_info("y", f, [100000])])
    write("split_to_sequence_too_long.onnx", m.SerializeToString())

    # Tile whose output would have 2^82 elements.
    xt = helper.make_tensor_value_info("x", f, [2, 2])
    reps = numpy_helper.from_array(np.array([1 << 40, 1 << 40], np.int64), "reps")
    m = model([helper.make_node("Tile", ["x", "reps"], ["y"], name="tile_big")], [xt],
              [helper.make_tensor_value_info("y", f, [None, None])], [reps])
    write("tile_enormous_output.onnx", m.SerializeToString())

    # OneHot with depth 2^40 (an iota of that length at import).
    xi = helper.make_tensor_value_info("x", TensorProto.INT64, [2])
    m = model([helper.make_node("OneHot", ["x", "depth", "vals"], ["y"], name="oh_big")], [xi],
              [helper.make_tensor_value_info("y", f, [None, None])],
              [numpy_helper.from_array(np.array(1 << 40, np.int64), "depth"),
               numpy_helper.from_array(np.array([0, 1], np.float32), "vals")])
    write("one_hot_enormous_depth.onnx", m.SerializeToString())



def hardening_inputs():
    """Files that killed the process before (issue: hardening)."""
    f = TensorProto.FLOAT
    # DepthToSpace with blocksize 2^32: ONNX's inference squared it to 0 (SIGFPE).
    x = helper.make_tensor_value_info("x", f, [1, 4, 2, 2])
    m = model([helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=1 << 32, name="d2s_big")],
              [x], [helper.make_tensor_value_info("y", f, None)])
    write("depth_to_space_huge_blocksize.onnx", m.SerializeToString())

    # An input of 2^40 x 2^40 elements: each dim passes, the product wrapped (SIGSEGV).
    x = helper.make_tensor_value_info("x", f, [1 << 40, 1 << 40])
    m = model([helper.make_node("ReduceSum", ["x"], ["y"], keepdims=0, name="rs_big")],
              [x], [helper.make_tensor_value_info("y", f, [])])
    write("reduce_sum_enormous_input.onnx", m.SerializeToString())

    # LSTM over 10,000,000 steps with a 1-wide hidden state: unrolled without a limit.
    x = helper.make_tensor_value_info("x", f, [10000000, 1, 1])
    w = numpy_helper.from_array(np.full((1, 4, 1), 0.5, np.float32), "w")
    r = numpy_helper.from_array(np.full((1, 4, 1), 0.5, np.float32), "r")
    m = model([helper.make_node("LSTM", ["x", "w", "r"], ["", "yh"], hidden_size=1, name="lstm_long")],
              [x], [helper.make_tensor_value_info("yh", f, [1, 1, 1])], [w, r])
    write("lstm_ten_million_steps.onnx", m.SerializeToString())

    # Loop whose trip-count initializer holds no value (std::out_of_range, exit 3).
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c_out"]), helper.make_node("Add", ["v", "v"], ["v_out"])],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                 helper.make_tensor_value_info("v", f, [2])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", f, [2])])
    m = model([helper.make_node("Loop", ["m", "", "x"], ["y"], body=body, name="loop_no_trips")],
              [helper.make_tensor_value_info("x", f, [2])], [helper.make_tensor_value_info("y", f, [2])],
              [numpy_helper.from_array(np.zeros((0,), np.int64), "m")])
    write("loop_empty_trip_count.onnx", m.SerializeToString())

    # Scan over a zero-length input (an empty list of iteration outputs was read).
    body = helper.make_graph(
        [helper.make_node("Add", ["s", "e"], ["s_out"]), helper.make_node("Identity", ["e"], ["e_out"])],
        "scan_body", [helper.make_tensor_value_info("s", f, [2]), helper.make_tensor_value_info("e", f, [2])],
        [helper.make_tensor_value_info("s_out", f, [2]), helper.make_tensor_value_info("e_out", f, [2])])
    m = model([helper.make_node("Scan", ["s0", "xs"], ["sN", "ys"], body=body, num_scan_inputs=1,
                                name="scan_empty")],
              [helper.make_tensor_value_info("s0", f, [2]), helper.make_tensor_value_info("xs", f, [0, 2])],
              [helper.make_tensor_value_info("sN", f, [2]), helper.make_tensor_value_info("ys", f, [0, 2])])
    write("scan_zero_length.onnx", m.SerializeToString())

    # If on a runtime condition with more node outputs than branch outputs (an .at() threw: exit 3).
    def branch(name, value):
        c = numpy_helper.from_array(np.array([value], np.float32), name + "_c")
        return helper.make_graph([helper.make_node("Add", ["x", name + "_c"], [name + "_out"])], name, [],
                                 [helper.make_tensor_value_info(name + "_out", f, [2])], [c])
    m = model([helper.make_node("If", ["cond"], ["y", "z"], then_branch=branch("then", 1.0),
                                else_branch=branch("else", 2.0), name="if_short")],
              [helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
               helper.make_tensor_value_info("x", f, [2])],
              [helper.make_tensor_value_info("y", f, [2]), helper.make_tensor_value_info("z", f, [2])])
    write("if_more_outputs_than_branches.onnx", m.SerializeToString())

    # Opset < 13 models go through ONNX's version converter, which dereferences
    # the producer of every output, subgraphs included: a branch output that
    # nothing produces, and a branch node reading a name defined nowhere.
    def old_model(graph):
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)],
                              producer_name="make_bad_inputs.py")
        m.ir_version = 7
        return m
    outer_in = [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                helper.make_tensor_value_info("x", f, [2])]
    good_else = helper.make_graph([helper.make_node("Identity", ["x"], ["eb"])], "else", [],
                                  [helper.make_tensor_value_info("eb", f, [2])])
    for name, then_nodes in [("opset11_if_branch_output_never_produced.onnx", []),
                             ("opset11_if_branch_reads_undefined.onnx",
                              [helper.make_node("Identity", ["nowhere"], ["tb"])])]:
        then_g = helper.make_graph(then_nodes, "then", [], [helper.make_tensor_value_info("tb", f, [2])])
        g = helper.make_graph([helper.make_node("If", ["c"], ["y"], then_branch=then_g,
                                                else_branch=good_else, name="if_old")],
                              "g", outer_in, [helper.make_tensor_value_info("y", f, [2])])
        write(name, old_model(g).SerializeToString())


def contrib_arity_inputs():
    """ONNX Runtime ops without the inputs their expansion reads."""
    f = TensorProto.FLOAT
    x = helper.make_tensor_value_info("x", f, [2, 3])
    gelu = helper.make_node("BiasGelu", ["x"], ["y"], domain="com.microsoft", name="bias_gelu")
    m = model([gelu], [x], [helper.make_tensor_value_info("y", f, [2, 3])])
    m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    write("contrib_bias_gelu_without_bias.onnx", m.SerializeToString())
    # Attention with a past state (key/value caching is not expanded) and
    # MultiHeadAttention with packed QKV (no key and value inputs).
    h = helper.make_tensor_value_info("h", f, [1, 4, 8])
    past = helper.make_tensor_value_info("past", f, [2, 1, 2, 3, 4])
    w = numpy_helper.from_array(np.zeros((8, 24), np.float32), "w")
    att = helper.make_node("Attention", ["h", "w", "", "", "past"], ["y"], domain="com.microsoft",
                           name="attention_with_past", num_heads=2)
    m = model([att], [h, past], [helper.make_tensor_value_info("y", f, [1, 4, 8])], [w])
    m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    write("contrib_attention_with_past.onnx", m.SerializeToString())
    mha = helper.make_node("MultiHeadAttention", ["h"], ["y"], domain="com.microsoft",
                           name="packed_mha", num_heads=2)
    m = model([mha], [h], [helper.make_tensor_value_info("y", f, [1, 4, 8])])
    m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    write("contrib_multi_head_attention_packed.onnx", m.SerializeToString())
    # FusedMatMul transposing next to a 1-D operand (ORT reads that its own
    # way), DynamicQuantizeMatMul without the weights' scale.
    v = helper.make_tensor_value_info("v", f, [8])
    fmm = helper.make_node("FusedMatMul", ["h", "v"], ["y"], domain="com.microsoft",
                           name="fused_vector", transA=1)
    m = model([fmm], [h, v], [helper.make_tensor_value_info("y", f, [1, 4])])
    m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    write("contrib_fused_matmul_transposed_vector.onnx", m.SerializeToString())
    wq = numpy_helper.from_array(np.zeros((8, 3), np.int8), "wq")
    dqmm = helper.make_node("DynamicQuantizeMatMul", ["h", "wq"], ["y"], domain="com.microsoft",
                            name="dqmm_without_scale")
    m = model([dqmm], [h], [helper.make_tensor_value_info("y", f, [1, 4, 3])], [wq])
    m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    write("contrib_dynamic_quantize_matmul_without_scale.onnx", m.SerializeToString())
    # ONNX Runtime's machine-specific blocked layout (a model saved at
    # ORT_ENABLE_ALL): refused with what to do instead.
    x4 = helper.make_tensor_value_info("x4", f, [1, 16, 4, 4])
    reorder = helper.make_node("ReorderInput", ["x4"], ["y"], domain="com.microsoft.nchwc",
                               name="ReorderInput", channels_last=0)
    m = model([reorder], [x4], [helper.make_tensor_value_info("y", f, [1, 16, 4, 4])])
    m.opset_import.append(helper.make_opsetid("com.microsoft.nchwc", 1))
    write("ort_nchwc_layout.onnx", m.SerializeToString())


if __name__ == "__main__":
    main()
    more_bad_inputs()
    hostile_inputs()
    hardening_inputs()
    contrib_arity_inputs()
