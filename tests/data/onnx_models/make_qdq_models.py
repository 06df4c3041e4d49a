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
    save_case(name, m, x)


def save_case(name, m, x, reference=None):
    """The case folder of model m (input x, output y): y as `reference`
    computes it (m, x -> y), else as ONNX Runtime does, optimizations off."""
    d = os.path.join(HERE, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    path = os.path.join(d, "model.onnx")
    onnx.save(m, path)
    if reference:
        y = reference(m, x)
    else:
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


def requantized(t):
    """t -> QuantizeLinear -> DequantizeLinear (t_q, t_dq), with the scale and
    zero point initializers t_s and t_z the caller adds."""
    return [helper.make_node("QuantizeLinear", [t, t + "_s", t + "_z"], [t + "_q"]),
            helper.make_node("DequantizeLinear", [t + "_q", t + "_s", t + "_z"], [t + "_dq"])]


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
    """A 3-channel stem conv (an integer GEMM of 27-term windows) and a conv
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


def dynamic_conv(name, weight_type, per_channel, channel_zero_points=False):
    """Two convs quantized by ONNX Runtime's quantize_dynamic into
    DynamicQuantizeLinear + ConvInteger: the zero point of the activations
    computed at run time (the padding holds it), the weights' zero point
    per tensor (uint8, as older quantizers wrote them) or per output
    channel; a batch of 2, a padded strided 3x3 conv and a 1x1 conv. The
    reference is ONNX Runtime running the quantized model."""
    import tempfile
    from onnxruntime.quantization import QuantType, quantize_dynamic
    x = rng.uniform(-1, 3, (2, 6, 11, 13)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv3x3", pads=[1, 1, 1, 1],
                              strides=[2, 2]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["y"], name="conv1x1")]
    inits = [const("w1", rng.normal(0, 0.3, (8, 6, 3, 3)).astype(np.float32)),
             const("b1", rng.uniform(-1, 1, 8).astype(np.float32)),
             const("w2", rng.normal(0.1, 0.4, (5, 8, 1, 1)).astype(np.float32)),
             const("b2", rng.uniform(-1, 1, 5).astype(np.float32))]
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    with tempfile.TemporaryDirectory() as tmp:
        onnx.save(m, os.path.join(tmp, "f.onnx"))
        quantize_dynamic(os.path.join(tmp, "f.onnx"), os.path.join(tmp, "q.onnx"),
                         op_types_to_quantize=["Conv"], weight_type=weight_type,
                         per_channel=per_channel)
        q = onnx.load(os.path.join(tmp, "q.onnx"))
    assert [n.op_type for n in q.graph.node].count("ConvInteger") == 2, [n.op_type for n in q.graph.node]
    if channel_zero_points:
        for t in q.graph.initializer:
            if t.name == "w1_quantized":
                oc = t.dims[0]
                zp = rng.integers(90, 170, oc).astype(np.uint8)
                w = numpy_helper.to_array(t).astype(np.int32)
                t.CopyFrom(const(t.name, np.clip(w - 128 + zp.reshape(-1, 1, 1, 1), 0, 255).astype(np.uint8)))
        for t in q.graph.initializer:
            if t.name == "w1_zero_point":
                t.CopyFrom(const(t.name, zp))
    reference = None
    if channel_zero_points:
        from onnx.reference import ReferenceEvaluator
        reference = lambda m, x: ReferenceEvaluator(m).run(None, {"x": x})[0]
    save_case(name, q, x, reference)

def qdq_depthwise():
    """MobileNet's int8 blocks as quantize_static writes them: depthwise convs
    on uint8 activations with a non-zero zero point (the padding holds it),
    a 3x3 stride-2 one with per-channel int8 weights and a bias, a 5x5
    stride-1 one with per-tensor uint8 weights and a zero point of 128, and a
    grouped conv of two channels per group and two outputs each. Tessera
    runs them on the 8-bit data (grouped_byte_conv)."""
    x = rng.uniform(-1, 3, (1, 16, 19, 37)).astype(np.float32)
    nodes, inits = activation_qdq("xa", 4.0 / 255, 64)
    w1 = rng.integers(-127, 128, (16, 1, 3, 3)).astype(np.int8)
    s1 = rng.uniform(0.002, 0.02, 16).astype(np.float32)
    w2 = rng.integers(0, 256, (16, 1, 5, 5)).astype(np.uint8)
    w3 = rng.integers(-127, 128, (16, 2, 3, 3)).astype(np.int8)
    nodes += [
        helper.make_node("DequantizeLinear", ["w1", "w1_s", "w1_z"], ["w1_dq"], axis=0),
        helper.make_node("Conv", ["xa_dq", "w1_dq", "b1"], ["c1"], name="dw3x3s2", group=16,
                         pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Clip", ["c1", "lo", "hi"], ["r1"]),
        *requantized("r1"),
        helper.make_node("DequantizeLinear", ["w2", "w2_s", "w2_z"], ["w2_dq"]),
        helper.make_node("Conv", ["r1_dq", "w2_dq"], ["c2"], name="dw5x5", group=16, pads=[2, 2, 2, 2]),
        *requantized("c2"),
        helper.make_node("DequantizeLinear", ["w3", "w3_s"], ["w3_dq"]),
        helper.make_node("Conv", ["c2_dq", "w3_dq", "b3"], ["y"], name="grouped", group=8, pads=[0, 1, 1, 0]),
    ]
    inits += [const("w1", w1), const("w1_s", s1), const("w1_z", np.zeros(16, np.int8)),
              const("b1", rng.uniform(-1, 1, 16).astype(np.float32)),
              const("lo", np.float32(0)), const("hi", np.float32(6)),
              const("r1_s", np.float32(6.0 / 255)), const("r1_z", np.uint8(0)),
              const("w2", w2), const("w2_s", np.float32(0.004)), const("w2_z", np.uint8(128)),
              const("c2_s", np.float32(0.05)), const("c2_z", np.uint8(100)),
              const("w3", w3), const("w3_s", np.float32(0.01)),
              const("b3", rng.uniform(-1, 1, 16).astype(np.float32))]
    write("qdq_depthwise", nodes, x, inits)


def qdq_depthwise_int8():
    """Depthwise convs on int8 activations (ONNX Runtime's quantize_static
    default, QInt8 activations and weights), with a batch of 2."""
    x = rng.uniform(-2, 2, (2, 24, 14, 14)).astype(np.float32)
    nodes = [helper.make_node("QuantizeLinear", ["x", "xa_s", "xa_z"], ["xa_q"]),
             helper.make_node("DequantizeLinear", ["xa_q", "xa_s", "xa_z"], ["xa_dq"])]
    w = rng.integers(-127, 128, (24, 1, 3, 3)).astype(np.int8)
    nodes += [
        helper.make_node("DequantizeLinear", ["w", "w_s"], ["w_dq"], axis=0),
        helper.make_node("Conv", ["xa_dq", "w_dq", "b"], ["y"], name="dw", group=24, pads=[1, 1, 1, 1]),
    ]
    inits = [const("xa_s", np.float32(4.0 / 255)), const("xa_z", np.int8(-10)), const("w", w),
             const("w_s", rng.uniform(0.002, 0.02, 24).astype(np.float32)),
             const("b", rng.uniform(-1, 1, 24).astype(np.float32))]
    write("qdq_depthwise_int8", nodes, x, inits)


def qdq_gemm():
    """Classifier Gemms as quantize_static writes them: transB with int8
    weights per output row (axis 0) and a bias, then one without transB,
    uint8 weights with a zero point; a third with alpha 0.5 stays float."""
    x = rng.uniform(-2, 2, (3, 40)).astype(np.float32)
    nodes, inits = activation_qdq("xa", 4.0 / 255, 128)
    w1 = rng.integers(-127, 128, (17, 40)).astype(np.int8)
    w2 = rng.integers(0, 256, (17, 11)).astype(np.uint8)
    w3 = rng.integers(-127, 128, (11, 5)).astype(np.int8)
    nodes += [
        helper.make_node("DequantizeLinear", ["w1", "w1_s", "w1_z"], ["w1_dq"], axis=0),
        helper.make_node("Gemm", ["xa_dq", "w1_dq", "b1"], ["h"], name="fc1", transB=1),
        *requantized("h"),
        helper.make_node("DequantizeLinear", ["w2", "w2_s", "w2_z"], ["w2_dq"]),
        helper.make_node("Gemm", ["h_dq", "w2_dq"], ["g"], name="fc2"),
        *requantized("g"),
        helper.make_node("DequantizeLinear", ["w3", "w3_s"], ["w3_dq"]),
        helper.make_node("Gemm", ["g_dq", "w3_dq", "b3"], ["y"], name="fc3", alpha=0.5),
    ]
    inits += [const("w1", w1), const("w1_s", rng.uniform(0.002, 0.02, 17).astype(np.float32)),
              const("w1_z", np.zeros(17, np.int8)), const("b1", rng.uniform(-1, 1, 17).astype(np.float32)),
              const("h_s", np.float32(0.05)), const("h_z", np.uint8(120)),
              const("w2", w2), const("w2_s", np.float32(0.003)), const("w2_z", np.uint8(128)),
              const("g_s", np.float32(0.02)), const("g_z", np.uint8(130)),
              const("w3", w3), const("w3_s", np.float32(0.01)),
              const("b3", rng.uniform(-1, 1, 5).astype(np.float32))]
    write("qdq_gemm", nodes, x, inits)


def conv_clip_chain():
    """A float model for `tessera quantize`: Conv -> Clip(0, 6) -> Conv ->
    Relu -> Conv with biases, whose Clip and Relu the quantizer folds into
    the quantization of the conv outputs they read. The reference is ONNX
    Runtime's float output."""
    x = rng.uniform(-1, 1, (1, 3, 12, 12)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Clip", ["c1", "lo", "hi"], ["r1"], name="relu6"),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2"),
             helper.make_node("Relu", ["c2"], ["r2"], name="relu"),
             helper.make_node("Conv", ["r2", "w3", "b3"], ["y"], name="conv3")]
    inits = [const("w1", rng.normal(0, 0.5, (8, 3, 3, 3)).astype(np.float32)),
             const("b1", rng.uniform(-0.5, 1, 8).astype(np.float32)),
             const("lo", np.float32(0)), const("hi", np.float32(6)),
             const("w2", rng.normal(0, 0.4, (6, 8, 1, 1)).astype(np.float32)),
             const("b2", rng.uniform(-0.5, 0.5, 6).astype(np.float32)),
             const("w3", rng.normal(0, 0.4, (4, 6, 1, 1)).astype(np.float32)),
             const("b3", rng.uniform(-0.5, 0.5, 4).astype(np.float32))]
    write("conv_clip_chain", nodes, x, inits)


def qdq_max_pool():
    """MaxPools as quantize_static writes them, between a DequantizeLinear and
    a QuantizeLinear of one scale and zero point: on uint8 data (3x3/2, pads
    1, whose padding must not win) and on int8 data (3x3/2, ceil_mode, pads on one side),
    both folded into pools of the 8-bit tensors; a third whose output is
    quantized with another scale stays float, and a fourth of int8 data
    without zero points, requantized to uint8. Each pool feeds an integer
    conv; the four conv outputs are summed."""
    x = rng.uniform(-1, 3, (1, 3, 15, 17)).astype(np.float32)
    nodes, inits = activation_qdq("xa", 4.0 / 255, 64)
    w0 = rng.integers(-127, 128, (8, 3, 3, 3)).astype(np.int8)
    w = rng.integers(-127, 128, (6, 8, 3, 3)).astype(np.int8)
    nodes += [
        helper.make_node("DequantizeLinear", ["w0", "w0_s"], ["w0_dq"]),
        helper.make_node("Conv", ["xa_dq", "w0_dq"], ["c0"], name="stem", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c0"], ["r0"]),
        *requantized("r0"),
        helper.make_node("QuantizeLinear", ["c0", "s8_s", "s8_z"], ["c0_q"]),
        helper.make_node("DequantizeLinear", ["c0_q", "s8_s", "s8_z"], ["c0_dq"]),
        helper.make_node("DequantizeLinear", ["w", "w_s", "w_z"], ["w_dq"], axis=0),
    ]
    # pd: int8 data dequantized without a zero point, requantized to uint8
    # without one (one scale, other types): stays float.
    nodes += [helper.make_node("DequantizeLinear", ["d8", "pd_s"], ["d8_dq"])]
    pools = [("pa", "r0_dq", "r0", dict(pads=[1, 1, 1, 1], strides=[2, 2])),
             ("pb", "c0_dq", "s8", dict(pads=[1, 1, 0, 0], strides=[2, 2], ceil_mode=1)),
             ("pc", "r0_dq", "pc", dict(pads=[1, 1, 1, 1], strides=[2, 2])),
             ("pd", "d8_dq", "pd", dict(pads=[1, 1, 1, 1], strides=[2, 2]))]
    for name, src, q, attrs in pools:
        zp = [] if name == "pd" else [q + "_z"]
        nodes += [helper.make_node("MaxPool", [src], [name], name=name, kernel_shape=[3, 3], **attrs),
                  helper.make_node("QuantizeLinear", [name, q + "_s"] + zp, [name + "_q"]),
                  helper.make_node("DequantizeLinear", [name + "_q", q + "_s"] + zp, [name + "_dq"]),
                  helper.make_node("Conv", [name + "_dq", "w_dq", "b"], [name + "_y"], name=name + "_conv",
                                   pads=[1, 1, 1, 1])]
    nodes += [helper.make_node("Add", ["pa_y", "pb_y"], ["ab"]),
              helper.make_node("Add", ["pc_y", "pd_y"], ["cd"]),
              helper.make_node("Add", ["ab", "cd"], ["y"])]
    inits += [const("w0", w0), const("w0_s", np.float32(0.01)),
              const("r0_s", np.float32(0.05)), const("r0_z", np.uint8(3)),
              const("s8_s", np.float32(0.06)), const("s8_z", np.int8(-20)),
              const("pc_s", np.float32(0.07)), const("pc_z", np.uint8(0)),
              const("d8", rng.integers(-128, 128, (1, 8, 15, 17)).astype(np.int8)),
              const("pd_s", np.float32(0.03)),
              const("w", w), const("w_s", rng.uniform(0.002, 0.02, 6).astype(np.float32)),
              const("w_z", np.zeros(6, np.int8)), const("b", rng.uniform(-1, 1, 6).astype(np.float32))]
    write("qdq_max_pool", nodes, x, inits)


if __name__ == "__main__":
    from onnxruntime.quantization import QuantType
    qdq_matmul()
    qdq_conv()
    dynamic_conv("dynamic_conv_uint8_weights", QuantType.QUInt8, False)
    dynamic_conv("dynamic_conv_int8_per_channel", QuantType.QInt8, True)
    dynamic_conv("dynamic_conv_uint8_channel_zero_points", QuantType.QUInt8, False, True)
    qdq_depthwise()
    qdq_depthwise_int8()
    qdq_gemm()
    conv_clip_chain()
    qdq_max_pool()
