"""``zoo publish``: add cached artifacts to a remote."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from zoo._errors import UsageError
from zoo.cli.context import _dump, _zoo, echo
from zoo.cli.options import _size

if TYPE_CHECKING:
    from zoo.registry.remotes.index import IndexRecord


@click.command()
@click.argument("model", required=False)
@click.option("-t", "--target", help="Target or board of the cached artifact (default: zoo.toml's default_target, else every cached artifact of MODEL that matches the other options).")
@click.option("--system-config", help="Vela system config (default: the target's).")
@click.option("--memory-mode", help="Vela memory mode (default: the target's).")
@click.option("--sram-budget", metavar="SIZE", help="The SRAM budget the artifact was built for (see 'zoo fetch --help').")
@click.option("--weights", help="Weights variant (see 'zoo info MODEL').")
@click.option("--all", "everything", is_flag=True, help="Publish every artifact in the cache.")
@click.option("--to", "--remote", "to", metavar="REMOTE",
              help="hf://ORG/REPO[@BRANCH] or a directory (default: the first of zoo.toml's remotes).")
@click.option("--sign-key", type=click.Path(path_type=Path, dir_okay=False), metavar="KEY.pem",
              help="Sign each artifact with this elliptic-curve private key (PEM; OpenSSF model-signing) and publish "
                   "the signature beside it; readers that trust the public key check it. Encrypted keys take "
                   "ZOO_SIGN_KEY_PASSWORD.")
@click.option("--release", metavar="TAG", help="Publish as release TAG: one commit on the branch, then the Hub tag TAG "
              "on that commit; refused when TAG already exists, since published releases are immutable.")
@click.option("--site", is_flag=True, help="Then (re)write a browsable site of everything the remote lists in its "
              "_site/ folder, beside index.json (see 'zoo site'). Without MODEL or --all: only the site.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def publish(ctx: click.Context, model: str | None, target: str | None, system_config: str | None,
            memory_mode: str | None, sram_budget: str | None, weights: str | None, everything: bool, to: str | None,
            sign_key: Path | None, release: str | None, site: bool, as_json: bool) -> None:
    """Publish cached artifacts to a remote. Only adds; never replaces a published artifact."""
    if site and not model and not everything:
        if release is not None:
            raise UsageError("--release publishes artifacts: give a MODEL or --all")
        from zoo.cli.site import publish_site

        click.echo(publish_site(_zoo(ctx), to))
        return
    report = _zoo(ctx).publish(to, model=model, target=target, weights=weights, system_config=system_config,
                               memory_mode=memory_mode, sram_budget=_size(sram_budget), everything=everything,
                               sign_key=sign_key, release=release)
    page = None
    if site:
        from zoo.cli.site import publish_site

        page = publish_site(_zoo(ctx), report.remote)
    if as_json:
        _dump({
            "remote": report.remote, "revision": report.revision,
            "added": [_record(r) for r in report.added],
            "already": [_record(r) for r in report.already],
            **({"release": asdict(report.release)} if report.release else {}),
            **({"site": page} if page else {}),
        })
        return
    for r in report.added:
        echo(f"published  {r.model} for {r.target}  {r.key[:12]}  {r.folder}/{_signed(r, sign_key)}")
    for r in report.already:
        echo(f"already    {r.model} for {r.target}  {r.key[:12]}  {r.folder}/{_signed(r, sign_key)}")
    commit = f" in commit {report.revision[:12]}" if report.revision else ""
    echo(f"{len(report.added)} published, {len(report.already)} already there: {report.remote}{commit}", err=True)
    if report.release:
        echo(f"released   {report.release.tag} at commit {report.release.commit[:12]}: {report.release.url}")
    if page:
        echo(f"site       {page}")


def _record(r: IndexRecord) -> dict[str, Any]:
    signature = r.signature
    return {"model": r.model, "target": r.target, "key": r.key, "manifest": r.manifest,
            "signature": None if signature is None else {"file": f"{r.folder}/{signature.name}", "key": signature.key}}


def _signed(r: IndexRecord, sign_key: Path | None) -> str:
    """By which key it is signed; with --sign-key, also that one already there is not."""
    if r.signature is not None:
        return f"  signed by key {(r.signature.key or '?')[:16]}…"
    # Publishing never replaces what is there, so it does not sign it afterwards either.
    return "  unsigned (published earlier without a signature; never replaced)" if sign_key else ""
