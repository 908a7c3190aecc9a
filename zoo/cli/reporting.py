"""``zoo report``: Vela's estimates for a model's cached artifacts, as a table, JSON or an HTML page."""

from __future__ import annotations

from pathlib import Path

import click

from zoo.cli.context import _dump, _zoo, notice


@click.command("report")
@click.argument("model")
@click.option("--weights", help="Only artifacts built with this weights variant (see 'zoo info MODEL').")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--html", "html_path", type=click.Path(path_type=Path, dir_okay=False),
              help="Write a self-contained HTML page with the table and a chart (needs matplotlib).")
@click.pass_context
def report_cmd(ctx: click.Context, model: str, weights: str | None, as_json: bool, html_path: Path | None) -> None:
    """Vela's estimates for MODEL's cached artifacts, one row per target: inference time, SRAM, DRAM, flash, .pte size."""
    from zoo.cli.report_render import render_text, write_html
    from zoo.registry.report import collect

    if as_json and html_path:
        raise click.UsageError("give --json or --html, not both")
    zoo = _zoo(ctx)
    result = collect(zoo.cache, zoo.model(model), weights=weights, say=notice)
    if html_path:
        click.echo(str(write_html(result, html_path)))
    elif as_json:
        _dump(result.to_json())
    else:
        click.echo(render_text(result))
