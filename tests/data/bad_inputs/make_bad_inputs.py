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

    # A valid model using an op Tessera does not support (LRN).
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 5, 5])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 5, 5])
    lrn = helper.make_node("LRN", ["x"], ["y"], name="lrn1", size=3)
    m = model([lrn], [x], [y])
    onnx.checker.check_model(m)
    write("unsupported_op.onnx", m.SerializeToString())

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


if __name__ == "__main__":
    main()
