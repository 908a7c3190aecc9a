"""Grouped convolutions in the TFLite flow's ``.tflite`` and what Vela makes of them (``benchmarks/vs_tflite.py``).

onnx2tf writes a depthwise convolution whose two strides differ (PP-OCR's recogniser downsamples its height
alone, stride 2×1) as a grouped ``CONV_2D`` (filter depth 1, one group per channel), not as a
``DEPTHWISE_CONV_2D``: TensorFlow's depthwise kernel takes equal strides only. Vela 5.1.0 splits a grouped
``CONV_2D`` into one Conv2D per group (``convert_conv_groups``), and its performance estimate costs each of
them at the whole IFM's depth. ``grouped_convolutions`` reads them from the ``.tflite`` (Vela's own
flatbuffer reader, no TensorFlow); ``split_notes`` pairs them with Vela's per-layer rows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks._vs_tflite_sides import Layer

__all__ = ["GroupedConv", "grouped_convolutions", "split_notes"]

_CONV_2D = 3  # BuiltinOperator.CONV_2D


@dataclass(frozen=True)
class GroupedConv:
    """One grouped ``CONV_2D`` of a ``.tflite``: its output tensor's name (Vela's layer name), its groups
    (IFM depth over filter depth), kernel and strides (height, width), IFM and OFM shapes (NHWC)."""

    output: str
    groups: int
    kernel: tuple[int, int]
    strides: tuple[int, int]
    ifm: tuple[int, ...]
    ofm: tuple[int, ...]

    @property
    def macs(self) -> int:
        """The convolution's own MACs: each output element reads its kernel over one group's channels."""
        depth = self.ifm[-1] // self.groups
        n = 1
        for d in self.ofm:
            n *= d
        return n * self.kernel[0] * self.kernel[1] * depth


def grouped_convolutions(tflite: Path) -> list[GroupedConv]:
    """Every ``CONV_2D`` whose filter is shallower than its IFM, in the operators' order."""
    from ethosu.vela.tflite.Conv2DOptions import Conv2DOptions
    from ethosu.vela.tflite.Model import Model

    model = Model.GetRootAs(tflite.read_bytes(), 0)
    codes = [model.OperatorCodes(i) for i in range(model.OperatorCodesLength())]
    found = []
    for g in range(model.SubgraphsLength()):
        graph = model.Subgraphs(g)
        for k in range(graph.OperatorsLength()):
            op = graph.Operators(k)
            code = codes[op.OpcodeIndex()]
            if max(code.BuiltinCode(), code.DeprecatedBuiltinCode()) != _CONV_2D:
                continue
            ifm, weights, ofm = (graph.Tensors(op.Inputs(0)), graph.Tensors(op.Inputs(1)),
                                 graph.Tensors(op.Outputs(0)))
            ifm_shape = tuple(int(x) for x in ifm.ShapeAsNumpy())
            w = [int(x) for x in weights.ShapeAsNumpy()]  # (out channels, kh, kw, in channels per group)
            if w[3] >= ifm_shape[-1]:
                continue
            table = op.BuiltinOptions()
            options = Conv2DOptions()
            options.Init(table.Bytes, table.Pos)
            found.append(GroupedConv(ofm.Name().decode(), ifm_shape[-1] // w[3], (w[1], w[2]),
                                     (options.StrideH(), options.StrideW()), ifm_shape,
                                     tuple(int(x) for x in ofm.ShapeAsNumpy())))
    return found


def split_notes(grouped: Sequence[GroupedConv], layers: Sequence[Layer]) -> list[str]:
    """One line per grouped convolution: the Conv2D rows Vela's per-layer CSV holds under its name, their
    cycles and MACs against the convolution's own; then their share of the program's."""
    if not grouped:
        return []
    lines = []
    split_layers = split_cycles = 0
    for conv in grouped:
        rows = [x for x in layers if x.name == conv.output and x.op == "Conv2D"]
        cycles, macs = sum(x.cycles for x in rows), sum(x.macs for x in rows)
        split_layers, split_cycles = split_layers + len(rows), split_cycles + cycles
        lines.append(f"grouped CONV_2D, {conv.groups} groups, {conv.kernel[0]}×{conv.kernel[1]}, stride "
                     f"{conv.strides[0]}×{conv.strides[1]}, IFM {'×'.join(map(str, conv.ifm))}: Vela runs "
                     f"{len(rows)} Conv2D, {cycles:,} cycles, {macs:,} MACs as Vela counts them "
                     f"({conv.macs:,} the convolution's own)")
    total = sum(x.cycles for x in layers)
    convs = sum(1 for x in layers if x.op == "Conv2D")
    lines.append(f"{len(grouped)} grouped CONV_2D: {split_layers} of the program's {convs} Conv2D and "
                 f"{split_cycles:,} of its {total:,} layer cycles")
    return lines
