"""``zoo tune``: find the fewest modules that need 16-bit activations, then build and cost the result
with the weight transforms the target benefits from, and name the fastest build within the goal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from zoo._metric import max_drop_problem
from zoo._units import duration, human_bytes
from zoo.cli.context import _dump, _zoo, echo, notice
from zoo.cli.options import _model_name
from zoo.cli.table import render


def _drops(_ctx: click.Context, _param: click.Parameter, given: tuple[str, ...]) -> dict[str, float]:
    """Refused here, before the search: a NaN drop would make every trial meet the goal."""
    out = {}
    for item in given:
        name, _, value = item.partition("=")
        try:
            out[name.strip()] = drop = float(value)
        except ValueError:
            raise click.BadParameter(f"{item!r}: give METRIC=DROP, e.g. f1=0.01", param_hint="--max-drop") from None
        if (problem := max_drop_problem(drop)) is not None:
            raise click.BadParameter(f"{item!r}: {problem}", param_hint="--max-drop")
    return out


@click.command()
@click.argument("model")
@click.option("-t", "--target", help="The Ethos-U target or board (default: zoo.toml's).")
@click.option("--weights", help="Weights variant (see 'zoo info MODEL').")
@click.option("-o", "--output", "out", type=click.Path(path_type=Path, dir_okay=False),
              help="Where to write the recipe. [default: tuned-MODEL-TARGET.json]")
@click.option("--max-layers", type=click.IntRange(min=1), default=8, show_default=True,
              help="Promote at most this many modules, most sensitive first.")
@click.option("--max-drop", "max_drop", multiple=True, metavar="METRIC=DROP", callback=_drops,
              help="Hold a metric to this drop instead of the model's own, e.g. --max-drop f1=0.01 (repeatable).")
@click.option("--transform", "transforms", multiple=True, metavar="NAME",
              help="Build the recipe with this weight transform too (repeatable; default: every one the target "
                   "benefits from, palette8/16/32 on a U55 or U65, sparse24 fine-tuned on a U85).")
@click.option("--no-transforms", is_flag=True, help="Build no weight transform: precisions only.")
@click.option("--no-build", is_flag=True, help="Only search (fake quantization); build nothing.")
@click.option("--json", "as_json", is_flag=True, help="The search and the builds as JSON on stdout.")
@click.pass_context
def tune(ctx: click.Context, /, model: str, target: str | None, weights: str | None, out: Path | None,
         max_layers: int, max_drop: dict[str, float], transforms: tuple[str, ...], no_transforms: bool,
         no_build: bool, as_json: bool) -> None:
    """Find a quantization recipe for MODEL on a target: each module with weights promoted to 16-bit
    activations alone (fake quantization, so no Vela yet), then the most sensitive ones together
    until the model meets its goal. Writes the recipe (--recipe FILE takes it), then builds int8,
    the recipe and a16w8, and the recipe with each weight transform, with the numerical check and
    Vela's estimates, and names the fastest build within the goal."""
    zoo = _zoo(ctx)
    name = _model_name(ctx, model)
    result = zoo.tune(name, target, weights=weights, out=out, max_layers=max_layers, max_drop=max_drop,
                      build=not no_build, transforms=() if no_transforms else (transforms or None),
                      notice=lambda step: notice(f"tune: {step}"))
    if as_json:
        _dump(result.to_json())
        return
    s = result.search
    echo(f"{s.model} for {s.target} (weights {s.weights}); goal: {s.goal}")
    echo(f"int8 everywhere: {_trial(s.int8)}")
    echo(f"a16w8 everywhere: {_trial(s.a16w8)}")
    echo("modules by sensitivity (each alone at a16w8, the rest int8):")
    for t in s.layers[:max(max_layers, 5)]:
        gain = t.worst_db - s.int8.worst_db
        echo(f"  {t.label.removesuffix(' at a16w8'):<28} {_trial(t)} ({gain:+.1f} dB)")
    for t in s.steps:
        echo(f"promoted {t.label}: {_trial(t)}")
    chosen = s.chosen
    echo(f"recipe: {chosen.label}{'' if chosen.meets else ' (nothing tried meets the goal)'} → {result.recipe_path} "
               f"(search: {s.seconds:.0f} s)")
    if result.built:
        echo(render(("recipe", "numerics", "metrics / output SQNR", "Vela time", "SRAM"),
                          [_built(b.to_json()) for b in result.built]))
        fastest = result.fastest
        echo(f"fastest within the goal: {fastest.label} ({_built(fastest.to_json())[3]})" if fastest
             else "fastest within the goal: none of the builds meets it")


def _trial(t: Any) -> str:
    sqnr = "/".join("-" if x is None else f"{x:.1f}" for x in t.sqnr_db)
    metrics = "".join(f", {k} {v:.4g}" for k, v in t.metrics.items())
    return f"SQNR {sqnr} dB{metrics}{' (meets the goal)' if t.meets else ''}"


def _built(b: dict[str, Any]) -> tuple[str, ...]:
    if b["error"] and b["key"] is None:
        return (b["label"], f"failed: {b['error']}", "-", "-", "-")
    metrics = "; ".join(f"{m['name']} {m['program']:.4g}" for m in b["metrics"]) or "SQNR " + "/".join(
        "-" if o["sqnr_db"] is None else f"{o['sqnr_db']:.1f}" for o in b["output_sqnr"]) + " dB"
    numerics = "passed" if b["numerics_passed"] else (b["error"] or "FAILED")
    return (b["label"], numerics, metrics, duration(b["vela_ms"]) if b["vela_ms"] is not None else "-",
            human_bytes(b["sram_bytes"]))
