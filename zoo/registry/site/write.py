"""The whole site as files, and putting it in place: built complete beside the folder, then swapped in."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from importlib.resources import files as resources
from pathlib import Path

from zoo._errors import UsageError
from zoo._fs import replace_folder
from zoo.registry.site.builds import Site
from zoo.registry.site.index_page import render_index
from zoo.registry.site.markup import Scale, page_name
from zoo.registry.site.model_page import render_model

MARKER = ".zoo-site"
"""A file in every site folder: ``zoo site`` replaces only a folder that has it (or an empty one)."""
_STATIC = ("site.css", "site.js")


def render_site(site: Site, *, target_order: Mapping[str, int],
                columns: Mapping[str, str] | None = None) -> dict[str, bytes]:
    """Every file of the site by its path inside the site folder; the same site gives the same bytes.
    ``columns``: each target name (boards too) → its accelerator, or portable."""
    if columns is not None:
        site = dataclasses.replace(site, columns=columns)
    targets = site.targets(target_order)
    scale = Scale.of(b.time_ms for b in site.builds)
    out = {name: (resources("zoo.registry.site") / "static" / name).read_bytes() for name in _STATIC}
    out["index.html"] = render_index(site, targets, scale).encode("utf-8")
    for model in site.models.values():
        out[f"models/{page_name(model.name)}"] = render_model(site, model, targets, scale).encode("utf-8")
    out[MARKER] = b"Written by zoo site; zoo site replaces this folder as a whole.\n"
    return out


def write_site(folder: Path, files: Mapping[str, bytes]) -> Path:
    """Put the site at ``folder``, replacing the site there before; UsageError for a folder that
    holds anything else (zoo does not delete what it did not write)."""
    folder = Path(folder).absolute()
    here = Path.cwd()
    if folder.is_dir() and (here == folder.resolve() or folder.resolve() in here.parents):
        raise UsageError(f"{folder} is the folder this command runs in (or holds it): zoo site replaces the whole "
                         "folder, and a shell left inside the old one would see it vanish. Run it from outside, "
                         f"e.g. cd {folder.parent} && zoo site {folder.name}")
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{folder} is a file; give zoo site a folder (it writes index.html and models/ in it)")
    if folder.is_dir() and any(folder.iterdir()) and not (folder / MARKER).is_file():
        raise UsageError(f"{folder} is not empty and holds no site zoo wrote ({MARKER} is missing): "
                         "give a new or empty folder, or one zoo site wrote before")
    replace_folder(folder, files)
    return folder
