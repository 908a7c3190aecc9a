"""``zoo verify``: check a model's artifact, or a .pte file from anywhere."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from zoo._errors import UnknownModelError
from zoo._options import IO_MODES, PRECISIONS, choice_args
from zoo._recipe import WEIGHT_TRANSFORMS
from zoo._spec import LAYOUTS
from zoo.cli.context import _dump, _zoo, echo
from zoo.cli.format import verification_lines
from zoo.cli.options import EVAL_DIR_HELP, choices_of


def _names_a_file(ctx: click.Context, arg: str) -> bool:
    """Whether MODEL_OR_PATH is a file; a bare name that is both a file and a model is the model."""

    path = Path(arg)
    if path.suffix in (".pte", ".bpte") or "/" in arg or "\\" in arg:
        return True
    if not path.is_file():
        return False
    try:
        _zoo(ctx).model(arg)
    except UnknownModelError:
        return True
    return False


@click.command("verify")
@click.argument("model_or_path")
@click.option("-t", "--target", help="Target or board. For a .pte file: fail unless it was built for this target.")
@click.option("--system-config", help="Vela system config (default: the target's).")
@click.option("--memory-mode", help="Vela memory mode (default: the target's).")
@click.option("--sram-budget", metavar="SIZE", help="The SRAM budget the artifact was built for (see 'zoo fetch --help').")
@click.option("--io", type=click.Choice(IO_MODES), default=None, help="The I/O mode the artifact was built with (see 'zoo fetch --help').")
@click.option("--layout", type=click.Choice(LAYOUTS), default=None, help="The input layout the artifact was built with.")
@click.option("--precision", metavar="|".join(PRECISIONS) + "|RECIPE", default=None, help="The precision the artifact was built at.")
@click.option("--recipe", type=click.Path(path_type=Path, dir_okay=False), default=None, help="The recipe file the artifact was built with.")
@click.option("--qat", type=click.IntRange(min=0), metavar="STEPS", default=None, help="The quantization-aware training steps the artifact was built with.")
@click.option("--weights-transform", type=click.Choice(list(WEIGHT_TRANSFORMS)), default=None, help="The weight transform the artifact was built with.")
@click.option("--weights", help="Weights variant (see 'zoo info MODEL').")
@click.option("--calibration-dir", type=click.Path(path_type=Path, file_okay=False), help="The calibration folder the artifact was built with.")
@click.option("--eval-dir", type=click.Path(path_type=Path, file_okay=False), help=EVAL_DIR_HELP)
@click.option("--header", "header_path", type=click.Path(path_type=Path, dir_okay=False), help="For a .pte file: the C header to check against it (default: <stem>.h beside it).")
@click.option("--manifest", "manifest_path", type=click.Path(path_type=Path, dir_okay=False), help="For a .pte file: its manifest.json (default: the one beside it).")
@click.option("--structure-only", is_flag=True, help="Do not lower the model again to run the numerical check when the artifact has none recorded.")
@click.option("--no-build", is_flag=True, help="Fail instead of compiling when nothing is cached.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def verify_cmd(ctx: click.Context, /, model_or_path: str, target: str | None, eval_dir: Path | None,
               header_path: Path | None, manifest_path: Path | None,
               structure_only: bool, no_build: bool, as_json: bool, **kw: Any) -> None:
    """Verify MODEL's artifact for a target (structure and numerics), or a .pte file from anywhere (structure).

    The first line says which checks ran; numerics recorded for a file are shown only as this cache
    sealed them for exactly its bytes. Exits with status 1 when a check that ran fails.
    """
    path = Path(model_or_path)
    choices = choices_of(kw)
    budget = choices.sram_budget
    if _names_a_file(ctx, model_or_path):
        from zoo.registry.verify.verification import verify_file

        if not path.is_file():
            raise click.UsageError(f"{path}: no such file")
        if eval_dir is not None:
            raise click.UsageError("--eval-dir needs a MODEL (the numerical check lowers it again), not a .pte file")
        resolved = (_zoo(ctx).target(target, system_config=choices.system_config, memory_mode=choices.memory_mode,
                                   sram_budget=budget)
                    if target else None)
        if resolved is None and budget is not None:
            raise click.UsageError("--sram-budget needs --target for a .pte file (the memory mode decides what sits in SRAM)")
        result = verify_file(path, target=resolved, manifest_path=manifest_path, header_path=header_path,
                             cache=_zoo(ctx).cache)
    else:
        from zoo.cli.progress import StageReporter

        zoo = _zoo(ctx)
        request = zoo.request(model_or_path, target, **choice_args(choices))
        with StageReporter(f"{request.spec.name} → {request.target.name}", enabled=not as_json) as progress:
            result = zoo.verify(model_or_path, target, **choice_args(choices), eval_dir=eval_dir,
                                numerics=not structure_only, build=not no_build, progress=progress)
    if as_json:
        _dump(result.to_json())
    else:
        echo("\n".join(verification_lines(result)))
    if not result.passed:
        sys.exit(1)
