"""``zoo site DIR``: the catalogue as a static site, from the local cache or a remote's index;
and the site ``zoo publish --site`` puts beside a remote's ``index.json``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from zoo._errors import UsageError
from zoo.cli.context import _zoo, notice

if TYPE_CHECKING:
    from zoo._api import Zoo
    from zoo.registry.remotes.base import Remote
    from zoo.registry.site.builds import Site


def _remote(zoo: Zoo, url: str | None) -> Remote:
    from zoo.registry.remotes import parse_remote

    if url:
        remote = parse_remote(url, schemes=zoo.registry.remote_schemes)
    elif zoo.config.remotes:
        remote = zoo.remotes()[0]
    else:
        raise UsageError("say which remote: --remote URL (hf://ORG/REPO, s3://BUCKET/PREFIX, https://…, a directory), "
                         "or set remotes in zoo.toml")
    if remote.network and zoo.config.offline:
        raise UsageError(f"offline mode is on (offline in zoo.toml or ZOO_OFFLINE): cannot read {remote}")
    return remote


def _summary(site: Site) -> str:
    return f"{len(site.models)} models, {len(site.builds)} builds, {len(site.failures)} failed, from {site.source}"


def _render(zoo: Zoo, site: Site) -> dict[str, bytes]:
    from zoo.registry.site.write import render_site

    targets = zoo.targets.all_targets()
    order = {t.name: i for i, t in enumerate(targets)}
    return render_site(site, target_order=order, columns={t.name: t.accelerator or "portable" for t in targets})


def publish_site(zoo: Zoo, url: str | None) -> str:
    """Render the site from the remote's index as it is now and put it in the remote's ``_site/``;
    where a browser finds it."""
    from zoo.registry.site import SITE_FOLDER
    from zoo.registry.site.sources import from_index, relative_links

    remote = _remote(zoo, url)
    index = remote.read_index()
    if not len(index):
        raise UsageError(f"{remote} lists no artifacts yet: publish some first (zoo publish MODEL -t TARGET --site)")
    site = from_index(index, remote, {s.name: s for s in zoo.models()}, href=relative_links, say=notice)
    remote.put_site(SITE_FOLDER, _render(zoo, site), say=notice)
    notice(f"site: {_summary(site)}")
    return remote.public_url(f"{SITE_FOLDER}/index.html") or f"{remote}/{SITE_FOLDER}/index.html"


@click.command("site")
@click.argument("folder", type=click.Path(path_type=Path, file_okay=False))
@click.option("--remote", metavar="REMOTE", help="Make it from this remote's index.json (hf://ORG/REPO, s3://BUCKET/"
              "PREFIX, https://…, a directory) instead of the local cache: every file gets its sha256 and, where "
              "the remote has web addresses, a download link.")
@click.pass_context
def site_cmd(ctx: click.Context, folder: Path, remote: str | None) -> None:
    """Write the catalogue as a static site in FOLDER: an index page grouped by task (heat map, a sortable table
    of every build, what failed) and a page per model (inputs, weights and licence, a chart and a table per target,
    the zoo fetch line of every build). Self-contained: open FOLDER/index.html, or serve the folder. From a
    remote, FOLDER also gets its index.json."""
    from zoo.registry.remotes.index import INDEX
    from zoo.registry.site.sources import from_cache, from_index
    from zoo.registry.site.write import write_site

    zoo = _zoo(ctx)
    specs = {s.name: s for s in zoo.models()}
    extra: dict[str, bytes] = {}
    if remote is not None:
        where = _remote(zoo, remote)
        index = where.read_index()
        site = from_index(index, where, specs, say=notice)
        if not site.models:
            raise UsageError(f"{where} lists no artifacts: nothing to show")
        extra[INDEX] = index.dumps().encode()  # the table of contents a release attaches, as read and checked
    else:
        site = from_cache(zoo.cache, specs, say=notice)
        if not site.models:
            raise UsageError("nothing cached: run 'zoo fetch --all-models --target all --keep-going' first, "
                             "or give --remote REMOTE")
    write_site(folder, {**_render(zoo, site), **extra})
    notice(_summary(site))
    click.echo(str(folder / "index.html"))
