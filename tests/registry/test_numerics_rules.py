"""The acceptance rules of the numerical check, and the SQNR it records, on numbers made here (no lowering)."""

from __future__ import annotations

import pytest

from zoo.registry.numerics import compare
from zoo.registry.numerics.compare import Versus


def test_the_noise_floor_accepts_only_what_fake_quant_does_to_itself() -> None:
    floor = Versus(max_steps=29.0, mismatched=12_513)
    assert compare.within_noise(Versus(max_steps=10.0, mismatched=7_269), floor)
    assert not compare.within_noise(Versus(max_steps=30.0, mismatched=10), floor)
    assert not compare.within_noise(Versus(max_steps=2.0, mismatched=12_514), floor)
    assert not compare.within_noise(Versus(max_steps=1.5, mismatched=3), None)  # no quantized input: 1-step rule only


def test_past_the_noise_floor_an_output_passes_only_when_it_is_no_noisier_than_fake_quant() -> None:
    # PP-OCR det's sigmoid map: past the floor on step counts alone.
    floor = Versus(max_steps=217.0, mismatched=7_793)
    program = Versus(max_steps=250.0, mismatched=9_987)
    assert compare.beyond_noise(program, floor)

    def sqnr(db: float) -> Versus:
        return Versus(signal=10 ** (db / 10), noise=1.0)

    assert compare.agrees_with_fake_quant(program, floor, sqnr(14.5), sqnr(15.0))  # within 1 dB
    assert not compare.agrees_with_fake_quant(program, floor, sqnr(9.0), sqnr(15.0))  # a fault's decibels
    assert compare.agrees_with_fake_quant(Versus(max_steps=100.0, mismatched=5), floor, sqnr(1.0), sqnr(15.0))
    assert not compare.agrees_with_fake_quant(program, floor, Versus(), sqnr(15.0))  # nothing measured: no pass


def test_int8_as_the_models_limit_waives_only_the_frobenius_bound() -> None:
    fake_quant = Versus(cosines=[0.96], frobenius=[0.278], failing=16)
    assert compare.quantization_limited(Versus(cosines=[0.96], frobenius=[0.281]), fake_quant)
    assert not compare.quantization_limited(Versus(cosines=[0.96], frobenius=[0.34]), fake_quant)  # adds > 0.05
    assert not compare.quantization_limited(Versus(cosines=[-1.0], frobenius=[0.28]), fake_quant)  # wrong direction
    trained = Versus(cosines=[0.99], frobenius=[0.05])
    assert not compare.quantization_limited(Versus(cosines=[0.95], frobenius=[0.2]), trained)  # fake-quant is fine


def test_a_comparison_fake_quant_fails_too_is_left_to_the_metrics_only_if_the_lowering_is_no_worse() -> None:
    # silero-vad's cell state: fake-quant's own min cosine is 0.13 on some steps.
    fake_quant = Versus(cosines=[0.13, 0.99], frobenius=[0.9, 0.1], failing=1)
    assert compare.no_worse_than_fake_quant(Versus(cosines=[0.13, 0.99], frobenius=[0.9, 0.1], failing=1), fake_quant)
    assert compare.no_worse_than_fake_quant(Versus(cosines=[0.10], frobenius=[0.93], failing=1), fake_quant)
    assert not compare.no_worse_than_fake_quant(Versus(cosines=[0.05], frobenius=[0.9], failing=1), fake_quant)
    assert not compare.no_worse_than_fake_quant(Versus(cosines=[0.2], frobenius=[1.0], failing=1), fake_quant)
    passing = Versus(cosines=[0.99], frobenius=[0.05])
    assert not compare.no_worse_than_fake_quant(Versus(cosines=[0.5], frobenius=[0.5], failing=1), passing)


@pytest.mark.stack
def test_the_perturbation_moves_a_fixed_tenth_of_a_percent_by_one_step() -> None:
    torch = pytest.importorskip("torch")
    x = torch.zeros(1, 3, 40, 50)
    scale = 0.25
    (once,) = compare.perturbed((x,), [scale], seed=3)
    (again,) = compare.perturbed((x,), [scale], seed=3)
    (other,) = compare.perturbed((x,), [scale], seed=4)
    moved = once != 0
    assert int(moved.sum()) == round(x.numel() * compare.NOISE_FRACTION) == 6
    assert set(once[moved].abs().tolist()) == {scale}
    assert torch.equal(once, again) and not torch.equal(once, other)
    assert torch.equal(x, torch.zeros_like(x))  # the sample itself is untouched
    (kept,) = compare.perturbed((x,), [None], seed=3)
    assert kept is x


@pytest.mark.slow
def test_sqnr_sums_signal_and_noise_over_every_sample_and_reports_none_when_exact() -> None:
    import torch

    v = Versus()
    reference = torch.tensor([3.0, 4.0])  # signal 25 per sample
    compare.similar(reference + torch.tensor([0.05, 0.0]), reference, None, v, compare.COSINE_MIN, None)
    compare.similar(reference - torch.tensor([0.0, 0.05]), reference, None, v, compare.COSINE_MIN, None)
    assert v.signal == pytest.approx(50.0) and v.noise == pytest.approx(0.005, rel=1e-5)
    assert v.sqnr_db == pytest.approx(40.0, abs=1e-4)  # 10·log10(50 / 0.005)
    assert compare.versus_record(v)["sqnr_db"] == pytest.approx(40.0, abs=1e-4)
    exact = Versus()
    compare.similar(reference, reference, None, exact, compare.COSINE_MIN, None)
    assert exact.sqnr_db is None and compare.versus_record(exact)["sqnr_db"] is None


def test_random_weights_are_reported_by_sqnr_and_trained_ones_by_their_metrics() -> None:
    from zoo.registry.report import GENERATED, ReportRow

    fields = {f: None for f in ("model_version", "target", "accelerator", "system_config", "memory_mode",
                                "sram_budget_bytes", "weights", "key", "pte_bytes", "inference_time_ms",
                                "inferences_per_second", "sram_bytes", "dram_bytes", "on_chip_flash_bytes",
                                "off_chip_flash_bytes", "npu_ops", "cpu_ops", "partitions", "built_at")}
    metrics = ({"name": "top1", "unit": "%", "float": 100.0, "program": 12.5},)
    sqnr = ({"sqnr_db": 21.04, "fake_quant_sqnr_db": 22.5, "min_cosine": 0.993},)
    random = ReportRow(model="deit-tiny", extra_flags=(), origin=GENERATED, metrics=metrics, output_sqnr=sqnr, **fields)
    trained = ReportRow(model="deit-tiny", extra_flags=(), origin="https://x", metrics=metrics, output_sqnr=sqnr, **fields)
    assert random.metrics_text == "SQNR 21.0 dB (fake-quant 22.5), cosine ≥ 0.9930"
    assert trained.metrics_text == "top1 100 → 12.5%"


def test_a_float_comparison_fake_quant_fails_is_left_to_the_metrics_when_the_program_is_no_noisier() -> None:
    # PP-OCR det on u55-32: the worst sample's Frobenius 0.358 against fake-quant's 0.297 (over the 0.05
    # margin), yet 13.7 dB against fake-quant's 13.4 over all samples.
    def versus(frobenius: float, db: float, failing: int) -> Versus:
        return Versus(cosines=[0.93], frobenius=[frobenius], failing=failing, signal=10 ** (db / 10), noise=1.0)

    fake_quant = versus(0.297, 13.44, 23)
    assert not compare.no_worse_than_fake_quant(versus(0.358, 13.74, 23), fake_quant)
    assert compare.left_to_metrics(versus(0.358, 13.74, 23), fake_quant)
    assert not compare.left_to_metrics(versus(0.358, 11.0, 23), fake_quant)  # noisier by 2.4 dB
    assert not compare.left_to_metrics(versus(0.358, 13.74, 23), versus(0.1, 13.44, 0))  # fake-quant passes


@pytest.mark.stack
def test_an_output_of_another_shape_dtype_or_count_than_floats_is_refused_whatever_its_values() -> None:
    """Issue 55: a program whose output lost a dimension (and its fake-quantized model with it)
    compared equal value by value, broadcast or flattened, at every level."""
    import torch

    want = [torch.zeros(1, 1, 4, 6, 6)]
    assert compare.mismatched_outputs([torch.zeros(1, 1, 4, 6, 6)], want, "the lowered int8 program") is None
    said = compare.mismatched_outputs([torch.zeros(1, 4, 6, 6)], want, "the lowered int8 program")
    assert said is not None and said.startswith(
        "the lowered int8 program's output 0 is [1, 4, 6, 6] float32 where the float model's is [1, 1, 4, 6, 6] float32: "
        "it does not compute the model's function"), said
    said = compare.mismatched_outputs([torch.zeros(1, 1, 4, 6, 6, dtype=torch.float64)], want, "the portable .pte")
    assert said is not None and "is [1, 1, 4, 6, 6] float64 where the float model's is [1, 1, 4, 6, 6] float32" in said
    said = compare.mismatched_outputs([*want, *want], want, "the portable .pte")
    assert said is not None and said.startswith("the portable .pte gives 2 output(s), the float model 1"), said
    # The value comparisons themselves do not see it: the same values in 4-D are exact in 5-D.
    stats = compare.Versus()
    compare.within(torch.zeros(1, 4, 6, 6), want[0], compare.ATOL, compare.RTOL, stats, None)
    assert stats.mismatched == 0
