#!/usr/bin/env python3
"""Dynamically quantized copy of a bench model (ONNX Runtime's quantize_dynamic,
int8 weights): `quantize_dynamic.py build/bench-models/bert_base_s128
build/bench-models/bert_base_s128_int8`. The copy keeps the input data; the
float model's expected outputs are not the int8 model's, so they are dropped
(compare with them by hand: `tessera run COPY --compare-dir MODEL/test_data_set_0`
shows the quantization error).
"""
import os
import shutil
import sys

from onnxruntime.quantization import QuantType, quantize_dynamic


def main(src: str, dst: str) -> None:
    os.makedirs(dst, exist_ok=True)
    quantize_dynamic(os.path.join(src, "model.onnx"), os.path.join(dst, "model.onnx"),
                     weight_type=QuantType.QInt8)
    data = os.path.join(dst, "test_data_set_0")
    shutil.rmtree(data, ignore_errors=True)
    shutil.copytree(os.path.join(src, "test_data_set_0"), data)
    for f in os.listdir(data):
        if f.startswith("output"):
            os.remove(os.path.join(data, f))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: quantize_dynamic.py MODEL_DIR OUT_DIR")
    main(sys.argv[1], sys.argv[2])
