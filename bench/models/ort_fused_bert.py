#!/usr/bin/env python3
"""A BERT-base encoder layer as ONNX Runtime's transformers optimizer writes
it: com.microsoft Attention (packed QKV weights, a [1, S] padding mask with
the last eighth padded), SkipLayerNormalization and BiasGelu, random weights.
ONNX Runtime runs its own fused CPU kernels for these ops; Tessera expands
them into standard ops and fuses them again.

    .venv/bin/python bench/models/ort_fused_bert.py OUT_DIR [SEQUENCE ...]

writes OUT_DIR/ort_fused_bert_s<S> (default sequences 128 and 512), each a
test-case folder whose expected output ONNX Runtime computed (graph
optimizations off); then
`tessera-bench bench model OUT_DIR/ort_fused_bert_s128 --compare ort`.
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HIDDEN, HEADS, FFN = 768, 12, 3072


def layer(out_dir: str, seq: int) -> None:
    rng = np.random.default_rng(3)

    def f32(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    ms = "com.microsoft"
    nodes = [
        helper.make_node("Attention", ["x", "wqkv", "bqkv", "mask"], ["att"], domain=ms,
                         name="attention", num_heads=HEADS),
        helper.make_node("MatMul", ["att", "wo"], ["ao"], name="out_proj"),
        helper.make_node("SkipLayerNormalization", ["ao", "x", "g1", "b1", "bo"], ["h1"],
                         domain=ms, name="ln1"),
        helper.make_node("MatMul", ["h1", "w1"], ["f1"], name="ffn1"),
        helper.make_node("BiasGelu", ["f1", "bf1"], ["gl"], domain=ms, name="gelu"),
        helper.make_node("MatMul", ["gl", "w2"], ["f2"], name="ffn2"),
        helper.make_node("SkipLayerNormalization", ["f2", "h1", "g2", "b2", "bf2"], ["y"],
                         domain=ms, name="ln2"),
    ]
    inits = [("wqkv", f32(HIDDEN, 3 * HIDDEN, scale=0.03)), ("bqkv", f32(3 * HIDDEN, scale=0.1)),
             ("wo", f32(HIDDEN, HIDDEN, scale=0.03)), ("bo", f32(HIDDEN, scale=0.1)),
             ("g1", f32(HIDDEN)), ("b1", f32(HIDDEN)), ("w1", f32(HIDDEN, FFN, scale=0.03)),
             ("bf1", f32(FFN, scale=0.1)), ("w2", f32(FFN, HIDDEN, scale=0.02)),
             ("bf2", f32(HIDDEN, scale=0.1)), ("g2", f32(HIDDEN)), ("b2", f32(HIDDEN))]
    x = f32(1, seq, HIDDEN)
    mask = np.ones((1, seq), np.int32)
    mask[0, seq - seq // 8:] = 0
    graph = helper.make_graph(
        nodes, "ort_fused_bert",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, seq, HIDDEN]),
         helper.make_tensor_value_info("mask", TensorProto.INT32, [1, seq])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, seq, HIDDEN])],
        [numpy_helper.from_array(a, n) for n, a in inits])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14),
                                                    helper.make_opsetid(ms, 1)],
                              producer_name="ort_fused_bert.py")
    model.ir_version = 8
    d = os.path.join(out_dir, f"ort_fused_bert_s{seq}")
    data = os.path.join(d, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(os.path.join(d, "model.onnx"), so,
                                providers=["CPUExecutionProvider"])
    y = sess.run(None, {"x": x, "mask": mask})[0]
    onnx.save_tensor(numpy_helper.from_array(x, "x"), os.path.join(data, "input_0.pb"))
    onnx.save_tensor(numpy_helper.from_array(mask, "mask"), os.path.join(data, "input_1.pb"))
    onnx.save_tensor(numpy_helper.from_array(y, "y"), os.path.join(data, "output_0.pb"))
    print(d)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: ort_fused_bert.py OUT_DIR [SEQUENCE ...]")
    for s in sys.argv[2:] or ["128", "512"]:
        layer(sys.argv[1], int(s))
