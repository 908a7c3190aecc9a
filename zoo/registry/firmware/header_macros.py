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
because only the build knows them: the model, its version, weights and precision, the build key, the
tool versions, the target (its Vela flags are checked against the .pte's compile specs),
Vela's SRAM and arena-cache figures, the SRAM budget, the names the plugin gave the
inputs and outputs (which must not repeat), the constants of the CPU's decoding (a pitch
model's bins, whose count must be the .pte's output size) and a sensor input's window, axes and
normalisation (from the build key's inputs; its size must be the .pte's input's). Torch-free.
"""

from __future__ import annotations

from typing import Any

from zoo.registry.firmware import cpu_kernels, memory_plan, sensor_io
from zoo.registry.firmware.macros import float32_bits
from zoo.registry.npu.targets import Target
from zoo.registry.pte.program import Program
from zoo.registry.pte.pte_structure import PteInfo
from zoo.registry.request import io_boundary
from zoo.registry.request.keys import TOOLS

Macros = dict[str, str | int | float | None]


def header_macros(
    program: Program,
    *,
    target: Target,
    model: str,
    model_version: str | None,
    weights: str | None,
    precision: str,
    build_key: str,
    tools: dict[str, str | None],
    vela_total: dict[str, Any],
    memory_fit: dict[str, Any] | None,
    io: dict[str, Any] | None,
    decoding: dict[str, Any] | None = None,
    inputs: list[dict[str, Any]] | None = None,
) -> Macros:
    """Every macro of the header, in the order the header has them. ``io`` gives the
    boundary's mode, layout and names; its tensors are read from the .pte again. ``decoding``
    asks for the CPU's decoding helper (``model_io.pitch_macros``); its output size is the .pte's.
    ``inputs``: the build key's inputs, whose sensor declarations give ``INPUT<i>_SENSOR_*``
    (``sensor_io``); each must fit the .pte's input."""
    from hashlib import sha256

    info = program.info
    payloads = program.payloads()
    scratch = max((p.scratch_size for p in payloads), default=None)
    macros: Macros = {
        "model": model,
        "model_version": model_version,
        "weights": weights,
        "precision": precision,
        "target": target.accelerator or "portable",
        "system_config": target.system_config,
        "memory_mode": target.memory_mode,
        "sha256": sha256(program.data).hexdigest(),
        "build_key": build_key,
        # In zoo's order of the tools: a manifest's JSON keeps its keys sorted.
        "tools": "; ".join(f"{k} {tools[k]}" for k in sorted(tools, key=_tool_order) if tools[k]),
        "vela_sram_bytes": vela_total.get("sram_bytes"),
        "scratch_bytes": scratch,
        "delegates": len(payloads),
    }
    macros.update(memory_plan.macros(memory_of(program, target, vela_total)))
    macros.update(cpu_kernels.macros(info.operators))
    if memory_fit is not None:
        macros["sram_budget_bytes"] = memory_fit["sram_budget_bytes"]
        macros["vela_flags"] = " ".join(memory_fit["selected_flags"]) or None
    if io is not None:
        macros.update(io_macros(boundary_of(info, io)))
        sizes = {i: macros.get(f"input{i}_elements") for i in range(int(str(macros["inputs"])))}
        macros.update(sensor_io.sensor_macros(inputs or [], sizes))
    if decoding:
        bins, elements = decoding.get("pitch_bins"), macros.get("output0_elements")
        if bins != elements:
            raise ValueError(f"the decoding reads {bins} pitch bins; the .pte's output 0 has {elements} elements")
        macros.update(decoding)
    return macros


def io_macros(io: dict[str, Any]) -> Macros:
    """The C header's I/O macros: what firmware needs to fill the input and read the output.
    Shapes are in memory order (``DIM0`` outermost)."""
    out: Macros = {"io": io["mode"], "inputs": len(io["inputs"]), "outputs": len(io["outputs"])}
    for side in ("inputs", "outputs"):
        for i, t in enumerate(io[side]):
            prefix = f"{side[:-1]}{i}_"
            if io_boundary.MACRO_SAFE.match(t["name"]):  # and C can index by name: inputs[MODEL_PTE_INPUT_IMAGE]
                out[prefix + "name"] = t["name"]
                out[f"{side[:-1]}_{t['name']}"] = i
            physical = io_boundary.physical_shape(t)
            size = 1
            for d in physical:
                size *= d
            code, element = io_boundary.DTYPE_CODES[t["dtype"]]
            out[prefix + "dtype"] = t["dtype"]
            out[prefix + "dtype_code"] = code  # ExecuTorch's ScalarType, so #if and static_assert can test it
            out[prefix + "layout"] = io_boundary.layout_name(t["dim_order"], io_boundary.axes_of(io))
            out[prefix + "rank"] = len(physical)
            out.update({f"{prefix}dim{k}": d for k, d in enumerate(physical)})
            out[prefix + "elements"] = size
            out[prefix + "bytes"] = size * element
            out[prefix + "scale"] = t["scale"]
            # A float literal is the nearest float32 to the scale; the bits say which one, exactly.
            out[prefix + "scale_bits"] = float32_bits(t["scale"]) if t["scale"] is not None else None
            if side == "inputs":  # what quantizing multiplies by (ROUNDING)
                inverse = 1.0 / t["scale"] if t["scale"] else None
                out[prefix + "inv_scale"] = inverse
                out[prefix + "inv_scale_bits"] = float32_bits(inverse) if inverse is not None else None
            out[prefix + "zero_point"] = t["zero_point"]
            out[prefix + "qmin"] = t["qmin"]
            out[prefix + "qmax"] = t["qmax"]
    return out


def memory_of(program: Program, target: Target, vela_total: dict[str, Any]) -> dict[str, Any]:
    """The manifest's ``memory`` record: the .pte's figures, and Vela's arena cache where
    the memory mode caches the arena in SRAM."""
    scratch = max((p.scratch_size for p in program.payloads()), default=None)
    dedicated = target.memory_mode == "Dedicated_Sram"
    return memory_plan.from_pte(program, scratch_bytes=scratch,
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


def _tool_order(name: str) -> tuple[int, str]:
    return (TOOLS.index(name), "") if name in TOOLS else (len(TOOLS), name)
