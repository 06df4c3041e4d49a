#!/usr/bin/python3
"""Writes small valid ONNX models that exercise importer rules the shipped
ONNX node tests leave out (constant Reshape shapes, legacy Softmax, folding).

Run with Debian's python (onnx 1.12):  /usr/bin/python3 make_models.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def save(name, nodes, inputs, outputs, inits=(), opset=13, ir_version=8):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="make_models.py")
    m.ir_version = ir_version
    if ir_version <= 8:  # onnx 1.12's checker refuses newer IR versions
        onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, name + ".onnx"))


def vi(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def main():
    # Reshape with an initializer shape (0 and -1), then with a Constant-node
    # shape, then Flatten(axis=2) and Identity.
    shape1 = numpy_helper.from_array(np.array([0, -1], dtype=np.int64), "shape1")
    nodes = [
        helper.make_node("Reshape", ["x", "shape1"], ["r1"], name="reshape1"),
        helper.make_node("Constant", [], ["shape2"], name="const_shape2", value_ints=[0, 3, -1]),
        helper.make_node("Reshape", ["r1", "shape2"], ["r2"], name="reshape2"),
        helper.make_node("Flatten", ["r2"], ["f"], name="flatten1", axis=2),
        helper.make_node("Identity", ["f"], ["y"], name="identity1"),
    ]
    save("reshape_chain", nodes, [vi("x", [2, 3, 4])], [vi("y", [6, 4])], [shape1], opset=14)

    # allowzero=1 keeps a 0 in the shape as a real zero-sized dimension.
    shape = numpy_helper.from_array(np.array([0, 3, 0], dtype=np.int64), "shape")
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape_az", allowzero=1)]
    save("reshape_allowzero", nodes, [vi("x", [2, 0, 3])], [vi("y", [0, 3, 0])], [shape], opset=14)

    # Opset 11 Softmax: axis=1 normalises over dims 1.. (coerce); default axis is 1.
    nodes = [
        helper.make_node("Softmax", ["x"], ["s1"], name="softmax_axis1", axis=1),
        helper.make_node("Softmax", ["s1"], ["s2"], name="softmax_default"),
        helper.make_node("Softmax", ["s2"], ["y"], name="softmax_last", axis=-1),
    ]
    save("softmax_opset11", nodes, [vi("x", [2, 3, 4])], [vi("y", [2, 3, 4])], opset=11)

    # A weight stored flat and reshaped by the model (folded at import), a
    # bias stored in typed float_data, an unnamed node.
    w = numpy_helper.from_array(np.arange(1, 13, dtype=np.float32) / 8, "w_flat")
    wshape = numpy_helper.from_array(np.array([4, 3], dtype=np.int64), "w_shape")
    bias = helper.make_tensor("bias", TensorProto.FLOAT, [3], [0.5, -1.25, 2.0])
    nodes = [
        helper.make_node("Reshape", ["w_flat", "w_shape"], ["w"], name="reshape_w"),
        helper.make_node("MatMul", ["x", "w"], ["mm"], name="matmul1"),
        helper.make_node("Add", ["mm", "bias"], ["y"]),
    ]
    save("folded_weight", nodes, [vi("x", [2, 4])], [vi("y", [2, 3])], [w, wshape, bias])

    # A newer exporter's IR version (10) and opset (21) with ops whose meaning did not change.
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu1")]
    save("relu_ir10_opset21", nodes, [vi("x", [2, 4])], [vi("y", [2, 4])], opset=21, ir_version=10)


def shape_subgraph_models():
    """PyTorch-style dynamic reshape: Shape -> Gather -> Unsqueeze -> Concat ->
    Reshape over a symbolic batch dim, and a float16 weight."""
    idx0 = numpy_helper.from_array(np.array(0, dtype=np.int64), "idx0")
    minus1 = numpy_helper.from_array(np.array([-1], dtype=np.int64), "minus1")
    w16 = numpy_helper.from_array(np.linspace(-1, 1, 12).astype(np.float16).reshape(12, 1), "w16")
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "idx0"], ["n"], name="gather", axis=0),
        helper.make_node("Unsqueeze", ["n", "axes0"], ["n1"], name="unsqueeze"),
        helper.make_node("Concat", ["n1", "minus1"], ["target"], name="concat", axis=0),
        helper.make_node("Reshape", ["x", "target"], ["flat"], name="reshape"),
        helper.make_node("Cast", ["w16"], ["w"], name="cast_w", to=TensorProto.FLOAT),
        helper.make_node("MatMul", ["flat", "w"], ["y"], name="matmul"),
    ]
    axes0 = numpy_helper.from_array(np.array([0], dtype=np.int64), "axes0")
    save("shape_subgraph", nodes, [vi("x", ["N", 3, 4])], [vi("y", ["N", 1])],
         [idx0, minus1, w16, axes0])


def non_utf8_name_model():
    """A node and an output whose names are not UTF-8 (protobuf's proto2
    strings are bytes; exporters have written such names). Written by
    patching same-length placeholders in the serialized model."""
    nodes = [helper.make_node("Relu", ["x"], ["yQQQ"], name="reluQQQ"),
             helper.make_node("Neg", ["yQQQ"], ["y"], name="neg")]
    graph = helper.make_graph(nodes, "non_utf8", [vi("x", [2, 3])], [vi("y", [2, 3])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_models.py")
    m.ir_version = 8
    onnx.checker.check_model(m)
    data = m.SerializeToString().replace(b"QQQ", b"\xff\xfe\xc3")
    with open(os.path.join(HERE, "non_utf8_node_name.onnx"), "wb") as f:
        f.write(data)


def range_int64_large_model():
    """Range over int64 values above 2^53 (exact only in integer arithmetic),
    added to an input, with input and expected output in test-data layout."""
    folder = os.path.join(HERE, "range_int64_large")
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    base = (1 << 60) + 1
    consts = [numpy_helper.from_array(np.array(v, dtype=np.int64), n)
              for v, n in ((base, "start"), (base + 7, "limit"), (2, "delta"))]
    nodes = [helper.make_node("Range", ["start", "limit", "delta"], ["r"], name="range"),
             helper.make_node("Add", ["r", "x"], ["y"], name="add")]
    graph = helper.make_graph(nodes, "range_int64_large", [vi("x", [4], TensorProto.INT64)],
                              [vi("y", [4], TensorProto.INT64)], consts)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_models.py")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(folder, "model.onnx"))
    x = np.array([3, -5, 0, 11], dtype=np.int64)
    y = np.arange(base, base + 7, 2, dtype=np.int64) + x  # numpy: exact int64
    for name, arr in (("input_0.pb", x), ("output_0.pb", y)):
        with open(os.path.join(folder, "test_data_set_0", name), "wb") as f:
            f.write(numpy_helper.from_array(arr, "x" if name.startswith("input") else "y").SerializeToString())


def duplicate_node_names_model():
    """Two Mean nodes both named "mean" (each needs a 1/n scale helper; they
    once shared one) and a model value named like a generated helper."""
    folder = os.path.join(HERE, "duplicate_node_names")
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    nodes = [helper.make_node("Mean", ["a", "b"], ["m2"], name="mean"),
             helper.make_node("Mean", ["a", "b", "c", "d"], ["m4"], name="mean"),
             helper.make_node("Add", ["m2", "m4"], ["mean__0"], name="add"),
             helper.make_node("Neg", ["mean__0"], ["y"], name="neg")]
    ins = [vi(n, [2, 3]) for n in "abcd"]
    graph = helper.make_graph(nodes, "duplicate_node_names", ins, [vi("y", [2, 3])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_models.py")
    m.ir_version = 8
    onnx.save(m, os.path.join(folder, "model.onnx"))  # the checker would refuse nothing here
    rng = np.random.default_rng(11)
    xs = [rng.uniform(-2, 2, (2, 3)).astype(np.float32) for _ in range(4)]
    y = -((xs[0] + xs[1]) / 2 + (xs[0] + xs[1] + xs[2] + xs[3]) / 4)
    for i, x in enumerate(xs):
        with open(os.path.join(folder, "test_data_set_0", f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x, "abcd"[i]).SerializeToString())
    with open(os.path.join(folder, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y.astype(np.float32), "y").SerializeToString())


def symbolic_batch_model():
    """x [batch, 3] -> Relu -> MatMul (3, 2) -> y [batch, 2], with two test-data
    sets of different batch sizes (the shapes come from the input files)."""
    folder = os.path.join(HERE, "symbolic_batch")
    w = np.array([[0.5, -1.0], [2.0, 0.25], [-0.75, 1.5]], dtype=np.float32)
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("MatMul", ["r", "w"], ["y"], name="matmul")]
    graph = helper.make_graph(nodes, "symbolic_batch", [vi("x", ["batch", 3])], [vi("y", ["batch", 2])],
                              [numpy_helper.from_array(w, "w")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_models.py")
    m.ir_version = 8
    onnx.checker.check_model(m)
    os.makedirs(folder, exist_ok=True)
    onnx.save(m, os.path.join(folder, "model.onnx"))
    rng = np.random.default_rng(5)
    for k, batch in enumerate((1, 5)):
        d = os.path.join(folder, f"test_data_set_{k}")
        os.makedirs(d, exist_ok=True)
        x = rng.uniform(-1, 1, (batch, 3)).astype(np.float32)
        y = np.maximum(x, 0) @ w
        for name, arr in (("input_0.pb", x), ("output_0.pb", y.astype(np.float32))):
            with open(os.path.join(d, name), "wb") as f:
                f.write(numpy_helper.from_array(arr, "x" if name.startswith("input") else "y").SerializeToString())


def symbolic_two_paths_model():
    """x [batch, 8] -> Relu -> MatMul (8, 4) -> y [batch, 4] beside z [2, 16] ->
    Sigmoid -> u [2, 16], two test-data sets of batch 1 and 3: a new batch
    recompiles the x path's kernels only (the z path's loop IR is unchanged)."""
    folder = os.path.join(HERE, "symbolic_two_paths")
    rng = np.random.default_rng(17)
    w = rng.uniform(-1, 1, (8, 4)).astype(np.float32)
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("MatMul", ["r", "w"], ["y"], name="matmul"),
             helper.make_node("Sigmoid", ["z"], ["u"], name="sigmoid")]
    graph = helper.make_graph(nodes, "symbolic_two_paths", [vi("x", ["batch", 8]), vi("z", [2, 16])],
                              [vi("y", ["batch", 4]), vi("u", [2, 16])], [numpy_helper.from_array(w, "w")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_models.py")
    m.ir_version = 8
    onnx.checker.check_model(m)
    os.makedirs(folder, exist_ok=True)
    onnx.save(m, os.path.join(folder, "model.onnx"))
    for k, batch in enumerate((1, 3)):
        d = os.path.join(folder, f"test_data_set_{k}")
        os.makedirs(d, exist_ok=True)
        x = rng.uniform(-1, 1, (batch, 8)).astype(np.float32)
        z = rng.uniform(-4, 4, (2, 16)).astype(np.float32)
        arrays = {"input_0.pb": (x, "x"), "input_1.pb": (z, "z"),
                  "output_0.pb": ((np.maximum(x, 0) @ w).astype(np.float32), "y"),
                  "output_1.pb": ((1 / (1 + np.exp(-z))).astype(np.float32), "u")}
        for name, (arr, tensor_name) in arrays.items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(numpy_helper.from_array(arr, tensor_name).SerializeToString())


def if_on_sample_rate_model():
    """x [1, n] and a sample rate sr (int64 scalar): If(sr == 16000) reshapes
    x to [2, -1], else to [3, -1], then Relu. As silero_vad's If on its sample
    rate, the graph opens only with sr's value: at n = 8 the else branch does
    not reshape. test_data_set_0: n = 8, sr = 16000 (the studio opens it for
    these input files)."""
    folder = os.path.join(HERE, "if_on_sample_rate")
    then_g = helper.make_graph([helper.make_node("Reshape", ["x", "s2"], ["t"], name="then_reshape")],
                               "then", [], [vi("t", ["a", "b"])],
                               [numpy_helper.from_array(np.array([2, -1], np.int64), "s2")])
    else_g = helper.make_graph([helper.make_node("Reshape", ["x", "s3"], ["e"], name="else_reshape")],
                               "else", [], [vi("e", ["a", "b"])],
                               [numpy_helper.from_array(np.array([3, -1], np.int64), "s3")])
    nodes = [helper.make_node("Equal", ["sr", "k"], ["c"], name="is16k"),
             helper.make_node("If", ["c"], ["r"], name="branch", then_branch=then_g, else_branch=else_g),
             helper.make_node("Relu", ["r"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "if_on_sample_rate",
                              [vi("x", [1, "n"]), vi("sr", [], TensorProto.INT64)], [vi("y", ["a", "b"])],
                              [numpy_helper.from_array(np.array(16000, np.int64), "k")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_models.py")
    m.ir_version = 8
    onnx.checker.check_model(m)
    os.makedirs(folder, exist_ok=True)
    onnx.save(m, os.path.join(folder, "model.onnx"))
    d = os.path.join(folder, "test_data_set_0")
    os.makedirs(d, exist_ok=True)
    x = np.random.default_rng(23).uniform(-1, 1, (1, 8)).astype(np.float32)
    arrays = {"input_0.pb": (x, "x"), "input_1.pb": (np.array(16000, np.int64), "sr"),
              "output_0.pb": (np.maximum(x.reshape(2, -1), 0).astype(np.float32), "y")}
    for name, (arr, tensor_name) in arrays.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(numpy_helper.from_array(arr, tensor_name).SerializeToString())


def winograd_conv_model():
    """Two 3x3 convs (16 -> 16 -> 24 channels on a 28x28 plane, relu): the
    winograd pass rewrites both at -O2 (the studio's roofline test)."""
    rng = np.random.default_rng(11)
    w1 = numpy_helper.from_array(rng.uniform(-0.2, 0.2, (16, 16, 3, 3)).astype(np.float32), "w1")
    b1 = numpy_helper.from_array(rng.uniform(-0.1, 0.1, (16,)).astype(np.float32), "b1")
    w2 = numpy_helper.from_array(rng.uniform(-0.2, 0.2, (24, 16, 3, 3)).astype(np.float32), "w2")
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["y"], name="relu2"),
    ]
    save("winograd_convs", nodes, [vi("x", [1, 16, 28, 28])], [vi("y", [1, 24, 28, 28])], [w1, b1, w2])


def int8_dense_model():
    """A dynamically quantized dense layer (as ONNX Runtime's quantize_dynamic
    writes one): DynamicQuantizeLinear, MatMulInteger with int8 weights, the
    scales applied in float. Runs as an integer GEMM (vpdpbusd)."""
    rng = np.random.default_rng(11)
    w = numpy_helper.from_array(rng.integers(-127, 128, (512, 512)).astype(np.int8), "w")
    ws = numpy_helper.from_array(np.array(0.01, np.float32), "w_scale")
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"], name="quantize_x"),
        helper.make_node("MatMulInteger", ["xq", "w", "xz"], ["acc"], name="dense_int8"),
        helper.make_node("Cast", ["acc"], ["accf"], name="to_float", to=TensorProto.FLOAT),
        helper.make_node("Mul", ["xs", "w_scale"], ["scale"], name="scales"),
        helper.make_node("Mul", ["accf", "scale"], ["y"], name="rescale"),
    ]
    save("int8_dense", nodes, [vi("x", [256, 512])], [vi("y", [256, 512])], [w, ws])


if __name__ == "__main__":
    main()
    winograd_conv_model()
    shape_subgraph_models()
    non_utf8_name_model()
    range_int64_large_model()
    duplicate_node_names_model()
    symbolic_batch_model()
    symbolic_two_paths_model()
    if_on_sample_rate_model()
    int8_dense_model()
