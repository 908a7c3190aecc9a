"""The C header's macros: each figure derived from the .pte, plus the few only the build knows.

One function gives them, for a build (``assemble``) and for a check: a manifest's
``header.macros`` must be exactly what ``header_macros`` gives for its .pte, so a header
rendered from them holds no figure the .pte contradicts and no name zoo does not write.
A remote could otherwise rewrite ``METHOD_ALLOCATOR_BYTES``, ``INPUT0_BYTES`` or a scale
in a manifest whose every record still matches the .pte, or add a macro named ``define``
that turns on the array's definition in every translation unit.

Derived from the .pte: its sha256, the delegates and their largest scratch, the memory
plan (planned buffers, constants, the method and temp allocators' needs), the CPU kernels,
and every input and output (dtype, shape, layout, quantization). Taken from the manifest,
because only the build knows them: the model, its version and weights, the build key, the
tool versions, the target (its Vela flags are checked against the .pte's compile specs),
Vela's SRAM and arena-cache figures, the SRAM budget and the names the plugin gave the
inputs and outputs (which must not repeat). Torch-free.
"""

from __future__ import annotations

from typing import Any

from zoo.registry import cpu_kernels, io_boundary, memory_plan
from zoo.registry.checks import Check
from zoo.registry.keys import PIPELINE_VERSION, TOOLS
from zoo.registry.manifest import Manifest
from zoo.registry.pte_structure import PteInfo
from zoo.registry.targets import Target
from zoo.registry.vela_payload import find_payloads

Macros = dict[str, str | int | float | None]


def header_macros(
    pte: bytes,
    info: PteInfo,
    *,
    target: Target,
    model: str,
    model_version: str | None,
    weights: str | None,
    build_key: str,
    tools: dict[str, str | None],
    vela_total: dict[str, Any],
    memory_fit: dict[str, Any] | None,
    io: dict[str, Any] | None,
) -> Macros:
    """Every macro of the header, in the order the header has them. ``io`` gives the
    boundary's mode, layout and names; its tensors are read from the .pte again."""
    from hashlib import sha256

    payloads = find_payloads(pte)
    scratch = max((p.scratch_size for p in payloads), default=None)
    macros: Macros = {
        "model": model,
        "model_version": model_version,
        "weights": weights,
        "target": target.accelerator or "portable",
        "system_config": target.system_config,
        "memory_mode": target.memory_mode,
        "sha256": sha256(pte).hexdigest(),
        "build_key": build_key,
        # In zoo's order of the tools: a manifest's JSON keeps its keys sorted.
        "tools": "; ".join(f"{k} {tools[k]}" for k in sorted(tools, key=_tool_order) if tools[k]),
        "vela_sram_bytes": vela_total.get("sram_bytes"),
        "scratch_bytes": scratch,
        "delegates": len(payloads),
    }
    macros.update(memory_plan.macros(memory_of(pte, info, target, vela_total)))
    macros.update(cpu_kernels.macros(info.operators))
    if memory_fit is not None:
        macros["sram_budget_bytes"] = memory_fit["sram_budget_bytes"]
        macros["vela_flags"] = " ".join(memory_fit["selected_flags"]) or None
    if io is not None:
        macros.update(io_boundary.macros(boundary_of(info, io)))
    return macros


def memory_of(pte: bytes, info: PteInfo, target: Target, vela_total: dict[str, Any]) -> dict[str, Any]:
    """The manifest's ``memory`` record: the .pte's figures, and Vela's arena cache where
    the memory mode caches the arena in SRAM."""
    scratch = max((p.scratch_size for p in find_payloads(pte)), default=None)
    dedicated = target.memory_mode == "Dedicated_Sram"
    return memory_plan.from_pte(pte, info, scratch_bytes=scratch,
                                arena_cache_bytes=vela_total.get("arena_cache_size_bytes") if dedicated else None)


def boundary_of(info: PteInfo, io: dict[str, Any]) -> dict[str, Any]:
    """``io``'s mode, layout and names, with every tensor as the .pte holds it;
    ValueError for names that repeat (the header's by-name index would be wrong)."""
    names = {side: [str(t["name"]) for t in io[side]] for side in ("inputs", "outputs")}
    for side, given in names.items():
        repeated = sorted({n for n in given if given.count(n) > 1})
        if repeated:
            raise ValueError(f"the {side} {', '.join(map(repr, repeated))} are named more than once")
    tensors = io_boundary.read_boundary(info, names["inputs"], names["outputs"])
    return {**{k: v for k, v in io.items() if k not in ("inputs", "outputs")}, **tensors}


def manifest_macros(pte: bytes, info: PteInfo, m: Manifest) -> Macros:
    """``header_macros`` for the manifest's .pte, from what the manifest alone can know."""
    return header_macros(
        pte, info, target=m.built_target, model=m.model, model_version=m.model_version, weights=m.weights,
        build_key=m.key, tools=dict(m.build.get("tools") or {}), vela_total=dict((m.vela or {}).get("total") or {}),
        memory_fit=m.memory_fit, io=m.io,
    )


def check_macros(pte: bytes, info: PteInfo, m: Manifest) -> Check:
    """The manifest's header macros against those derived from its .pte. A manifest of an
    earlier pipeline is held to the macros both have: it may lack a figure added since."""
    recorded = m.header.get("macros")
    if not isinstance(recorded, dict):
        return Check("header_macros", False, "the manifest's header record has no macros")
    try:
        derived = manifest_macros(pte, info, m)
    except (KeyError, TypeError, ValueError) as exc:
        return Check("header_macros", False, f"cannot derive the header's macros from the .pte: {exc}")
    current = m.key_inputs.get("zoo_pipeline") == PIPELINE_VERSION
    problems = [f"{name!r} is not a macro zoo writes for this program" for name in recorded if name not in derived]
    problems += [f"{name.upper()} is {recorded[name]!r} in the manifest; the .pte gives {value!r}"
                 for name, value in derived.items()
                 if name in recorded and not _same(recorded[name], value)]
    if current:
        problems += [f"{name.upper()} is missing; the .pte gives {value!r}" for name, value in derived.items()
                     if name not in recorded and value is not None]
    if problems:
        return Check("header_macros", False, "the header's macros are not the .pte's: " + "; ".join(problems))
    return Check("header_macros", True, f"all {len(recorded)} macros are zoo's own, each figure as the .pte "
                 "and the build give it")


def _tool_order(name: str) -> tuple[int, str]:
    return (TOOLS.index(name), "") if name in TOOLS else (len(TOOLS), name)


def _same(a: object, b: object) -> bool:
    """Equal and of one kind: ``1`` for ``1.0`` or ``True`` would render another C literal."""
    return type(a) is type(b) and a == b
