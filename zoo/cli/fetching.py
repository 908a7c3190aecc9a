"""``zoo fetch`` and ``zoo build``: hand out artifacts, from the cache, a remote or a local build."""

from __future__ import annotations

import contextlib
import faulthandler
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from zoo._errors import BuildError, UsageError
from zoo.cli.context import _dump, _zoo, echo, notice
from zoo.cli.format import _summary, _summary_table
from zoo.cli.options import _model_name, choices_of, fetch_options
from zoo.cli.table import terminal_width

if TYPE_CHECKING:
    from zoo._api import Zoo
    from zoo.registry.handout import Artifact


@click.command()
@fetch_options
@click.option("--no-build", is_flag=True, help="Fail instead of compiling when nothing is cached or published.")
@click.option("--remote", multiple=True, metavar="REMOTE",
              help="Fetch prebuilt artifacts from here (repeatable; replaces zoo.toml's remotes): hf://ORG/REPO[@REV], a directory, http(s)://…")
@click.option("--trusted-key", "trusted_keys", multiple=True, metavar="KEY.pub",
              type=click.Path(path_type=Path, dir_okay=False),
              help="Only accept prebuilt artifacts signed with this public key (PEM; repeatable; every remote, besides "
                   "zoo.toml's trusted_keys; for the default remote, instead of the project's release key).")
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
               trusted_keys: tuple[Path, ...] = (), any_toolchain: bool = False, offline: bool = False,
               **kw: Any) -> None:
    from zoo._options import FetchOptions, choice_args
    from zoo.cli.progress import StageReporter
    from zoo.registry.skipped import Skipped
    from zoo.registry.store.failures import Failure

    zoo = _zoo(ctx, offline=offline)
    as_json, quiet = kw["as_json"], kw["quiet"]
    if kw["all_models"]:
        if kw["model"]:
            raise UsageError("give a MODEL or --all-models, not both")
        models = [spec.name for spec in zoo.models()]
    else:
        models = [_model_name(ctx, kw["model"])]
    targets = zoo.target_names(kw["target"])
    options = FetchOptions(
        **choice_args(choices_of(kw)), eval_dir=kw["eval_dir"],
        out_dir=kw["out_dir"], header_array=kw["header_name"], header_section=kw["header_section"],
        header_style=kw["header_style"],
        labels_header=kw["labels_header"], overwrite=kw["overwrite"], build=allow_build, force_build=force_build,
        verify=kw["verify"], bundle=kw["bundle"], remotes=remote or None, trusted_keys=trusted_keys, any_toolchain=any_toolchain,
        offline=offline or None, jobs=kw["jobs"], keep_going=kw["keep_going"],
        executor=kw["executor"], ray_address=kw["ray_address"], ray_results=kw["ray_results"],
        shard=_shard(kw["shard"]),
    )
    several = len(models) * len(targets) > 1
    label = f"{zoo.model(models[0]).name} → {zoo.target(targets[0]).name}"
    # A crash in native code (Vela segfaults on some graphs) then says where before zoo dies;
    # --executor processes contains it instead, as a recorded failure.
    with contextlib.suppress(RuntimeError, ValueError, OSError, AttributeError):  # stderr without a file descriptor
        faulthandler.enable()
    with StageReporter(label, enabled=not (quiet or as_json)) as progress:
        outcomes = zoo.fetch_outcomes(models, targets, options, progress=progress,
                                      progress_for=progress.for_label if several else None, notice=notice)
    skipped = [o for o in outcomes if isinstance(o, Skipped)]
    if skipped:
        notice(f"shard {kw['shard']}: skipped {len(skipped)} of {len(outcomes)} request(s); the other shards build them")
    done = [o for o in outcomes if not isinstance(o, Skipped)]
    arts = [o for o in done if not isinstance(o, Failure)]
    failures = [o for o in done if isinstance(o, Failure)]
    for art in arts:
        prefix = f"{art.manifest.model} for {art.manifest.target}: " if len(done) > 1 else ""
        for warning in art.manifest.warnings:
            notice(f"warning: {prefix}{warning}")
        if art.verification is not None and not art.verification.passed:
            for problem in art.verification.problems():
                notice(f"warning: {prefix}failed verification (handed out because of --no-verify): {problem}")
    for failure in failures:
        recorded = " (recorded earlier; 'zoo build' tries again)" if failure.source == "cache" else ""
        notice(f"failed: {failure.model} for {failure.target} at {failure.where}{recorded}: {_first_line(failure.message)}")
    if as_json:
        items = [{"failure": o.to_json()} if isinstance(o, Failure) else o.to_json() for o in done]
        items += [{"skipped": o.to_json()} for o in skipped]
        _dump(items[0] if len(items) == 1 else items)
    else:
        # On a terminal, several artifacts list one .pte each (the summary table says the rest);
        # a pipe gets every file, one per line, for scripts.
        brief = len(arts) > 1 and terminal_width() is not None
        for art in arts:
            click.echo(str(art.pte))
            if brief:
                continue
            click.echo(str(art.header))
            if art.model_asm:
                click.echo(str(art.model_asm))
            if art.io_header and art.io_source:
                click.echo(str(art.io_header))
                click.echo(str(art.io_source))
            if art.labels_header:
                click.echo(str(art.labels_header))
            if art.bundle:
                click.echo(str(art.bundle))
                click.echo(str(art.bundle_header))
        if not quiet and arts:
            one = len(done) == 1
            echo(_summary(arts[0], layouts=zoo.model(arts[0].manifest.model).layouts) if one else _summary_table(done), err=True)
        if brief and not quiet:
            notice("each .pte has its header, .s and I/O helpers beside it; a pipe or --json lists every file")
        if len(outcomes) == 1 and len(arts) == 1 and arts[0].source == "cache":
            _offer_hit(zoo, arts[0], kw["out_dir"])
    if failures:
        raise BuildError(f"{len(failures)} of {len(done)} build(s) failed (listed above)")


def _offer_hit(zoo: Zoo, art: Artifact, out_dir: Path | None) -> None:
    """A hit may be replayed from its snapshot: what it handed out, with the sha256s checked here."""
    from zoo.cli.snapshot import offer
    from zoo.registry.store.cache import sha256_file

    files = [p for p in (art.pte, art.header, art.model_asm, art.io_header, art.io_source, art.labels_header,
                         art.bundle, art.bundle_header) if p]
    if out_dir is None:
        offer([(None, str(p.absolute()), sha256_file(p)) for p in files])
        return
    entry = zoo.cache.entry_path(art.key)
    handouts = []
    for path in [*files, out_dir / "manifest.json"]:
        source, digest = entry / path.name, sha256_file(path)
        if not source.is_file() or sha256_file(source) != digest:
            return  # a header rendered for other names than the stored one: the full command renders it
        handouts.append((str(path.absolute()), str(source.absolute()), digest))
    offer(handouts)


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


def _shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    # Only a sharded run loads the build units.
    from zoo.registry.build_units.shard import parse_shard

    return parse_shard(text)
