"""The boards a firmware project is laid out for, and what every project shares: the sources it
builds from, the CODE it leaves the application, and its templates (``templates/``). Both the
project's files (``project.py``) and its README (``readme.py``) read them.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files as resources

__all__ = ["BOARDS", "CMSIS_COMMIT", "CODE_RESERVE_BYTES", "DRIVER_COMMIT", "EXECUTORCH_COMMIT", "BoardLayout",
           "board_for", "in_qemu", "template", "u85_in_qemu"]

EXECUTORCH_COMMIT = "cff6f4dd32e630945b7188512c1f2b4f102b05ad"
"""The ExecuTorch commit these projects are built and tested against (1.5.0 on its way to release;
its ``schema/program.fbs`` is the 1.5.1 wheel's, which writes zoo's programs)."""
CODE_RESERVE_BYTES = 64 * 1024
"""The CODE (Corstone-300: ITCM) a firmware leaves free for the application around the model: its drivers,
its own logic and signal processing (a keyword spotter's MFCC with CMSIS-DSP, an RTOS). With less left,
the build moves the kernel libraries' code out (code_placement.cmake): ds-cnn-fsdd for portable otherwise
leaves 38,468 B of the 512 KiB ITCM, and mnist 208,572 B. A CMake cache variable, ZOO_CODE_RESERVE."""
DRIVER_COMMIT = "0356707"
CMSIS_COMMIT = "7f62ddc8"


@dataclass(frozen=True)
class BoardLayout:
    name: str
    cpu: str
    """TARGET_CPU for ExecuTorch's build."""
    cpu_flags: str
    cpu_name: str
    cpu_note: str
    npu_base: int | None
    npu_irq: int | None
    sysclk_hz: int
    description: str
    code_region: str
    """The region the board's script aliases as CODE."""
    kernel_regions: str
    """The regions (aliases, in order of preference) the kernel libraries' code may move to when it leaves
    less than CODE_RESERVE_BYTES of CODE; empty where the code runs from flash and nothing copies it."""
    no_move: str = ""
    """Why the kernels never move on this board (with no kernel_regions)."""
    bulk_region: str = "DDR"
    """The region the board's script aliases as BULK (the method pool, planned and input buffers, npu_model's)."""
    bulk_bytes: int = 256 << 20
    """Its length in the board's script."""


BOARDS: dict[str, BoardLayout] = {
    "corstone-300": BoardLayout(
        "corstone-300", "cortex-m55", "-mcpu=cortex-m55", "Cortex-M55", "", 0x48102000, 56, 32_000_000,
        "Arm Corstone-300 (SSE-300, Cortex-M55 with an Ethos-U55 or U65): the FVP Corstone_SSE-300_Ethos-U55/U65 "
        "and the MPS3 AN552 image. QEMU's mps3-an547 has the same memories, without the NPU.",
        "ITCM", "NPU_SRAM BULK"),
    "corstone-320": BoardLayout(
        "corstone-320", "cortex-m85", "-march=armv8.1-m.main+mve.fp+fp.dp", "Cortex-M85",
        "gcc before 13 has no -mcpu=cortex-m85: this builds for Armv8.1-M with MVE and double-precision FP, "
        "the M85's instruction set without its PACBTI or its tuning.", 0x50004000, 16, 32_000_000,
        "Arm Corstone-320 (SSE-320, Cortex-M85 with an Ethos-U85): the FVP Corstone_SSE-320.", "BRAM",
        "NPU_SRAM BULK"),
    "alif-e8": BoardLayout(
        "alif-e8", "cortex-m55", "-mcpu=cortex-m55", "Cortex-M55", "", None, None, 400_000_000,
        "Alif Ensemble E8's M55 cores with their Ethos-U55; memories from Alif's Ensemble device pack. Not run "
        "here: set ZOO_NPU_BASE and ZOO_NPU_IRQ from Alif's board support.", "MRAM", "",
        "the code runs from MRAM, where it is stored, and startup.c copies no code into SRAM", "SRAM1", 0x280000),
}
"""The boards zoo writes a memory map for. A target of another family runs on the Corstone of its NPU."""


def board_for(target_name: str, accelerator: str | None, board: str | None) -> BoardLayout:
    """The board a firmware is laid out for: ``board`` if given, the target's own preset, else the
    Corstone that carries its NPU (the U85's Corstone-320, the rest Corstone-300)."""
    name = board or (target_name if target_name in BOARDS else None)
    if name is None:
        name = "corstone-320" if accelerator and accelerator.startswith("ethos-u85") else "corstone-300"
    if name not in BOARDS:
        raise ValueError(f"zoo has no memory map for board {name!r}; it has {', '.join(BOARDS)}")
    layout = BOARDS[name]
    if accelerator and accelerator.startswith("ethos-u85") != (name == "corstone-320") \
            and not u85_in_qemu(accelerator, layout):
        raise ValueError(f"{accelerator} does not sit on {name}: use "
                         f"{'corstone-320' if accelerator.startswith('ethos-u85') else 'corstone-300'}")
    return layout


def u85_in_qemu(accelerator: str | None, board: BoardLayout) -> bool:
    """Whether this is an Ethos-U85 program laid out for the Corstone-300 (asked for by name): QEMU has no
    Cortex-M85, so the U85's program runs in the Cortex-M55 machine's firmware, on the stand-in's model of the
    NPU. No board carries the pair, so the project builds only with the stand-in."""
    return bool(accelerator and accelerator.startswith("ethos-u85")) and board.name == "corstone-300"


def in_qemu(board: BoardLayout) -> bool:
    """Whether QEMU's mps3-an547 (the Corstone-300's Cortex-M55 and memories, no NPU) runs this board's image."""
    return board.name == "corstone-300"


def template(name: str) -> bytes:
    """A file of ``templates/``."""
    return (resources("zoo.registry.firmware") / "templates" / name).read_bytes()
