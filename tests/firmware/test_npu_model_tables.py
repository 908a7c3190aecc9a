"""npu_model.c and npu_model_u55.h carry their own copy of the U55/U65 opcode numbers (the firmware cannot import
Python): every name and number it uses, the opcodes it accepts per product, and the registers it reads as
signed must be those of the host interpreter's table, zoo/registry/command_stream/regs.py."""

from __future__ import annotations

import re
from pathlib import Path

from zoo.registry.command_stream.regs import CMD0, CMD1, SIGNED, U55_ONLY, U65_ONLY

TEMPLATES = Path(__file__).resolve().parents[2] / "zoo" / "registry" / "firmware" / "templates"
SOURCE = (TEMPLATES / "npu_model_u55.h").read_text() + (TEMPLATES / "npu_model.c").read_text()


def _enum() -> dict[str, int]:
    """The register enum's names and values, implicit increments included."""
    body = re.search(r"^enum \{\n(.*?)^\};", SOURCE, re.S | re.M)
    assert body is not None
    text = re.sub(r"/\*.*?\*/", "", body.group(1), flags=re.S)
    out, value = {}, -1
    for item in filter(None, (s.strip() for s in text.split(","))):
        name, _, given = (part.strip() for part in item.partition("="))
        value = int(given) if given else value + 1
        out[name] = value
    return out


def _array(name: str) -> set[int]:
    found = re.search(rf"static const uint16_t {name}\[\] = \{{(.*?)\}};", SOURCE, re.S)
    assert found is not None
    return {int(v) for v in found.group(1).replace("\n", " ").split(",")}


def test_every_register_and_opcode_name_has_the_host_tables_number() -> None:
    for name, value in _enum().items():
        if name.startswith("OP_"):
            assert CMD0.get(value) == f"NPU_{name}", name
        elif value >= 1024:
            assert CMD1.get(value - 1024) == f"NPU_SET_{name}", name
        else:
            assert CMD0.get(value) == f"NPU_SET_{name}", name


def test_the_accepted_opcodes_are_the_host_tables() -> None:
    assert _array("cmd0") == set(CMD0) and _array("cmd1") == set(CMD1)
    u65_only = re.search(r"int u65_only = control \? \((.*?)\) : op == (\w+);", SOURCE)
    u55_only = re.search(r"int u55_only = control && op >= (\d+) && op <= (\d+);", SOURCE)
    assert u65_only is not None and u55_only is not None
    condition = u65_only.group(1).replace("||", " or ").replace("&&", " and ")  # C's, on op: Python reads it alike
    cmd1_u65 = {n for n in CMD1 if eval(condition, {}, {"op": n})}
    assert {CMD1[n] for n in cmd1_u65} | {f"NPU_SET_{u65_only.group(2)}"} == U65_ONLY
    assert {CMD1[n] for n in range(int(u55_only.group(1)), int(u55_only.group(2)) + 1)} == U55_ONLY


def test_the_signed_registers_are_the_host_tables() -> None:
    found = re.search(r"int signed_reg = (.*?);", SOURCE, re.S)
    assert found is not None
    enum = _enum()
    numbers = {int(t) if t.isdigit() else enum[t] for t in re.findall(r"opcode == (\w+)", found.group(1))}
    assert {CMD0[n] for n in numbers} == SIGNED
