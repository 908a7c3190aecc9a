"""Activations after convolutions and linear layers stay fused (compile/activations.py, issue 45).

Torch-free: reads the TOSA graphs scripts/record_activation_clamps.py stored for mnist and
resnet8-cifar (u55-128, int8) and the activations of their exported float graphs. The pin on the
upstream pass is in tests/registry/test_upstream_pins.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data" / "activations"
EXPORTED = json.loads((DATA / "exported.json").read_text())
WEIGHTED = {"conv2d", "linear", "conv1d", "convolution"}
"""Exported operators whose activation ExecuTorch's FuseQuantizedActivationPass would remove."""
WEIGHTED_TOSA = {"CONV2D", "DEPTHWISE_CONV2D", "FULLY_CONNECTED", "CONV3D", "TRANSPOSE_CONV2D"}


def _int(raw: bytes) -> int:
    """A TOSA int8 attribute or constant, stored as bytes."""
    return int.from_bytes(raw, "little", signed=True)


def _clamps(graph: bytes) -> list[dict[str, object]]:
    """Each CLAMP of ``graph`` in order: what produced its input (through a RESCALE), its bounds,
    and the RESCALE's output zero point."""
    tosa_graph = pytest.importorskip("tosa.TosaGraph")
    from tosa.ClampAttribute import ClampAttribute
    from tosa.Op import Op

    names = {v: k for k, v in vars(Op).items() if not k.startswith("_")}
    block = tosa_graph.TosaGraph.GetRootAs(graph, 0).Regions(0).Blocks(0)
    tensors = {block.Tensors(i).Name().decode(): block.Tensors(i) for i in range(block.TensorsLength())}
    producer: dict[str, object] = {}
    clamps = []
    for i in range(block.OperatorsLength()):
        op = block.Operators(i)
        inputs = [op.Inputs(j).decode() for j in range(op.InputsLength())]
        for j in range(op.OutputsLength()):
            producer[op.Outputs(j).decode()] = (names[op.Op()], inputs)
        if names[op.Op()] != "CLAMP":
            continue
        attr = ClampAttribute()
        attr.Init(op.Attribute().Bytes, op.Attribute().Pos)
        kind, rescale_inputs = producer[inputs[0]]  # type: ignore[misc]
        entry: dict[str, object] = {
            "min": _int(bytes(attr.MinVal(k) for k in range(attr.MinValLength()))),
            "max": _int(bytes(attr.MaxVal(k) for k in range(attr.MaxValLength()))),
            "after": kind,
        }
        if kind == "RESCALE":
            zp = tensors[rescale_inputs[4]]
            entry["output_zp"] = _int(bytes(zp.Data(k) for k in range(zp.DataLength())))
            entry["after"] = producer[rescale_inputs[0]][0]  # type: ignore[index]
        clamps.append(entry)
    return clamps


@pytest.mark.parametrize("model", sorted(EXPORTED))
def test_a_clamp_exactly_where_the_exported_graph_has_an_activation(model: str) -> None:
    record = EXPORTED[model]
    clamps = [c for i in range(record["graphs"])
              for c in _clamps((DATA / f"{model}_{record['target']}_{i}.tosa").read_bytes())]
    exported = record["activations"]
    # One CLAMP per ReLU / ReLU6, in order; after a convolution or linear layer the CLAMP
    # follows its output rescale directly, which is what Vela fuses.
    assert len(clamps) == len(exported), (clamps, exported)
    for clamp, activation in zip(clamps, exported, strict=True):
        assert (clamp["after"] in WEIGHTED_TOSA) == (activation["after"] in WEIGHTED), (clamp, activation)
    weighted = [c for c in clamps if c["after"] in WEIGHTED_TOSA]
    assert weighted, "the models have activations after convolutions"
    for clamp in weighted:
        # Quantized ReLU bounds on the rescale's own output: 0 is the zero point, no rescale in between.
        assert clamp["min"] == clamp["output_zp"], clamp
        assert clamp["max"] == 127, clamp
    # No CLAMP without an activation: every convolution without one goes on unclamped.
    assert sum(a["after"] in WEIGHTED for a in exported) == len(weighted)


def test_mnist_linear_keeps_its_relu() -> None:
    """The prototype that switched upstream's pass off broke here (linear → ReLU)."""
    record = EXPORTED["mnist"]
    assert [a["after"] for a in record["activations"]] == ["conv2d", "conv2d", "linear"]
    clamps = _clamps((DATA / "mnist_u55-128_0.tosa").read_bytes())
    assert [c["after"] for c in clamps] == ["DEPTHWISE_CONV2D", "CONV2D", "CONV2D"]

