#!/usr/bin/env python3
"""Writes the ONNX node test cases of the installed `onnx` package (its
generators in onnx.backend.test.case.node, opsets up to the release's newest)
as test-case folders: OUT/<case>/model.onnx + test_data_set_N/{input,output}_K.pb,
the layout of ONNX's shipped suites, which `tessera conformance` and
bench/onnx_suite/ort_conformance.py read.

    .venv/bin/python bench/onnx_suite/generate_node_cases.py --out build/onnx-node-suite
"""
import argparse
import os
import shutil
import warnings

import onnx
from onnx import TensorProto, numpy_helper
from onnx.backend.test.case import node as node_cases


def proto_of(value, value_info, name):
    t = value_info.type
    if t.HasField("sequence_type"):
        return numpy_helper.from_list(value, name)
    if t.HasField("optional_type"):
        return numpy_helper.from_optional(value, name)
    if t.HasField("map_type"):
        return numpy_helper.from_dict(value, name)
    if isinstance(value, TensorProto):
        return value
    return numpy_helper.from_array(value, name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="build/onnx-node-suite")
    args = ap.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = node_cases.collect_testcases(None)
    if os.path.exists(args.out):
        shutil.rmtree(args.out)
    written = 0
    for case in cases:
        if case.model is None or not case.data_sets:
            continue
        d = os.path.join(args.out, case.name)
        os.makedirs(d)
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        g = case.model.graph
        for i, (inputs, outputs) in enumerate(case.data_sets):
            ds = os.path.join(d, f"test_data_set_{i}")
            os.makedirs(ds)
            for kind, values, infos in (("input", inputs, g.input), ("output", outputs, g.output)):
                for j, v in enumerate(values):
                    with open(os.path.join(ds, f"{kind}_{j}.pb"), "wb") as f:
                        f.write(proto_of(v, infos[j], infos[j].name).SerializeToString())
        written += 1
    print(f"onnx {onnx.__version__} (newest opset {onnx.defs.onnx_opset_version()}): "
          f"{written} node cases in {args.out}")


if __name__ == "__main__":
    main()
