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
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape)
                                        for n, a in inputs],
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
