"""The metrics and acceptance rules of the numerical check, and the result they make.

Pure functions over tensors the caller has already computed; torch is imported
inside the functions that need it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from zoo._spec import Sample

if TYPE_CHECKING:
    from zoo.registry.numerics.npu_program import NpuProgram

BUNDLE_CASES = 3
# ExecuTorch's TosaPipelineINT defaults (backends/arm/test/tester/test_pipeline.py).
QTOL = 1
ATOL = 1e-3
RTOL = 1e-3
COSINE_MIN = 0.9
FROBENIUS_MAX = 0.15
# The noise floor of the int8 comparison: the fake-quantized model's own response
# when NOISE_FRACTION of its input elements move by one quantization step. A deep
# network amplifies rounding differences layer by layer (random weights above all:
# random mv2 ends 10 steps from fake-quant, and one step of noise on 0.1 % of its
# input moves fake-quant itself by 29), so an end-to-end 1-step rule refuses
# correct lowerings. A deviation within the model's own response to one step of
# noise is rounding; a lowering fault (a wrong scale, layout or operator) is far above it.
NOISE_FRACTION = 1e-3
NOISE_SEED = 0
# When fake-quant itself exceeds the Frobenius bound, int8 cannot represent the model
# that well: the bound becomes fake-quant's own error plus this margin (the cosine
# bound still holds).
QUANTIZATION_LIMITED_MARGIN = 0.05
# At 16 bits the TOSA program and fake-quant are not bit-exact by design (INT16 TABLE
# interpolation, rescale rounding: ±1 step on many elements, which a steep operator
# downstream amplifies to hundreds of steps), so no step count tells rounding from a
# defect. The noise each adds does: a 16-bit output passes when the program is no
# noisier against float than fake-quant, within this margin. Measured on silero-vad
# (docs/precision.md): a correct lowering is 0.4-1.1 dB better than fake-quant, ExecuTorch's
# int16 sqrt 6-9 dB worse.
SQNR_MARGIN_DB = 1.0
# The portable .pte runs the same float32 math as torch, in another order.
PORTABLE_ATOL = 1e-5
PORTABLE_RTOL = 1e-4
PORTABLE_COSINE_MIN = 0.999


@dataclass
class NumericsResult:
    record: dict[str, Any]
    """JSON-friendly, stored in the manifest under ``verification.numerics``."""
    cases: list[tuple[Sample, list[Any]]] = field(default_factory=list)
    """The first ``BUNDLE_CASES`` inputs with the outputs the artifact must give."""
    tolerance: dict[str, float] = field(default_factory=dict)
    """atol/rtol that a device run of ``cases`` must meet."""
    npu: NpuProgram | None = None
    """The NPU-program level (``npu_program.NpuProgram``) of an Ethos-U check, which a retargeted build runs again."""

    @property
    def passed(self) -> bool:
        return bool(self.record.get("passed"))


def scale_of(qparams: tuple[float, int] | None) -> float | None:
    return qparams[0] if qparams else None


@dataclass
class Versus:
    """Running statistics of one output against a reference, over all samples."""

    max_abs: float = 0.0
    max_steps: float = 0.0
    mismatched: int = 0
    elements: int = 0
    cosines: list[float] = field(default_factory=list)
    frobenius: list[float] = field(default_factory=list)
    failing: int = 0
    skipped: int = 0
    signal: float = 0.0
    """Σ reference², over every sample: with ``noise``, the output's SQNR."""
    noise: float = 0.0
    """Σ (got − reference)², over every sample."""

    @property
    def sqnr_db(self) -> float | None:
        """10·log10(signal / noise) over all samples; None when either is zero (nothing to compare, or exact)."""
        return 10 * math.log10(self.signal / self.noise) if self.signal > 0 and self.noise > 0 else None


def mismatched_outputs(got: list[Any], want: list[Any], program: str, model: str = "the float model") -> str | None:
    """How ``program``'s outputs differ from ``model``'s (``want``) in count, shape or dtype,
    or None. Every level compares values only, and a value comparison broadcasts or flattens: a
    program whose output lost a dimension, and whose fake-quantized model lost it too, would
    pass every level bit for bit (issue 55)."""
    if len(got) != len(want):
        return f"{program} gives {len(got)} output(s), {model} {len(want)}: it does not compute the model's function"
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        if _described(g) != _described(w):
            return (f"{program}'s output {k} is {_described(g)} where {model}'s is {_described(w)}: "
                    "it does not compute the model's function, whatever its values")
    return None


def _described(t: Any) -> str:
    """A tensor's shape and dtype (``[1, 4, 6, 6] float32``), anything else's type."""
    if not hasattr(t, "shape") or not hasattr(t, "dtype"):
        return f"a {type(t).__name__}"
    return f"{[int(d) for d in t.shape]} {str(t.dtype).removeprefix('torch.')}"


def within(got: Any, want: Any, atol: float, rtol: float, stats: Versus, scale: float | None) -> None:
    diff = (got.double() - want.double()).abs()
    stats.max_abs = max(stats.max_abs, float(diff.max()) if diff.numel() else 0.0)
    if scale:
        stats.max_steps = max(stats.max_steps, stats.max_abs / scale)
    stats.mismatched += int((diff > atol + rtol * want.double().abs()).sum())
    stats.elements += diff.numel()


def perturbed(sample: Sample, scales: list[float | None], seed: int) -> Sample:
    """``sample`` with NOISE_FRACTION of each quantized input's elements moved by one
    step (±scale), at positions and signs fixed by ``seed``."""
    import torch

    generator = torch.Generator().manual_seed(NOISE_SEED + seed)
    out = []
    for x, scale in zip(sample, scales, strict=False):
        if scale is None or not x.is_floating_point():
            out.append(x)
            continue
        flat = x.detach().clone().flatten()
        count = max(1, round(flat.numel() * NOISE_FRACTION))
        where = torch.randperm(flat.numel(), generator=generator)[:count]
        signs = torch.randint(0, 2, (count,), generator=generator).to(flat.dtype) * 2 - 1
        flat[where] += signs * scale
        out.append(flat.reshape(x.shape))
    return (*out, *sample[len(out):])


def within_noise(got: Versus, noise: Versus | None) -> bool:
    """Whether the lowering's deviation from fake-quant is no larger than fake-quant's
    own response to one step of input noise."""
    return noise is not None and got.max_steps <= noise.max_steps and got.mismatched <= noise.mismatched


def as_quiet_as_fake_quant(got: Versus, fake_quant: Versus) -> bool:
    """Whether the program's SQNR against float is within SQNR_MARGIN_DB of fake-quant's."""
    mine, theirs = got.sqnr_db, fake_quant.sqnr_db
    return mine is not None and theirs is not None and mine >= theirs - SQNR_MARGIN_DB


def left_to_metrics(got: Versus, fake_quant: Versus) -> bool:
    """Whether a float comparison that fake-quant fails too is int8's, not the lowering's: the
    program within the margin of fake-quant on both measures, or no noisier against float.
    PP-OCR det's worst sample is 0.36 from float in Frobenius, fake-quant's 0.30, while the
    program's SQNR over all samples is 0.3 dB above fake-quant's."""
    return no_worse_than_fake_quant(got, fake_quant) or (fake_quant.failing > 0 and as_quiet_as_fake_quant(got, fake_quant))


def beyond_noise(got: Versus, noise: Versus | None) -> bool:
    """Whether the program deviates from fake-quant by more than rounding's step floor."""
    return got.mismatched > 0 and not within_noise(got, noise)


def agrees_with_fake_quant(got: Versus, noise: Versus | None, vs_float: Versus, fake_quant_vs_float: Versus) -> bool:
    """The vs_fake_quant verdict: within a step (or the noise floor), or past it no noisier
    against float than fake-quant. Saturating outputs (PP-OCR's sigmoid map, its CTC softmax)
    flip whole steps on rounding alone; a lowering fault costs decibels."""
    return not beyond_noise(got, noise) or as_quiet_as_fake_quant(vs_float, fake_quant_vs_float)


def quantization_limited(got: Versus, fake_quant: Versus) -> bool:
    """Whether a failing float comparison is int8's limit, not the lowering's: the
    direction still holds (cosine), fake-quant itself exceeds the Frobenius bound, and
    the lowered program exceeds fake-quant's error by no more than the margin."""
    if not got.cosines or not fake_quant.frobenius:
        return False
    own = max(fake_quant.frobenius)
    return (min(got.cosines) >= COSINE_MIN and own > FROBENIUS_MAX
            and max(got.frobenius, default=0.0) <= own + QUANTIZATION_LIMITED_MARGIN)


def no_worse_than_fake_quant(got: Versus, fake_quant: Versus) -> bool:
    """Whether fake-quant itself fails the float comparison, and the lowered program
    is within the margin of fake-quant on both measures: int8 as such, not the
    lowering, is what the comparison refuses. Only a model's declared metrics can
    then say whether int8 is good enough (``reference.py``)."""
    if not (got.cosines and fake_quant.cosines and fake_quant.failing):
        return False
    return (min(got.cosines) >= min(fake_quant.cosines) - QUANTIZATION_LIMITED_MARGIN
            and max(got.frobenius, default=0.0) <= max(fake_quant.frobenius, default=0.0) + QUANTIZATION_LIMITED_MARGIN)


def similar(got: Any, reference: Any, scale: float | None, stats: Versus, cos_min: float, frob_max: float | None) -> None:
    """ExecuTorch's float comparison (analyze_output_utils.compare_rel_frobenius_and_cosine_similarity),
    per sample: values below one quantization step are zeroed in the reference; an all-zero
    reference is skipped; the Frobenius bound is waived at quantization-noise scale."""
    import torch

    got = got.double().flatten()
    ref = reference.double().flatten().nan_to_num(0.0)
    stats.max_abs = max(stats.max_abs, float((got - ref).abs().max()) if ref.numel() else 0.0)
    stats.signal += float((ref * ref).sum())
    stats.noise += float(((got - ref) ** 2).sum())
    if scale:
        ref = torch.where(ref.abs() >= scale, ref, torch.zeros_like(ref))
    if int(torch.count_nonzero(ref)) == 0:
        stats.skipped += 1
        return
    norm = float(torch.linalg.norm(ref))
    frob = float(torch.linalg.norm(got - ref)) / (norm + 1e-8)
    cos = float(torch.nn.functional.cosine_similarity(got, ref, dim=0))
    stats.cosines.append(cos)
    floor = max(1e-8, (scale or 0.0) * math.sqrt(ref.numel()))
    failed = cos < cos_min
    if frob_max is not None and norm > floor:
        stats.frobenius.append(frob)
        effective = max(0.0, frob - 0.02) if cos >= max(0.98, cos_min) else frob
        failed = failed or effective > frob_max
    stats.failing += int(failed)


def _top1(outputs: list[Any]) -> int | None:
    """The predicted class, -1 for a constant output (no prediction), None if not a class vector."""
    first = outputs[0] if outputs else None
    if first is None or first.numel() < 2:
        return None
    flat = first.reshape(-1)
    return -1 if bool((flat == flat[0]).all()) else int(flat.argmax())


@dataclass
class Tally:
    """How often the program's top-1 agrees with float's: no labels needed."""

    agree: int = 0
    compared: int = 0
    constant: int = 0

    def add(self, test: list[Any], float_out: list[Any]) -> None:
        a, b = _top1(test), _top1(float_out)
        if a is None or b is None:
            return
        if a == -1 or b == -1:  # argmax of a constant vector says nothing
            self.constant += 1
            return
        self.compared += 1
        self.agree += int(a == b)


def check(name: str, passed: bool, detail: str) -> dict[str, Any]:
    return {"name": name, "passed": passed, "detail": detail}


def agreement_record(tally: Tally) -> dict[str, Any]:
    if not (tally.compared or tally.constant):
        return {}
    return {"top1_agreement": {
        "with": "float", "samples": tally.compared, "rate": tally.agree / tally.compared if tally.compared else None,
        "constant_output_samples": tally.constant,
    }}


def versus_record(v: Versus) -> dict[str, Any]:
    return {
        "max_abs_error": v.max_abs,
        "min_cosine": min(v.cosines) if v.cosines else None,
        "mean_cosine": sum(v.cosines) / len(v.cosines) if v.cosines else None,
        "max_rel_frobenius": max(v.frobenius) if v.frobenius else None,
        "sqnr_db": v.sqnr_db,
        "failing_samples": v.failing,
        "skipped_samples": v.skipped,
    }


def float_detail(name: str, v: Versus, n: int, scale_note: bool) -> str:
    if not v.cosines:
        why = "below one output quantization step" if scale_note else "all zero"
        return f"not compared: the float output is {why} on all {n} samples, so there is nothing to compare (as ExecuTorch's tests skip it)"
    text = (f"{name} vs float on {len(v.cosines)} samples: min cosine {min(v.cosines):.4f} (≥ {COSINE_MIN:g})"
            if name != "portable" else f"portable vs float on {len(v.cosines)} samples: min cosine {min(v.cosines):.6f} (≥ {PORTABLE_COSINE_MIN:g})")
    if v.frobenius:
        text += f", max relative Frobenius error {max(v.frobenius):.4f}" + (f" (≤ {FROBENIUS_MAX:g})" if name != "portable" else "")
    text += f", max abs error {v.max_abs:.4g}"
    if v.sqnr_db is not None and name != "portable":
        text += f", output SQNR {v.sqnr_db:.1f} dB"
    if v.skipped:
        text += f"; {v.skipped} sample(s) skipped (float output below one quantization step)"
    if v.failing:
        text += f"; {v.failing} sample(s) fail"
    return text
