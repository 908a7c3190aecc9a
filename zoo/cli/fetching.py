"""``zoo fetch`` and ``zoo build``: hand out artifacts, from the cache, a remote or a local build."""

from __future__ import annotations

from typing import Any

import click

from zoo.cli.context import _dump, _zoo, notice
from zoo.cli.format import _summary, _summary_table
from zoo.cli.options import _model_name, _size, fetch_options


@click.command()
@fetch_options
@click.option("--no-build", is_flag=True, help="Fail instead of compiling when nothing is cached or published.")
@click.option("--remote", multiple=True, metavar="REMOTE",
              help="Fetch prebuilt artifacts from here (repeatable; replaces zoo.toml's remotes): hf://ORG/REPO[@REV], a directory, http(s)://…")
@click.option("--any-toolchain", is_flag=True, help="Accept the newest prebuilt artifact even if built with other tool versions.")
@click.option("--offline", is_flag=True, help="Never touch the network (also ZOO_OFFLINE=1): cache and directory remotes only.")
@click.pass_context
def fetch(ctx: click.Context, /, no_build: bool, **kw: Any) -> None:
    """Get MODEL's .pte and C header for a target: from the cache, else a remote, else compiled here."""
    _run_fetch(ctx, force_build=False, allow_build=not no_build, **kw)


@click.command()
@fetch_options
@click.pass_context
def build(ctx: click.Context, /, **kw: Any) -> None:
    """Compile MODEL for a target here, replacing any cached artifact."""
    _run_fetch(ctx, force_build=True, allow_build=True, **kw)


def _run_fetch(ctx: click.Context, *, force_build: bool, allow_build: bool, remote: tuple[str, ...] = (),
               any_toolchain: bool = False, offline: bool = False, **kw: Any) -> None:
    from zoo._errors import UsageError
    from zoo._options import FetchOptions
    from zoo.cli.progress import StageReporter

    zoo = _zoo(ctx)
    as_json, quiet = kw["as_json"], kw["quiet"]
    if kw["all_models"]:
        if kw["model"]:
            raise UsageError("give a MODEL or --all-models, not both")
        models = [spec.name for spec in zoo.models()]
    else:
        models = [_model_name(ctx, kw["model"])]
    targets = zoo.target_names(kw["target"])
    options = FetchOptions(
        weights=kw["weights"], calibration_dir=kw["calibration_dir"], system_config=kw["system_config"],
        memory_mode=kw["memory_mode"], sram_budget=_size(kw["sram_budget"]),
        out_dir=kw["out_dir"], header_array=kw["header_name"], header_section=kw["header_section"],
        labels_header=kw["labels_header"], build=allow_build, force_build=force_build,
        verify=kw["verify"], bundle=kw["bundle"], remotes=remote or None, any_toolchain=any_toolchain,
        offline=offline or None, jobs=kw["jobs"],
    )
    # Resolve every name before anything compiles, so a typo fails at once.
    requests = [zoo.request(m, t, **vars(options.choices)) for m in models for t in targets]
    label = f"{requests[0].spec.name} → {requests[0].target.name}"
    with StageReporter(label, enabled=not (quiet or as_json)) as progress:
        arts = zoo.fetch_many(models, targets, options, progress=progress,
                              progress_for=progress.for_label if len(requests) > 1 else None, notice=notice)
    for art in arts:
        prefix = f"{art.manifest.model} for {art.manifest.target}: " if len(arts) > 1 else ""
        for warning in art.manifest.warnings:
            notice(f"warning: {prefix}{warning}")
        if art.verification is not None and not art.verification.passed:
            for problem in art.verification.problems():
                notice(f"warning: {prefix}failed verification (handed out because of --no-verify): {problem}")
    if as_json:
        _dump(arts[0].to_json() if len(arts) == 1 else [a.to_json() for a in arts])
        return
    for art in arts:
        click.echo(str(art.pte))
        click.echo(str(art.header))
        if art.labels_header:
            click.echo(str(art.labels_header))
        if art.bundle:
            click.echo(str(art.bundle))
            click.echo(str(art.bundle_header))
    if not quiet:
        click.echo(_summary(arts[0]) if len(arts) == 1 else _summary_table(arts), err=True)
