#!/usr/bin/env python3
"""ONNX Runtime's own post-training static quantization (quantize_static,
QDQ, uint8 activations, int8 weights, min/max calibration) of MODEL on the
calibration folder, and how often its top-1 class agrees with the float
model's on the evaluation folder: the comparator for `tessera quantize
--eval`'s "top-1 agrees on N of M rows". ONNX Runtime's quantizer needs
opset 13 for per-channel weights; an older model is converted with ONNX's
version converter first (what `tessera quantize` does too).

    python3 bench/real_models/ort_quantize_agreement.py MODEL CALIB_DIR EVAL_DIR
"""
import glob
import os
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, numpy_helper, version_converter
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static


def load_sets(folder):
    sets = []
    for d in sorted(glob.glob(os.path.join(folder, "test_data_set_*")),
                    key=lambda p: int(p.rsplit("_", 1)[1])):
        feed = {}
        for pb in sorted(glob.glob(os.path.join(d, "input_*.pb"))):
            t = TensorProto()
            with open(pb, "rb") as f:
                t.ParseFromString(f.read())
            feed[t.name] = numpy_helper.to_array(t)
        sets.append(feed)
    return sets


class Reader(CalibrationDataReader):
    def __init__(self, sets):
        self.it = iter(sets)

    def get_next(self):
        return next(self.it, None)


def main():
    model, calib, evaluation = sys.argv[1:4]
    m = onnx.load(model)
    opset = next(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))
    tmp = tempfile.mkdtemp()
    if opset < 13:
        m = version_converter.convert_version(m, 13)
    src = os.path.join(tmp, "float.onnx")
    onnx.save(m, src)
    for per_channel in (False, True):
        q = os.path.join(tmp, "int8.onnx")
        quantize_static(src, q, Reader(load_sets(calib)), quant_format=QuantFormat.QDQ,
                        per_channel=per_channel, activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8)
        f, g = ort.InferenceSession(src), ort.InferenceSession(q)
        agree = rows = 0
        for feed in load_sets(evaluation):
            a, b = f.run(None, feed)[0], g.run(None, feed)[0]
            agree += int((a.argmax(-1) == b.argmax(-1)).sum())
            rows += int(np.prod(a.shape[:-1]))
        print(f"onnxruntime {ort.__version__} quantize_static, "
              f"{'per channel' if per_channel else 'per tensor'}: "
              f"top-1 agrees on {agree} of {rows} rows")


if __name__ == "__main__":
    main()
