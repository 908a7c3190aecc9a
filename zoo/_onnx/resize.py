"""ONNX Resize as ``F.interpolate``, where the two compute the same samples.

Nearest-neighbour modes are matched by comparing, for the fixed sizes, which source index
each output index reads under ONNX's rule and under torch's ``nearest`` and
``nearest-exact``; a combination neither reproduces exactly is refused.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import torch.nn.functional as F

from zoo._onnx.graph import Node
from zoo._onnx.ops import ints

_LINEAR = {3: "linear", 4: "bilinear", 5: "trilinear"}


def _text(n: Node, name: str, default: str) -> str:
    value = n.attr(name, default)
    return value.decode() if isinstance(value, bytes) else str(value)


def _round(n: Node, x: Fraction, mode: str) -> int:
    floor = math.floor(x)
    frac = x - floor
    if mode == "floor":
        return floor
    if mode == "ceil":
        return math.ceil(x)
    if frac == Fraction(1, 2):
        return floor if mode == "round_prefer_floor" else floor + 1
    if mode in ("round_prefer_floor", "round_prefer_ceil"):
        return floor + (frac > Fraction(1, 2))
    raise n.error(f"attribute nearest_mode={mode!r} is not supported")


def _onnx_source(n: Node, ctm: str, mode: str, size: int, out: int, scale: Fraction) -> list[int]:
    result = []
    for x in range(out):
        if ctm == "half_pixel":
            src = (x + Fraction(1, 2)) / scale - Fraction(1, 2)
        elif ctm == "pytorch_half_pixel":
            src = (x + Fraction(1, 2)) / scale - Fraction(1, 2) if out > 1 else Fraction(0)
        elif ctm == "align_corners":
            src = Fraction(x * (size - 1), out - 1) if out > 1 else Fraction(0)
        elif ctm == "asymmetric":
            src = x / scale
        else:
            raise n.error(f"attribute coordinate_transformation_mode={ctm!r} is not supported")
        result.append(min(max(_round(n, src, mode), 0), size - 1))
    return result


def _torch_source(exact: bool, size: int, out: int, inverse: Fraction) -> list[int]:
    offset = Fraction(1, 2) if exact else Fraction(0)
    return [min(math.floor((x + offset) * inverse), size - 1) for x in range(out)]


def resize(n: Node, x: Any, roi: Any = None, scales: Any = None, sizes: Any = None) -> Any:
    if n.opset < 11:  # Resize-10 takes (X, scales)
        scales, roi = roi, None
    mode = _text(n, "mode", "nearest")
    ctm = _text(n, "coordinate_transformation_mode", "half_pixel" if n.opset >= 11 else "asymmetric")
    for name, allowed in (("antialias", 0), ("axes", None)):
        if n.attr(name, allowed) != allowed:
            raise n.error(f"attribute {name}={n.attr(name)!r} is not supported")
    if _text(n, "keep_aspect_ratio_policy", "stretch") != "stretch":
        raise n.error(f"attribute keep_aspect_ratio_policy={_text(n, 'keep_aspect_ratio_policy', '')!r} "
                      "is not supported (only stretch)")
    rank = x.dim()
    shape = [int(v) for v in x.shape]  # a tracer's sizes are tensors; these are static
    given_scales = None if scales is None or np.size(scales) == 0 else [float(v) for v in np.asarray(scales).reshape(-1)]
    given_sizes = None if sizes is None or np.size(sizes) == 0 else ints(sizes)
    if given_scales is None and given_sizes is None:
        raise n.error("neither scales nor sizes is given")
    spatial = shape[2:]
    if given_scales is not None:
        if len(given_scales) != rank or given_scales[:2] != [1.0, 1.0]:
            raise n.error(f"scales {given_scales}: only the spatial axes (after batch and channel) may be resized")
        ratio = [Fraction(np.float32(s).item()) for s in given_scales[2:]]
        outs = [math.floor(s * r) for s, r in zip(spatial, ratio, strict=True)]
    else:
        assert given_sizes is not None
        if len(given_sizes) != rank or given_sizes[:2] != shape[:2]:
            raise n.error(f"sizes {given_sizes}: only the spatial axes (after batch and channel) may be resized")
        outs = given_sizes[2:]
        ratio = [Fraction(o, s) for o, s in zip(outs, spatial, strict=True)]
    by_scale = given_scales is not None
    kwargs: dict[str, Any] = {"scale_factor": [float(r) for r in ratio]} if by_scale else {"size": outs}

    if mode == "nearest":
        nearest_mode = _text(n, "nearest_mode", "round_prefer_floor" if n.opset >= 11 else "floor")
        for name, exact in (("nearest", False), ("nearest-exact", True)):
            if all(_onnx_source(n, ctm, nearest_mode, s, o, r) ==
                   _torch_source(exact, s, o, 1 / r if by_scale else Fraction(s, o))
                   for s, o, r in zip(spatial, outs, ratio, strict=True)):
                return F.interpolate(x, mode=name, **kwargs)
        raise n.error(f"nearest resizing with coordinate_transformation_mode={ctm!r} and nearest_mode="
                      f"{nearest_mode!r} from {spatial} to {outs} picks pixels neither torch 'nearest' "
                      "nor 'nearest-exact' picks")
    if mode == "linear":
        if rank not in _LINEAR:
            raise n.error(f"linear resizing of a rank-{rank} input is not supported (3-D to 5-D)")
        if ctm == "align_corners":
            return F.interpolate(x, mode=_LINEAR[rank], align_corners=True, size=outs)
        if ctm == "half_pixel" or (ctm == "pytorch_half_pixel" and all(o > 1 for o in outs)):
            return F.interpolate(x, mode=_LINEAR[rank], align_corners=False, **kwargs)
        raise n.error(f"linear resizing with coordinate_transformation_mode={ctm!r} to {outs} has no "
                      "torch equivalent (half_pixel and align_corners do)")
    raise n.error(f"attribute mode={mode!r} is not supported (nearest, linear)")
