"""The int8 weights of a TOSA graph's convolutions, as Vela reads them: what a weight transform
(``weight_transforms.py``) must be seen to hold in the lowered program, not only in PyTorch.
Torch-free; the ``tosa`` flatbuffer reader is imported inside functions."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["Weights", "convolution_weights", "distinct_values", "is_sparse24"]

_WEIGHTED = {"CONV2D": False, "CONV3D": False, "DEPTHWISE_CONV2D": True, "TRANSPOSE_CONV2D": False}
"""TOSA operators whose second input is a weight tensor; True where it is depthwise."""


@dataclass(frozen=True)
class Weights:
    operator: str
    """The TOSA operator, e.g. ``CONV2D``; a fully connected layer is lowered to one."""
    name: str
    values: npt.NDArray[np.int8]
    """In the graph's layout: ``[O, H, W, I]`` for CONV2D, input channels innermost."""


def convolution_weights(tosa: bytes) -> list[Weights]:
    """Each int8 constant weight tensor of ``tosa``'s convolutions, in operator order."""
    from tosa.DType import DType
    from tosa.Op import Op
    from tosa.TosaGraph import TosaGraph

    names = {getattr(Op, n): n for n in dir(Op) if not n.startswith("_")}
    out = []
    graph = TosaGraph.GetRootAs(tosa, 0)
    for r in range(graph.RegionsLength()):
        region = graph.Regions(r)
        for b in range(region.BlocksLength()):
            block = region.Blocks(b)
            tensors = {block.Tensors(i).Name(): block.Tensors(i) for i in range(block.TensorsLength())}
            for o in range(block.OperatorsLength()):
                op = block.Operators(o)
                kind = names.get(op.Op(), "")
                if kind not in _WEIGHTED or op.InputsLength() < 2:
                    continue
                tensor = tensors.get(op.Inputs(1))
                if tensor is None or tensor.Type() != DType.INT8 or tensor.DataLength() == 0:
                    continue
                data = tensor.DataAsNumpy().view(np.int8)
                shape = tuple(int(d) for d in tensor.ShapeAsNumpy())
                out.append(Weights(kind, tensor.Name().decode(), data[: int(np.prod(shape))].reshape(shape)))
    return out


def distinct_values(w: Weights) -> int:
    return len(np.unique(w.values))


def is_sparse24(w: Weights) -> bool:
    """Whether at most 2 of every 4 consecutive input channels (the innermost axis) are non-zero."""
    values = w.values
    channels = values.shape[-1]
    padded = np.zeros((*values.shape[:-1], -(-channels // 4) * 4), dtype=np.int8)
    padded[..., :channels] = values
    groups = padded.reshape(*values.shape[:-1], -1, 4)
    return bool(((groups != 0).sum(axis=-1) <= 2).all())
