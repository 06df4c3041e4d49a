#!/usr/bin/env python3
"""Writes small QDQ models (QuantizeLinear -> DequantizeLinear around the
inputs of MatMul and Conv, as quantize_static writes them), each a test-case
folder with random inputs and the outputs ONNX Runtime computes for them with
graph optimizations off (the dequantized values multiplied in float: what the
QDQ form means). Tessera folds them into integer ops (onnx_qdq_fold.h).

    .venv/bin/python tests/data/onnx_models/make_qdq_models.py   # needs onnx, onnxruntime
"""
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(21)


def const(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def write(name, nodes, x, inits, opset=13):
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    d = os.path.join(HERE, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    path = os.path.join(d, "model.onnx")
    onnx.save(m, path)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    y = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    m.graph.output[0].CopyFrom(helper.make_tensor_value_info("y", TensorProto.FLOAT, y.shape))
    onnx.save(m, path)
    with open(os.path.join(d, "test_data_set_0", "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y, "y").SerializeToString())


def activation_qdq(prefix, scale, zp):
    """x -> QuantizeLinear (uint8) -> DequantizeLinear, per tensor."""
    nodes = [helper.make_node("QuantizeLinear", ["x", prefix + "_s", prefix + "_z"], [prefix + "_q"]),
             helper.make_node("DequantizeLinear", [prefix + "_q", prefix + "_s", prefix + "_z"], [prefix + "_dq"])]
    return nodes, [const(prefix + "_s", np.float32(scale)), const(prefix + "_z", np.uint8(zp))]


def qdq_matmul():
    """Two MatMuls on one quantized activation: per-column and per-tensor int8 weights."""
    x = rng.uniform(-2, 2, (2, 24, 70)).astype(np.float32)
    nodes, inits = activation_qdq("xa", 4.0 / 255, 128)
    w1 = rng.integers(-127, 128, (70, 45)).astype(np.int8)
    s1 = rng.uniform(0.002, 0.02, 45).astype(np.float32)
    w2 = rng.integers(-127, 128, (45, 33)).astype(np.int8)
    nodes += [
        helper.make_node("DequantizeLinear", ["w1", "w1_s", "w1_z"], ["w1_dq"], axis=1),
        helper.make_node("MatMul", ["xa_dq", "w1_dq"], ["h"], name="dense1"),
        helper.make_node("Relu", ["h"], ["hr"]),
        helper.make_node("QuantizeLinear", ["hr", "h_s", "h_z"], ["h_q"]),
        helper.make_node("DequantizeLinear", ["h_q", "h_s", "h_z"], ["h_dq"]),
        helper.make_node("DequantizeLinear", ["w2", "w2_s"], ["w2_dq"]),
        helper.make_node("MatMul", ["h_dq", "w2_dq"], ["y"], name="dense2"),
    ]
    inits += [const("w1", w1), const("w1_s", s1), const("w1_z", np.zeros(45, np.int8)),
              const("h_s", np.float32(0.05)), const("h_z", np.uint8(0)),
              const("w2", w2), const("w2_s", np.float32(0.01))]
    write("qdq_matmul", nodes, x, inits)


def qdq_conv():
    """A 3-channel stem conv (stays float: too few input channels) and a conv
    with per-output-channel int8 weights and a float bias, padded (an integer
    GEMM)."""
    x = rng.uniform(-1, 3, (1, 3, 9, 11)).astype(np.float32)
    nodes, inits = activation_qdq("xa", 4.0 / 255, 64)
    w0 = rng.integers(-127, 128, (8, 3, 3, 3)).astype(np.int8)
    w = rng.integers(-127, 128, (7, 8, 3, 3)).astype(np.int8)
    s = rng.uniform(0.002, 0.02, 7).astype(np.float32)
    nodes += [
        helper.make_node("DequantizeLinear", ["w0", "w0_s"], ["w0_dq"]),
        helper.make_node("Conv", ["xa_dq", "w0_dq"], ["c0"], name="stem", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c0"], ["r0"]),
        helper.make_node("QuantizeLinear", ["r0", "r0_s", "r0_z"], ["r0_q"]),
        helper.make_node("DequantizeLinear", ["r0_q", "r0_s", "r0_z"], ["r0_dq"]),
        helper.make_node("DequantizeLinear", ["w", "w_s", "w_z"], ["w_dq"], axis=0),
        helper.make_node("Conv", ["r0_dq", "w_dq", "b"], ["y"], name="conv", pads=[1, 1, 1, 1]),
    ]
    inits += [const("w0", w0), const("w0_s", np.float32(0.01)),
              const("r0_s", np.float32(0.05)), const("r0_z", np.uint8(0)),
              const("w", w), const("w_s", s), const("w_z", np.zeros(7, np.int8)),
              const("b", rng.uniform(-1, 1, 7).astype(np.float32))]
    write("qdq_conv", nodes, x, inits)


if __name__ == "__main__":
    qdq_matmul()
    qdq_conv()
