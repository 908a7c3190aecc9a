"""Targets, aliases, Vela options and board presets."""

from __future__ import annotations

from pathlib import Path

import pytest

from zoo import UnknownModelError, UnknownTargetError, UsageError
from zoo._config import load_config
from zoo.registry.npu.targets import (
    ACCELERATORS,
    TargetTable,
    family_memory_modes,
    family_system_configs,
)
from zoo.registry.npu.vela_config import _SNAPSHOT, installed_vela_ini, parse_vela_ini, vela_config


@pytest.fixture
def table() -> TargetTable:
    return TargetTable()


def test_accelerators_are_exactly_those_vela_knows() -> None:
    from ethosu.vela.architecture_features import Accelerator

    assert set(ACCELERATORS) == {a.value for a in Accelerator}


@pytest.mark.parametrize(
    ("name", "accelerator"),
    [("u55-128", "ethos-u55-128"), ("U55-128", "ethos-u55-128"), ("u85256", "ethos-u85-256"), ("ethos-u65-512", "ethos-u65-512")],
)
def test_aliases_resolve(table: TargetTable, name: str, accelerator: str) -> None:
    assert table.resolve(name).accelerator == accelerator


@pytest.mark.parametrize(
    ("accelerator", "system_config", "memory_mode"),
    [
        ("ethos-u55-128", "Ethos_U55_High_End_Embedded", "Shared_Sram"),
        ("ethos-u65-256", "Ethos_U65_High_End", "Dedicated_Sram_384KB"),
        ("ethos-u85-256", "Ethos_U85_SYS_DRAM_Mid", "Sram_Only"),
    ],
)
@pytest.mark.stack
def test_defaults_match_executorch(table: TargetTable, accelerator: str, system_config: str, memory_mode: str) -> None:
    from executorch.backends.arm.ethosu import EthosUCompileSpec

    t = table.resolve(accelerator)
    assert (t.system_config, t.memory_mode) == (system_config, memory_mode)
    flags = " ".join(EthosUCompileSpec(accelerator).compiler_flags)
    assert f"--system-config={t.system_config}" in flags and f"--memory-mode={t.memory_mode}" in flags
    assert t.tosa_spec == str(EthosUCompileSpec(accelerator).tosa_spec)


def test_unknown_target_suggests(table: TargetTable) -> None:
    with pytest.raises(UnknownTargetError, match=r"Did you mean: .*u55-128"):
        table.resolve("u55-12")


def test_u55_refuses_dedicated_sram_and_lists_choices(table: TargetTable) -> None:
    with pytest.raises(UsageError) as err:
        table.resolve("u55-128", memory_mode="Dedicated_Sram")
    assert "valid choices: Sram_Only, Shared_Sram" in str(err.value)


def test_wrong_family_system_config_is_refused(table: TargetTable) -> None:
    with pytest.raises(UsageError, match=r"not valid for ethos-u85-256; valid choices: Ethos_U85_"):
        table.resolve("u85-256", system_config="Ethos_U65_High_End")


def test_valid_options_come_from_vela_ini() -> None:
    assert "Dedicated_Sram" not in family_memory_modes("u55")
    assert "Dedicated_Sram_384KB" in family_memory_modes("u65")
    assert family_system_configs("u55") == ["Ethos_U55_Deep_Embedded", "Ethos_U55_High_End_Embedded"]


def test_snapshot_matches_installed_vela() -> None:
    import json

    ini = installed_vela_ini()
    assert ini is not None
    live = parse_vela_ini(ini.read_text(), str(ini))
    snap = json.loads(_SNAPSHOT.read_text())
    assert snap["sha256"] == live.sha256 == vela_config().sha256
    assert snap["system_configs"] == live.system_configs and snap["memory_modes"] == live.memory_modes


def test_imx93_preset_is_the_nxp_flow(table: TargetTable) -> None:
    t = table.resolve("imx93")
    assert (t.accelerator, t.system_config, t.memory_mode, t.board) == ("ethos-u65-256", "Ethos_U65_High_End", "Shared_Sram", "imx93")
    assert t.sram_bytes == 640 * 1024


def test_portable_takes_no_vela_options(table: TargetTable) -> None:
    assert table.resolve("portable").is_portable
    with pytest.raises(UsageError, match="portable"):
        table.resolve("portable", memory_mode="Sram_Only")


def test_boards_from_config(tmp_path: Path) -> None:
    cfg = tmp_path / "zoo.toml"
    cfg.write_text('[boards.lab]\ntarget = "u55-256"\nmemory_mode = "Sram_Only"\nsram = "2 MiB"\n')
    table = TargetTable.from_config(load_config(cfg))
    t = table.resolve("lab")
    assert (t.accelerator, t.memory_mode, t.sram_bytes, t.board) == ("ethos-u55-256", "Sram_Only", 2 * 1024 * 1024, "lab")


def test_board_with_invalid_memory_mode_names_the_file(tmp_path: Path) -> None:
    cfg = tmp_path / "zoo.toml"
    cfg.write_text('[boards.lab]\ntarget = "u55-256"\nmemory_mode = "Dedicated_Sram"\n')
    with pytest.raises(UsageError) as err:
        TargetTable.from_config(load_config(cfg))
    assert str(cfg) in str(err.value) and "board 'lab'" in str(err.value)


def test_slug_marks_non_default_options(table: TargetTable) -> None:
    assert table.resolve("u55-128").slug == "u55-128"
    assert table.resolve("imx93").slug == "u65-256-shared_sram"


def test_a_mistyped_target_or_model_suggests_real_names() -> None:
    from zoo import Zoo

    with pytest.raises(UnknownTargetError, match=r"Did you mean: u55-32, u55-64, u55-128, u55-256\?") as typo:
        Zoo().target("u55")
    assert "u5564" not in str(typo.value) and "u85512" not in str(typo.value)
    with pytest.raises(UnknownModelError, match=r"Did you mean: mobilenet-v3-large, mobilenet-v3-small"):
        Zoo().model("mobilenetv3")
    assert not Zoo().model("mnist").description.startswith("The seeds'")
