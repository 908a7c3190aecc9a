"""Scheduling what the lookups did not find: grouped into build units (one per model
and TOSA specification), built by an executor under the lock of every key the units
make, and checked before they are stored (``build_units/accept.py``). The cache's locks
make one build per key, across threads and processes.

A build that fails is a ``Failure``: the cache records the deterministic ones
(``store/failures.py``), so a fetch reports a known failure without compiling again."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from zoo._units import human_bytes
from zoo.registry.request.io_boundary import Boundary
from zoo.registry.request.keys import BuildRequest
from zoo.registry.request.precision import DEFAULT as DEFAULT_PRECISION
from zoo.registry.request.precision import Precision
from zoo.registry.resolve.lookup import Lookup, Outcome, _has, _missing
from zoo.registry.store import evaluations
from zoo.registry.store.cache import Entry
from zoo.registry.store.failures import Failure, recordable

if TYPE_CHECKING:
    from zoo.registry.build_units.unit import BuildUnit, UnitFailure, UnitTarget


@dataclass
class _Pending:
    """A key that needs a local build, and the requests that want it."""

    request: BuildRequest
    key: str
    data: str | None
    indexes: list[int]
    previous: Entry | None = None
    bundle: bool = False


class Scheduling(Lookup):
    """Builds what the lookups left, as ``options`` allow."""

    def _build(self, pending: list[_Pending], done: dict[int, Outcome]) -> None:
        from zoo.registry.build_units.accept import accept
        from zoo.registry.build_units.executors import executor_for
        from zoo.registry.build_units.unit import BuiltArtifact, UnitFailure

        opts = self.options
        with contextlib.ExitStack() as locks:
            for p in sorted(pending, key=lambda p: p.key):  # one order everywhere: no deadlock between processes
                locks.enter_context(self.cache.lock(p.key))
            todo: list[_Pending] = []
            for p in pending:
                # Another process may have finished the same build while we waited.
                entry = None if opts.force_build else self._checked_get(p.key)
                refusal = self._refusal(entry)
                if refusal is not None:  # a build of our own replaces it, as with --force-build
                    self.cache.evict(p.key)
                    entry = None
                if entry is not None and self._has(entry, p.data, opts.bundle):
                    done.update((i, (entry, "cache")) for i in p.indexes)
                    continue
                if entry is not None:
                    self.notice(
                        f"{p.request.spec.name} for {p.request.target.name} is cached without "
                        f"{_missing(entry, p.data, opts.bundle, user=self._unevaluated(entry))}; lowering it again to add it "
                        "(the .pte bytes must come out identical)"
                    )
                    p.previous = entry
                    p.bundle = opts.bundle or entry.file("bundle") is not None  # an upgrade never loses what it had
                else:
                    if opts.force_build:
                        self.cache.evict(p.key)
                    p.bundle = opts.bundle
                todo.append(p)
            if not opts.force_build:
                todo = [p for p in todo if not self._from_default(p, done)]
            if not todo:
                return
            units, members = self._units(todo)
            executor = executor_for(opts.executor, jobs=opts.jobs, units=len(units), catalog=self.catalog,
                                    ray_address=opts.ray_address, ray_results=opts.ray_results,
                                    ray_address_from=self.ray_address_from)
            failures: dict[int, list[UnitFailure]] = {}
            for result in executor.map(units, lambda u: self._progress(u.label)):
                n = units.index(result.unit)
                for outcome, p in zip(result.outcomes, members[n], strict=True):
                    wanted = next(t for t in result.unit.targets if t.key == p.key)
                    if isinstance(outcome, UnitFailure):
                        if outcome not in failures.setdefault(n, []):
                            failures[n].append(outcome)
                        done.update((i, self._failed(p, wanted, outcome)) for i in p.indexes)
                        continue
                    measured = None
                    if opts.eval_dir is not None and p.data is not None:
                        # The user's evaluation never becomes the artifact's own numerics (evaluations.py).
                        own = p.previous.record.get("numerics") if p.previous else None
                        manifest, measured = evaluations.split(outcome.manifest, own)
                        outcome = BuiltArtifact(manifest, outcome.files)
                    entry = accept(outcome, wanted, self.cache, previous=p.previous)
                    if measured is not None and p.data is not None:
                        evaluations.record(self.cache.base, entry.key, p.data, measured)
                        self.evaluated[entry.key] = measured
                    done.update((i, (entry, "build")) for i in p.indexes)
                if failures and not (opts.keep_going or executor.keeps_going):
                    break
            if failures and not opts.keep_going:
                # The first unit's failure, whichever finished first, so the message does not depend on timing.
                ordered = [f for n in sorted(failures) for f in failures[n]]
                more = f" ({len(ordered) - 1} more build(s) failed too)" if len(ordered) > 1 else ""
                raise ordered[0].to_error(more=more)

    def _failed(self, p: _Pending, wanted: UnitTarget, outcome: UnitFailure) -> Failure:
        """The failure as data, recorded in the cache (under the key's lock, which
        the caller holds) when trying again would fail the same way."""
        r = p.request
        keep = outcome.error == "BuildError" and recordable(outcome.stage)
        failure = Failure(
            model=r.spec.name, target=r.target.name, weights=r.weights.name, key=p.key,
            error=outcome.error, message=outcome.message, stage=outcome.stage, operator=outcome.operator,
            pass_name=outcome.pass_name, tools=wanted.key_inputs.get("tools"), recorded=keep,
            variant={k: wanted.key_inputs[k] for k in ("target", "io") if k in wanted.key_inputs}
            | ({"precision": r.precision.name} if r.precision != DEFAULT_PRECISION else {}),
        )
        if keep:
            self.cache.record_failure(failure)
        return failure

    def _from_default(self, p: _Pending, done: dict[int, Outcome]) -> bool:
        """An SRAM budget that the cached default build's own Vela options meet best is
        answered from it, without compiling (``build_units/derive.py``); the caller holds p's lock."""
        from zoo.registry.build_units import derive
        from zoo.registry.build_units.accept import accept
        from zoo.registry.build_units.unit import UnitFailure, UnitTarget

        r = p.request
        if r.target.sram_budget is None or p.previous is not None or p.bundle or self.options.eval_dir is not None:
            return False
        default = self._checked_get(derive.default_of(r).key())
        if default is None or self._refusal(default) is not None or (p.data is not None and not _has(default, p.data, False)):
            return False
        made = derive.from_default(r, default)
        if made is None:
            return False
        wanted = UnitTarget(r.target, r.key_inputs())
        if isinstance(made, UnitFailure):
            failure = self._failed(p, wanted, made)
            if not self.options.keep_going:
                raise failure.to_error()
            done.update((i, failure) for i in p.indexes)
            return True
        built, chosen = made
        entry = accept(built, wanted, self.cache)
        self.notice(
            f"{r.spec.name} for {r.target.name}: the default build cached here needs {human_bytes(chosen.sram_bytes)} "
            f"of SRAM and its Vela options are the fastest that fit {human_bytes(r.target.sram_budget)}, so it is "
            "the artifact for this budget (no compile)"
        )
        done.update((i, (entry, "build")) for i in p.indexes)
        return True

    def _units(self, todo: list[_Pending]) -> tuple[list[BuildUnit], list[list[_Pending]]]:
        from zoo.registry.build_units.unit import BuildUnit, UnitTarget

        """One unit per model, weights, calibration and TOSA specification, in request order."""
        groups: dict[tuple[str, str, int, str, Boundary, Precision], list[_Pending]] = {}
        together: dict[tuple[str, str, int], list[str]] = {}
        for p in todo:
            r = p.request
            family = r.target.tosa_spec or "portable"
            groups.setdefault((r.spec.name, r.weights.name, id(r.calibration), family, r.boundary, r.precision),
                              []).append(p)
            together.setdefault((r.spec.name, r.weights.name, id(r.calibration)), []).append(r.target.name)
        units: list[BuildUnit] = []
        members: list[list[_Pending]] = []
        for (model, weights, calibration, _, boundary, precision), group in groups.items():
            unit = BuildUnit(
                model=model,
                weights=weights,
                targets=tuple(
                    UnitTarget(p.request.target, p.request.key_inputs(), verify=self._numerics, bundle=p.bundle)
                    for p in group
                ),
                plugins=self.plugins,
                calibration_dir=self.options.calibration_dir,
                boundary=boundary,
                precision=precision,
                eval_dir=self.options.eval_dir,
                built_with=tuple(together[(model, weights, calibration)]),
                offline=self.offline,
            )
            units.append(unit)
            members.append(group)
        return units, members

