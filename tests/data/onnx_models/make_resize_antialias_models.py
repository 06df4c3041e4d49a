#!/usr/bin/env python3
"""Writes Resize-19 test cases with antialias = 1 beyond ONNX's own four
(downsampling with half_pixel): other coordinate transformations,
exclude_outside, a cubic coefficient, sizes on a subset of axes with a
keep_aspect_ratio_policy, and one axis upsampled beside one downsampled.
Expected outputs from ONNX's reference implementation.

    .venv/bin/python tests/data/onnx_models/make_resize_antialias_models.py   # needs onnx >= 1.16
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(19)


def write(name, x, inputs, inits, **attrs):
    node = helper.make_node("Resize", ["x"] + inputs, ["y"], name="resize", antialias=1, **attrs)
    g = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)])
    m.ir_version = 9
    (y,) = ReferenceEvaluator(m).run(None, {"x": x})
    m.graph.output[0].CopyFrom(helper.make_tensor_value_info("y", TensorProto.FLOAT, y.shape))
    d = os.path.join(HERE, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    onnx.save_tensor(numpy_helper.from_array(x, "x"), os.path.join(d, "test_data_set_0", "input_0.pb"))
    onnx.save_tensor(numpy_helper.from_array(y, "y"), os.path.join(d, "test_data_set_0", "output_0.pb"))
    print(name, x.shape, "->", y.shape)


x = rng.standard_normal((1, 2, 9, 7)).astype(np.float32)
# Linear, align_corners, exclude_outside; H downsampled by 0.45, W upsampled by 1.6.
write("resize_antialias_linear_align_corners", x, ["", "scales"],
      [("scales", np.array([1, 1, 0.45, 1.6], dtype=np.float32))],
      mode="linear", coordinate_transformation_mode="align_corners", exclude_outside=1)
# Cubic (a = -0.5), pytorch_half_pixel, sizes on axes 2 and 3 kept not larger.
write("resize_antialias_cubic_sizes_axes", x, ["", "", "sizes"],
      [("sizes", np.array([4, 5], dtype=np.int64))],
      mode="cubic", coordinate_transformation_mode="pytorch_half_pixel", cubic_coeff_a=-0.5,
      axes=[2, 3], keep_aspect_ratio_policy="not_larger")
