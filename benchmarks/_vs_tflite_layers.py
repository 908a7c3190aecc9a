"""The per-layer comparison of ``benchmarks/vs_tflite.py``: zoo's layers paired with the TFLite flow's by
order, Vela operator and MACs, and the report of one model on one target (totals, ratios, the layers whose
cycles differ most)."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks._vs_tflite_sides import NOT_BUILT, Layer, Side, VelaRun
from benchmarks._vs_tflite_vela import flash_bytes

__all__ = ["Pair", "activation_gap", "gap_share", "match_layers", "print_comparison", "top_layers"]


@dataclass(frozen=True)
class Pair:
    zoo: Layer | None
    tflite: Layer | None

    @property
    def delta(self) -> int:
        return (self.zoo.cycles if self.zoo else 0) - (self.tflite.cycles if self.tflite else 0)


def match_layers(zoo: Sequence[Layer], tflite: Sequence[Layer]) -> list[Pair]:
    """Pair the layers by order on (Vela operator, MACs). Within a run that differs, runs of equal
    length pair by position; otherwise layers of equal MACs pair in order (e.g. zoo's AvgPool and
    the DepthwiseConv2D Vela makes of TFLite's MEAN), and the rest stand alone."""
    matcher = difflib.SequenceMatcher(a=[x.key for x in zoo], b=[x.key for x in tflite], autojunk=False)
    pairs: list[Pair] = []
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal" or (tag == "replace" and a1 - a0 == b1 - b0):
            pairs += [Pair(zoo[a0 + k], tflite[b0 + k]) for k in range(a1 - a0)]
        else:
            pairs += _pair_by_macs(zoo[a0:a1], tflite[b0:b1])
    return pairs


def _pair_by_macs(zoo: Sequence[Layer], tflite: Sequence[Layer]) -> list[Pair]:
    pairs: list[Pair] = []
    j = 0
    for x in zoo:
        match = next((k for k in range(j, len(tflite)) if x.macs and tflite[k].macs == x.macs), None)
        if match is None:
            pairs.append(Pair(x, None))
            continue
        pairs += [Pair(None, y) for y in tflite[j:match]]
        pairs.append(Pair(x, tflite[match]))
        j = match + 1
    return pairs + [Pair(None, y) for y in tflite[j:]]


def _layer(x: Layer | None) -> str:
    return f"{x.op}{'+' + x.activation if x.activation else ''} {x.macs:,} MACs" if x else "-"


def _fused(run: VelaRun) -> str:
    weighted = [x for x in run.layers if x.macs and x.op in ("Conv2D", "DepthwiseConv2D", "FullyConnected")]
    return f"{sum(1 for x in weighted if x.activation)} of {len(weighted)}"


def _totals(ok: Sequence[Side], width: int = 32) -> None:
    rows: list[tuple[str, Any]] = [
        ("inference time (ms)", lambda s: f"{s.vela.total['inference_time_ms']:.4f}"),
        ("total cycles", lambda s: f"{s.vela.total['total_cycles']:,}"),
        ("NPU cycles", lambda s: f"{s.vela.total['npu_cycles']:,}"),
        ("SRAM (KiB)", lambda s: f"{s.vela.total['sram_bytes'] / 1024:.2f}"),
        ("flash / DRAM (KiB)", lambda s: f"{flash_bytes(s.vela.total) / 1024:.2f}"),
        ("MACs", lambda s: f"{s.vela.total['macs']:,}"),
        ("NPU operators (Vela)", lambda s: f"{s.vela.total['npu_operators']}"),
        ("CPU operators", lambda s: f"{s.cpu_ops}"),
        ("convs/FCs with a fused activation", lambda s: _fused(s.vela)),
        ("input", lambda s: s.input_quant),
        ("build (s)", lambda s: f"{s.seconds:.1f}"),
    ]
    print(f"{'':34}" + "".join(f"{s.label:>{width}}" for s in ok))
    for name, fmt in rows:
        print(f"{name:34}" + "".join(f"{fmt(s):>{width}}" for s in ok))


def print_comparison(model: str, target: str, weights: str, best: Side, defaults: Side, tfl: Side,
                     top: int) -> None:
    print(f"\n=== {model} on {target}, weights {weights} ===")
    sides = [best, defaults, tfl]
    for s in sides:
        if s.error:
            print(f"{s.label}: {s.error}" if s.error == NOT_BUILT else f"{s.label}: FAILED: {s.error}")
    ok = [s for s in sides if s.vela]
    if ok:
        _totals(ok)
        print(f"Vela flags (both sides): {' '.join(ok[0].vela.flags) if ok[0].vela else ''} --verbose-performance")
    for s in sides:
        for note in s.notes:
            print(f"  {s.label}: {note}")
    if tfl.vela is None:
        return
    for s in (best, defaults):
        if s.vela:
            r = s.vela.total["inference_time_ms"] / tfl.vela.total["inference_time_ms"]
            c = s.vela.total["total_cycles"] / tfl.vela.total["total_cycles"]
            print(f"ratio {s.label} / TFLite: time {r:.3f}, cycles {c:.3f}")
    if best.vela is None:
        return
    pairs = match_layers(best.vela.layers, tfl.vela.layers)
    matched = [p for p in pairs if p.zoo and p.tflite]
    only_zoo = sum(p.zoo.cycles for p in pairs if p.zoo and not p.tflite)
    only_tfl = sum(p.tflite.cycles for p in pairs if p.tflite and not p.zoo)
    diff = best.vela.total["total_cycles"] - tfl.vela.total["total_cycles"]
    print(f"layers ({best.label} against TFLite): zoo {len(best.vela.layers)}, TFLite {len(tfl.vela.layers)}, "
          f"paired {len(matched)}; cycle difference {diff:+,} = paired {sum(p.delta for p in matched):+,} "
          f"+ zoo only {only_zoo:,} - TFLite only {only_tfl:,}")
    same = [p for p in matched if p.zoo and p.tflite and p.zoo.key == p.tflite.key]
    more = [p.delta for p in same if p.delta > 0]
    less = [p.delta for p in same if p.delta < 0]
    print(f"  paired with the same operator and MACs: {len(same)}; {len(more)} cost zoo more ({sum(more):+,} cycles), "
          f"{len(less)} less ({sum(less):+,})")
    other = [p for p in matched if p not in same]
    if other:
        kinds = sorted({f"{p.zoo.op}/{p.tflite.op}" for p in other if p.zoo and p.tflite})
        print(f"  paired with another operator or MAC count: {len(other)} ({', '.join(kinds)}), "
              f"{sum(p.delta for p in other):+,} cycles")
    fused = activation_gap(pairs)
    print(f"  paired layers where only TFLite's Vela fused an activation: {len(fused)}, {sum(fused):+,} cycles"
          + (f" = {sum(fused) / diff:.0%} of the difference" if diff > 0 and sum(fused) > 0 else ""))
    print(f"  top {top} layers by |zoo - TFLite| cycles (# is the position in the paired order):")
    print(f"  {'#':>3} {'zoo layer':40} {'zoo cyc':>10} {'TFLite layer':40} {'TFL cyc':>10} {'delta':>10}")
    ranked = sorted(((i, p) for i, p in enumerate(pairs) if p.delta), key=lambda ip: -abs(ip[1].delta))
    for i, p in ranked[:top]:
        print(f"  {i:>3} {_layer(p.zoo):40} {(p.zoo.cycles if p.zoo else 0):>10,} "
              f"{_layer(p.tflite):40} {(p.tflite.cycles if p.tflite else 0):>10,} {p.delta:>+10,}")


def activation_gap(pairs: Sequence[Pair]) -> list[int]:
    """The cycle differences of paired layers that have an activation fused on the TFLite side only."""
    return [p.delta for p in pairs if p.zoo and p.tflite and p.tflite.activation and not p.zoo.activation]


def gap_share(best: Side, tfl: Side) -> str:
    if not (best.vela and tfl.vela):
        return "-"
    gap = activation_gap(match_layers(best.vela.layers, tfl.vela.layers))
    diff = best.vela.total["total_cycles"] - tfl.vela.total["total_cycles"]
    return f"{len(gap)} layers, {sum(gap):+,}" + (f" ({sum(gap) / diff:.0%})" if diff > 0 and sum(gap) > 0 else "")


def top_layers(best: Side, tfl: Side, n: int = 2) -> str:
    """The ``n`` layers whose cycles differ most, for the Markdown table."""
    if not (best.vela and tfl.vela):
        return ""
    out = []
    for p in sorted((p for p in match_layers(best.vela.layers, tfl.vela.layers) if p.delta), key=lambda p: -abs(p.delta))[:n]:
        layer = p.zoo or p.tflite
        assert layer is not None
        where = "" if p.zoo and p.tflite else (" zoo only" if p.zoo else " TFLite only")
        if p.zoo and p.tflite and p.zoo.op != p.tflite.op:
            where = f" (TFLite {p.tflite.op})"
        acts = ""
        if p.zoo and p.tflite and p.zoo.activation != p.tflite.activation:
            acts = f" (activation zoo {p.zoo.activation or 'none'}, TFLite {p.tflite.activation or 'none'})"
        out.append(f"{layer.op} {layer.macs / 1e6:.2f} M MACs{where}{acts} {p.delta:+,}")
    return "; ".join(out)


