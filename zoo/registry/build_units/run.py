"""Run one build unit: compile its model for each of its targets and assemble
the artifacts. Runs in any process, given only the unit; never touches the cache."""

from __future__ import annotations

import contextlib
import io
import sys
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from zoo._errors import ZooError
from zoo.registry.build_units.assemble import assemble
from zoo.registry.build_units.unit import BuildUnit, BuiltArtifact, Outcome, UnitFailure, UnitResult
from zoo.registry.offline import no_network
from zoo.registry.request.keys import BuildRequest

if TYPE_CHECKING:
    from zoo.registry.catalog.catalog import Catalog
    from zoo.registry.events import Progress


def run_unit(unit: BuildUnit, *, catalog: Catalog | None = None, progress: Progress | None = None) -> UnitResult:
    """Build every target of ``unit``. A ZooError becomes a ``UnitFailure`` for
    each target it stopped; anything else is a bug and propagates.

    ``catalog`` (the caller's, in process) saves loading the plugins again;
    a fresh process loads them as ``unit.plugins`` says.
    """
    started = time.perf_counter()
    try:
        # A model's code may print; stdout carries zoo's paths and JSON.
        with contextlib.redirect_stdout(sys.stderr), no_network(unit.offline):
            outcomes = _build(unit, catalog, progress)
    except ZooError as exc:
        failure = UnitFailure.of(exc)
        outcomes = tuple(failure for _ in unit.targets)
    return UnitResult(unit, outcomes, round(time.perf_counter() - started, 2))


def _build(unit: BuildUnit, catalog: Catalog | None, progress: Progress | None) -> tuple[Outcome, ...]:
    from zoo.registry import compile  # heavy: imports torch and ExecuTorch when it compiles

    if catalog is None:
        from zoo.registry.catalog.plugin_loader import Registry

        # The driver already reported broken plugins; a worker stays quiet about them.
        catalog = Registry(stderr=io.StringIO()).load(unit.plugins).catalog
    spec = catalog.get(unit.model)
    calibration = None
    if unit.calibration_dir is not None and spec.calibration_from_dir is not None:
        calibration = spec.calibration_from_dir(unit.calibration_dir)
    evaluation = None
    if unit.eval_dir is not None:
        from zoo.registry.numerics.eval_dir import evaluation_from_dir

        evaluation = evaluation_from_dir(spec, unit.eval_dir)
    b = unit.boundary
    requests = [
        replace(BuildRequest.create(spec, t.target, weights=unit.weights, calibration=calibration, io=b.mode,
                                    layout=b.layout), precision=unit.precision)
        for t in unit.targets
    ]
    started = time.perf_counter()
    results = compile.compile_targets(
        spec, [t.target for t in unit.targets], weights=unit.weights, calibration=calibration,
        progress=progress, verify=[t.verify or t.bundle for t in unit.targets], evaluation=evaluation,
        boundary=b, precision=unit.precision,
    )
    seconds = round(time.perf_counter() - started, 2)
    together = unit.built_with or tuple(t.target.name for t in unit.targets)
    shared = list(together) if len(together) > 1 else None
    if progress:
        progress("header", None, None)
    return tuple(
        _checked(assemble(r, result, seconds=seconds, built_with=shared, bundle=t.bundle), r, result.tosa_graphs)
        for r, result, t in zip(requests, results, unit.targets, strict=True)
    )


def _checked(built: BuiltArtifact, request: BuildRequest, tosa_graphs: list[bytes]) -> Outcome:
    """An artifact whose .pte fails a structure check is a failure, never an entry: a
    firmware engineer would get a program the board rejects (e.g. a delegate whose Vela
    payload has fewer outputs than the program passes it). Recorded under its key, so
    the next fetch reports it; a fix to the model's code changes the key and builds again."""
    structure = (built.manifest.verification or {}).get("structure") or {}
    failed = [c for c in structure.get("checks") or () if not c.get("passed")]
    if not failed:
        return built
    first = failed[0]
    more = f" (and {len(failed) - 1} more check(s))" if len(failed) > 1 else ""
    if first["name"] == "io_shapes":
        from zoo.registry.compile.tosa_outputs import lost_output_hint

        more += lost_output_hint(tosa_graphs)
    return UnitFailure(
        "BuildError",
        f"model {request.spec.name!r} (weights {request.weights.name!r}) for target {request.target.name!r}: "
        f"the built .pte fails its structure check {first['name']}: {first['detail']}{more}; nothing was cached. "
        "Fix the model or what its plugin declares, then fetch again",
        stage="structure check", operator=None, pass_name=None,
    )
