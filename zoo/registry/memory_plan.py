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
"""

from __future__ import annotations

from typing import Any

from zoo.registry.checks import Check
from zoo.registry.pte_structure import PteInfo


def _forward(info: PteInfo) -> Any:
    return next((p for p in info.plans if p.name == "forward"), info.plans[0] if info.plans else None)


def from_pte(info: PteInfo, *, scratch_bytes: int | None, arena_cache_bytes: int | None) -> dict[str, Any]:
    """The manifest's ``memory`` record."""
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
    }


def macros(record: dict[str, Any]) -> dict[str, int | None]:
    """The header's memory macros (``scratch_bytes`` is the header's already)."""
    out: dict[str, int | None] = {"planned_buffers": len(record["planned_buffers"])}
    out.update({f"planned_buffer{i}_bytes": size for i, size in enumerate(record["planned_buffers"])})
    for name in ("planned_bytes", "arena_cache_bytes", "constant_bytes", "delegate_bytes", "flash_bytes"):
        out[name] = record[name]
    return out


_FROM_PTE = ("planned_buffers", "planned_bytes", "constant_bytes", "delegate_bytes", "flash_bytes")


def check_memory(info: PteInfo, recorded: dict[str, Any], source: str = "manifest") -> Check:
    """The figures the .pte determines must be the ones the manifest (and so the header) says."""
    found = from_pte(info, scratch_bytes=None, arena_cache_bytes=None)
    problems = [f"{name} is {found[name]} in the .pte, the {source} says {recorded.get(name)}"
                for name in _FROM_PTE if recorded.get(name) != found[name]]
    if problems:
        return Check("memory", False, "; ".join(problems))
    return Check("memory", True, f"planned buffers {found['planned_buffers']} B ({found['planned_bytes']:,} B), "
                 f"constants {found['constant_bytes']:,} B, delegates {found['delegate_bytes']:,} B")
