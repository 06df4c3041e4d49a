#!/usr/bin/env python3
"""Shifted, flipped and noised copies of a model's image input, one test-data
folder each: calibration and evaluation sets for `tessera quantize` when a
corpus model has a single test input (the PP-OCR direction classifier's six
text-line crops). Different seeds give different sets:

    M=build/real-models/rapidocr_onnxruntime_ch_ppocr_mobile_v2_0_cls_infer
    python3 bench/real_models/image_variants.py $M/test_data_set_0/input_0.pb /tmp/ocr_calib 16 1
    python3 bench/real_models/image_variants.py $M/test_data_set_0/input_0.pb /tmp/ocr_eval 200 2
    tessera quantize $M/model.onnx -o /tmp/ocr_int8.onnx --calib /tmp/ocr_calib --eval /tmp/ocr_eval
    python3 bench/real_models/ort_quantize_agreement.py $M/model.onnx /tmp/ocr_calib /tmp/ocr_eval

Each copy: rolled by up to 20 pixels along the width, flipped left-right
and upside down with probability 1/2 each, plus Gaussian noise (sigma 0.1).
"""
import os
import sys

import numpy as np
from onnx import TensorProto, numpy_helper


def main():
    src, out, count, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    t = TensorProto()
    with open(src, "rb") as f:
        t.ParseFromString(f.read())
    x = numpy_helper.to_array(t)
    rng = np.random.default_rng(seed)
    for i in range(count):
        y = np.roll(x, int(rng.integers(-20, 21)), axis=3)
        if rng.random() < 0.5:
            y = y[:, :, :, ::-1]
        if rng.random() < 0.5:
            y = y[:, :, ::-1, :]
        y = np.ascontiguousarray((y + rng.normal(0, 0.1, y.shape)).astype(np.float32))
        d = os.path.join(out, f"test_data_set_{i}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(y, t.name).SerializeToString())
    print(f"{count} copies of {src} -> {out}")


if __name__ == "__main__":
    main()
