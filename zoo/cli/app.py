"""The root ``zoo`` group: global options, errors as exit codes, and every command."""

from __future__ import annotations

import errno
import importlib
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from zoo import _interrupt
from zoo._errors import UnknownModelError, UsageError, ZooError
from zoo.cli.context import notice

# Each command's module is imported only when that command runs (or --help lists it):
# `zoo list` has no use for the fetch, publish or report code.
_COMMANDS = {
    "list": "listing:list_cmd", "info": "listing:info", "targets": "listing:targets", "plugins": "listing:plugins",
    "fetch": "fetching:fetch", "build": "fetching:build", "verify": "verifying:verify_cmd",
    "publish": "publishing:publish", "report": "reporting:report_cmd", "cache": "caching:cache",
    "site": "site:site_cmd", "firmware": "firmware:firmware", "tune": "tuning:tune",
}


def _fail(exc: ZooError) -> NoReturn:
    if _interrupt.received():  # what a Ctrl-C became (a plugin skipped for it): not the command's failure
        _interrupt.exit_interrupted()
    if os.environ.get("ZOO_DEBUG", "").strip().lower() in ("1", "true", "yes", "on"):
        import traceback  # --debug: the traceback behind the one line, a plugin's hook or identity() included

        traceback.print_exception(exc)
    notice(f"error: {exc}")
    sys.exit(exc.exit_code)


class _Group(click.Group):
    """Turns a ZooError from any command into ``zoo: error: …`` and its exit code,
    and an OSError that no layer below turned into one into a line naming its path."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        where = _COMMANDS.get(cmd_name)
        if where is None:
            return None
        module, attribute = where.split(":")
        command: click.Command = getattr(importlib.import_module(f"zoo.cli.{module}"), attribute)
        return command

    def invoke(self, ctx: click.Context) -> Any:
        try:
            result = super().invoke(ctx)
            _interrupt.check()  # one that a library turned into something else, or swallowed
            return result
        except KeyboardInterrupt:
            # 128 + SIGINT, as shells and CI runners expect of a program stopped by Ctrl-C (click says 1).
            _interrupt.exit_interrupted()
        except UnknownModelError as exc:
            _fail(_failed_model_file(ctx, exc) or exc)
        except ZooError as exc:
            _fail(exc)
        except OSError as exc:
            if exc.errno == errno.EPIPE:
                raise  # click handles a closed stdout (`zoo list | head`)
            if _interrupt.received():  # what a Ctrl-C became: not the command's failure
                _interrupt.exit_interrupted()
            paths = " and ".join(str(p) for p in (exc.filename, exc.filename2) if p is not None)
            notice(f"error: {paths + ': ' if paths else ''}{exc.strerror or exc}. "
                   "Check that the path exists and that you may read and write it")
            sys.exit(1)


def _failed_model_file(ctx: click.Context, exc: UnknownModelError) -> ZooError | None:
    """The unknown model is a --model-file's that failed to load: say that instead."""
    from zoo.registry.model_files.py_file import model_name_for

    zoo = (ctx.obj or {}).get("zoo")
    for status in zoo.plugins if zoo is not None else ():
        if status.kind == "model file" and status.status == "error" and \
                f"model {model_name_for(Path(status.name))!r}" in str(exc):
            # The loader's "failed to import: SpecError: " adds nothing to the model file's own message.
            detail = (status.error or "").removeprefix("failed to import: ").removeprefix("SpecError: ")
            return UsageError(detail if detail.startswith("model file ") else f"--model-file {status.name}: {detail}")
    return None


def _version() -> str:
    from zoo import __version__

    return __version__


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(_version(), "--version", prog_name="zoo")
@click.option("-p", "--plugin", "plugins", multiple=True, metavar="MODULE",
              help="Load a plugin module by import path (like pytest -p). Also ZOO_PLUGINS.")
@click.option("--model-file", "model_files", multiple=True, type=click.Path(path_type=Path),
              help="An aot_arm_compiler-style .py file defining ModelUnderTest and ModelInputs, "
                   "an .onnx file (dynamic input dims declared in FILE.onnx.json), or a .tflite file.")
@click.option("--strict", is_flag=True, help="Fail on a broken plugin instead of skipping it. Also ZOO_STRICT_PLUGINS=1.")
@click.option("--config", type=click.Path(path_type=Path, dir_okay=False), help="Use this zoo.toml.")
@click.option("--debug", is_flag=True, help="Show the traceback behind an error, a plugin's included. Also ZOO_DEBUG=1.")
@click.pass_context
def main(ctx: click.Context, plugins: tuple[str, ...], model_files: tuple[Path, ...], strict: bool, config: Path | None,
         debug: bool) -> None:
    """Model zoo for ExecuTorch on Arm Ethos-U NPUs: fetch a verified .pte and C header per NPU configuration."""
    if debug:
        os.environ["ZOO_DEBUG"] = "1"  # the environment, so that build workers see it too
    ctx.obj = {"plugins": list(plugins), "model_files": list(model_files), "strict": strict, "config": config}
