#!/usr/bin/python3
"""Builds the bundled example model resources/models/small_cnn/ with fixed seeded weights.

conv(3->8, 3x3, pad 1) -> relu -> maxpool 2x2/2 -> conv(8->16, 3x3, pad 1) -> relu
-> global average pool -> flatten -> gemm(16->10) -> softmax

Its test data (ONNX test-data layout: test_data_set_0/input_0.pb, output_0.pb) is
computed here by a plain numpy reference implementation, independent of Tessera.
Run with Debian's python3 (python3-onnx, python3-numpy):
    /usr/bin/python3 resources/models/make_small_cnn.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "small_cnn")


def conv2d(x, w, b, pad):
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - r + 1, wd + 2 * pad - s + 1
    y = np.zeros((n, k, oh, ow), dtype=np.float64)
    for dr in range(r):
        for ds in range(s):
            patch = xp[:, :, dr:dr + oh, ds:ds + ow]  # n, c, oh, ow
            y += np.einsum("nchw,kc->nkhw", patch, w[:, :, dr, ds])
    return y + b.reshape(1, k, 1, 1)


def maxpool2x2(x):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def reference(x, p):
    y = np.maximum(conv2d(x, p["w1"], p["b1"], 1), 0)
    y = maxpool2x2(y)
    y = np.maximum(conv2d(y, p["w2"], p["b2"], 1), 0)
    y = y.mean(axis=(2, 3))                       # global average pool + flatten
    y = y @ p["wfc"].T + p["bfc"]                 # gemm, transB=1
    e = np.exp(y - y.max(axis=1, keepdims=True))  # softmax
    return e / e.sum(axis=1, keepdims=True)


def main():
    rng = np.random.default_rng(20261121)
    p = {
        "w1": rng.normal(0, 0.3, (8, 3, 3, 3)),
        "b1": rng.normal(0, 0.1, (8,)),
        "w2": rng.normal(0, 0.2, (16, 8, 3, 3)),
        "b2": rng.normal(0, 0.1, (16,)),
        "wfc": rng.normal(0, 0.5, (10, 16)),
        "bfc": rng.normal(0, 0.1, (10,)),
    }
    p = {k: v.astype(np.float32) for k, v in p.items()}
    x = rng.uniform(-1, 1, (1, 3, 32, 32)).astype(np.float32)

    nodes = [
        helper.make_node("Conv", ["input", "w1", "b1"], ["c1"], name="conv1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], name="conv2",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten", axis=1),
        helper.make_node("Gemm", ["f", "wfc", "bfc"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes, "small_cnn",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 10])],
        initializer=[numpy_helper.from_array(v, k) for k, v in p.items()],
    )
    model = helper.make_model(graph, producer_name="tessera-examples",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)

    os.makedirs(os.path.join(OUT, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(OUT, "model.onnx"))
    y = reference(x.astype(np.float64), {k: v.astype(np.float64) for k, v in p.items()})
    y = y.astype(np.float32)
    for name, arr in (("input_0.pb", x), ("output_0.pb", y)):
        t = numpy_helper.from_array(arr, "input" if name.startswith("input") else "probs")
        with open(os.path.join(OUT, "test_data_set_0", name), "wb") as f:
            f.write(t.SerializeToString())
    print("wrote", OUT, "output:", np.round(y, 4))


if __name__ == "__main__":
    main()
