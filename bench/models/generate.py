#!/usr/bin/env python3
"""Generates Tessera's end-to-end benchmark models as ONNX (opset 17, IR 8,
readable by Debian's libonnx 1.12) with seeded random weights, each in an
ONNX test-case folder: NAME/model.onnx and NAME/test_data_set_0/{input,output}_N.pb,
the outputs computed by ONNX Runtime.

  .venv/bin/python bench/models/generate.py --out build/bench-models

Models (weights scaled so activations stay O(1); BatchNorm is folded into the
convolutions, as inference exports from PyTorch do):
  mlp_b1, mlp_b64      784-512-512-10 MLP (Gemm, Relu), batch 1 and 64
  resnet18             ResNet-18 shape at 1x3x224x224 (Conv, Relu, MaxPool, Add,
                       GlobalAveragePool, Flatten, Gemm)
  resnet18_b16         the same model (same weights) at batch 16, 16x3x224x224
                       (the GPU benchmark's second figure, scripts/bench-gpu.sh)
  mobilenetv2          MobileNetV2 shape at 1x3x224x224 (Conv incl. depthwise,
                       Clip 0..6, Add, GlobalAveragePool, Flatten, Gemm)
  transformer_encoder  one encoder block, seq 128, hidden 256, 4 heads, FFN 1024
                       (MatMul, Add, Reshape, Transpose, Softmax, Mul,
                       LayerNormalization, Erf-form GELU)
  transformer_encoder_decomposed_ln
                       the same block with LayerNorm written out as
                       ReduceMean/Sub/Pow/Sqrt/Div/Mul/Add (older exporters)
  bert_base_s128, bert_base_s512
                       one BERT-base-shaped encoder layer (hidden 768, 12
                       heads, FFN 3072) at sequence 128 and 512, batch 1
  bert_base_s128_b8    the same at batch 8
  decoder_causal_s2048 the small block's ops at sequence 2048, hidden 512, 8
                       heads, FFN 2048, with a causal mask (Where before the
                       Softmax, as decoders export it)
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8


class Builder:
    """Accumulates nodes and initializers with unique names."""

    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)
        self.nodes, self.inits, self.count = [], [], 0

    def name(self, base):
        self.count += 1
        return f"{base}_{self.count}"

    def const(self, base, array):
        n = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(array), n))
        return n

    def weight(self, base, shape, fan_in, gain=2.0):
        w = self.rng.randn(*shape).astype(np.float32) * np.float32(np.sqrt(gain / fan_in))
        return self.const(base, w)

    def bias(self, base, n):
        return self.const(base, (self.rng.randn(n) * 0.05).astype(np.float32))

    def op(self, op_type, inputs, base=None, **attrs):
        out = self.name(base or op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out

    def model(self, name, inputs, outputs):
        g = helper.make_graph(self.nodes, name, inputs, outputs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="tessera-bench")
        m.ir_version = IR_VERSION
        onnx.checker.check_model(m)
        return m


def tensor(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def mlp(batch):
    b = Builder(1)
    h = "x"
    dims = [784, 512, 512, 10]
    for i in range(3):
        w = b.weight("w", (dims[i + 1], dims[i]), dims[i])
        h = b.op("Gemm", [h, w, b.bias("b", dims[i + 1])], "fc", transB=1)
        if i < 2:
            h = b.op("Relu", [h])
    return b.model(f"mlp_b{batch}", [tensor("x", [batch, 784])], [tensor(h, [batch, 10])])


def conv(b, x, cin, cout, k, stride=1, groups=1, act="relu"):
    w = b.weight("w", (cout, cin // groups, k, k), cin // groups * k * k)
    y = b.op("Conv", [x, w, b.bias("b", cout)], "conv", kernel_shape=[k, k],
             strides=[stride, stride], pads=[k // 2] * 4, group=groups)
    if act == "relu":
        y = b.op("Relu", [y])
    elif act == "relu6":
        y = b.op("Clip", [y, b.const("lo", np.float32(0)), b.const("hi", np.float32(6))], "relu6")
    return y


def resnet18(batch=1):
    b = Builder(2)
    h = conv(b, "x", 3, 64, 7, stride=2)
    h = b.op("MaxPool", [h], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for stage, cout in enumerate([64, 128, 256, 512]):
        for block in range(2):
            stride = 2 if stage > 0 and block == 0 else 1
            y = conv(b, h, cin, cout, 3, stride)
            y = conv(b, y, cout, cout, 3, 1, act=None)
            # Residual branch scaled down so the sum stays O(1) through 8 blocks.
            y = b.op("Mul", [y, b.const("s", np.float32(0.5))])
            short = h if stride == 1 and cin == cout else conv(b, h, cin, cout, 1, stride, act=None)
            h = b.op("Relu", [b.op("Add", [y, short])])
            cin = cout
    h = b.op("Flatten", [b.op("GlobalAveragePool", [h])], axis=1)
    h = b.op("Gemm", [h, b.weight("w", (1000, 512), 512), b.bias("b", 1000)], "fc", transB=1)
    name = "resnet18" if batch == 1 else f"resnet18_b{batch}"
    return b.model(name, [tensor("x", [batch, 3, 224, 224])], [tensor(h, [batch, 1000])])


def mobilenetv2():
    b = Builder(3)
    h = conv(b, "x", 3, 32, 3, stride=2, act="relu6")
    cin = 32
    # (expansion, channels, repeats, stride) of MobileNetV2.
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]:
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = cin * t
            y = h if t == 1 else conv(b, h, cin, hidden, 1, act="relu6")
            y = conv(b, y, hidden, hidden, 3, stride, groups=hidden, act="relu6")
            y = conv(b, y, hidden, c, 1, act=None)
            if stride == 1 and cin == c:
                y = b.op("Add", [h, b.op("Mul", [y, b.const("s", np.float32(0.5))])])
            h, cin = y, c
    h = conv(b, h, 320, 1280, 1, act="relu6")
    h = b.op("Flatten", [b.op("GlobalAveragePool", [h])], axis=1)
    h = b.op("Gemm", [h, b.weight("w", (1000, 1280), 1280), b.bias("b", 1000)], "fc", transB=1)
    return b.model("mobilenetv2", [tensor("x", [1, 3, 224, 224])], [tensor(h, [1, 1000])])


def transformer_encoder(seq=128, hidden=256, heads=4, ffn=1024, decomposed_ln=False, batch=1,
                        name="transformer_encoder", causal=False):
    b = Builder(4)
    dh = hidden // heads

    def linear(x, n_in, n_out):
        y = b.op("MatMul", [x, b.weight("w", (n_in, n_out), n_in, gain=1.0)])
        return b.op("Add", [y, b.bias("b", n_out)])

    def layer_norm(x):
        g = b.const("gamma", (1 + 0.1 * b.rng.randn(hidden)).astype(np.float32))
        if not decomposed_ln:
            return b.op("LayerNormalization", [x, g, b.bias("beta", hidden)], "ln", axis=-1,
                        epsilon=1e-5)
        # As exporters below opset 17 write it (torch.onnx, tf2onnx):
        # (x - mean) / sqrt(mean((x - mean)^2) + eps) * gamma + beta.
        d = b.op("Sub", [x, b.op("ReduceMean", [x], axes=[-1], keepdims=1)])
        v = b.op("ReduceMean", [b.op("Pow", [d, b.const("two", np.float32(2))])], axes=[-1],
                 keepdims=1)
        s = b.op("Sqrt", [b.op("Add", [v, b.const("eps", np.float32(1e-5))])])
        return b.op("Add", [b.op("Mul", [b.op("Div", [d, s]), g]), b.bias("beta", hidden)])

    def split_heads(x):  # [batch, seq, hidden] -> [batch, heads, seq, dh]
        x = b.op("Reshape", [x, b.const("shape", np.array([batch, seq, heads, dh], np.int64))])
        return b.op("Transpose", [x], perm=[0, 2, 1, 3])

    x = "x"
    q = split_heads(linear(x, hidden, hidden))
    k = split_heads(linear(x, hidden, hidden))
    v = split_heads(linear(x, hidden, hidden))
    kt = b.op("Transpose", [k], perm=[0, 1, 3, 2])
    s = b.op("Mul", [b.op("MatMul", [q, kt]), b.const("scale", np.float32(1 / np.sqrt(dh)))])
    if causal:
        # As decoders export it: where(keep, scores, -inf), keep the lower
        # triangle (each position attends to itself and the ones before).
        keep = np.tril(np.ones((seq, seq), dtype=bool))[None, None]
        s = b.op("Where", [b.const("causal", keep), s, b.const("neg_inf", np.float32(-np.inf))])
    p = b.op("Softmax", [s], axis=-1)
    a = b.op("Transpose", [b.op("MatMul", [p, v])], perm=[0, 2, 1, 3])
    a = b.op("Reshape", [a, b.const("shape", np.array([batch, seq, hidden], np.int64))])
    h = layer_norm(b.op("Add", [x, linear(a, hidden, hidden)]))
    f = linear(h, hidden, ffn)
    # GELU as PyTorch exports it below opset 20: 0.5 x (1 + erf(x / sqrt 2)).
    e = b.op("Erf", [b.op("Div", [f, b.const("sqrt2", np.float32(np.sqrt(2)))])])
    f = b.op("Mul", [b.op("Mul", [f, b.op("Add", [e, b.const("one", np.float32(1))])]),
                     b.const("half", np.float32(0.5))])
    y = layer_norm(b.op("Add", [h, linear(f, ffn, hidden)]))
    return b.model(name, [tensor("x", [batch, seq, hidden])], [tensor(y, [batch, seq, hidden])])


MODELS = {
    "mlp_b1": lambda: mlp(1),
    "mlp_b64": lambda: mlp(64),
    "resnet18": resnet18,
    "resnet18_b16": lambda: resnet18(16),
    "mobilenetv2": mobilenetv2,
    "transformer_encoder": transformer_encoder,
    "transformer_encoder_decomposed_ln": lambda: transformer_encoder(
        decomposed_ln=True, name="transformer_encoder_decomposed_ln"),
    "bert_base_s128": lambda: transformer_encoder(128, 768, 12, 3072, name="bert_base_s128"),
    "bert_base_s512": lambda: transformer_encoder(512, 768, 12, 3072, name="bert_base_s512"),
    "bert_base_s128_b8": lambda: transformer_encoder(128, 768, 12, 3072, batch=8,
                                                      name="bert_base_s128_b8"),
    # A long causal sequence (a decoder's prefill): 8 heads of 64 over 2048
    # positions, the mask a constant where(keep, scores, -inf).
    "decoder_causal_s2048": lambda: transformer_encoder(2048, 512, 8, 2048, causal=True,
                                                         name="decoder_causal_s2048"),
}


def write_case(out, name, model):
    folder = os.path.join(out, name)
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    rng = np.random.RandomState(7)
    feeds = {}
    for i, inp in enumerate(model.graph.input):
        shape = [d.dim_value for d in inp.type.tensor_type.shape.dim]
        # Non-zero values in [-1, -0.1] U [0.1, 1], like Tessera's random inputs.
        x = rng.uniform(0.1, 1.0, shape) * rng.choice([-1.0, 1.0], shape)
        feeds[inp.name] = x.astype(np.float32)
        onnx.save_tensor(numpy_helper.from_array(feeds[inp.name], inp.name),
                         os.path.join(data, f"input_{i}.pb"))
    try:
        import onnxruntime as ort
    except ImportError:  # the model and inputs suffice for `tessera bench model`
        print(f"{name}: onnxruntime not importable, no expected outputs written")
        return folder
    sess = ort.InferenceSession(os.path.join(folder, "model.onnx"),
                                providers=["CPUExecutionProvider"])
    for i, y in enumerate(sess.run(None, feeds)):
        name_i = model.graph.output[i].name
        onnx.save_tensor(numpy_helper.from_array(y, name_i), os.path.join(data, f"output_{i}.pb"))
    return folder


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="build/bench-models")
    ap.add_argument("--only", nargs="*", help="model names (default: all)")
    args = ap.parse_args()
    for name in args.only or MODELS:
        folder = write_case(args.out, name, MODELS[name]())
        print(f"{name}: {folder}")


if __name__ == "__main__":
    main()
