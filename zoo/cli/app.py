"""The root ``zoo`` group: global options, errors as exit codes, and every command."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from zoo._errors import ZooError
from zoo.cli import caching, fetching, listing, publishing, reporting, verifying
from zoo.cli.context import notice


def _fail(exc: ZooError) -> NoReturn:
    notice(f"error: {exc}")
    sys.exit(exc.exit_code)


class _Group(click.Group):
    """Turns a ZooError from any command into ``zoo: error: …`` and its exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ZooError as exc:
            _fail(exc)


def _version() -> str:
    from zoo import __version__

    return __version__


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(_version(), "--version", prog_name="zoo")
@click.option("-p", "--plugin", "plugins", multiple=True, metavar="MODULE",
              help="Load a plugin module by import path (like pytest -p). Also ZOO_PLUGINS.")
@click.option("--model-file", "model_files", multiple=True, type=click.Path(path_type=Path),
              help="An aot_arm_compiler-style .py file defining ModelUnderTest and ModelInputs.")
@click.option("--strict", is_flag=True, help="Fail on a broken plugin instead of skipping it. Also ZOO_STRICT_PLUGINS=1.")
@click.option("--config", type=click.Path(path_type=Path, dir_okay=False), help="Use this zoo.toml.")
@click.pass_context
def main(ctx: click.Context, plugins: tuple[str, ...], model_files: tuple[Path, ...], strict: bool, config: Path | None) -> None:
    """Model zoo for ExecuTorch on Arm Ethos-U NPUs: fetch a verified .pte and C header per NPU configuration."""
    ctx.obj = {"plugins": list(plugins), "model_files": list(model_files), "strict": strict, "config": config}


for _command in (
    listing.list_cmd, listing.info, listing.targets, listing.plugins, fetching.fetch, fetching.build,
    verifying.verify_cmd, publishing.publish, reporting.report_cmd, caching.cache,
):
    main.add_command(_command)
