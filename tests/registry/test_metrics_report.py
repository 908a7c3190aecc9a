"""Measured metrics and the weights' licence and origin, from the manifest into zoo report and --json."""

from __future__ import annotations

from typing import Any

import pytest

from zoo.cli.report_render import render_text
from zoo.plugins import mnist
from zoo.registry.build_units.assemble import weights_info
from zoo.registry.report import Report, ReportRow
from zoo.registry.store.manifest import FileRecord, Manifest


def manifest(**changes: Any) -> Manifest:
    m = Manifest(key="k" * 64, model="mnist", target="u55-128", key_inputs={"weights": {"name": "mnist"}},
                 files=[FileRecord("a.pte", "pte", 1, "0" * 64)])
    for k, v in changes.items():
        setattr(m, k, v)
    return m


MEASURED = {"numerics": {"metrics": [{"name": "top1", "unit": "%", "float": 97.5, "program": 97.2,
                                       "program_kind": "int8", "drop": 0.3, "passed": True}]}}


def test_weights_info_carries_licence_origin_and_the_declared_figure_in_percent() -> None:
    spec = mnist.spec()
    info = weights_info(spec.weights_variant("mnist"))
    assert info["licence"].startswith("Apache-2.0") and "mnist.safetensors" in info["origin"]
    assert info["reference"] == {"top1": 97.5}


def test_the_manifest_round_trips_weights_info_and_refuses_a_non_number_figure() -> None:
    spec = mnist.spec()
    m = manifest(weights_info=weights_info(spec.weights_variant("mnist")), verification=MEASURED)
    again = Manifest.loads(m.dumps())
    assert again.weights_info == m.weights_info and again.reference == {"top1": 97.5} and again.metrics[0]["program"] == 97.2
    bad = m.to_json()
    bad["verification"]["numerics"]["metrics"][0]["float"] = "97.5"
    with pytest.raises(ValueError, match="float"):
        Manifest.from_json(bad)


def test_report_and_its_json_show_measured_figures_beside_the_declared_reference() -> None:
    spec = mnist.spec()
    row = ReportRow.from_manifest(manifest(weights_info=weights_info(spec.weights_variant("mnist")), verification=MEASURED))
    (metric,) = row.to_json()["metrics"]
    assert (metric["float"], metric["program"], metric["reference"]) == (97.5, 97.2, 97.5)
    assert row.to_json()["licence"].startswith("Apache-2.0")
    text = render_text(Report("mnist", [row]))
    assert "metrics (float → program)" in text and "top1 97.5 → 97.2% (declared 97.5)" in text
    assert "weights mnist: licence Apache-2.0" in text


def test_a_manifest_from_before_records_no_licence_and_no_metrics() -> None:
    row = ReportRow.from_manifest(manifest())
    assert (row.licence, row.metrics, row.metrics_text) == (None, (), "-")
    assert "metrics" not in render_text(Report("mnist", [row])).splitlines()[0]


def test_the_verification_output_says_when_no_metric_judged_the_model() -> None:
    from zoo.cli.format import _verification_line, verification_lines
    from zoo.registry.numerics import NO_METRICS
    from zoo.registry.verify.verification import Verification

    base = {"passed": True, "samples": 9, "dataset": "calibration", "method": "tosa_reference_model", "checks": []}
    plain = Verification("add", [], numerics={**base, "metrics": [], "metrics_note": NO_METRICS})
    assert "judged by the elementwise checks alone" in _verification_line(plain)
    assert any(NO_METRICS in line for line in verification_lines(plain))
    judged = Verification("mnist", [], numerics={**base, **MEASURED["numerics"]})
    assert "top1 float 97.5%, int8 97.2%" in _verification_line(judged)
    assert "elementwise checks alone" not in _verification_line(judged)


def test_a_rows_vela_figures_are_the_manifests_and_its_flash_is_vela_totals_sum(monkeypatch: pytest.MonkeyPatch) -> None:
    from zoo.registry.store.manifest import VelaTotals

    total = {"inference_time_ms": 1.5, "inferences_per_second": 666.7, "sram_bytes": 10, "dram_bytes": 20,
             "on_chip_flash_bytes": 30, "off_chip_flash_bytes": None}
    row = ReportRow.from_manifest(manifest(vela={"total": total}))
    assert {name: getattr(row, name) for name in total} == total and row.flash_bytes == 30
    assert ReportRow.from_manifest(manifest()).flash_bytes is None
    # One rule for the flash a program needs: the row asks VelaTotals, it does not restate the sum.
    monkeypatch.setattr(VelaTotals, "flash_bytes", property(lambda self: 7))
    assert row.flash_bytes == 7
