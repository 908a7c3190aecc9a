"""The memory a firmware reserves for an artifact, read from its .pte (torch-free).

Each figure, and where it comes from:

- ``planned_buffers``: ExecuTorch's memory-planned buffers of the ``forward``
  method, in bytes, numbered as the runtime numbers them
  (``MethodMeta::memory_planned_buffer_size(i)``): the execution plan's
  ``non_const_buffer_sizes`` without its reserved entry 0. The firmware hands
  the method one buffer of each size (activations and the I/O tensors that
  are not the caller's). ``planned_bytes`` is their sum.
- ``scratch_bytes``: the largest Ethos-U scratch (Vela's feature-map area) of
  the delegates, from their payloads; the backend takes it from the temp
  allocator, one delegate at a time.
- ``arena_cache_bytes``: for ``Dedicated_Sram``, the SRAM Vela caches the
  flash-resident data in (Vela's own figure); None otherwise.
- ``constant_bytes``: the CPU's constant tensors (the program's constant data
  segment); the NPU's weights are inside the delegates instead.
- ``delegate_bytes``: the delegates' payloads (Vela's command streams and
  weights), read in place from the array.
- ``flash_bytes``: the whole .pte, i.e. the array (``<ARRAY>_LEN``).
- ``method_allocator_bytes``, ``load_temp_bytes``: what ``load_method`` takes from
  the method allocator (kept) and the most it holds in the temp allocator at once,
  for a 32-bit Cortex-M runtime; the ``_lp64`` pair for a 64-bit one. Replayed
  from the program by ``method_allocator.py``; None for a program the replay
  does not cover. ``temp_floor_bytes``: the smallest temp pool for which that
  holds (below it the runtime takes kernel metadata from the method allocator).
"""

from __future__ import annotations

from typing import Any

from zoo.registry.checks import Check
from zoo.registry.firmware.method_allocator import ILP32, LP64, need
from zoo.registry.pte.program import Program
from zoo.registry.pte.pte_structure import PteFormatError, PteInfo


def _forward(info: PteInfo) -> Any:
    return next((p for p in info.plans if p.name == "forward"), info.plans[0] if info.plans else None)


def _runtime(program: Program) -> dict[str, int | None]:
    out: dict[str, int | None] = {}
    for abi, suffix in ((ILP32, ""), (LP64, "_lp64")):
        try:
            found = need(program, abi)
        except PteFormatError:
            out.update({f"method_allocator_bytes{suffix}": None, f"load_temp_bytes{suffix}": None,
                        f"temp_floor_bytes{suffix}": None})
        else:
            out.update({f"method_allocator_bytes{suffix}": found.method_bytes,
                        f"load_temp_bytes{suffix}": found.load_temp_bytes,
                        f"temp_floor_bytes{suffix}": found.temp_floor_bytes})
    return out


def from_pte(program: Program, *, scratch_bytes: int | None, arena_cache_bytes: int | None) -> dict[str, Any]:
    """The manifest's ``memory`` record."""
    info = program.info
    plan = _forward(info)
    sizes = [int(s) for s in plan.non_const_buffer_sizes[1:]] if plan is not None else []
    constant = info.segments[info.constant_segment][1] if info.constant_segment is not None else 0
    return {
        "planned_buffers": sizes,
        "planned_bytes": sum(sizes),
        "scratch_bytes": scratch_bytes,
        "arena_cache_bytes": arena_cache_bytes,
        "constant_bytes": constant,
        "delegate_bytes": sum(d.size for d in info.delegates),
        "flash_bytes": info.size,
        **_runtime(program),
    }


def macros(record: dict[str, Any]) -> dict[str, int | None]:
    """The header's memory macros (``scratch_bytes`` is the header's already)."""
    out: dict[str, int | None] = {"planned_buffers": len(record["planned_buffers"])}
    out.update({f"planned_buffer{i}_bytes": size for i, size in enumerate(record["planned_buffers"])})
    for name in ("planned_bytes", "arena_cache_bytes", "constant_bytes", "delegate_bytes", "flash_bytes",
                 "method_allocator_bytes"):
        out[name] = record.get(name)
    load_temp = record.get("load_temp_bytes")
    # The temp pool holds the Ethos-U scratch while a delegate runs, and kernel metadata during load;
    # below the floor the runtime moves that metadata into the method allocator for good.
    out["temp_allocator_bytes"] = None if load_temp is None else max(
        load_temp, record.get("scratch_bytes") or 0, record.get("temp_floor_bytes") or 0)
    return out


_FROM_PTE = ("planned_buffers", "planned_bytes", "constant_bytes", "delegate_bytes", "flash_bytes")
_RUNTIME = ("method_allocator_bytes", "load_temp_bytes", "method_allocator_bytes_lp64", "load_temp_bytes_lp64",
            "temp_floor_bytes", "temp_floor_bytes_lp64")
"""Checked where recorded: manifests from before pipeline 7 have no runtime figures, before 8 no floor."""


def check_memory(program: Program, recorded: dict[str, Any], source: str = "manifest") -> Check:
    """The figures the .pte determines must be the ones the manifest (and so the header) says."""
    found = from_pte(program, scratch_bytes=None, arena_cache_bytes=None)
    names = [*_FROM_PTE, *(n for n in _RUNTIME if n in recorded)]
    problems = [f"{name} is {found[name]} in the .pte, the {source} says {recorded.get(name)}"
                for name in names if recorded.get(name) != found[name]]
    if problems:
        return Check("memory", False, "; ".join(problems))
    method = found["method_allocator_bytes"]
    return Check("memory", True, f"planned buffers {found['planned_buffers']} B ({found['planned_bytes']:,} B), "
                 f"constants {found['constant_bytes']:,} B, delegates {found['delegate_bytes']:,} B"
                 + (f", method allocator {method:,} B" if method is not None else ""))
