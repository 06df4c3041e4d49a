#!/usr/bin/env python3
"""Writes tests/data/onnx_models/minus_one_batch_global_max_pool_1d (expected outputs by ONNX Runtime).

    .venv/bin/python tests/data/onnx_models/make_minus_one_batch_model.py
"""
import os, numpy as np, onnx, onnxruntime as ort
from onnx import helper, TensorProto, numpy_helper
H='tests/data/onnx_models'
def case(name, nodes, ins, outs, opset=13):
    g=helper.make_graph(nodes,name,[helper.make_tensor_value_info(n,TensorProto.FLOAT,d) for n,d,_ in ins],
                        [helper.make_tensor_value_info(n,TensorProto.FLOAT,d) for n,d in outs])
    m=helper.make_model(g,opset_imports=[helper.make_opsetid('',opset)]); m.ir_version=8
    d=os.path.join(H,name); os.makedirs(d+'/test_data_set_0',exist_ok=True)
    onnx.save(m,d+'/model.onnx')
    s=ort.InferenceSession(d+'/model.onnx',providers=['CPUExecutionProvider'])
    feeds={n:a for n,_,a in ins}; ys=s.run(None,feeds)
    for i,(n,_,a) in enumerate(ins): onnx.save_tensor(numpy_helper.from_array(a,n),f'{d}/test_data_set_0/input_{i}.pb')
    for i,((n,_),y) in enumerate(zip(outs,ys)): onnx.save_tensor(numpy_helper.from_array(y,n),f'{d}/test_data_set_0/output_{i}.pb')
rng=np.random.default_rng(3)
# Paddle2ONNX style: -1 for the dynamic batch dim; GlobalMaxPool over a 3-D (N, C, L) tensor.
case('minus_one_batch_global_max_pool_1d',
     [helper.make_node('GlobalMaxPool',['x'],['p'],name='gmp'), helper.make_node('Relu',['p'],['y'],name='relu')],
     [('x',[-1,4,9],rng.standard_normal((3,4,9)).astype(np.float32))],[('y',[-1,4,1])])
