"""``zoo firmware``: an artifact as a CMake firmware project that runs it through ExecuTorch's runtime."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from zoo.cli.context import _zoo, notice
from zoo.cli.options import _model_name, choice_options, choices_of


@click.command()
@click.argument("model")
@click.option("-t", "--target", help="Target or board, e.g. u55-128, corstone-320, portable (default: zoo.toml's).")
@click.option("-o", "--output", "out_dir", type=click.Path(path_type=Path, file_okay=False), required=True,
              help="The project's folder: new, empty, or one zoo generated (zoo's files in it are replaced, the "
                   "previous model's removed; build/ and your own files are left alone).")
@click.option("--force", is_flag=True,
              help="Write into a folder zoo did not generate: replace the files there that zoo writes, keep the rest.")
@click.option("--board", type=click.Choice(["corstone-300", "corstone-320", "alif-e8"]), default=None,
              help="The memory map and CPU (default: the target's board, else the Corstone of its NPU). "
                   "corstone-300 for a U85 target runs its program in QEMU's Cortex-M55 on the stand-in's model.")
@click.option("--samples", type=click.IntRange(min=1), default=1, show_default=True,
              help="Evaluation samples the firmware runs (the model's own evaluation set; a sensor model's raw "
                   "windows, through its normalising helper, where it gives them).")
@choice_options
@click.option("--offline", is_flag=True, help="Never touch the network (also ZOO_OFFLINE=1).")
@click.pass_context
def firmware(ctx: click.Context, /, model: str, target: str | None, out_dir: Path, board: str | None, samples: int,
             offline: bool, force: bool, **kw: Any) -> None:
    """Write MODEL's firmware project: ExecuTorch's runtime, its Ethos-U backend and Arm's core driver,
    a main that runs the program on evaluation samples, and a linker script for the board. The build choices
    (--io, --layout, --precision, ...) are zoo fetch's: the project holds the artifact zoo fetch hands out."""
    from zoo._api.firmware import write_firmware
    from zoo._options import FetchOptions, choice_args
    from zoo.registry.firmware.boards import board_for, in_qemu, u85_in_qemu
    from zoo.registry.firmware.readme import STANDIN, U85_IN_QEMU

    zoo = _zoo(ctx, offline=offline)
    name = _model_name(ctx, model)
    (target_name,) = zoo.target_names(target)
    options = FetchOptions(**choice_args(choices_of(kw)), offline=offline or None)
    art, folder = write_firmware(zoo, name, target_name, out_dir, options, board=board, samples=samples,
                                 force=force)
    click.echo(str(folder))
    m = art.manifest
    layout = board_for(m.target, m.target_options.accelerator, board)
    qemu, standin = "", ""
    if int(m.header["macros"].get("delegates") or 0) and in_qemu(layout):
        qemu = f". QEMU has no NPU: to run it there, add -DZOO_NPU_STANDIN=ON, which links {STANDIN}"
        if u85_in_qemu(m.target_options.accelerator, layout):
            qemu, standin = f". It is {U85_IN_QEMU}", " -DZOO_NPU_STANDIN=ON"
    notice(f"{m.model} for {m.target}: firmware project in {folder}; build it with "
           f"cmake -S {folder} -B {folder}/build -G Ninja -DEXECUTORCH_SOURCE_DIR=... -DETHOS_U_DRIVER_DIR=... "
           f"-DCMSIS_DIR=...{standin}{qemu}. See {folder}/README.md")
