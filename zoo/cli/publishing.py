"""``zoo publish``: add cached artifacts to a remote."""

from __future__ import annotations

import click

from zoo.cli.context import _dump, _zoo
from zoo.cli.options import _size


@click.command()
@click.argument("model", required=False)
@click.option("-t", "--target", help="Target or board of the cached artifact.")
@click.option("--system-config", help="Vela system config (default: the target's).")
@click.option("--memory-mode", help="Vela memory mode (default: the target's).")
@click.option("--sram-budget", metavar="SIZE", help="The SRAM budget the artifact was built for (see 'zoo fetch --help').")
@click.option("--weights", help="Weights variant (see 'zoo info MODEL').")
@click.option("--all", "everything", is_flag=True, help="Publish every artifact in the cache.")
@click.option("--to", "--remote", "to", metavar="REMOTE",
              help="hf://ORG/REPO[@BRANCH] or a directory (default: the first of zoo.toml's remotes).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def publish(ctx: click.Context, model: str | None, target: str | None, system_config: str | None,
            memory_mode: str | None, sram_budget: str | None, weights: str | None, everything: bool, to: str | None, as_json: bool) -> None:
    """Publish cached artifacts to a remote. Only adds; never replaces a published artifact."""
    report = _zoo(ctx).publish(to, model=model, target=target, weights=weights, system_config=system_config,
                               memory_mode=memory_mode, sram_budget=_size(sram_budget), everything=everything)
    if as_json:
        _dump({
            "remote": report.remote, "revision": report.revision,
            "added": [{"model": r.model, "target": r.target, "key": r.key, "manifest": r.manifest} for r in report.added],
            "already": [{"model": r.model, "target": r.target, "key": r.key, "manifest": r.manifest} for r in report.already],
        })
        return
    for r in report.added:
        click.echo(f"published  {r.model} for {r.target}  {r.key[:12]}  {r.folder}/")
    for r in report.already:
        click.echo(f"already    {r.model} for {r.target}  {r.key[:12]}  {r.folder}/")
    commit = f" in commit {report.revision[:12]}" if report.revision else ""
    click.echo(f"{len(report.added)} published, {len(report.already)} already there: {report.remote}{commit}", err=True)
