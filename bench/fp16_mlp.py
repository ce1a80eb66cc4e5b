#!/usr/bin/env python3
# Writes the batch-1 MLP of docs/performance.md ("FP16 engines against FP32 engines"):
#   /usr/bin/python3 bench/fp16_mlp.py mlp.onnx
# A batch-1 MLP whose time is streaming its weights: x[1,2048] -> 2048x4096 -> 4096x2048 ->
# 2048x4096 -> 4096x1000 (Gemm + Relu, the last without), 29.3M float32 weights (117 MB).
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)
dims = [2048, 4096, 2048, 4096, 1000]
nodes, inits = [], []
x = "x"
for i in range(len(dims) - 1):
    w = (rng.standard_normal((dims[i], dims[i + 1])) / np.sqrt(dims[i])).astype(np.float32)
    b = (0.01 * rng.standard_normal(dims[i + 1])).astype(np.float32)
    inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
    y = f"h{i}" if i < len(dims) - 2 else "y"
    g = f"g{i}" if i < len(dims) - 2 else "y"
    nodes.append(helper.make_node("Gemm", [x, f"w{i}", f"b{i}"], [g], name=f"fc{i}"))
    if i < len(dims) - 2:
        nodes.append(helper.make_node("Relu", [g], [y], name=f"relu{i}"))
    x = y
graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2048])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1000])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.save(model, sys.argv[1])
