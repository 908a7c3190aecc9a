"""Pick the fastest Vela options whose SRAM need fits a budget.

Vela's options trade SRAM for speed: for MobileNetV2 on ethos-u55-128 with
Shared_Sram, ``--optimise Performance`` needs about 1474 KiB and ``Size``
about 354 KiB for 1.7 % more time. Where the memory mode keeps the arena in
DRAM and uses SRAM as its cache (Dedicated_Sram), ``--arena-cache-size``
caps the SRAM that Performance may use. Each candidate is one Vela run on
the TOSA graphs a build already has, so choosing costs seconds, not a
lowering. ``check_budget`` checks a finished artifact against a budget.
Nothing here imports torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from zoo._errors import BuildError
from zoo._units import human_bytes
from zoo.registry.npu.targets import Target
from zoo.registry.npu.vela_config import vela_config

if TYPE_CHECKING:
    from zoo.registry.checks import Check
    from zoo.registry.pte.program import Parsed

SIZE = "--optimise=Size"
BUDGET_FLAGS = ("--optimise", "--arena-cache-size")
"""The Vela options a budget chooses among."""


@dataclass(frozen=True)
class Candidate:
    flags: tuple[str, ...]
    """Vela flags added to the target's own; () is Vela's default (Performance)."""
    sram_bytes: int
    inference_time_ms: float

    def fits(self, budget: int) -> bool:
        return self.sram_bytes <= budget

    def to_json(self, budget: int) -> dict[str, Any]:
        return {
            "flags": list(self.flags),
            "sram_bytes": self.sram_bytes,
            "inference_time_ms": self.inference_time_ms,
            "fits": self.fits(budget),
        }


def candidate_flags(target: Target, budget: int) -> list[tuple[str, ...]]:
    """The Vela option sets worth trying for ``target`` under ``budget``, default first."""
    out: list[tuple[str, ...]] = [(), (SIZE,)]
    mode = vela_config().memory_modes.get(target.memory_mode or "", {})
    if mode.get("arena_mem_area", "Axi0") != mode.get("cache_mem_area", "Axi0"):
        default_cache = vela_config().arena_cache_size(target.memory_mode or "")
        if default_cache is None or budget < default_cache:
            out.append((f"--arena-cache-size={budget}",))
    return out


def choose(target: Target, budget: int, candidates: Sequence[Candidate]) -> Candidate:
    """The fastest candidate that fits (ties: the smaller SRAM need, then the earlier one)."""
    fitting = [c for c in candidates if c.fits(budget)]
    if not fitting:
        smallest = min(candidates, key=lambda c: c.sram_bytes)
        tried = "; ".join(f"{' '.join(c.flags) or 'default'}: {human_bytes(c.sram_bytes)}" for c in candidates)
        raise BuildError(
            f"nothing fits {target.name}'s SRAM budget of {human_bytes(budget)} ({budget} bytes): the smallest SRAM "
            f"Vela achieved is {human_bytes(smallest.sram_bytes)} ({smallest.sram_bytes} bytes) with "
            f"{' '.join(smallest.flags) or 'its default options'} (tried {tried}). Give a larger --sram-budget, "
            "a memory mode that keeps the arena out of SRAM (e.g. Dedicated_Sram on U65/U85), or a smaller model."
        )
    return min(fitting, key=lambda c: (c.inference_time_ms, c.sram_bytes))


def fit_record(target: Target, budget: int, chosen: Candidate, candidates: Sequence[Candidate]) -> dict[str, Any]:
    """What the manifest stores under ``memory_fit``."""
    return {
        "sram_budget_bytes": budget,
        "budget_from": f"board {target.board}" if target.board and budget == target.sram_bytes else "--sram-budget",
        "sram_bytes": chosen.sram_bytes,
        "fits": chosen.fits(budget),
        "selected_flags": list(chosen.flags),
        "candidates": [c.to_json(budget) for c in candidates],
    }


def check_budget(pte: Parsed, target: Target, *, vela_sram_bytes: int | None = None) -> Check:
    """Does the artifact fit ``target.sram_budget``? Its SRAM need is the larger of
    Vela's estimate (``vela_sram_bytes``, from a manifest) and what its Vela payloads
    put in SRAM: the largest scratch area where the memory mode keeps the arena in
    SRAM, else no more than the arena cache."""
    from zoo.registry.checks import Check
    from zoo.registry.pte.program import Unreadable
    from zoo.registry.pte.pte_structure import ETHOSU_BACKEND_ID
    from zoo.registry.pte.vela_payload import PayloadError

    budget = target.sram_budget
    assert budget is not None
    if isinstance(pte, Unreadable):
        return Check("sram_budget", False, f"cannot tell what it needs: {pte.error}")
    ethos = [d for d in pte.info.delegates if d.backend_id == ETHOSU_BACKEND_ID]
    try:
        scratch = max((pte.delegate_payload(d).scratch_size for d in ethos), default=None)
    except PayloadError as exc:
        return Check("sram_budget", False, f"cannot tell what it needs: {exc}")
    needs: list[tuple[int, str]] = []
    if vela_sram_bytes is not None:
        needs.append((vela_sram_bytes, "Vela's SRAM estimate in the manifest"))
    if scratch is not None:
        flags = (ethos[0].spec_text("compile_flags") or "").split()
        cache = _arena_cache(target, flags)
        if cache is None or cache >= scratch:
            needs.append((scratch, "the scratch area of its Vela payload"))
        else:
            needs.append((cache, f"the arena cache its {scratch}-byte scratch area works through"))
    if not needs:
        return Check("sram_budget", False, "cannot tell what it needs: no Vela payload and no manifest figure")
    need, basis = max(needs, key=lambda n: n[0])  # on a tie, the manifest's figure
    shown = f"{human_bytes(need)} ({need} bytes, {basis})"
    if need > budget:
        return Check("sram_budget", False, f"it needs {shown}, more than the SRAM budget of "
                                           f"{human_bytes(budget)} ({budget} bytes)")
    return Check("sram_budget", True, f"it needs {shown}, within the SRAM budget of {human_bytes(budget)}")


def fast_scratch(target: Target, flags: list[str]) -> int:
    """The size of the NPU's region 2, which the platform provides: Vela's arena cache where the
    memory mode keeps the arena off SRAM (Dedicated_Sram), else 0 (Vela then puts nothing there)."""
    return _arena_cache(target, flags) or 0


def _arena_cache(target: Target, flags: list[str]) -> int | None:
    """How much SRAM the arena may use where the memory mode keeps it off SRAM and
    caches it there; None where it lives in SRAM or nothing caps the cache."""
    given = dict(f.split("=", 1) for f in flags if "=" in f)
    mode = given.get("--memory-mode", target.memory_mode or "")
    cfg = vela_config()
    area = cfg.memory_modes.get(mode, {}).get("arena_mem_area", "Axi0")
    ports = cfg.system_configs.get(given.get("--system-config", target.system_config or ""), {})
    if ports.get(f"{area.lower()}_port", "Sram" if area == "Axi0" else "OffChipFlash") == "Sram":
        return None
    size = given.get("--arena-cache-size")
    return int(size) if size is not None and size.isdigit() else cfg.arena_cache_size(mode)
