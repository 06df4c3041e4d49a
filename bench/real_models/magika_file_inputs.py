#!/usr/bin/env python3
"""Magika's input for real files of this machine, one test-data folder each.

The int8-vs-fp32 top-1 agreement of a trained classifier needs real inputs:
magika (a trained file-type classifier from the corpus, 214 classes) reads
the first and last 1024 bytes of a file. This writes OUT/test_data_set_N/
input_0.pb for COUNT files taken from system folders (documentation, headers,
scripts, libraries, images: many types), every STRIDE-th file in sorted
order starting at OFFSET, so two calls with different offsets give disjoint
calibration and evaluation sets:

    python3 bench/real_models/magika_file_inputs.py --out /tmp/calib --count 200 --offset 0
    python3 bench/real_models/magika_file_inputs.py --out /tmp/eval --count 200 --offset 1
    tessera quantize build/real-models/magika_standard_v3_3_model/model.onnx \
        -o /tmp/magika_int8.onnx --calib /tmp/calib --eval /tmp/eval

Features as magika/models/standard_v3_3/config.min.json defines them:
beg_size 1024, mid_size 0, end_size 1024, block_size 4096, padding token
256; leading whitespace stripped from the first block, trailing whitespace
from the last.
"""
import argparse
import os

import numpy as np
from onnx import numpy_helper

ROOTS = ["/usr/share/doc", "/usr/include", "/usr/share/perl", "/usr/lib/python3",
         "/usr/share/pixmaps", "/usr/share/icons", "/usr/bin", "/usr/share/man", "/etc"]
BLOCK, BEG, END, PAD = 4096, 1024, 1024, 256


def features(path):
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        first = f.read(BLOCK)
        f.seek(max(0, size - BLOCK))
        last = f.read(BLOCK)
    first, last = first.lstrip(), last.rstrip()
    beg = np.full(BEG, PAD, np.int32)
    end = np.full(END, PAD, np.int32)
    head = np.frombuffer(first[:BEG], np.uint8)
    tail = np.frombuffer(last[-END:] if last else b"", np.uint8)
    beg[:head.size] = head
    end[END - tail.size:] = tail
    return np.concatenate([beg, end])[None, :]


def files():
    out = []
    for root in ROOTS:
        for d, _, names in os.walk(root):
            for n in names:
                p = os.path.join(d, n)
                if os.path.isfile(p) and not os.path.islink(p) and os.path.getsize(p) > 16:
                    out.append(p)
    return sorted(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--offset", type=int, default=0)
    a = ap.parse_args()
    all_files = files()
    stride = max(2, len(all_files) // (2 * a.count))
    chosen = all_files[a.offset::stride][:a.count]
    for i, p in enumerate(chosen):
        d = os.path.join(a.out, f"test_data_set_{i}")
        os.makedirs(d, exist_ok=True)
        t = numpy_helper.from_array(features(p), "bytes")
        with open(os.path.join(d, "input_0.pb"), "wb") as f:
            f.write(t.SerializeToString())
    print(f"{len(chosen)} files of {len(all_files)} (stride {stride}, offset {a.offset}) -> {a.out}")


if __name__ == "__main__":
    main()
