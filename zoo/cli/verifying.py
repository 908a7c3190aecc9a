"""``zoo verify``: check a model's artifact, or a .pte file from anywhere."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from zoo.cli.context import _dump, _zoo
from zoo.cli.format import verification_lines
from zoo.cli.options import EVAL_DIR_HELP, _size

if TYPE_CHECKING:
    from zoo.registry.cache import Cache, Entry
    from zoo.registry.keys import BuildRequest


def _manifest_sram(path: Path) -> int | None:
    """Vela's SRAM figure in the manifest ``verify_file`` used (it has read it once already)."""
    from zoo.registry.manifest import Manifest

    total = Manifest.loads(path.read_text(encoding="utf-8")).vela_total
    return total.sram_bytes if total else None


def _cached(cache: Cache, request: BuildRequest) -> Entry | None:
    """The entry ``zoo.verify`` just checked, for the budget check."""
    from zoo._errors import MissingExtraError

    try:
        return cache.get(request.key())
    except MissingExtraError:  # a light install verified a download it cannot key; the budget is not checked
        return None


def _names_a_file(ctx: click.Context, arg: str) -> bool:
    """Whether MODEL_OR_PATH is a file; a bare name that is both a file and a model is the model."""
    from zoo._errors import UnknownModelError

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
@click.option("--weights", help="Weights variant (see 'zoo info MODEL').")
@click.option("--calibration-dir", type=click.Path(path_type=Path, file_okay=False), help="The calibration folder the artifact was built with.")
@click.option("--eval-dir", type=click.Path(path_type=Path, file_okay=False), help=EVAL_DIR_HELP)
@click.option("--header", "header_path", type=click.Path(path_type=Path, dir_okay=False), help="For a .pte file: the C header to check against it (default: <stem>.h beside it).")
@click.option("--manifest", "manifest_path", type=click.Path(path_type=Path, dir_okay=False), help="For a .pte file: its manifest.json (default: the one beside it).")
@click.option("--structure-only", is_flag=True, help="Do not lower the model again to run the numerical check when the artifact has none recorded.")
@click.option("--no-build", is_flag=True, help="Fail instead of compiling when nothing is cached.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def verify_cmd(ctx: click.Context, model_or_path: str, target: str | None, system_config: str | None, memory_mode: str | None,
               sram_budget: str | None, weights: str | None, calibration_dir: Path | None, eval_dir: Path | None,
               header_path: Path | None, manifest_path: Path | None,
               structure_only: bool, no_build: bool, as_json: bool) -> None:
    """Verify MODEL's artifact for a target (structure and numerics), or a .pte file from anywhere (structure).

    Exits with status 1 when a check fails.
    """
    from zoo.registry.memory_fit import check_budget

    path = Path(model_or_path)
    budget = _size(sram_budget)
    if _names_a_file(ctx, model_or_path):
        from zoo.registry.verification import verify_file

        if not path.is_file():
            raise click.UsageError(f"{path}: no such file")
        if eval_dir is not None:
            raise click.UsageError("--eval-dir needs a MODEL (the numerical check lowers it again), not a .pte file")
        resolved = (_zoo(ctx).target(target, system_config=system_config, memory_mode=memory_mode, sram_budget=budget)
                    if target else None)
        if resolved is None and budget is not None:
            raise click.UsageError("--sram-budget needs --target for a .pte file (the memory mode decides what sits in SRAM)")
        result = verify_file(path, target=resolved, manifest_path=manifest_path, header_path=header_path)
        if resolved is not None and resolved.sram_budget is not None and result.checks[0].passed:
            vela_sram = _manifest_sram(manifest_path or path.parent / "manifest.json") if result.artifact else None
            result.checks.append(check_budget(path.read_bytes(), resolved, vela_sram_bytes=vela_sram))
    else:
        from zoo.cli.progress import StageReporter

        zoo = _zoo(ctx)
        request = zoo.request(model_or_path, target, weights=weights, calibration_dir=calibration_dir,
                              system_config=system_config, memory_mode=memory_mode, sram_budget=budget)
        with StageReporter(f"{request.spec.name} → {request.target.name}", enabled=not as_json) as progress:
            result = zoo.verify(model_or_path, target, weights=weights, calibration_dir=calibration_dir, eval_dir=eval_dir,
                                system_config=system_config, memory_mode=memory_mode, sram_budget=budget,
                                numerics=not structure_only, build=not no_build, progress=progress)
        entry = _cached(zoo.cache, request) if request.target.sram_budget is not None else None
        if entry is not None and (pte := entry.file("pte")) is not None:
            total = entry.manifest.vela_total
            result.checks.append(check_budget(pte.read_bytes(), request.target,
                                              vela_sram_bytes=total.sram_bytes if total else None))
    if as_json:
        _dump(result.to_json())
    else:
        click.echo("\n".join(verification_lines(result)))
    if not result.passed:
        sys.exit(1)
