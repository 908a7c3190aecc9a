"""Ethos-U targets: accelerators Vela knows, their defaults, and board presets."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from zoo._board import Board
from zoo._errors import ConfigError, UnknownTargetError, UsageError
from zoo.registry.npu.vela_config import VELA_INI, vela_config

if TYPE_CHECKING:
    from zoo._config import Config

PORTABLE = "portable"

# Every accelerator configuration Vela 5 accepts (tests compare with Vela's enum).
ACCELERATORS: tuple[str, ...] = (
    "ethos-u55-32", "ethos-u55-64", "ethos-u55-128", "ethos-u55-256",
    "ethos-u65-256", "ethos-u65-512",
    "ethos-u85-128", "ethos-u85-256", "ethos-u85-512", "ethos-u85-1024", "ethos-u85-2048",
)

# What ExecuTorch's EthosUCompileSpec picks when none is given.
_FAMILY_DEFAULTS = {
    "u55": ("Ethos_U55_High_End_Embedded", "Shared_Sram"),
    "u65": ("Ethos_U65_High_End", "Dedicated_Sram_384KB"),
    "u85": ("Ethos_U85_SYS_DRAM_Mid", "Sram_Only"),
}
_TOSA_SPECS = {
    "u55": "TOSA-1.0+INT+int16+int4+u55",
    "u65": "TOSA-1.0+INT+int16+int4+u55",
    "u85": "TOSA-1.0+INT+int16+int4+cf",
}


BUILTIN_BOARDS: tuple[Board, ...] = (
    Board("corstone-300", "ethos-u55-128", "Ethos_U55_High_End_Embedded", "Shared_Sram",
          description="Arm Corstone-300 (Cortex-M55 + Ethos-U55-128), as in ExecuTorch's tutorial"),
    Board("corstone-320", "ethos-u85-256", "Ethos_U85_SYS_DRAM_Mid", "Sram_Only",
          description="Arm Corstone-320 (Cortex-M85 + Ethos-U85-256), as in ExecuTorch's tutorial"),
    Board("alif-e8", "ethos-u55-128", "Ethos_U55_High_End_Embedded", "Shared_Sram",
          description="Alif Ensemble E8: the Ethos-U55-128 that Arm's learning path targets. The E8 carries other "
                      "NPUs too; alif-e8-u85 is its Ethos-U85-256"),
    Board("alif-e8-u85", "ethos-u85-256", "Ethos_U85_SYS_Flash_High", "Shared_Sram",
          description="Alif Ensemble E8: its Ethos-U85-256, as on the DK-E8 of Arm's Hugging Face model cards; "
                      "weights in flash (MRAM), the arena in SRAM"),
    Board("imx93", "ethos-u65-256", "Ethos_U65_High_End", "Shared_Sram", sram_bytes=640 * 1024,
          description="NXP i.MX93 (Ethos-U65-256; the runtime runs on its Cortex-A55 under Linux), 640 KiB "
                      "on-chip RAM for the NPU (Arm learning path)"),
)


@dataclass(frozen=True)
class Target:
    """A resolved compile target: an accelerator with its Vela options, or ``portable``."""

    name: str
    accelerator: str | None
    system_config: str | None = None
    memory_mode: str | None = None
    board: str | None = None
    sram_bytes: int | None = None
    extra_flags: tuple[str, ...] = ()
    vela_ini: str = VELA_INI
    sram_budget: int | None = None
    """Bytes of SRAM the build must fit: ``--sram-budget``, else the board's SRAM.
    The pipeline then picks the fastest Vela options that fit (see memory_fit.py)."""
    aliases: tuple[str, ...] = field(default=(), compare=False)

    @property
    def family(self) -> str:
        return _family(self.accelerator) if self.accelerator else PORTABLE

    @property
    def macs(self) -> int | None:
        return int(self.accelerator.rsplit("-", 1)[1]) if self.accelerator else None

    @property
    def is_portable(self) -> bool:
        return self.accelerator is None

    @property
    def tosa_spec(self) -> str | None:
        return _TOSA_SPECS[self.family] if self.accelerator else None

    @property
    def slug(self) -> str:
        """Short, file-name-safe label, e.g. ``u55-128`` or ``u65-256-shared_sram``."""
        if self.accelerator is None:
            return PORTABLE
        base = self.accelerator.removeprefix("ethos-")
        sc, mm = _FAMILY_DEFAULTS[self.family]
        parts = [base]
        if self.system_config != sc:
            parts.append(str(self.system_config).lower())
        if self.memory_mode != mm:
            parts.append(str(self.memory_mode).lower())
        return "-".join(parts)

    def key_fields(self) -> dict[str, Any]:
        """Everything about the target that changes the compiled bytes."""
        if self.accelerator is None:
            return {"accelerator": None}
        return {
            "accelerator": self.accelerator,
            "system_config": self.system_config,
            "memory_mode": self.memory_mode,
            "extra_flags": list(self.extra_flags),
            "vela_ini": self.vela_ini,
            "vela_ini_sha256": vela_config().sha256,
            # Only when set, so targets without a budget keep their keys.
            **({"sram_budget": self.sram_budget} if self.sram_budget is not None else {}),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "accelerator": self.accelerator,
            "family": self.family,
            "macs": self.macs,
            "system_config": self.system_config,
            "memory_mode": self.memory_mode,
            "board": self.board,
            "sram_bytes": self.sram_bytes,
            "extra_flags": list(self.extra_flags),
            "sram_budget": self.sram_budget,
            "tosa_spec": self.tosa_spec,
        }


def family_defaults(accelerator: str) -> tuple[str, str]:
    """The system config and memory mode ExecuTorch's compile spec picks for ``accelerator`` when none is given."""
    return _FAMILY_DEFAULTS[_family(accelerator)]


def _family(accelerator: str) -> str:
    m = re.match(r"ethos-(u\d\d)-\d+\Z", accelerator)
    if not m:
        raise UnknownTargetError(f"not an Ethos-U accelerator: {accelerator!r}")
    return m.group(1)


def family_system_configs(family: str) -> list[str]:
    prefix = f"Ethos_{family.upper()}_"
    return [name for name in vela_config().system_configs if name.startswith(prefix)]


def family_memory_modes(family: str) -> list[str]:
    cfg = vela_config()
    return [
        mm for mm in cfg.memory_modes
        if any(cfg.memory_mode_valid(sc, mm) for sc in family_system_configs(family))
    ]


def _aliases(accelerator: str) -> tuple[str, ...]:
    short = accelerator.removeprefix("ethos-")
    return (short, short.replace("-", ""))


def accelerator_of(name: str) -> str | None:
    """The accelerator an accelerator name or alias (any case) names, else None."""
    key = name.strip().lower()
    for acc in ACCELERATORS:
        if key == acc or key in _aliases(acc):
            return acc
    return None


def reserved_name(name: str) -> str | None:
    """Why no board may be called ``name``, or None if one may: the names and
    aliases of accelerators, and ``portable``, already name targets."""
    key = name.strip().lower()
    if key == PORTABLE:
        return f"{name!r} is the portable CPU target"
    acc = accelerator_of(key)
    if acc is None:
        return None
    return f"{name!r} is an accelerator" if key == acc else f"{name!r} is an alias of the accelerator {acc}"


class TargetTable:
    """All targets known to this zoo: accelerators, ``portable`` and boards."""

    def __init__(self, boards: Iterable[Board] = BUILTIN_BOARDS) -> None:
        self.boards: dict[str, Board] = {}
        self.sources: dict[str, str] = {b.name: "built-in" for b in BUILTIN_BOARDS}
        """Where each board preset came from: built-in, a plugin or zoo.toml."""
        self._accelerators: dict[str, str] = {}
        for b in boards:
            why = reserved_name(b.name)
            if why:
                raise UsageError(f"board {b.name!r}: {why}, so a board cannot take that name; rename the board")
            accelerator = accelerator_of(b.target)
            if accelerator is None:
                raise UnknownTargetError(
                    f"board {b.name!r}: target {b.target!r} is not an Ethos-U accelerator; "
                    "give one such as 'ethos-u55-128' or 'u55-128'"
                )
            self.boards[b.name] = b
            self._accelerators[b.name] = accelerator

    @classmethod
    def from_config(cls, config: Config, boards: Iterable[Board] = ()) -> TargetTable:
        """The built-in boards, then ``boards`` (the plugins'), then zoo.toml's;
        a later board replaces an earlier one of the same name."""
        table = {b.name: b for b in (*BUILTIN_BOARDS, *boards)}
        sources = {b.name: "built-in" for b in BUILTIN_BOARDS} | {b.name: "a plugin" for b in boards}
        for b in config.boards:
            key = f"boards.{b.name}"
            why = reserved_name(b.name)
            if why:
                raise ConfigError(
                    f"{config.path}: key '{key}': {why}, so a board cannot take that name; rename the board"
                )
            if not _BOARD_NAME.fullmatch(b.name):
                # --target lower-cases what it is given, so any other name could never be chosen.
                fixed = re.sub(r"[^a-z0-9._-]+", "-", b.name.lower()).strip("-._") or "my-board"
                raise ConfigError(f"{config.path}: key '{key}': a board name is lower-case letters, digits, '-', '_' "
                                  f"and '.' (it is what --target takes); rename it, e.g. [boards.{fixed}]")
            if accelerator_of(b.target) is None:
                raise UnknownTargetError(
                    f"{config.path}: key '{key}.target' must be an Ethos-U accelerator "
                    f"such as 'ethos-u55-128', got {b.target!r}"
                )
            table[b.name] = b
            sources[b.name] = str(config.path or "zoo.toml")
        out = cls(table.values())
        out.sources = sources
        for b in config.boards:
            try:
                out.resolve(b.name)
            except UsageError as e:
                raise type(e)(f"{config.path}: board '{b.name}': {e}") from None
        return out

    def names(self) -> list[str]:
        out = [*ACCELERATORS, PORTABLE, *self.boards]
        for acc in ACCELERATORS:
            out.extend(_aliases(acc))
        return out

    def defaults(self, accelerator: str) -> Target:
        sc, mm = family_defaults(accelerator)
        return Target(accelerator, accelerator, sc, mm, aliases=_aliases(accelerator))

    def all_targets(self) -> list[Target]:
        return [self.resolve(n) for n in (*ACCELERATORS, PORTABLE, *self.boards)]

    def resolve(
        self,
        name: str,
        *,
        system_config: str | None = None,
        memory_mode: str | None = None,
        extra_flags: Iterable[str] = (),
        sram_budget: int | None = None,
    ) -> Target:
        """Turn a user's target name and options into a validated Target."""
        key = name.strip().lower()
        if key == PORTABLE:
            if system_config or memory_mode or sram_budget is not None:
                raise UsageError(
                    "the portable target runs on the CPU and takes no --system-config, --memory-mode or --sram-budget"
                )
            return Target(PORTABLE, None)
        if sram_budget is not None and sram_budget <= 0:
            raise UsageError(f"--sram-budget must be a positive size such as 512KiB, got {sram_budget} bytes")
        board = self.boards.get(key)
        accelerator = self._accelerators[board.name] if board else accelerator_of(key)
        if accelerator is None:
            from zoo.registry.suggest import suggest

            shown = {PORTABLE: PORTABLE, **{b: b for b in self.boards}}
            for acc in ACCELERATORS:
                shown.update({spelling: _aliases(acc)[0] for spelling in (acc, *_aliases(acc))})
            close = suggest(key, shown)
            hint = f" Did you mean: {', '.join(close)}?" if close else ""
            raise UnknownTargetError(
                f"unknown target {name!r}.{hint} Run 'zoo targets' to see them all."
            )
        base = self.defaults(accelerator)
        sc = system_config or (board.system_config if board else None) or base.system_config
        mm = memory_mode or (board.memory_mode if board else None) or base.memory_mode
        assert sc is not None and mm is not None
        _check_vela_options(accelerator, sc, mm)
        return replace(
            base,
            name=board.name if board else accelerator,
            system_config=sc,
            memory_mode=mm,
            board=board.name if board else None,
            sram_bytes=board.sram_bytes if board else None,
            extra_flags=tuple(extra_flags),
            sram_budget=sram_budget if sram_budget is not None else (board.sram_bytes if board else None),
        )


_BOARD_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")


def _check_vela_options(accelerator: str, system_config: str, memory_mode: str) -> None:
    family = _family(accelerator)
    systems = family_system_configs(family)
    if system_config not in systems:
        raise UsageError(
            f"system config {system_config!r} is not valid for {accelerator}; "
            f"valid choices: {', '.join(systems)}"
        )
    cfg = vela_config()
    if not cfg.memory_mode_valid(system_config, memory_mode):
        valid = [m for m in cfg.memory_modes if cfg.memory_mode_valid(system_config, m)]
        raise UsageError(
            f"memory mode {memory_mode!r} is not valid for {accelerator} with {system_config}; "
            f"valid choices: {', '.join(valid)}"
        )

