"""``Zoo.firmware``: an artifact handed out as a firmware project (``zoo.registry.firmware.project``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from zoo._errors import UsageError

if TYPE_CHECKING:
    from zoo._api import Zoo
    from zoo._options import FetchOptions
    from zoo.registry.handout import Artifact


def write_firmware(zoo: Zoo, model: str, target: str | None, out_dir: Path, options: FetchOptions, *,
                   board: str | None = None, samples: int = 1, force: bool = False) -> tuple[Artifact, Path]:
    """Fetch ``model`` for ``target`` and write its firmware project into ``out_dir``; the
    artifact, and the folder. UsageError for what the project cannot take, and for an ``out_dir``
    that holds files zoo did not write (unless ``force``: see ``zoo.registry.firmware.folder``)."""
    from dataclasses import replace

    from zoo._fs import not_a_folder
    from zoo.registry.firmware.boards import board_for
    from zoo.registry.firmware.folder import write_project
    from zoo.registry.firmware.project import render_project
    from zoo.registry.numerics.samples import firmware_samples

    blocker = not_a_folder(out_dir)
    if blocker is not None:
        raise UsageError(f"-o {out_dir}: {blocker} is not a folder; give a folder for the project")
    if samples < 1:
        raise UsageError("--samples must be at least 1")
    art = zoo.fetch(model, target, replace(options, out_dir=None))
    m = art.manifest
    header = m.header
    if header.get("style") != "split" or art.model_asm is None or art.io_header is None or art.io_source is None:
        raise UsageError(f"{m.model} for {m.target} has no split header with I/O helpers (an artifact from before "
                         "them): rebuild it with zoo build")
    if (m.io or {}).get("mode") == "pixels":
        raise UsageError("--io pixels takes raw camera bytes, and the evaluation samples are normalised floats: "
                         "build the firmware of the float or int8 variant")
    try:
        layout = board_for(m.target, m.target_options.accelerator, board)
        fed = firmware_samples(zoo.model(m.model), m.io or {}, samples)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    stem = art.header.name[:-2]
    files = {p.name: p.read_bytes() for p in (art.pte, art.header, art.model_asm, art.io_header, art.io_source)}
    try:
        project = render_project(stem=stem, macros=header["macros"], array=str(header["array"]), model_files=files,
                                 samples=fed, board=layout, runtime_cache=zoo.cache_dir / "firmware-runtime")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    about = {"model": m.model, "target": m.target, "board": layout.name, "key": m.key}
    write_project(out_dir, project, force=force, about=about)
    return art, out_dir
