"""The program's boundary (``--io``, ``--layout``) as the .pte holds it, against the
manifest's ``io`` record. Pure Python, no torch: it runs on every hand-out."""

from __future__ import annotations

from typing import Any

from zoo.registry.checks import Check
from zoo.registry.pte.pte_structure import SCALAR_TYPES, PteInfo
from zoo.registry.request.io_boundary import INTEGER_DTYPES, axes_of, read_boundary

_BOUNDARY_FIELDS = ("dtype", "shape", "dim_order", "scale", "zero_point", "qmin", "qmax")
_SCALAR_NUMBER = {name: n for n, (name, _) in SCALAR_TYPES.items() if name in INTEGER_DTYPES}
"""ExecuTorch's ScalarType number of each integer dtype, as a ``*_dtype`` constant method holds it."""


def check_boundary(info: PteInfo, io: dict[str, Any], source: str = "manifest", *, axes: str = "nchw") -> Check:
    """The .pte's inputs and outputs, with the quantization its constant methods state,
    against the manifest's ``io``; integer I/O must leave the CPU nothing to run. ``axes`` is
    the model's declared axes (the build key's): the layout labels are named from ``io.axes``."""
    try:
        have = read_boundary(info, [str(t["name"]) for t in io["inputs"]], [str(t["name"]) for t in io["outputs"]])
        mode = str(io["mode"])
        problems: list[str] = []
        if axes_of(io) != axes:
            problems.append(f"the {source} records the tensors' axes as {axes_of(io)!r}, but the model declares {axes!r}")
        for side in ("inputs", "outputs"):
            want = io[side]
            if len(have[side]) != len(want):
                problems.append(f"the .pte has {len(have[side])} {side}; the {source} records {len(want)}")
                continue
            for h, w in zip(have[side], want, strict=True):
                problems += [
                    f"{side[:-1]} {h['name']!r} {f} is {h[f]!r} in the .pte; the {source} says {w.get(f)!r}"
                    for f in _BOUNDARY_FIELDS if h[f] != w.get(f)
                ]
                if mode != "float" and (h["scale"] is None or h["dtype"] not in INTEGER_DTYPES):
                    problems.append(f"--io {mode}: {side[:-1]} {h['name']!r} is {h['dtype']} without quantization parameters")
        constants = info.constant_methods()
        for side in ("input", "output"):
            for i, t in enumerate(have[f"{side}s"]):
                declared = constants.get(f"{side}{i}_dtype")
                if declared is not None and _SCALAR_NUMBER.get(t["dtype"]) != declared:
                    problems.append(f"{side}{i}_dtype says ScalarType {declared}, but the tensor is {t['dtype']}")
        if mode != "float" and info.operators:
            problems.append(f"--io {mode} must leave the CPU nothing to run, but the operator table holds {', '.join(info.operators)}")
    except (KeyError, TypeError, ValueError) as exc:
        return Check("io_boundary", False, f"cannot compare the boundary with the {source}: {exc}")
    if problems:
        return Check("io_boundary", False, "; ".join(problems))
    shown = ", ".join(f"{t['dtype']} {t['shape']}" + (f" (scale {t['scale']:.6g}, zero point {t['zero_point']})" if t["scale"] else "")
                      for t in have["inputs"])
    return Check("io_boundary", True, f"--io {mode}: takes {shown}; every input and output as the {source} records it")
