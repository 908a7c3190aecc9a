"""A build with an SRAM budget, answered from the cached default build without compiling.

``--sram-budget`` takes the fastest Vela options that fit (``memory_fit.py``): the
target's own, or ``--optimise=Size``, and an arena cache size where the memory mode
caches the arena in SRAM. A default build records what Vela said for each of those it
can know in advance (``vela.alternatives``). When the default's own options win under
the budget, the budget's ``.pte`` is the default's byte for byte (Vela runs with the
same flags on the same TOSA graphs), so the artifact is assembled from the cached
entry: its header and manifest get the budget, the key is the budget's. When none of
them fits, that is the same failure a real build would record, said without compiling.
Anything else (another option wins, a bundle is wanted) is left to a real build. Torch-free.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from zoo._errors import BuildError
from zoo.registry.build_units.assemble import assemble
from zoo.registry.build_units.unit import UnitFailure
from zoo.registry.compile.result import CompileResult
from zoo.registry.npu import memory_fit

if TYPE_CHECKING:
    from zoo.registry.build_units.unit import BuiltArtifact
    from zoo.registry.request.keys import BuildRequest
    from zoo.registry.store.cache import Entry


def default_of(request: BuildRequest) -> BuildRequest:
    """The same request without its SRAM budget."""
    return replace(request, target=replace(request.target, sram_budget=None))


def from_default(request: BuildRequest, default: Entry) -> tuple[BuiltArtifact, memory_fit.Candidate] | UnitFailure | None:
    """``request``'s artifact made from ``default`` (the cached build of ``default_of(request)``),
    with the candidate chosen; the failure a real build would give when nothing fits; None
    when a real build must decide."""
    budget = request.target.sram_budget
    m = default.manifest
    vela = m.vela or {}
    total, alternatives = vela.get("total"), vela.get("alternatives")
    pte_path = default.file("pte")
    if budget is None or not isinstance(total, dict) or not isinstance(alternatives, list) or pte_path is None:
        return None
    try:
        known: dict[tuple[str, ...], memory_fit.Candidate] = {
            (): memory_fit.Candidate((), int(total["sram_bytes"]), float(total["inference_time_ms"])),
        }
        for a in alternatives:
            flags = tuple(str(f) for f in a["flags"])
            known[flags] = memory_fit.Candidate(flags, int(a["sram_bytes"]), float(a["inference_time_ms"]))
    except (KeyError, TypeError, ValueError):
        return None
    wanted = memory_fit.candidate_flags(replace(request.target, sram_budget=None), budget)
    if any(flags not in known for flags in wanted):
        return None  # e.g. --arena-cache-size=BUDGET: only a Vela run can say
    candidates = [known[flags] for flags in wanted]
    try:
        chosen = memory_fit.choose(request.target, budget, candidates)
    except BuildError as exc:  # worded as the real build's memory-fit stage words it (compile/pipeline.py)
        where = f"model {request.spec.name!r} (weights {request.weights.name!r}) for target {request.target.name!r}"
        return UnitFailure("BuildError", f"{where}: {exc}", stage="memory fit")
    if chosen.flags:
        return None
    own: dict[str, Any] = {k: v for k, v in vela.items() if k != "alternatives"}  # as a budget build reports it
    result = CompileResult(
        pte=pte_path.read_bytes(), tosa_graphs=[], vela=own, delegation=m.delegation,
        cpu_operators=list(m.cpu_operators), calibration=m.calibration or {}, warnings=list(m.warnings),
        memory_fit=memory_fit.fit_record(request.target, budget, chosen, candidates), io=m.io,
    )
    built = assemble(request, result, seconds=0.0, built_with=None, bundle=False)
    built.manifest.build["derived_from"] = default.key
    # The same .pte on the same data; only a record zoo sealed, of a build made here (the derived
    # entry is this zoo's own, so a publisher's record must not become one).
    numerics = default.record.get("numerics") if default.record.get("local_build") is True else None
    if numerics is not None and built.manifest.verification is not None:
        built.manifest.verification["numerics"] = numerics
    return built, chosen
