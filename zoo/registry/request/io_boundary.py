"""The program's boundary: what firmware hands in and reads out (``--io``, ``--layout``).

``float`` keeps ExecuTorch's default: float tensors, quantized and dequantized
by CPU kernels around the NPU. ``int8`` and ``uint8`` take and give the
quantized tensors themselves, so no operator is left on the CPU. ``pixels``
takes a camera's uint8 bytes; the /255, mean and std run on the NPU.

Torch-free: the CLI validates choices and the structure check reads the
boundary back from a .pte with this module.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from zoo._errors import UsageError
from zoo._options import IO_MODES as MODES
from zoo._spec import LAYOUTS, ModelSpec
from zoo.registry.npu.targets import Target
from zoo.registry.pte.pte_structure import SCALAR_TYPES, ExecutionPlan, PteInfo, TensorValue

ROUNDING = ("q = clamp(round_half_even(x * inv_scale) + zero_point, qmin, qmax) in float32, "
            "inv_scale = float32(1 / scale in double); x = (q - zero_point) * float32(scale)")
"""How a float becomes its integer and back, step for step: torch's quantize_per_tensor
(which multiplies by the inverse, not divides by the scale) and dequantize_per_tensor."""
INTEGER_DTYPES = ("int8", "uint8", "int16")
"""The dtypes an integer boundary's tensors may have."""
PIXEL_SCALE = 1 / 255
"""A pixel byte p stands for p / 255: the [0, 1] image the normalisation starts from."""
_PARAMS = ("scale", "zp", "quant_min", "quant_max", "dtype")
DIM_ORDERS = {"nchw": (0, 1, 2, 3), "nhwc": (0, 2, 3, 1)}
MACRO_SAFE = re.compile(r"[a-z][a-z0-9_]{0,50}\Z")
"""A tensor name that can follow ``input_`` in a macro name."""


@dataclass(frozen=True)
class Boundary:
    mode: str = "float"
    layout: str = "nchw"

    @property
    def integer(self) -> bool:
        return self.mode != "float"

    def key_fields(self) -> dict[str, str] | None:
        """None for ExecuTorch's default, so builds from before ``--io`` keep their keys."""
        return None if self == Boundary("float", "nchw") else {"mode": self.mode, "layout": self.layout}


DEFAULT = Boundary()
"""ExecuTorch's default: float I/O, NCHW."""


def choose(spec: ModelSpec, target: Target, mode: str | None, layout: str | None) -> Boundary:
    """The boundary ``spec`` gets for ``target``; UsageError says what cannot be built and why."""
    mode = mode or "float"
    if mode not in MODES:
        raise UsageError(f"--io {mode!r} is not an I/O mode: choose one of {', '.join(MODES)}")
    if layout is not None and layout not in LAYOUTS:
        raise UsageError(f"--layout {layout!r} is not a layout: choose one of {', '.join(LAYOUTS)}")
    if target.is_portable:
        if mode != "float" or layout not in (None, "nchw"):
            raise UsageError(
                f"the portable target runs {spec.name!r} in float on the CPU: it takes --io float and --layout nchw only"
            )
        return DEFAULT
    default = spec.layouts[0]
    if mode == "pixels":
        channels = _pixel_channels(spec)
        if channels > 1 and "nhwc" in spec.layouts:
            default = "nhwc"  # what a camera's frame buffer holds: HWC bytes
    chosen = layout or default
    if chosen == "nhwc":
        for i in spec.inputs:
            if len(i.shape) != 4 or i.shape[1] == 1:
                raise UsageError(
                    f"model {spec.name!r}: input {i.name!r} {list(i.shape)} is not a multi-channel image, so NHWC "
                    "is the same bytes as NCHW (and ExecuTorch records an ambiguous dim order): use --layout nchw"
                )
        if spec.axes == "nhwc":
            raise UsageError(
                f"model {spec.name!r} takes its images channels-last already ({list(spec.inputs[0].shape)}, NHWC), "
                "so --layout nhwc has nothing to change: leave --layout out"
            )
        if "nhwc" not in spec.layouts:
            raise UsageError(
                f"model {spec.name!r} is not declared to accept NHWC input (it takes {', '.join(spec.layouts)}); "
                "build it with --layout nchw"
            )
    return Boundary(mode, chosen)


def _pixel_channels(spec: ModelSpec) -> int:
    if len(spec.inputs) != 1:
        raise UsageError(f"--io pixels needs a model with one image input; {spec.name!r} has {len(spec.inputs)} inputs")
    i = spec.inputs[0]
    if len(i.shape) != 4 or i.shape[0] != 1:
        raise UsageError(f"--io pixels needs an image input (1, C, H, W); {spec.name!r} takes {i.name!r} {list(i.shape)}")
    axis = i.normalise_axis
    size = i.shape[axis] if -4 <= axis < 4 else 0
    if i.mean is None or i.std is None or len(i.mean) != size or len(i.std) != size:
        raise UsageError(
            f"--io pixels needs the input's normalisation: {spec.name!r} must declare InputSpec.mean and std "
            f"with one value per index of its normalise_axis ({axis}, {size} values), e.g. per channel"
        )
    if any(s <= 0 for s in i.std):
        raise UsageError(f"--io pixels: {spec.name!r} declares a std that is not positive: {list(i.std)}")
    return i.shape[1]


def _tensor_record(name: str, t: TensorValue, params: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": name,
        "dtype": t.dtype,
        "shape": list(t.sizes),
        "dim_order": list(t.dim_order),
        "scale": params.get("scale"),
        "zero_point": params.get("zp"),
        "qmin": params.get("quant_min"),
        "qmax": params.get("quant_max"),
    }


def _params(constants: dict[str, int | float], side: str, index: int) -> dict[str, Any]:
    return {p: constants[f"{side}{index}_{p}"] for p in _PARAMS if f"{side}{index}_{p}" in constants}


def read_boundary(info: PteInfo, input_names: Sequence[str],
                  output_names: Sequence[str] = ()) -> dict[str, list[dict[str, Any]]]:
    """Each input and output of ``forward`` as the .pte holds it: dtype, shape,
    dim order, and the quantization its constant methods (``input0_scale`` …) state."""
    plan: ExecutionPlan | None = next((p for p in info.plans if p.name == "forward"), None)
    if plan is None:
        raise ValueError("the program has no 'forward' method")
    if output_names and len(output_names) != len(plan.outputs):
        raise ValueError(f"the model declares {len(output_names)} output name(s) ({', '.join(output_names)}), "
                         f"but its program has {len(plan.outputs)} output(s): declare one name per output")
    out: dict[str, list[dict[str, Any]]] = {"inputs": [], "outputs": []}
    constants = info.constant_methods()
    for side, values, names in (("input", plan.inputs, input_names), ("output", plan.outputs, output_names)):
        for i, v in enumerate(values):
            t = plan.tensor(v)
            if t is None:
                raise ValueError(f"{side} {i} of 'forward' is not a tensor")
            name = names[i] if i < len(names) else f"{side}{i}"
            out[f"{side}s"].append(_tensor_record(name, t, _params(constants, side, i)))
    return out


def record(boundary: Boundary, info: PteInfo, spec: ModelSpec) -> dict[str, Any]:
    """The manifest's ``io``, its inputs and outputs named as ``spec`` declares them."""
    names = read_boundary(info, [i.name for i in spec.inputs], spec.outputs)
    return {"mode": boundary.mode, "layout": boundary.layout, "axes": spec.axes, "rounding": ROUNDING, **names}


DTYPE_CODES: dict[str, tuple[int, int]] = {name: (code, size) for code, (name, size) in SCALAR_TYPES.items()}
"""dtype name → (ExecuTorch ``ScalarType`` value, element bytes): ``uint8`` 0 (Byte),
``int8`` 1 (Char), ``float32`` 6 (Float), as ``executorch::aten::ScalarType`` numbers them."""


def physical_shape(t: dict[str, Any]) -> list[int]:
    """A tensor record's shape in memory order (``DIM0`` outermost)."""
    return [t["shape"][d] for d in t["dim_order"]]


def layout_name(order: list[int], axes: str = "nchw") -> str | None:
    """``nchw`` or ``nhwc``: how a 4-D tensor whose axes are ``axes`` (``ModelSpec.axes``, the
    manifest's ``io.axes``) lies in memory in dim order ``order``; None for any other order.
    A TFLite model's contiguous (1, 128, 128, 3) image is ``nhwc``, a torch model's ``nchw``."""
    if len(order) != 4 or sorted(order) != [0, 1, 2, 3] or sorted(axes) != sorted("nchw"):
        return None
    physical = "".join(axes[d] for d in order)
    return physical if physical in DIM_ORDERS else None


def axes_of(io: dict[str, Any]) -> str:
    """The manifest ``io``'s axes; ``nchw`` for a manifest from before zoo recorded them (every model was then)."""
    return str(io.get("axes") or "nchw")
