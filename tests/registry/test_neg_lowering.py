"""A user's ``-x``, quantized by zoo and lowered to TOSA, computes what its fake-quantized model does
(compile/negation.py, issue 56).

ExecuTorch 1.5.1's quantizer gives ``neg`` an output observer of its own and lowers an int8 ``neg``
to a NEGATE that keeps its input's codes under the output's scale. Here ``x`` also feeds a
concatenation with a tensor ten times wider, which shares its grid with ``x``, so the two scales
differ by about twelve times. Stack: TOSA lowerings without Vela, run on the TOSA reference model.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.tosa_lowering import lowered_to_tosa

pytestmark = pytest.mark.stack


def _negation_beside_a_wide_concat() -> Any:
    import torch

    class Model(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.narrow, self.wide = torch.nn.Conv2d(3, 4, 1), torch.nn.Conv2d(3, 4, 1)
            with torch.no_grad():
                self.wide.weight.mul_(10)

        def forward(self, x: Any) -> tuple[Any, Any]:
            a = self.narrow(x)
            return -a, torch.cat([a, self.wide(x)], 1)

    torch.manual_seed(0)
    return Model().eval()


def _fake_quantized(rewrite: bool) -> tuple[list[str], Any, list[tuple[Any]]]:
    """The graph's operators before quantization, its fake-quantized model (u85-256's quantizer)
    and the calibration samples."""
    import torch

    from zoo import Zoo
    from zoo.registry.compile.export import _quantize
    from zoo.registry.compile.negation import negations_as_products
    from zoo.registry.compile.retarget import ethosu_compile_spec
    from zoo.registry.numerics.data import flat_outputs

    torch.manual_seed(0)
    calibration = [(torch.randn(1, 3, 8, 8),) for _ in range(8)]
    model = _negation_beside_a_wide_concat()
    graph = torch.export.export(model, calibration[0]).module(check_guards=False)
    if rewrite:
        assert negations_as_products(graph) == 1
    ops = [str(n.target) for n in graph.graph.nodes if n.op == "call_function"]
    for (x,) in calibration:  # the same function in float
        assert all(torch.equal(a, b) for a, b in zip(flat_outputs(graph(x)), flat_outputs(model(x)), strict=True))
    return ops, _quantize(graph, calibration, ethosu_compile_spec(Zoo().target("u85-256")), "test", lambda *a: None), \
        calibration


def _steps_from_fake_quant(fake_quant: Any, calibration: list[tuple[Any]]) -> float:
    """How many output steps the TOSA program's ``-x`` is from the fake-quantized model's, at most."""
    import torch

    from zoo.registry.numerics.data import flat_outputs

    negated_out = fake_quant.graph.output_node().args[0][0].args[0]  # the last quantize before output 0
    scale = float(negated_out.args[1])
    _, on_reference = lowered_to_tosa(fake_quant, calibration[0])
    steps = []
    with torch.no_grad():
        for (x,) in calibration:
            got, want = on_reference(x), flat_outputs(fake_quant(x))
            steps.append(float((got[0] - want[0]).abs().max()) / scale)
            assert torch.equal(got[1], want[1])  # the concatenation: no neg in its way
    return max(steps)


def test_a_negation_lowers_as_its_fake_quantized_model() -> None:
    from zoo.registry.compile.negation import refuse_unscaled_negations

    ops, fake_quant, calibration = _fake_quantized(rewrite=True)
    assert "aten.neg.default" not in ops and "aten.mul.Tensor" in ops
    with refuse_unscaled_negations():  # as lower.py lowers: nothing left to refuse
        steps = _steps_from_fake_quant(fake_quant, calibration)
    assert steps < 0.5, f"the negation's TOSA program is {steps:.0f} steps from fake-quant"


def test_a_negation_left_with_two_scales_is_refused() -> None:
    """What an upstream pass could still make: the lowering refuses it instead of dropping the rescale."""
    from zoo.registry.compile.negation import refuse_unscaled_negations

    _, fake_quant, calibration = _fake_quantized(rewrite=False)
    with refuse_unscaled_negations(), pytest.raises(Exception) as refused:
        lowered_to_tosa(fake_quant, calibration[0])
    assert any("reads scale" in str(e) and "write -x as x * -1" in str(e) for e in _chain(refused.value))


def _chain(exc: BaseException | None) -> list[BaseException]:
    out = []
    while exc is not None and exc not in out:
        out.append(exc)
        exc = exc.__cause__ or exc.__context__
    return out


def test_upstream_still_lowers_a_negation_without_its_rescale() -> None:
    """What negation.py works around; when this fails, upstream's lowering of ``neg`` is exact:
    re-check as tests/registry/test_upstream_pins.py says, and delete the rewrite."""
    _, fake_quant, calibration = _fake_quantized(rewrite=False)
    steps = _steps_from_fake_quant(fake_quant, calibration)
    assert steps > 10, f"without the rewrite the negation is {steps:.0f} steps from fake-quant"
