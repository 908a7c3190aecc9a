"""The catalogue's best precision per cell: the fastest verified build that meets the goal,
beside int8's; judged on rows as the cache's manifests give them."""

from __future__ import annotations

import dataclasses
from typing import Any

from zoo.cli.catalogue_render import best_precision, render_catalogue_text
from zoo.registry.best_precision import Judgement, judge, of_row
from zoo.registry.report import GENERATED, Catalogue, Cell, ReportRow

_NONE = ("model_version", "accelerator", "system_config", "memory_mode", "sram_budget_bytes", "pte_bytes",
         "inferences_per_second", "sram_bytes", "dram_bytes", "on_chip_flash_bytes", "off_chip_flash_bytes",
         "npu_ops", "cpu_ops", "partitions")


def row(precision: str, ms: float, *, f1: float | None = None, sqnr: tuple[float, ...] = (), **changes: Any) -> ReportRow:
    metrics = () if f1 is None else ({"name": "f1", "unit": "", "float": 0.9369, "program": f1,
                                      "drop": 0.9369 - f1, "passed": 0.9369 - f1 <= 0.01},)
    base = ReportRow(model="silero-vad", target="u85-256", weights="silero-v6", key=f"k-{precision}-{ms}",
                     inference_time_ms=ms, built_at="2026-11-26T00:00:00Z", extra_flags=(), precision=precision,
                     origin="https://github.com/snakers4/silero-vad", metrics=metrics,
                     output_sqnr=tuple({"sqnr_db": s, "fake_quant_sqnr_db": s, "min_cosine": 0.99} for s in sqnr),
                     **dict.fromkeys(_NONE))
    return dataclasses.replace(base, **changes)


def judged(*rows: ReportRow) -> Judgement[ReportRow] | None:
    return judge([of_row(r) for r in rows])


def test_the_fastest_build_that_meets_the_metrics_wins_and_int8_is_shown_beside_it() -> None:
    int8, qat, a16w8 = row("int8", 0.225, f1=0.8775), row("int8+qat300", 0.225, f1=0.9235), row("a16w8", 0.485, f1=0.9402)
    result = judged(int8, qat, a16w8)
    assert result is not None and result.best and result.best.item is a16w8 and result.int8 and result.int8.item is int8
    assert result.meets == (False, False, True) and result.goal == "every metric within its allowed drop"
    assert best_precision(Cell("silero-vad", "silero-v6", "u85-256", row=int8, variants=(int8, qat, a16w8))) == \
        "a16w8 485.0 µs (int8 225.0 µs misses the goal)"
    ok = row("int8", 0.225, f1=0.93)
    assert judged(ok, a16w8).best.item is ok  # type: ignore[union-attr]


def test_nothing_to_choose_between_and_nothing_that_meets_the_goal_are_told_apart() -> None:
    assert judged(row("int8", 0.2, f1=0.8)) is None
    assert judged(row("int8", 0.2, f1=0.8), row("a16w8", 0.4, f1=0.8, io="int8")) is None  # another boundary
    assert judged(row("int8", 0.2), row("a16w8", 0.4)) is None  # never verified
    cell = Cell("m", "w", "t", variants=(row("int8", 0.2, f1=0.8), row("a16w8", 0.4, f1=0.85)))
    assert best_precision(cell) == "nothing meets the goal (int8, a16w8); 'zoo tune' names the modules to blame"


def test_random_weights_are_judged_by_their_noisiest_output_against_the_best_build() -> None:
    rnd = {"origin": GENERATED}
    int8, a16w8 = row("int8", 3.6, f1=0.1, sqnr=(12.0, 30.0), **rnd), row("a16w8", 7.4, f1=0.1, sqnr=(14.9, 31.0), **rnd)
    result = judged(int8, a16w8)
    assert result and result.best and result.best.item is a16w8 and "within 1 dB of the best build's" in result.goal
    close = row("int8", 3.6, sqnr=(14.2, 20.0), **rnd)
    assert judged(close, a16w8).best.item is close  # type: ignore[union-attr]


def test_report_all_grows_a_best_precision_column_only_when_a_cell_has_precisions() -> None:
    int8, a16w8 = row("int8", 0.225, f1=0.8775), row("a16w8", 0.485, f1=0.9402)
    cells = {("silero-vad", "silero-v6", "u85-256"): Cell("silero-vad", "silero-v6", "u85-256", row=int8, variants=(int8, a16w8))}
    text = render_catalogue_text(Catalogue([("silero-vad", "silero-v6")], ["u85-256"], cells))
    assert "best precision" in text and "a16w8 485.0 µs (int8 225.0 µs misses the goal)" in text
    plain = {k: dataclasses.replace(c, variants=(int8,)) for k, c in cells.items()}
    assert "best precision" not in render_catalogue_text(Catalogue([("silero-vad", "silero-v6")], ["u85-256"], plain))
