#!/usr/bin/env python3
"""The outputs of ONNX's own reference evaluator (onnx.reference) for a test
case's first input set, written as OUT_DIR/output_N.pb, and how far the
case's expected outputs (ONNX Runtime, unoptimized) are from them: a third
implementation of the spec for models where ONNX Runtime and Tessera differ
(activations quantized at run time, where a value on a rounding boundary
flips one 8-bit step). Compare Tessera with

    python3 bench/real_models/onnx_reference.py CASE_DIR OUT_DIR
    build/bin/tessera run CASE_DIR --compare-dir OUT_DIR

DequantizeLinear before opset 19, which this evaluator does not implement, is
evaluated as its definition, (float(x) - float(zero_point)) * scale, per
tensor (a per-axis one is refused). ONNX Runtime's com.microsoft ops are not
in the evaluator: such models are refused.
"""
import glob
import os
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator


def read_set(folder, kind):
    out = []
    for pb in sorted(glob.glob(os.path.join(folder, f"{kind}_*.pb")),
                     key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0])):
        t = TensorProto()
        with open(pb, "rb") as f:
            t.ParseFromString(f.read())
        out.append((t.name, numpy_helper.to_array(t)))
    return out


def opset(model):
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return 0


def dequantize_as_definition(model):
    """Old-opset DequantizeLinear nodes rewritten as Cast / Sub / Mul."""
    if opset(model) >= 19:
        return
    nodes = []
    for n in model.graph.node:
        if n.op_type != "DequantizeLinear" or n.domain not in ("", "ai.onnx"):
            nodes.append(n)
            continue
        for a in n.attribute:
            if a.name == "axis":
                sys.exit(f"{n.name}: per-axis DequantizeLinear is not rewritten here")
        x, scale = n.input[0], n.input[1]
        zero = n.input[2] if len(n.input) > 2 and n.input[2] else ""
        xf = n.output[0] + "__float"
        nodes.append(helper.make_node("Cast", [x], [xf], to=TensorProto.FLOAT))
        if zero:
            zf = n.output[0] + "__zero_float"
            diff = n.output[0] + "__shifted"
            nodes.append(helper.make_node("Cast", [zero], [zf], to=TensorProto.FLOAT))
            nodes.append(helper.make_node("Sub", [xf, zf], [diff]))
            xf = diff
        nodes.append(helper.make_node("Mul", [xf, scale], [n.output[0]]))
    del model.graph.node[:]
    model.graph.node.extend(nodes)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    case, out_dir = sys.argv[1], sys.argv[2]
    model = onnx.load(os.path.join(case, "model.onnx"))
    foreign = sorted({n.domain for n in model.graph.node if n.domain not in ("", "ai.onnx")})
    if foreign:
        sys.exit(f"{case}: ops of {', '.join(foreign)}, which onnx.reference does not implement")
    dequantize_as_definition(model)
    data = os.path.join(case, "test_data_set_0")
    feeds = dict(read_set(data, "input"))
    start = time.time()
    outputs = ReferenceEvaluator(model).run(None, feeds)
    expected = [a for _, a in read_set(data, "output")]
    os.makedirs(out_dir, exist_ok=True)
    for i, r in enumerate(outputs):
        name = model.graph.output[i].name
        tmp = os.path.join(out_dir, f"output_{i}.pb.part")
        with open(tmp, "wb") as f:
            f.write(numpy_helper.from_array(np.asarray(r), name).SerializeToString())
        os.replace(tmp, os.path.join(out_dir, f"output_{i}.pb"))
        line = f"output {i} ({name}): max |reference| {float(np.abs(r).max()):.4g}"
        if i < len(expected) and expected[i].shape == r.shape:
            diff = np.abs(r.astype(np.float64) - expected[i].astype(np.float64)).max()
            line += f", the case's expected output (ONNX Runtime) differs by {float(diff):.4g}"
        print(line)
    print(f"onnx {onnx.__version__} reference evaluator, {time.time() - start:.1f} s -> {out_dir}")


if __name__ == "__main__":
    main()
