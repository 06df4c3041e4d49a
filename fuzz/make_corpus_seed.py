#!/usr/bin/python3
"""Copies small ONNX node-test models into fuzz/corpus_seed as fuzzer seeds.

Run with Debian's python (onnx 1.12):  /usr/bin/python3 make_corpus_seed.py
Each case is written "frozen" where it can be: its tensor graph inputs become
initializers holding test_data_set_0's data, so that converters which
evaluate constant operands at import (Loop trip counts, NonZero, Unique, NMS,
Range, Tile, ConstantOfShape ...) run on data the fuzzer can mutate; the
other cases (and a few kept with live inputs) are copied as shipped.
"""
import os

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
NODE = "/usr/share/libonnx-testdata/data/node"
OUT = os.path.join(HERE, "corpus_seed")

CASES = [
    "test_loop11", "test_loop13_seq", "test_if", "test_if_seq", "test_if_opt",
    "test_scan9_sum", "test_sequence_map_add_2_sequences", "test_nonmaxsuppression_two_batches",
    "test_unique_sorted_with_axis", "test_strnormalizer_export_monday_casesensintive_lower",
    "test_nllloss_NCd1d2_with_weight", "test_gridsample", "test_dft", "test_qlinearconv",
    "test_cast_FLOAT_to_FLOAT16", "test_constantofshape_int_zeros", "test_tile",
    "test_expand_dim_changed", "test_resize_upsample_scales_nearest", "test_onehot_with_axis",
    "test_eyelike_with_dtype", "test_nonzero_example", "test_sequence_insert_at_back",
    "test_blackmanwindow", "test_stft", "test_scatternd", "test_compress_0",
    "test_optional_get_element_sequence", "test_reversesequence_batch", "test_range_int32_type_negative_delta",
    "test_roialign_aligned_true", "test_maxunpool_export_with_output_shape", "test_adam",
    "test_castlike_FLOAT_to_STRING", "test_dequantizelinear", "test_top_k",
]

# Models of the repository's own test data (ONNX Runtime's com.microsoft ops,
# dynamically quantized convs and LSTMs), seeded as they are.
REPO_CASES = [
    "tests/data/onnx_models/contrib_integer_matmuls",
    "tests/data/onnx_models/contrib_dynamic_quantize_lstm",
    "tests/data/onnx_models/dynamic_conv_uint8_channel_zero_points",
]

# Also seeded with their inputs left as graph inputs.
LIVE = {"test_loop11", "test_gridsample", "test_qlinearconv", "test_nonzero_example", "test_tile"}


def freeze(model, case_dir):
    """The model with every tensor graph input replaced by its test-data initializer."""
    data_dir = os.path.join(case_dir, "test_data_set_0")
    graph = model.graph
    inits = {i.name for i in graph.initializer}
    frozen, keep = [], []
    pos = 0
    for inp in graph.input:
        if inp.name in inits:
            keep.append(inp)
            continue
        path = os.path.join(data_dir, "input_%d.pb" % pos)
        pos += 1
        if inp.type.HasField("tensor_type") and os.path.exists(path):
            t = onnx.TensorProto()
            with open(path, "rb") as f:
                t.ParseFromString(f.read())
            t.name = inp.name
            frozen.append(t)
        else:
            keep.append(inp)
    if not frozen:
        return None
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.input[:]
    m.graph.input.extend(keep)
    m.graph.initializer.extend(frozen)
    return m


def main():
    os.makedirs(OUT, exist_ok=True)
    for case in CASES:
        case_dir = os.path.join(NODE, case)
        model = onnx.load(os.path.join(case_dir, "model.onnx"))
        short = case[len("test_"):]
        frozen = freeze(model, case_dir)
        if frozen is not None and len(frozen.SerializeToString()) < 4096:
            onnx.save(frozen, os.path.join(OUT, short + "_frozen.onnx"))
        if frozen is None or case in LIVE:
            onnx.save(model, os.path.join(OUT, short + ".onnx"))
    for case in REPO_CASES:
        model = onnx.load(os.path.join(HERE, "..", case, "model.onnx"))
        onnx.save(model, os.path.join(OUT, os.path.basename(case) + ".onnx"))


if __name__ == "__main__":
    main()
