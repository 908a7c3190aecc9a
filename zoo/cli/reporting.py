"""``zoo report``: Vela's estimates for a model's cached artifacts, or for the whole
catalogue (every model × target, failures included), as a table, JSON or an HTML page."""

from __future__ import annotations

from pathlib import Path

import click

from zoo.cli.context import _dump, _zoo, echo, notice


@click.command("report")
@click.argument("model", required=False)
@click.option("--all", "everything", is_flag=True,
              help="The catalogue: every cached model × target, with the builds that failed and where.")
@click.option("--weights", help="Only artifacts built with this weights variant (see 'zoo info MODEL').")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--html", "html_path", type=click.Path(path_type=Path, dir_okay=False),
              help="Write a self-contained HTML page: the table and a chart (a heat map with --all).")
@click.pass_context
def report_cmd(ctx: click.Context, model: str | None, everything: bool, weights: str | None, as_json: bool,
               html_path: Path | None) -> None:
    """Vela's estimates for MODEL's cached artifacts, one row per target: inference time, SRAM, DRAM, flash, .pte size.
    With --all, the catalogue: every cached model on every target, and what failed."""
    if as_json and html_path:
        raise click.UsageError("give --json or --html, not both")
    if bool(model) == everything:
        raise click.UsageError("give a MODEL, or --all for the whole catalogue")
    zoo = _zoo(ctx)
    if everything:
        from zoo.cli.catalogue_render import render_catalogue_text, write_catalogue_html
        from zoo.registry.report import collect_catalogue

        order = [t.name for t in zoo.targets.all_targets()]
        tasks = {spec.name: spec.task for spec in zoo.models()}
        catalogue = collect_catalogue(zoo.cache, weights=weights, target_order=order, say=notice, tasks=tasks)
        if html_path:
            click.echo(str(write_catalogue_html(catalogue, html_path)))
        elif as_json:
            from zoo.registry.best_precision import judge, of_row

            data = catalogue.to_json()
            for cell, record in zip(catalogue.cells.values(), data["cells"], strict=True):
                judged = judge([of_row(r) for r in cell.variants])
                record["precisions"] = judged.to_json() if judged else None
            _dump(data)
        else:
            echo(render_catalogue_text(catalogue))
        return
    from zoo.cli.report_render import render_text, write_html
    from zoo.registry.report import collect

    assert model is not None
    result = collect(zoo.cache, zoo.model(model), weights=weights, say=notice)
    if html_path:
        click.echo(str(write_html(result, html_path)))
    elif as_json:
        _dump(result.to_json())
    else:
        echo(render_text(result))
