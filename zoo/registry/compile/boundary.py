"""Give a program the boundary ``--io`` and ``--layout`` ask for, around the
one lowering every target of a TOSA family shares.

- ``nhwc``: the model, its example and its calibration data go channels-last
  before export, so the program's input has dim order (0, 2, 3, 1).
- ``pixels``: a first layer turns [0, 1] into the model's normalised input,
  and the input is declared uint8 with scale 1/255 before lowering; the
  rescale, mean and std then run inside the NPU graph.
- ``uint8``: the quantizer gives the inputs and outputs uint8 parameters.
- ``int8``, ``uint8``, ``pixels``: after lowering, the boundary quantize and
  dequantize are taken out of the CPU graph; their parameters become the
  program's constant methods (``input0_scale`` …), which ``io_boundary``
  reads back from the .pte.

torch and ExecuTorch are imported inside functions.
"""

from __future__ import annotations

from typing import Any

from zoo._errors import BuildError
from zoo._spec import ModelSpec, Sample
from zoo.registry.numerics.io import IoParams, QParams
from zoo.registry.pte.pte_structure import SCALAR_TYPES
from zoo.registry.request.io_boundary import INTEGER_DTYPES, PIXEL_SCALE, Boundary


def _pixels_model(model: Any, mean: tuple[float, ...], std: tuple[float, ...], axis: int, rank: int) -> Any:
    import torch

    class FromUnitRange(torch.nn.Module):
        """(x - mean) / std, so the program's input is the [0, 1] data. Along an image's
        channels, a depthwise 1x1 convolution, the form the NPU runs best (elementwise ops
        with broadcast per-channel constants cost mv2 30 ms more on a U55-128); along any
        other axis (an MFCC's coefficients), a multiply and an add with broadcast constants."""

        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner
            scale = 1 / torch.tensor(std, dtype=torch.float32)
            bias = -torch.tensor(mean, dtype=torch.float32) * scale
            self.by_channel = axis % rank == 1 and rank == 4
            if self.by_channel:
                channels = len(mean)
                self.normalise = torch.nn.Conv2d(channels, channels, 1, groups=channels)
                self.normalise.weight = torch.nn.Parameter(scale.reshape(-1, 1, 1, 1), requires_grad=False)
                self.normalise.bias = torch.nn.Parameter(bias, requires_grad=False)
            else:
                self.register_buffer("scale", _along(scale, axis, rank))
                self.register_buffer("bias", _along(bias, axis, rank))

        def forward(self, x: Any) -> Any:
            return self.inner(self.normalise(x) if self.by_channel else x * self.scale + self.bias)

    return FromUnitRange(model).eval()


def _along(values: Any, axis: int, rank: int) -> Any:
    """``values`` shaped to broadcast along ``axis`` of a rank-``rank`` tensor."""
    shape = [1] * rank
    shape[axis] = -1
    return values.reshape(shape)


def to_unit_range(sample: Sample, spec: ModelSpec) -> Sample:
    """A normalised sample as the [0, 1] data it came from, on the 8-bit grid."""
    import torch

    (x,) = sample
    i = spec.inputs[0]
    assert i.mean is not None and i.std is not None
    mean = _along(torch.tensor(i.mean, dtype=x.dtype), i.normalise_axis, x.dim())
    std = _along(torch.tensor(i.std, dtype=x.dtype), i.normalise_axis, x.dim())
    return (torch.round((x * std + mean).clamp(0, 1) / PIXEL_SCALE) * PIXEL_SCALE,)


def _laid_out(sample: Sample, boundary: Boundary) -> Sample:
    import torch

    if boundary.layout != "nhwc":
        return sample
    return tuple(t.contiguous(memory_format=torch.channels_last) if t.dim() == 4 else t for t in sample)


def prepare(
    model: Any, example: Sample, samples: list[Sample], spec: ModelSpec, boundary: Boundary
) -> tuple[Any, Sample, list[Sample]]:
    """The model and data to export and calibrate, for ``boundary``."""
    import torch

    if boundary.mode == "pixels":
        i = spec.inputs[0]
        assert i.mean is not None and i.std is not None
        model = _pixels_model(model, i.mean, i.std, i.normalise_axis, len(i.shape))
        example = to_unit_range(example, spec)
        samples = [to_unit_range(s, spec) for s in samples]
    if boundary.layout == "nhwc":
        model = model.to(memory_format=torch.channels_last)
        example = _laid_out(example, boundary)
        samples = [_laid_out(s, boundary) for s in samples]
    return model, example, samples


def program_input(sample: Sample, spec: ModelSpec, boundary: Boundary) -> Sample:
    """What the fake-quantized model of ``prepare`` takes for a normalised ``sample``."""
    if boundary.mode == "pixels":
        sample = to_unit_range(sample, spec)
    return _laid_out(sample, boundary)


def configure_quantizer(quantizer: Any, boundary: Boundary) -> None:
    if boundary.mode == "uint8":
        from executorch.backends.arm.quantizer import get_uint8_io_quantization_config

        quantizer.set_io(get_uint8_io_quantization_config())


def before_lowering(exported: Any, boundary: Boundary) -> dict[str, Any]:
    """Make a pixels program take uint8; return the constant methods that say so."""
    if boundary.mode != "pixels":
        return {}
    import torch
    from executorch.exir.passes.quantize_io_pass import quantize_input
    from executorch.exir.tensor import scalar_type_enum

    scale, zp, qmin, qmax, dtype = quantize_input(exported, 0, {"scale": PIXEL_SCALE, "zp": 0, "dtype": torch.uint8})
    return {"input0_scale": scale, "input0_zp": zp, "input0_quant_min": qmin, "input0_quant_max": qmax,
            "input0_dtype": scalar_type_enum(dtype)}


def after_lowering(edge: Any, boundary: Boundary, where: str) -> None:
    """Take the boundary quantize/dequantize out of the CPU graph (in place)."""
    if not boundary.integer:
        return
    from executorch.exir.passes.quantize_io_pass import extract_io_quant_params

    program = edge.exported_program()
    inputs = len(program.graph_signature.user_inputs)
    outputs = len(program.graph_signature.user_outputs)
    try:
        extract_io_quant_params(
            edge,
            input_idxs=() if boundary.mode == "pixels" else tuple(range(inputs)),
            output_idxs=tuple(range(outputs)),
        )
    except (ValueError, AssertionError) as exc:
        raise BuildError(
            f"{where}: --io {boundary.mode}: the program's inputs and outputs are not all quantized at its "
            f"boundary ({exc}); build it with --io float"
        ) from None


def io_params(edge: Any, boundary: Boundary) -> IoParams | None:
    """The integer boundary's parameters, as the lowering recorded them for the constant methods."""
    if not boundary.integer:
        return None
    methods = dict(getattr(edge, "_config_methods", None) or {})
    program = edge.exported_program()
    counts = {"input": len(program.graph_signature.user_inputs), "output": len(program.graph_signature.user_outputs)}

    def side(kind: str) -> tuple[QParams, ...]:
        out = []
        for i in range(counts[kind]):
            try:
                scale, zp, qmin, qmax, dtype = (methods[f"{kind}{i}_{p}"] for p in ("scale", "zp", "quant_min", "quant_max", "dtype"))
            except KeyError:
                raise BuildError(f"--io {boundary.mode}: {kind} {i} was left without quantization parameters") from None
            name = SCALAR_TYPES.get(int(dtype), ("",))[0]
            if name not in INTEGER_DTYPES:
                raise BuildError(f"--io {boundary.mode}: {kind} {i} has ScalarType {int(dtype)}, not an integer type")
            out.append(QParams(float(scale), int(zp), int(qmin), int(qmax), name))
        return tuple(out)

    return IoParams(side("input"), side("output"))

