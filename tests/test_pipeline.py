"""The compile pipeline: real ExecuTorch builds of tiny models, shared across tests."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_zoo
from zoo import BuildError, Dataset, InputSpec, ModelSpec, WeightsVariant
from zoo.registry.npu import vela_report
from zoo.registry.npu.targets import Target, TargetTable
from zoo.registry.npu.vela_options import vela_flags

HAVE_STACK = all(importlib.util.find_spec(m) for m in ("torch", "executorch", "ethosu"))
needs_stack = pytest.mark.skipif(not HAVE_STACK, reason="the compile stack is not installed")
U55, U85 = "ethos-u55-128", "ethos-u85-256"
ROOT = Path(__file__).resolve().parents[1]


# --- test models (torch is imported lazily so collection stays cheap) ------------------------

@cache
def _modules() -> dict[str, type]:
    import torch

    class Add(torch.nn.Module):
        def forward(self, x: Any, y: Any) -> Any:
            return x + y

    class Softmax(torch.nn.Module):
        def forward(self, x: Any) -> Any:
            return torch.softmax(x, dim=-1)

    class SmallCNN(torch.nn.Module):
        def __init__(self, pool: bool = False) -> None:
            super().__init__()
            self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
            # Stride 4 is beyond the U55's pooling limit (stride <= 3), so
            # the pool stays on the CPU and splits the NPU graph in two.
            self.pool = torch.nn.AvgPool2d(4, stride=4) if pool else torch.nn.Identity()
            self.conv2 = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1)
            self.fc = torch.nn.Linear(16 * (2 * 2 if pool else 8 * 8), 10)

        def forward(self, x: Any) -> Any:
            x = torch.relu(self.conv1(x))
            x = torch.relu(self.conv2(self.pool(x)))
            return self.fc(x.flatten(1))

    class WideLinear(torch.nn.Module):
        # The partitioner accepts it, but Vela cannot run a Conv2D this deep on a U55.
        def __init__(self) -> None:
            super().__init__()
            self.fc = torch.nn.Linear(70_000, 4)

        def forward(self, x: Any) -> Any:
            return self.fc(x)

    return {"add": Add, "softmax": Softmax, "cnn": SmallCNN, "wide": WideLinear}


def _random_set(shapes: list[tuple[int, ...]], n: int, seed: int = 1) -> Dataset:
    def load() -> list[Any]:
        import torch

        g = torch.Generator().manual_seed(seed)
        return [tuple(torch.rand(s, generator=g) for s in shapes) for _ in range(n)]

    return Dataset(size=n, description=f"{n} random samples", load=load,
                   identity=lambda: f"random:{seed}:{n}")


def _spec(name: str, module: str, shapes: list[tuple[int, ...]], *, n: int = 4,
          **kwargs: Any) -> ModelSpec:
    def build(weights: str) -> Any:
        import torch

        torch.manual_seed(0)
        return _modules()[module](**kwargs).eval()

    def example() -> tuple[Any, ...]:
        import torch

        return tuple(torch.ones(s) for s in shapes)

    return ModelSpec(
        name=name, version="1", description=name, task="test",
        inputs=tuple(InputSpec(f"x{i}", s) for i, s in enumerate(shapes)),
        build=build, example_inputs=example, calibration=_random_set(shapes, n),
        weights=(WeightsVariant("seed0", "random", "generated", "MIT", lambda: "seed:0"),),
    )


SPECS = {
    "add": _spec("add", "add", [(1, 1, 1, 1), (1, 1, 1, 1)], n=2),
    "softmax": _spec("softmax", "softmax", [(2, 2)], n=2),
    "cnn": _spec("cnn", "cnn", [(1, 3, 16, 16)]),
    "split": _spec("split", "cnn", [(1, 3, 16, 16)], pool=True),
    "wide": _spec("wide", "wide", [(1, 70_000)], n=1),
}
ADD_CALIBRATION = _random_set([(1, 1, 1, 1), (1, 1, 1, 1)], 3, seed=7)


def _target(name: str, **kwargs: Any) -> Target:
    return TargetTable().resolve(name, **kwargs)


@pytest.fixture(scope="session")
def build(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str, str], Any]]:
    """compile_model, once per (model, target) for the whole session, in an
    empty working directory that must stay empty."""
    from zoo.registry.compile import compile_model

    workdir = tmp_path_factory.mktemp("compile-cwd")
    results: dict[tuple[str, str], Any] = {}
    stages: dict[tuple[str, str], list[tuple[str, int | None, int | None]]] = {}

    def get(model: str, target: str) -> Any:
        key = (model, target)
        if key not in results:
            seen: list[tuple[str, int | None, int | None]] = []
            old = Path.cwd()
            os.chdir(workdir)
            try:
                results[key] = compile_model(
                    SPECS[model], _target(target),
                    calibration=ADD_CALIBRATION if key == ("add", U85) else None,
                    progress=lambda s, d, t: seen.append((s, d, t)),
                )
            finally:
                os.chdir(old)
            stages[key] = seen
            assert list(workdir.iterdir()) == [], "compiling wrote into the working directory"
        return results[key]

    get.stages = stages  # type: ignore[attr-defined]
    yield get


def _program(pte: bytes) -> Any:
    from executorch.exir._serialize._program import deserialize_pte_binary

    return deserialize_pte_binary(pte).program


def _delegates(pte: bytes) -> list[str]:
    return [d.id for plan in _program(pte).execution_plan for d in plan.delegates]


# --- cheap ------------------------------------------------------------------------------------

def test_importing_the_pipeline_does_not_import_torch() -> None:
    code = ("import sys, zoo.registry.compile, zoo.registry.npu.vela_report;"
            "print([m for m in ('torch', 'executorch', 'ethosu', 'numpy') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _partition(**values: Any) -> dict[str, Any]:
    base: dict[str, Any] = {k: 0 for k in vela_report._SUMMED}
    base.update(sram_bytes=0, inferences_per_second=None)
    base.update(values)
    return base


def test_summarize_sums_time_and_flash_but_takes_the_largest_sram() -> None:
    a = _partition(npu_cycles=10, total_cycles=20, inference_time_ms=0.5, macs=7,
                   sram_bytes=1000, off_chip_flash_bytes=300, dram_bytes=5)
    b = _partition(npu_cycles=1, total_cycles=5, inference_time_ms=1.5, macs=3,
                   sram_bytes=4000, off_chip_flash_bytes=200, dram_bytes=6)
    out = vela_report.summarize([a, b])
    assert out["partitions"] == [a, b]
    total = out["total"]
    assert (total["npu_cycles"], total["total_cycles"], total["macs"]) == (11, 25, 10)
    assert total["inference_time_ms"] == pytest.approx(2.0)
    assert total["inferences_per_second"] == pytest.approx(500.0)
    assert total["sram_bytes"] == 4000
    assert (total["off_chip_flash_bytes"], total["dram_bytes"]) == (500, 11)
    assert "not included" in out["note"]


def test_summarize_of_one_partition_is_that_partition() -> None:
    one = _partition(npu_cycles=3, total_cycles=4, inference_time_ms=0.008,
                     inferences_per_second=125000.0, sram_bytes=64)
    total = vela_report.summarize([one])["total"]
    assert total == {k: one[k] for k in total}


def test_only_whole_operator_names_count_as_bookkeeping() -> None:
    """``$`` matched before a final newline, so ``getitem\\n`` left the CPU operator count."""
    from zoo.registry.compile.delegation import _BOOKKEEPING

    assert _BOOKKEEPING.match("getitem") and _BOOKKEEPING.match("quantized_decomposed_quantize_per_tensor_default")
    assert not _BOOKKEEPING.match("getitem\n") and not _BOOKKEEPING.match("quantized_decomposed_dequantize_per_tensor\n")


def test_vela_flags_match_the_backends_order() -> None:
    target = _target(U55, extra_flags=["--optimise=Size"])
    assert vela_flags(target) == [
        "--optimise=Size", f"--accelerator-config={U55}", "--config=Arm/vela.ini",
        "--output-format=raw", "--system-config=Ethos_U55_High_End_Embedded",
        "--memory-mode=Shared_Sram",
    ]


def test_vela_flags_fill_in_the_family_defaults_like_the_compile_spec() -> None:
    bare = Target("ethos-u85-256", "ethos-u85-256")
    assert vela_flags(bare)[-2:] == [
        "--system-config=Ethos_U85_SYS_DRAM_Mid", "--memory-mode=Sram_Only"]


@pytest.mark.stack
def test_the_compile_spec_gives_vela_the_flags_npu_works_out() -> None:
    """One derivation of Vela's flags: ExecuTorch's compile spec, made from npu/vela_options, gives Vela
    exactly the list vela_flags says, for every accelerator and a board with its own options."""
    from zoo.registry.compile.retarget import ethosu_compile_spec

    table = TargetTable()
    targets = [table.resolve(name) for name in ("u55-32", "u65-512", "u85-2048", "alif-e8-u85")]
    targets.append(_target(U55, extra_flags=["--optimise=Size"]))
    for target in targets:
        assert ethosu_compile_spec(target).compiler_flags == vela_flags(target), target.name


def test_a_float_only_model_is_refused_for_the_npu_before_any_work() -> None:
    from zoo.registry.compile import compile_model

    calls: list[str] = []
    with pytest.raises(BuildError, match=r"float-only.*'portable'"):
        compile_model(replace(SPECS["add"], quantize=False), _target(U55),
                      progress=lambda s, d, t: calls.append(s))
    assert calls == []


# --- real builds --------------------------------------------------------------------------------

@pytest.mark.compile
@needs_stack
@pytest.mark.parametrize("target", [U55, U85])
@pytest.mark.parametrize("model", ["add", "cnn"])
def test_ethosu_build(build: Callable[[str, str], Any], model: str, target: str) -> None:
    r = build(model, target)
    assert r.pte[4:8] == b"ET12"
    assert _delegates(r.pte) == ["EthosUBackend"]
    assert len(r.tosa_graphs) == 1 and r.tosa_graphs[0]
    assert r.delegation["partitions"] == 1
    assert r.delegation["cpu_ops"] == 0 and r.delegation["npu_fraction"] == 1.0
    assert r.warnings == []
    total = r.vela["total"]
    assert total["npu_cycles"] > 0 and total["inference_time_ms"] > 0
    assert total == {k: r.vela["partitions"][0][k] for k in total}
    part = r.vela["partitions"][0]
    assert part["accelerator_configuration"].lower() == target.replace("-", "_")
    assert part["flags"] == vela_flags(_target(target))
    assert "quantized_decomposed::quantize_per_tensor.out" in r.cpu_operators
    assert r.cpu_operators == sorted(r.cpu_operators)
    for field in (r.vela, r.delegation, r.calibration):
        json.dumps(field, allow_nan=False)


@pytest.mark.compile
@needs_stack
def test_calibration_counts_and_digests_what_the_dataset_provided(
    build: Callable[[str, str], Any],
) -> None:
    spec_default, override = build("add", U55), build("add", U85)
    assert spec_default.calibration["samples"] == len(SPECS["add"].calibration.load()) == 2
    assert override.calibration["samples"] == len(ADD_CALIBRATION.load()) == 3
    assert spec_default.calibration["sha256"] != override.calibration["sha256"]
    # Same data, same digest: the digest names the tensors, not the run.
    assert build("cnn", U55).calibration == build("split", U55).calibration


@pytest.mark.compile
@needs_stack
def test_progress_reports_every_stage_and_each_calibration_sample(
    build: Callable[[str, str], Any],
) -> None:
    build("cnn", U55)
    seen = build.stages[("cnn", U55)]  # type: ignore[attr-defined]
    assert [s for s, _, _ in seen if s != "calibrate"] == [
        "load", "export", "quantize", "lower", "serialize", "vela"]
    assert [(d, t) for s, d, t in seen if s == "calibrate"] == [(1, 4), (2, 4), (3, 4), (4, 4)]


@pytest.mark.compile
@needs_stack
@pytest.mark.parametrize("model", ["add", "softmax", "cnn"])
def test_portable_runs_on_the_host_and_matches_the_float_model(
    build: Callable[[str, str], Any], model: str,
) -> None:
    import torch
    from executorch.runtime import Runtime

    r = build(model, "portable")
    assert r.pte[4:8] == b"ET12"
    assert (r.tosa_graphs, r.vela, _delegates(r.pte)) == ([], None, [])
    assert r.delegation["partitions"] == 0 and r.delegation["cpu_ops"] > 0
    spec = SPECS[model]
    g = torch.Generator().manual_seed(3)
    inputs = [torch.rand(i.shape, generator=g) for i in spec.inputs]
    method = Runtime.get().load_program(r.pte).load_method("forward")
    (got,) = method.execute(inputs)
    with torch.no_grad():
        want = spec.build("seed0")(*inputs)
    assert torch.allclose(got, want, atol=1e-5)


@pytest.mark.compile
@needs_stack
@pytest.mark.parametrize("key", [("add", U55), ("cnn", U85), ("split", U55), ("cnn", "portable")])
def test_pte_is_in_canonical_form(build: Callable[[str, str], Any], key: tuple[str, str]) -> None:
    from executorch.exir._serialize._program import deserialize_pte_binary

    from zoo.registry.compile import canonical, serialize

    pte = build(*key).pte
    assert serialize(deserialize_pte_binary(pte)) == pte
    assert canonical(pte) == pte


@pytest.mark.compile
@needs_stack
def test_cpu_fallback_splits_the_graph_into_two_partitions(
    build: Callable[[str, str], Any],
) -> None:
    r = build("split", U55)
    assert r.delegation["partitions"] == 2
    assert r.delegation["cpu_op_names"] == ["aten.avg_pool2d.default"]
    assert r.delegation["cpu_ops"] == 1 and 0 < r.delegation["npu_fraction"] < 1
    assert _delegates(r.pte) == ["EthosUBackend", "EthosUBackend"]
    assert "aten::avg_pool2d.out" in r.cpu_operators
    assert len(r.tosa_graphs) == 2 and r.tosa_graphs[0] != r.tosa_graphs[1]
    assert len(r.vela["partitions"]) == 2
    parts, total = r.vela["partitions"], r.vela["total"]
    assert total["npu_cycles"] == sum(p["npu_cycles"] for p in parts) > 0
    assert total["sram_bytes"] == max(p["sram_bytes"] for p in parts)
    assert len(r.warnings) == 1 and "aten.avg_pool2d.default" in r.warnings[0]


@pytest.mark.compile
@needs_stack
def test_the_vela_report_is_reproduced_from_the_captured_graph(
    build: Callable[[str, str], Any],
) -> None:
    r = build("cnn", U55)
    again = vela_report.run_vela(r.tosa_graphs[0], _target(U55))
    assert again == r.vela["partitions"][0]
    assert again["macs"] > 0 and again["off_chip_flash_bytes"] > 0
    assert again["npu_operators"] > 0 and again["cpu_operators"] == 0


def _per_layer(graph: bytes, flags: list[str], work: Path) -> list[dict[str, str]]:
    """Vela's per-layer report (``--verbose-performance``) of ``graph``, from the vela command itself."""
    import csv

    network = work / "graph.tosa"
    network.write_bytes(graph)
    vela = Path(sys.executable).with_name("vela")
    subprocess.run([str(vela), *flags, "--verbose-performance", f"--output-dir={work}", str(network)],
                   check=True, capture_output=True)
    with (work / "graph_per-layer.csv").open(newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.compile
@needs_stack
@pytest.mark.parametrize("target", [U55, U85])
def test_the_input_transposes_are_the_transposes_that_open_the_per_layer_report(
    build: Callable[[str, str], Any], target: str, tmp_path: Path,
) -> None:
    r = build("cnn", target)
    partition = r.vela["partitions"][0]
    rows = _per_layer(r.tosa_graphs[0], partition["flags"], tmp_path)
    first = next(i for i, row in enumerate(rows) if row["Original Operator"] != "Transpose")
    opening = rows[:first]
    inside = [row for row in rows[first:] if row["Original Operator"] == "Transpose"]
    # cnn flattens 16x8x8 channels-first: that transpose is inside the network, and stays with NHWC input.
    assert opening and inside
    assert partition["input_transposes"] == [
        {"operator": row["NNG Operator"], "cycles": round(float(row["Op Cycles"]))} for row in opening]


@pytest.mark.compile
@needs_stack
def test_the_fetch_summary_takes_the_transposes_cycles_from_the_builds_own_vela_report(
    build: Callable[[str, str], Any], tmp_path: Path,
) -> None:
    from zoo._units import duration
    from zoo.cli.format import _summary
    from zoo.registry.build_units.assemble import assemble
    from zoo.registry.handout import Artifact
    from zoo.registry.request.keys import BuildRequest

    r = build("cnn", U55)
    spec = replace(SPECS["cnn"], layouts=("nchw", "nhwc"))  # as a 3-channel image model may declare
    built = assemble(BuildRequest.create(spec, _target(U55)), r, seconds=1.0, built_with=None, bundle=False)
    (tmp_path / "cnn.pte").write_bytes(r.pte)
    art = Artifact(built.manifest.key, "build", tmp_path / "cnn.pte", tmp_path / "cnn.h", built.manifest)
    rows = _per_layer(r.tosa_graphs[0], r.vela["partitions"][0]["flags"], tmp_path)
    first = next(i for i, row in enumerate(rows) if row["Original Operator"] != "Transpose")
    cycles = sum(round(float(row["Op Cycles"])) for row in rows[:first])
    ms = cycles / r.vela["partitions"][0]["core_clock_hz"] * 1000
    text = _summary(art, layouts=spec.layouts)
    assert (f"  --io int8 --layout nhwc would save {first} transpose operator(s) on the NPU ({cycles:,} cycles, "
            f"{duration(ms)}) and 2 quantize/dequantize operator(s) on the CPU") in text.splitlines()
    assert " would save " not in _summary(art, layouts=("nchw",)).replace("--io int8 would save 2 quantize", "")


@pytest.mark.compile
@needs_stack
def test_only_the_programs_own_boundary_counts_in_a_split_program(build: Callable[[str, str], Any]) -> None:
    from zoo.registry.io_saving import boundary_kernels, input_partitions
    from zoo.registry.pte.pte_structure import read_pte

    r = build("split", U55)
    info = read_pte(r.pte)
    # The average pool between the partitions runs on the CPU in float: its dequantize and quantize
    # stay whatever --io is, and the second partition reads what the CPU wrote.
    assert r.delegation["cpu_quantize_ops"] > boundary_kernels(info) == 2
    assert input_partitions(info) == [True, False]


@pytest.mark.compile
@needs_stack
def test_a_lowering_that_vela_rejects_names_model_target_and_operator() -> None:
    from zoo.registry.compile import compile_model

    with pytest.raises(BuildError) as info:
        compile_model(SPECS["wide"], _target(U55))
    message = str(info.value)
    assert "'wide'" in message and U55 in message
    assert "in Vela" in message and "aten.linear.default" in message
    assert "could not run on NPU" in message


@pytest.mark.compile
@needs_stack
def test_a_bad_vela_flag_is_a_build_error_not_an_exit() -> None:
    from zoo.registry.compile import compile_model

    with pytest.raises(BuildError) as info:
        compile_model(SPECS["add"], _target(U55, extra_flags=["--no-such-flag"]))
    message = str(info.value)
    assert "'add'" in message and U55 in message
    assert "unrecognized arguments: --no-such-flag" in message


@pytest.mark.compile
@needs_stack
def test_a_fresh_process_builds_the_same_bytes(build: Callable[[str, str], Any]) -> None:
    script = textwrap.dedent(f"""
        import hashlib, sys
        sys.path.insert(0, {str(ROOT)!r})
        from tests.test_pipeline import SPECS, _target
        from zoo.registry.compile import compile_model
        r = compile_model(SPECS["split"], _target({U55!r}))
        print(hashlib.sha256(r.pte).hexdigest())
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[-1] == hashlib.sha256(build("split", U55).pte).hexdigest()


@pytest.mark.compile
@needs_stack
def test_the_bytes_do_not_depend_on_the_thread_count(tmp_path: Path) -> None:
    """A Ray worker runs with OMP_NUM_THREADS=1; a two-core process with two threads.
    squeezenet's float reductions added up differently on each, and so did its bytes,
    until the build pinned torch to one thread."""
    digests = set()
    for threads in ("1", "2"):
        proc = run_zoo("build", "squeezenet1-1", "-t", "u55-128", "--weights", "random", "--json",
                       env={"OMP_NUM_THREADS": threads, "ZOO_CACHE_DIR": str(tmp_path / threads)})
        assert proc.returncode == 0, proc.stderr[-2000:]
        digests.add(json.loads(proc.stdout)["manifest"]["files"][0]["sha256"])
    assert len(digests) == 1
