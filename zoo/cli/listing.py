"""Listing commands: list, info, targets, plugins. Fast, and never import torch."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import click

from zoo._options import PRECISIONS
from zoo._spec import ModelSpec
from zoo._units import human_bytes
from zoo.cli.context import _dump, _zoo, echo
from zoo.cli.snapshot import offer
from zoo.cli.table import render

if TYPE_CHECKING:
    from zoo.registry.npu.targets import TargetTable


@click.command("list")
@click.argument("pattern", required=False)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def list_cmd(ctx: click.Context, pattern: str | None, as_json: bool) -> None:
    """List models, optionally filtered by a glob PATTERN such as 'mobile*'."""
    specs = _zoo(ctx).models(pattern)
    if as_json:
        _dump([s.summary() for s in specs])
        return
    if not specs:
        echo(f"no model matches {pattern!r}" if pattern else "no models: no plugin registered any")
        offer()
        return
    # Aliases stay in 'zoo info' and --json: with the torchvision names they would
    # leave the description no room on an 80-column terminal.
    rows = [
        (s.name, s.task, "x".join(map(str, s.inputs[0].shape)), first_sentence(s.description))
        for s in specs
    ]
    echo(render(("model", "task", "input", "description"), rows, optional_last=True))
    offer()


@click.command()
@click.argument("model")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def info(ctx: click.Context, model: str, as_json: bool) -> None:
    """Show what a model declares: inputs, weights, calibration, evaluation data, metrics and labels."""
    spec = _zoo(ctx).model(model)
    data = {**spec.summary(), "precisions": list(PRECISIONS) if spec.quantize else [],
            "recipes": {name: r.to_json() for name, r in spec.recipes.items()}}
    if as_json:
        _dump(data)
        return
    echo(f"{spec.name}  (version {spec.version}, plugin {spec.source})")
    if spec.aliases:
        echo(f"  aliases:     {', '.join(spec.aliases)}")
    echo(f"  task:        {spec.task}")
    echo(f"  description: {spec.description}")
    for i in spec.inputs:
        extra = ""
        if i.range:
            extra += f", range {list(i.range)}"
        if i.mean:
            extra += f", mean {list(i.mean)}, std {list(i.std or ())}"
            if i.normalise_axis != 1:
                extra += f" along axis {i.normalise_axis}"
        echo(f"  input:       {i.name} {list(i.shape)} {i.dtype}{extra}")
        if i.sensor is not None:
            s = i.sensor
            axes = ", ".join(f"{a} ({u})" for a, u in zip(s.axes, s.units, strict=True)) if s.units else ", ".join(s.axes)
            features = f"; {len(s.features)} features of the window" if s.features else ""
            echo(f"  sensor:      {s.window} samples at {s.rate_hz:g} Hz of {axes}{features}; "
                 f"{s.normalisation} normalisation")
    if spec.outputs:
        echo(f"  outputs:     {', '.join(spec.outputs)}")
    if spec.axes == "nhwc":
        echo("  layouts:     nhwc: the model takes its images channels-last, as declared (--layout does not apply)")
    else:
        echo(f"  layouts:     {', '.join(spec.layouts)} (--layout; the first is the default)")
    if spec.quantize:
        echo(f"  precisions:  {', '.join(PRECISIONS)} (--precision for an NPU target; the first is the default)")
    for name, recipe in spec.recipes.items():
        parts = ", ".join([*(f"{m} {p}" for m, p in sorted(recipe.modules.items())),
                           *([f"{recipe.observer} observer"] if recipe.observer != "histogram" else []),
                           *([f"--qat {recipe.qat}"] if recipe.qat else [])])
        about = f": {recipe.description}" if recipe.description else ""
        echo(f"  recipe:      {name} ({recipe.default}{'; ' + parts if parts else ''}){about}")
    if spec.quantize and spec.training is not None:
        echo(f"  training:    {spec.training.size} samples for --qat STEPS: {spec.training.description}")
    for w in data["weights"]:
        default = " (default)" if w["default"] else ""
        echo(f"  weights:     {w['name']}{default}: {w['description']} [{w['licence']}; {w['origin']}]")
        if w["reference"]:
            declared = ", ".join(f"{k} {v:g}{_unit(spec, k)}" for k, v in w["reference"].items())
            echo(f"               declared: {declared}")
    echo(f"  calibration: {spec.calibration.size} samples: {spec.calibration.description}")
    if spec.evaluation:
        echo(f"  evaluation:  {spec.evaluation.size} labelled samples: {spec.evaluation.description}")
    else:
        echo("  evaluation:  none (no labelled data; --eval-dir gives some)")
    for m in spec.metrics:
        direction = "higher is better" if m.higher_is_better else "lower is better"
        about = f"; {m.description}" if m.description else ""
        echo(f"  metric:      {m.name} ({direction}; int8 may lose at most {m.max_drop:g}{m.drop_unit}){about}")
    if not spec.metrics:
        echo("  metric:      none declared: --verify judges it by the elementwise checks alone")
    if spec.label_count():
        echo(f"  labels:      {spec.label_count()}")
    offer()


def _unit(spec: ModelSpec, metric: str) -> str:
    return next((m.unit_text for m in spec.metrics if m.name == metric), "%" if metric == "top1" else "")


# A full stop that ends no sentence: "Zhang et al. 2016", "e.g. MNIST".
_NOT_AN_END = re.compile(r"(?<![a-z]\.[a-z])(?<!\bet al)(?<!\bvs)(?<!\bcf)(?<!\betc)\. ")


def first_sentence(text: str) -> str:
    return _NOT_AN_END.split(text, maxsplit=1)[0]


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def targets(ctx: click.Context, as_json: bool) -> None:
    """List Ethos-U targets, board presets and the portable CPU target."""
    from zoo.registry.npu.targets import family_memory_modes, family_system_configs
    from zoo.registry.npu.vela_config import vela_config

    table = _zoo(ctx).targets
    all_targets = table.all_targets()
    if as_json:
        families = {
            f: {"system_configs": family_system_configs(f), "memory_modes": family_memory_modes(f)}
            for f in ("u55", "u65", "u85")
        }
        _dump({
            "targets": [{**t.to_json(), "aliases": list(t.aliases), **_board_json(table, t.board)}
                        for t in all_targets],
            "families": families,
            "vela_config": vela_config().source,
        })
        return
    rows = []
    for t in all_targets:
        alias = (t.board and f"board → {t.accelerator}") or ", ".join(t.aliases)
        rows.append((t.name, alias, t.system_config or "-", t.memory_mode or "-", human_bytes(t.sram_bytes) if t.sram_bytes else "-"))
    echo(render(("target", "aliases", "default system config", "memory mode", "SRAM"), rows))
    presets = [t for t in all_targets if t.board]
    if presets:
        echo("\nboard presets:")
        for t in presets:
            sram = human_bytes(t.sram_bytes) if t.sram_bytes else "not given (pass --sram-budget)"
            echo(f"  {t.name} ({table.sources.get(t.name, 'a plugin')}): {table.boards[t.name].description or '-'}")
            echo(f"  {' ' * len(t.name)}  {t.accelerator}, {t.system_config}, {t.memory_mode}; SRAM {sram}")
    echo("")
    for f in ("u55", "u65", "u85"):
        echo(f"{f}: system configs {', '.join(family_system_configs(f))}")
        echo(f"{' ' * len(f)}  memory modes {', '.join(family_memory_modes(f))}")
    offer()


def _board_json(table: TargetTable, board: str | None) -> dict[str, object]:
    if board is None:
        return {}
    return {"description": table.boards[board].description, "source": table.sources.get(board, "a plugin")}


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def plugins(ctx: click.Context, as_json: bool) -> None:
    """List plugins with their version, models and status."""
    statuses = _zoo(ctx).plugins
    if as_json:
        _dump([p.to_json() for p in statuses])
        return
    rows = [
        (p.name, p.kind, f"{p.dist} {p.version}" if p.dist else "-", p.status,
         "-" if p.seconds is None else f"{p.seconds * 1000:.0f} ms",
         p.error if p.status in ("error", "empty") else ", ".join(p.models))
        for p in statuses
    ]
    echo(render(("plugin", "from", "distribution", "status", "load", "models / error"), rows))
    offer()
