"""A narrow linear layer's input is padded with zero features on the U85 (compile/widen_linear.py,
issue 59): which targets and widths get it (fast), the rewrite of a tiny quantized graph, the
same scales and the same int8 sums (stack), and a tiny network lowered on u85-256, cheaper
by Vela's estimate and verified (compile)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from zoo.registry.compile.widen_linear import widened_width, widens_linears
from zoo.registry.npu.targets import TargetTable


def test_only_the_u85_sizes_where_it_paid_get_the_rewrite() -> None:
    table = TargetTable()
    names = ("u55-128", "u65-256", "u85-128", "u85-256", "u85-512", "u85-1024", "u85-2048", "portable")
    targets = [table.resolve(t) for t in names]
    assert [widens_linears(t.family, t.macs) for t in targets] == [False, False, True, True, True, True, True, False]


@pytest.mark.parametrize(("features", "outputs", "macs", "width"), [
    # benchmarks/linear_forms.py measured these to pay (cycles linear → widened)
    (32, 64, 256, 64), (32, 32, 256, 64), (32, 128, 256, 64), (24, 64, 256, 64), (24, 32, 256, 64),
    (16, 64, 256, 64), (16, 128, 256, 64), (32, 64, 128, 64), (32, 64, 512, 64), (24, 64, 512, 64),
    (32, 128, 1024, 64), (32, 128, 2048, 64),
    # and these not to, or by less than a tenth
    (8, 32, 256, None), (48, 64, 256, None), (16, 32, 256, None), (32, 16, 256, None), (32, 16, 128, None),
    (16, 64, 512, None), (16, 128, 512, None), (32, 32, 512, None), (24, 32, 512, None),
    (32, 64, 1024, None), (16, 64, 2048, None), (32, 32, 2048, None), (32, 64, 2048, None),
])
def test_the_measured_rule(features: int, outputs: int, macs: int, width: int | None) -> None:
    assert widened_width(features, outputs, macs) == width


@pytest.mark.parametrize(("features", "outputs", "macs", "vectors", "width"), [
    # benchmarks/linear_forms.py --vectors measured these to pay (cycles linear → padded)
    (32, 64, 128, 4, 64), (32, 64, 256, 4, 64), (32, 64, 512, 4, 64), (32, 128, 256, 4, 64),  # 1,404 → 804 on 256
    (24, 64, 128, 4, 64), (24, 64, 512, 2, 64), (32, 128, 128, 2, 64), (32, 64, 256, 3, 64),
    # and these not to, or not on every size, or were not measured
    (16, 64, 256, 4, None), (16, 64, 128, 4, None), (32, 32, 512, 2, None), (32, 32, 128, 4, None),
    (32, 64, 256, 8, None), (32, 64, 128, 16, None), (32, 128, 128, 16, None), (32, 64, 512, 49, None),
    (32, 64, 1024, 2, None), (8, 128, 256, 2, None), (48, 64, 256, 4, None),
])
def test_the_measured_rule_for_a_few_vectors(features: int, outputs: int, macs: int, vectors: int,
                                             width: int | None) -> None:
    assert widened_width(features, outputs, macs, vectors) == width


@pytest.mark.parametrize(("features", "outputs"), [(8, 32), (8, 64), (8, 128)])
@pytest.mark.parametrize("macs", [128, 256, 512])
def test_an_8_wide_input_is_never_padded(features: int, outputs: int, macs: int) -> None:
    # padded to 16 or 32 it costs twice as much (still "kernel first"), to 48 or 64 still more than as it is
    assert widened_width(features, outputs, macs) is None


def _linear(features: int, outputs: int, *, bias: bool = True) -> Any:
    import torch

    torch.manual_seed(3)

    class Layer(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = torch.nn.Linear(features, outputs, bias=bias)

        def forward(self, x: Any) -> Any:
            return torch.relu(self.fc(x))

    return Layer().eval()


def _quantized(module: Any, shape: tuple[int, ...]) -> Any:
    """``module`` quantized as zoo's default int8 build for u85-256 does it, calibrated on 16 seeded inputs."""
    import torch
    from executorch.backends.arm.quantizer import EthosUQuantizer, get_symmetric_quantization_config
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    from zoo import Zoo
    from zoo.registry.compile.retarget import ethosu_compile_spec

    torch.manual_seed(0)
    quantizer = EthosUQuantizer(ethosu_compile_spec(Zoo().target("u85-256")))
    quantizer.set_global(get_symmetric_quantization_config())
    prepared = prepare_pt2e(torch.export.export(module, (torch.randn(*shape),)).module(check_guards=False), quantizer)
    for x in torch.randn(16, *shape):
        prepared(x)
    return convert_pt2e(prepared)


def _calls(graph: Any, name: str) -> list[Any]:
    return [n for n in graph.graph.nodes if n.op == "call_function" and name in str(n.target)]


@pytest.mark.stack
@pytest.mark.parametrize("bias", [True, False])
def test_a_32_wide_input_is_padded_to_64_and_the_npu_adds_the_same_integers(bias: bool) -> None:
    import copy

    import torch

    from zoo.registry.compile.widen_linear import widen_narrow_linears

    plain = _quantized(_linear(32, 64, bias=bias), (1, 32))
    widened = copy.deepcopy(plain)
    assert widen_narrow_linears(widened, 256) == 1
    (linear,) = _calls(widened, "aten.linear")
    pad = linear.args[0].args[0].args[0]  # dequantize(quantize(pad(x)))
    assert pad.target == torch.ops.aten.constant_pad_nd.default and pad.args[1] == [0, 32]
    source = pad.args[0]
    assert linear.args[0].args[1:] == source.args[1:] == linear.args[0].args[0].args[1:]  # the input's quantization
    (old,) = _calls(plain, "aten.linear")
    codes = getattr(plain, str(old.args[1].args[0].target))
    wide = getattr(widened, str(linear.args[1].args[0].target))
    assert wide.dtype == torch.int8 and tuple(wide.shape) == (64, 64)
    assert torch.equal(wide[:, :32], codes) and not wide[:, 32:].any()
    for new_arg, old_arg in zip(linear.args[1].args[1:], old.args[1].args[1:], strict=True):  # the same scales
        if isinstance(new_arg, torch.fx.Node):
            new_arg, old_arg = getattr(widened, str(new_arg.target)), getattr(plain, str(old_arg.target))
            assert torch.equal(new_arg, old_arg)
        else:
            assert new_arg == old_arg
    assert not any(torch.equal(t, codes) for t in widened.state_dict().values() if t.shape == codes.shape)
    # The NPU's accumulator: (input code - zero point) * weight code, summed in int32.
    scale, zero = source.args[1], source.args[2]
    torch.manual_seed(1)
    for x in torch.randn(32, 1, 32):
        q = torch.clamp(torch.round(x / scale) + zero, -128, 127).to(torch.int32)
        padded = torch.nn.functional.pad(q, (0, 32), value=zero)
        assert torch.equal((q - zero) @ codes.to(torch.int32).T, (padded - zero) @ wide.to(torch.int32).T)
    # The fake-quantized graphs (the numerical check's reference) end in a dequantization: the same int8 outputs.
    assert all(torch.equal(plain(x), widened(x)) for x in torch.randn(64, 1, 32))


@pytest.mark.stack
@pytest.mark.parametrize("shape", [(2, 32), (1, 3, 32), (1, 4, 32)])
def test_a_few_vectors_are_padded_and_the_npu_adds_the_same_integers(shape: tuple[int, ...]) -> None:
    import copy

    import torch

    from zoo.registry.compile.widen_linear import widen_narrow_linears

    plain = _quantized(_linear(32, 64), shape)
    widened = copy.deepcopy(plain)
    assert widen_narrow_linears(widened, 256) == 1
    (linear,) = _calls(widened, "aten.linear")
    pad = linear.args[0].args[0].args[0]
    assert pad.target == torch.ops.aten.constant_pad_nd.default and pad.args[1] == [0, 32]
    wide = getattr(widened, str(linear.args[1].args[0].target))
    assert tuple(wide.shape) == (64, 64) and not wide[:, 32:].any()
    # The fake-quantized graphs end in a dequantization: the same int8 outputs, vector by vector.
    torch.manual_seed(2)
    assert all(torch.equal(plain(x), widened(x)) for x in torch.randn(32, *shape))


@pytest.mark.stack
@pytest.mark.parametrize(("features", "outputs", "shape"), [
    (8, 32, (1, 8)), (48, 64, (1, 48)), (32, 8, (1, 32)),  # the rule says it does not pay
    (32, 64, (1, 8, 32)), (32, 64, (16, 32)), (16, 64, (1, 4, 16)),  # vectors the rule does not pad
])
def test_every_other_linear_layer_stays(features: int, outputs: int, shape: tuple[int, ...]) -> None:
    from zoo.registry.compile.widen_linear import widen_narrow_linears

    graph = _quantized(_linear(features, outputs), shape)
    before = str(graph.graph)
    assert widen_narrow_linears(graph, 256) == 0 and str(graph.graph) == before and not _calls(graph, "constant_pad_nd")


@pytest.mark.compile
def test_a_tiny_network_with_a_32_wide_layer_costs_less_on_u85_and_verifies(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    from tests.tiny_builds import compile_verified, tosa_ops
    from zoo.registry.compile import lower

    for each in ("widened", "plain"):
        (tmp_path / each).mkdir()
    (widened,) = compile_verified(monkeypatch, tmp_path / "widened", "tests.vector_plugin", "vector-tiny", ["u85-256"])
    monkeypatch.setattr(lower, "widens_linears", lambda family, macs: False)
    (plain,) = compile_verified(monkeypatch, tmp_path / "plain", "tests.vector_plugin", "vector-tiny", ["u85-256"])
    ops = [op for graph in widened.tosa_graphs for op in tosa_ops(graph) if op != "CONST"]
    assert ops.count("PAD") == 1 and widened.delegation["cpu_ops"] == 0, " ".join(ops)
    assert widened.numerics is not None and widened.numerics.passed, widened.numerics.record
    assert widened.vela is not None and plain.vela is not None
    cycles = (widened.vela["total"]["npu_cycles"], plain.vela["total"]["npu_cycles"])
    assert cycles[0] < cycles[1] * 0.75, cycles


@pytest.mark.compile
def test_a_tiny_network_over_4_vectors_is_widened_on_u85_and_verifies(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    from tests.tiny_builds import compile_verified, tosa_ops

    (built,) = compile_verified(monkeypatch, tmp_path, "tests.vector_plugin", "vector-tiny-seq", ["u85-256"])
    ops = [op for graph in built.tosa_graphs for op in tosa_ops(graph) if op != "CONST"]
    assert ops.count("PAD") == 1 and built.delegation["cpu_ops"] == 0, " ".join(ops)
    assert built.numerics is not None
    checks = {check["name"]: check["passed"] for check in built.numerics.record["checks"]}
    # The TOSA reference computes the fake-quantized model's integers. Vela's program does not: it writes the
    # ReLU layers' OFM 4x1 over a 2x2 IFM, unwidened too and on u55-128 as well (docs/upstream.md, "A batched
    # linear layer whose ReLU reshapes its output"; tests/command_stream/test_batched_linear.py), so the
    # NPU-program level fails at the second vector's first output, as it must.
    assert checks["vs_fake_quant"] and checks["vs_float"], built.numerics.record
    first = built.numerics.record["npu_program"]["first_difference"]
    assert not checks["npu_program"] and (first["sample"], first["element"]) == (0, 8), built.numerics.record
