"""A ReLU or ReLU6 that zoo keeps as a CLAMP after a convolution (compile/activations.py), on
tensors whose quantized grid cannot hold 6 (issue 55's review): the CLAMP's bounds are the
quantized 0 and 6, and the program equals the fake-quantized model bit for bit (stack: a TOSA
lowering without Vela, run on the TOSA reference model).

Why it holds: 0 is always on the grid (PT2E's observers put it in every range, and it quantizes
to the zero point), and a clamp commutes with a monotonic quantization, ``q(min(x, 6)) =
min(q(x), q(6))``, so clamping the quantized values at ``q(6)`` is what the fake-quantized model
computes wherever 6 falls. zoo keeps the clamp only where upstream's FuseQuantizedActivationPass
would drop it, where 6 quantizes to the type's maximum; there the bound is the saturation the
rescale before it already does.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.registry.test_activations import _clamps
from tests.tosa_lowering import lowered_to_tosa


def _branches() -> Any:
    """Three convolutions of the same input, each through its own activation and a convolution
    after it (so the activation is inside the NPU graph), summed."""
    import torch

    class Branches(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            # Scaled so calibration on [0, 3] gives the ReLU6s the ranges [0, 3] and [0, 5.99]:
            # neither holds 6 (the first not at all, the second 0.3 of a step beyond its top).
            self.scales = (1.0, 5.99 / 3, 1.0)
            self.convs = torch.nn.ModuleList(torch.nn.Conv2d(2, 2, 1) for _ in self.scales)
            self.after = torch.nn.ModuleList(torch.nn.Conv2d(2, 2, 1) for _ in self.scales)
            self.acts = torch.nn.ModuleList([torch.nn.ReLU6(), torch.nn.ReLU6(), torch.nn.ReLU()])
            with torch.no_grad():
                for conv, scale in zip(self.convs, self.scales, strict=True):
                    conv.weight.copy_(torch.eye(2).reshape(2, 2, 1, 1) * scale)
                    conv.bias.zero_()

        def forward(self, x: Any) -> Any:
            out = [after(act(conv(x))) for conv, act, after in zip(self.convs, self.acts, self.after, strict=True)]
            return out[0] + out[1] + out[2]

    torch.manual_seed(0)
    return Branches().eval()


@pytest.mark.stack
def test_kept_clamps_on_a_grid_without_6_equal_the_fake_quantized_model() -> None:
    import torch

    from zoo import Zoo
    from zoo.registry.compile.export import _quantize
    from zoo.registry.compile.retarget import ethosu_compile_spec
    from zoo.registry.numerics.data import flat_outputs

    calibration = [(torch.rand(1, 2, 4, 4) * 3,) for _ in range(4)]
    graph = torch.export.export(_branches(), calibration[0]).module(check_guards=False)
    fake_quant = _quantize(graph, calibration, ethosu_compile_spec(Zoo().target("u55-128")), "test", lambda *a: None)
    activations = (torch.ops.aten.hardtanh.default, torch.ops.aten.relu6.default, torch.ops.aten.relu.default)
    grids = [tuple(n.args[1:5]) for n in fake_quant.graph.nodes
             if "quantize_per_tensor" in str(n.target) and getattr(n.args[0], "target", None) in activations]
    assert len(grids) == 3, grids
    for scale, zero_point, _, qmax in grids[:2]:  # the ReLU6s: 6 is beyond the top of the grid
        assert 6 / scale + zero_point > qmax + 0.2, (scale, zero_point)
    for scale, zero_point, qmin, _ in grids:  # and 0 is its bottom: the zero point
        assert zero_point == qmin, (scale, zero_point)

    graph_bytes, on_reference = lowered_to_tosa(fake_quant, calibration[0])
    clamps = _clamps(graph_bytes)
    # One CLAMP per activation, right after its convolution's rescale: the bounds are the quantized
    # 0 (the zero point) and the quantized 6, which saturates at the type's maximum.
    assert [c["after"] for c in clamps] == ["CONV2D"] * 3, clamps
    assert all(c["min"] == c["output_zp"] and c["max"] == 127 for c in clamps), clamps

    torch.manual_seed(1)
    for _ in range(4):  # inputs far past both bounds: -10 to 10
        x = torch.rand(1, 2, 4, 4) * 20 - 10
        (got,) = on_reference(x)
        (want,) = flat_outputs(fake_quant(x))
        assert torch.equal(got, want), (got - want).abs().max()
