"""Vela's own system configs and memory modes, read from the installed
``Arm/vela.ini`` (or, on a light install without Vela, from a snapshot of it
taken by ``scripts/snapshot_vela_config.py``)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

VELA_INI = "Arm/vela.ini"
_SNAPSHOT = Path(__file__).with_name("data") / "vela_config.json"


@dataclass(frozen=True)
class VelaConfig:
    sha256: str
    """Digest of the vela.ini text; part of every build key."""
    system_configs: dict[str, dict[str, str]]
    memory_modes: dict[str, dict[str, str]]
    source: str

    def memory_mode_valid(self, system_config: str, memory_mode: str) -> bool:
        """The checks Vela applies when it resolves the memory areas."""
        sc = self.system_configs.get(system_config)
        mm = self.memory_modes.get(memory_mode)
        if sc is None or mm is None:
            return False
        ports = {"Axi0": sc.get("axi0_port", "Sram"), "Axi1": sc.get("axi1_port", "OffChipFlash")}
        const = ports[mm.get("const_mem_area", "Axi1")]
        arena = ports[mm.get("arena_mem_area", "Axi0")]
        cache_area = ports[mm.get("cache_mem_area", "Axi0")]
        if const == "Sram" and mm.get("const_mem_area") == mm.get("arena_mem_area") == mm.get("cache_mem_area"):
            const = "OnChipFlash"  # Vela moves constants off SRAM in this case
        return (
            const in ("Dram", "OnChipFlash", "OffChipFlash")
            and arena in ("Sram", "Dram")
            and cache_area == "Sram"
        )

    def arena_cache_size(self, memory_mode: str) -> int | None:
        value = self.memory_modes.get(memory_mode, {}).get("arena_cache_size")
        return int(value) if value is not None else None


def installed_vela_ini() -> Path | None:
    spec = importlib.util.find_spec("ethosu")
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        candidate = Path(root) / "config_files" / VELA_INI
        if candidate.is_file():
            return candidate
    return None


def parse_vela_ini(text: str, source: str) -> VelaConfig:
    import configparser  # only where Vela itself is installed

    parser = configparser.ConfigParser()
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(text)
    systems: dict[str, dict[str, str]] = {}
    modes: dict[str, dict[str, str]] = {}
    for section in parser.sections():
        kind, _, name = section.partition(".")
        values = dict(parser[section])
        if kind == "System_Config":
            systems[name] = values
        elif kind == "Memory_Mode":
            modes[name] = values
    for name, values in list(modes.items()):
        parent = values.get("inherit")
        if parent:
            base = dict(modes.get(parent.partition(".")[2], {}))
            base.update({k: v for k, v in values.items() if k != "inherit"})
            modes[name] = base
    digest = hashlib.sha256(text.encode()).hexdigest()
    return VelaConfig(digest, systems, modes, source)


@cache
def vela_config() -> VelaConfig:
    ini = installed_vela_ini()
    if ini is not None:
        return parse_vela_ini(ini.read_text(encoding="utf-8"), str(ini))
    data = json.loads(_SNAPSHOT.read_text(encoding="utf-8"))
    return VelaConfig(data["sha256"], data["system_configs"], data["memory_modes"], f"snapshot of Vela {data['vela_version']}")
