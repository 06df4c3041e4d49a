#!/usr/bin/python3
"""Writes the ONNX models of the ONNX math and signal import tests (long integer reductions).

Run with Debian's python (onnx 1.12):  /usr/bin/python3 make_models.py
All operands are graph inputs; the tests feed random data.
"""
import os

import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))


def save(name, nodes, inputs, outputs, opset=10):
    graph = helper.make_graph(nodes, name, inputs, outputs)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="make_models.py")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, name + ".onnx"))


def u8(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.UINT8, shape)


def i32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.INT32, shape)


def main():
    # K = 600 > 258: float32 sums of 8-bit products are no longer exact.
    save("matmulinteger_k600",
         [helper.make_node("MatMulInteger", ["A", "B", "a_zp", "b_zp"], ["Y"])],
         [u8("A", [3, 600]), u8("B", [600, 5]), u8("a_zp", []), u8("b_zp", [])],
         [i32("Y", [3, 5])])
    # K = 40 channels * 3 * 3 = 360 > 258.
    save("convinteger_k360",
         [helper.make_node("ConvInteger", ["x", "w", "x_zp"], ["y"], pads=[1, 1, 1, 1])],
         [u8("x", [1, 40, 5, 5]), u8("w", [3, 40, 3, 3]), u8("x_zp", [])],
         [i32("y", [1, 3, 5, 5])])


if __name__ == "__main__":
    main()
