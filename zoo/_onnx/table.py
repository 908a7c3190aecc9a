"""The operator table: each ONNX op type zoo reads, and the function it maps to."""

from __future__ import annotations

from zoo._onnx import ops, ops_nn, resize
from zoo._onnx.graph import OpDef

TABLE: dict[str, OpDef] = {
    "Add": OpDef(ops.add, data=(0, 1), scalars=True),
    "AveragePool": OpDef(ops_nn.average_pool),
    "BatchNormalization": OpDef(ops_nn.batch_norm, data=(0, 1, 2, 3, 4), weights=(1, 2)),
    "Cast": OpDef(ops.cast),
    "Clip": OpDef(ops.clip),
    "Concat": OpDef(ops.concat, data=tuple(range(64))),
    "Constant": OpDef(ops.constant, data=()),
    "Conv": OpDef(ops_nn.conv, data=(0, 1, 2), weights=(1, 2)),
    "ConvTranspose": OpDef(ops_nn.conv_transpose, data=(0, 1, 2), weights=(1, 2)),
    "Div": OpDef(ops.div, data=(0, 1), scalars=True),
    "Flatten": OpDef(ops.flatten),
    "Gather": OpDef(ops.gather),
    "Gemm": OpDef(ops_nn.gemm, data=(0, 1, 2), weights=(1, 2), prepare=ops_nn.prepare_gemm),
    "GlobalAveragePool": OpDef(ops_nn.global_average_pool),
    "HardSigmoid": OpDef(ops.hard_sigmoid),
    "HardSwish": OpDef(ops.hard_swish),
    "Identity": OpDef(ops.identity),
    "LeakyRelu": OpDef(ops.leaky_relu),
    "MatMul": OpDef(ops_nn.matmul, data=(0, 1), weights=(1,), prepare=ops_nn.prepare_matmul),
    "MaxPool": OpDef(ops_nn.max_pool),
    "Mul": OpDef(ops.mul, data=(0, 1), scalars=True),
    "Pow": OpDef(ops.pow_, data=(0, 1), scalars=True),
    "ReduceMean": OpDef(ops.reduce_mean),
    "Relu": OpDef(ops.relu),
    "Reshape": OpDef(ops.reshape),
    "Resize": OpDef(resize.resize),
    "Shape": OpDef(ops.shape),
    "Sigmoid": OpDef(ops.sigmoid),
    "Slice": OpDef(ops.slice_),
    "Softmax": OpDef(ops.softmax),
    "Sqrt": OpDef(ops.sqrt),
    "Squeeze": OpDef(ops.squeeze),
    "Sub": OpDef(ops.sub, data=(0, 1), scalars=True),
    "Tanh": OpDef(ops.tanh),
    "Transpose": OpDef(ops.transpose),
    "Unsqueeze": OpDef(ops.unsqueeze),
}
