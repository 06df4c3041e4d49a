#!/usr/bin/env python3
"""ONNX Runtime on the same test-case folders as `tessera conformance`, with
the same tolerance (rtol 1e-3, atol 1e-5, NaNs equal), and a table of both.

    tessera conformance build/onnx-node-suite --json | tail -1 > build/tessera-node.json
    .venv/bin/python bench/onnx_suite/ort_conformance.py build/onnx-node-suite \\
        --tessera-json build/tessera-node.json

A case passes when every data set's outputs match; a model ONNX Runtime cannot
load or run is a failure (ORT has no "skip").
"""
import argparse
import glob
import json
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper


def load_value(path, info):
    t = info.type
    if t.HasField("sequence_type"):
        s = onnx.SequenceProto()
        s.ParseFromString(open(path, "rb").read())
        return numpy_helper.to_list(s)
    if t.HasField("optional_type"):
        o = onnx.OptionalProto()
        o.ParseFromString(open(path, "rb").read())
        return numpy_helper.to_optional(o)
    return numpy_helper.to_array(onnx.load_tensor(path))


def close(got, want):
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(
            close(g, w) for g, w in zip(got, want))
    if want is None:
        return got is None
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return False
    if want.dtype.kind in "fc":
        return bool(np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-3,
                                atol=1e-5, equal_nan=True))
    return bool(np.array_equal(got, want))


def run_case(case):
    model = onnx.load(os.path.join(case, "model.onnx"))
    so = ort.SessionOptions()
    so.log_severity_level = 4
    sess = ort.InferenceSession(os.path.join(case, "model.onnx"), so,
                                providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    for ds in sorted(glob.glob(os.path.join(case, "test_data_set_*"))):
        feeds = {}
        for j, info in enumerate(model.graph.input):
            p = os.path.join(ds, f"input_{j}.pb")
            if os.path.exists(p) and info.name in names:
                feeds[info.name] = load_value(p, info)
        outs = sess.run(None, feeds)
        for j, info in enumerate(model.graph.output):
            want = load_value(os.path.join(ds, f"output_{j}.pb"), info)
            if not close(outs[j], want):
                return "FAIL", f"{os.path.basename(ds)}: output {j} differs"
    return "PASS", ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("suite")
    ap.add_argument("--tessera-json", help="the last line of `tessera conformance SUITE --json`")
    args = ap.parse_args()
    cases = sorted(d for d in glob.glob(os.path.join(args.suite, "*"))
                   if os.path.exists(os.path.join(d, "model.onnx")))
    ort_status = {}
    for c in cases:
        try:
            status, _ = run_case(c)
        except Exception as e:  # load or run refused: a failure for ORT
            status = "FAIL"
        ort_status[os.path.basename(c)] = status
    n = len(cases)
    ort_pass = sum(s == "PASS" for s in ort_status.values())
    print(f"onnx {onnx.__version__} node cases: {n}")
    print(f"{'runtime':<32} {'pass':>6} {'fail':>6} {'skip':>6} {'pass %':>7}")
    print(f"{'onnxruntime ' + ort.__version__:<32} {ort_pass:>6} {n - ort_pass:>6} {0:>6} "
          f"{100.0 * ort_pass / max(n, 1):>6.1f}%")
    if args.tessera_json:
        t = json.loads(open(args.tessera_json).read().strip().splitlines()[-1])
        ts = {c["name"]: c["status"] for c in t["cases"]}
        tp = sum(s == "PASS" for s in ts.values())
        tf = sum(s == "FAIL" for s in ts.values())
        tk = sum(s == "SKIP" for s in ts.values())
        print(f"{'tessera':<32} {tp:>6} {tf:>6} {tk:>6} {100.0 * tp / max(n, 1):>6.1f}%")
        both = sum(ts.get(k) == "PASS" and v == "PASS" for k, v in ort_status.items())
        only_t = sum(ts.get(k) == "PASS" and v != "PASS" for k, v in ort_status.items())
        only_o = sum(ts.get(k) != "PASS" and v == "PASS" for k, v in ort_status.items())
        print(f"both pass {both}, only tessera {only_t}, only onnxruntime {only_o}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
