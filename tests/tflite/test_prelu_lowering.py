"""PReLU as the reader writes it, quantized by zoo and lowered to TOSA, against the fake-quantized
model (issue 56: palm-detection-lite's TOSA program was 81 steps from fake-quant).

The reader once wrote PReLU as ``relu(x) - alpha * relu(-x)``. The quantizer gives ``-x`` an
observer of its own, and ExecuTorch lowers an int8 ``neg`` to a TOSA NEGATE that keeps the input's
codes under the output's scale: ``-x`` comes out scaled by the ratio of the two. Here ``x`` also
feeds a concatenation with a wider tensor, which shares its grid with ``x``, so the ratio is large,
as palm-detection-lite's were (0.68 to 1.25). Stack: a TOSA lowering without Vela,
run on the TOSA reference model.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.tflite.graphs import OP, Graph, options
from tests.tosa_lowering import lowered_to_tosa

pytestmark = pytest.mark.stack


def _prelu_beside_a_wide_concat() -> Graph:
    """Two 1×1 convolutions of the input, the second 10 times wider; a per-channel PReLU with
    signed slopes and |alpha| > 1 on the first; and both concatenated."""
    rng = np.random.default_rng(3)
    g = Graph()
    x = g.input([1, 8, 8, 3])
    narrow, wide = (rng.standard_normal((4, 1, 1, 3)) * k for k in (0.3, 3.0))
    conv = options("Conv2DOptions", padding=1, strideW=1, strideH=1)
    (a,) = g.op(OP.CONV_2D, [x, g.const(narrow)], [[1, 8, 8, 4]], *conv)
    (b,) = g.op(OP.CONV_2D, [x, g.const(wide)], [[1, 8, 8, 4]], *conv)
    (p,) = g.op(OP.PRELU, [a, g.const(np.array([-1.5, 5.3, 0.25, 2.0]).reshape(1, 1, 4))], [[1, 8, 8, 4]])
    (c,) = g.op(OP.CONCATENATION, [a, b], [[1, 8, 8, 8]], *options("ConcatenationOptions", axis=3))
    g.outputs = [p, c]
    return g


def test_prelu_with_signed_slopes_lowers_as_its_fake_quantized_model(tmp_path: Path) -> None:
    import torch

    from zoo import Zoo, read_tflite
    from zoo.registry.compile.export import _quantize
    from zoo.registry.compile.retarget import ethosu_compile_spec
    from zoo.registry.numerics.data import flat_outputs

    path = tmp_path / "prelu.tflite"
    path.write_bytes(_prelu_beside_a_wide_concat().to_bytes())
    torch.manual_seed(0)
    calibration = [(torch.randn(1, 8, 8, 3),) for _ in range(8)]
    graph = torch.export.export(read_tflite(path).eval(), calibration[0]).module(check_guards=False)
    fake_quant = _quantize(graph, calibration, ethosu_compile_spec(Zoo().target("u85-256")), "test", lambda *a: None)
    # The PReLU's output grid: the last quantize before the first output.
    prelu_out = next(n for n in reversed(fake_quant.graph.nodes)
                     if n.op == "output").args[0][0].args[0]
    scale = float(prelu_out.args[1])

    _, on_reference = lowered_to_tosa(fake_quant, calibration[0])
    steps = []
    for (x,) in calibration:
        got = on_reference(x)
        want = flat_outputs(fake_quant(x))
        steps.append(float((got[0] - want[0]).abs().max()) / scale)
        assert torch.equal(got[1], want[1])  # the concatenation: no PReLU in its way
    assert max(steps) <= 1.0, f"the PReLU's TOSA program is {max(steps):.0f} steps from fake-quant"
