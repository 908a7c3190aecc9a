"""zoo's side of ``benchmarks/vs_tflite.py``: the model's program for each target, built in this process
without the cache, and Vela's per-layer run on its TOSA graphs with the flags its manifest records."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from benchmarks._vs_tflite_metrics import zoo_metrics
from benchmarks._vs_tflite_sides import Side
from benchmarks._vs_tflite_vela import combine, run_vela

if TYPE_CHECKING:
    from zoo import Zoo

__all__ = ["StageClock", "build_zoo", "choose_weights"]


class StageClock:
    """A progress callback for ``compile_targets`` that sums the seconds spent in each stage it reports
    (load, export, quantize, calibrate, lower, verify, ...): where a slow build spends its time."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._stage: str | None = None
        self._since = time.perf_counter()

    def __call__(self, stage: str, done: int | None = None, total: int | None = None) -> None:
        if stage == self._stage:
            return
        self._lap()
        self._stage = stage
        print(f"  zoo: {stage} ...", flush=True)  # a long run's log shows where it is

    def _lap(self) -> None:
        now = time.perf_counter()
        if self._stage is not None:
            self.seconds[self._stage] = self.seconds.get(self._stage, 0.0) + now - self._since
        self._since = now

    def text(self) -> str:
        self._lap()
        return ", ".join(f"{stage} {s:.0f} s" for stage, s in self.seconds.items())


def build_zoo(zoo: Zoo, model: str, targets: Sequence[str], weights: str | None, best: bool,
              work: Path, metrics: bool = False) -> list[Side]:
    """zoo's program of ``model`` for each target (one lowering per TOSA specification) and
    Vela's per-layer run on its TOSA graphs, with the flags its manifest records."""
    from zoo.registry.compile import compile_targets
    from zoo.registry.request.keys import BuildRequest

    spec = zoo.model(model)
    resolved = [zoo.target(t) for t in targets]
    layout = "nhwc" if best and "nhwc" in spec.layouts else None
    requests = [BuildRequest.create(spec, t, weights=weights, io="int8" if best else None, layout=layout)
                for t in resolved]
    b = requests[0].boundary
    label = f"zoo {b.mode} {b.layout}" + ("" if best else " (defaults)")
    started = time.perf_counter()
    clock = StageClock()
    verify, lowered = [], set()
    for t in resolved:  # the check runs once per TOSA specification; its targets share the program's numerics
        verify.append(metrics and t.tosa_spec not in lowered)
        lowered.add(t.tosa_spec)
    try:
        results = compile_targets(spec, resolved, weights=weights, boundary=b, precision=requests[0].precision,
                                  verify=verify, progress=clock)
    except Exception as exc:  # a BuildError names the stage; report it and go on
        return [Side(label, error=f"{type(exc).__name__}: {exc}") for _ in targets]
    seconds = (time.perf_counter() - started) / len(targets)
    stages = clock.text()
    sides = []
    for target, result in zip(targets, results, strict=True):
        assert result.vela is not None
        side = Side(label, seconds=seconds)
        recorded = result.vela["partitions"]  # what the manifest's "vela" holds
        runs = []
        vela_started = time.perf_counter()
        for i, (graph, partition) in enumerate(zip(result.tosa_graphs, recorded, strict=True)):
            path = work / f"{model}-{target}-{b.mode}-{b.layout}-{i}.tosa"
            path.write_bytes(graph)
            runs.append(run_vela(path, partition["flags"], work / f"vela-{path.stem}", i))
        side.vela = combine(runs)
        side.notes.append(f"seconds by stage, all targets: {stages}; Vela's rerun for {target} "
                          f"{time.perf_counter() - vela_started:.0f} s")
        manifest = result.vela["total"]
        if side.vela.total["total_cycles"] != manifest["total_cycles"]:
            side.notes.append(f"Vela rerun gives {side.vela.total['total_cycles']:,} cycles, "
                              f"the manifest {manifest['total_cycles']:,}")
        d = result.delegation
        side.cpu_ops = d["cpu_ops"] + d.get("cpu_quantize_ops", 0)
        given = (result.io or {}).get("inputs") or [{}]
        if given[0].get("scale") is not None:
            side.input_quant = f"{given[0]['dtype']} scale {given[0]['scale']:.6g} zp {given[0]['zero_point']}"
        else:
            side.input_quant = str(given[0].get("dtype", "?"))
        side.notes.append(f"calibration sha256 {result.calibration['sha256'][:12]} ({result.calibration['samples']} samples)")
        side.metrics = zoo_metrics(result) or next(
            (zoo_metrics(r) for t, r in zip(resolved, results, strict=True)
             if t.tosa_spec == zoo.target(target).tosa_spec and r.numerics is not None), [])
        sides.append(side)
    return sides


def choose_weights(zoo: Zoo, model: str, asked: str | None) -> str:
    """``asked``, else the model's own weights where they load offline, else ``random``."""
    spec = zoo.model(model)
    if asked:
        return spec.weights_variant(asked).name
    default = spec.weights_variant(None).name
    from zoo.registry.offline import no_network

    try:
        with no_network(True):
            spec.build(default)
    except Exception:
        return "random" if "random" in spec.weights_names else default
    return default

