"""The torch-free .pte reader: its field ids follow the installed schema, and it reports damage precisely."""

from __future__ import annotations

import importlib.util
import re
import struct
from pathlib import Path

import pytest

from zoo.registry.pte import pte_structure as ps
from zoo.registry.pte.vela_payload import PayloadError, parse_payload


def _installed_schema(name: str) -> str:
    spec = importlib.util.find_spec("executorch")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("executorch is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / "exir" / "_serialize" / name
    return path.read_text()


def _field_ids(schema: str) -> dict[str, dict[str, int]]:
    """Field ids per table, as flatc numbers them: declaration order, a union field takes two."""
    text = re.sub(r"//[^\n]*", "", schema)
    unions = set(re.findall(r"\bunion\s+(\w+)", text))
    tables: dict[str, dict[str, int]] = {}
    for name, body in re.findall(r"\btable\s+(\w+)\s*\{(.*?)\}", text, re.S):
        ids: dict[str, int] = {}
        next_id = 0
        for field, ftype in re.findall(r"(\w+)\s*:\s*\[?\s*(\w+)", body):
            if ftype in unions:
                ids[f"{field}_type"] = next_id
                next_id += 1
            ids[field] = next_id
            next_id += 1
        tables[name] = ids
    return tables


@pytest.mark.parametrize(("table", "ours"), [
    ("Program", ps.PROGRAM), ("ExecutionPlan", ps.EXECUTION_PLAN), ("EValue", ps.EVALUE),
    ("Tensor", ps.TENSOR), ("Operator", ps.OPERATOR), ("Chain", ps.CHAIN), ("Instruction", ps.INSTRUCTION),
    ("KernelCall", ps.KERNEL_CALL), ("DelegateCall", ps.DELEGATE_CALL), ("BackendDelegate", ps.BACKEND_DELEGATE),
    ("BackendDelegateDataReference", ps.DELEGATE_DATA_REFERENCE), ("CompileSpec", ps.COMPILE_SPEC),
    ("BackendDelegateInlineData", ps.INLINE_DATA), ("DataSegment", ps.DATA_SEGMENT), ("NamedData", ps.NAMED_DATA),
    ("SubsegmentOffsets", ps.SUBSEGMENT_OFFSETS),
])
def test_field_ids_match_the_installed_schema(table: str, ours: dict[str, int]) -> None:
    schema = _field_ids(_installed_schema("program.fbs"))
    assert {k: schema[table][k] for k in ours} == ours


def test_union_members_and_scalar_types_match_the_installed_schema() -> None:
    text = re.sub(r"//[^\n]*", "", _installed_schema("program.fbs"))
    for union, ours in (("KernelTypes", ps.KERNEL_TYPES), ("InstructionArguments", ps.INSTRUCTION_ARGUMENTS)):
        body = re.search(rf"union\s+{union}\s*\{{(.*?)\}}", text, re.S)
        assert body is not None
        assert ("NONE", *re.findall(r"(\w+)", body.group(1))) == ours
    assert 'file_identifier "ET12"' in text
    scalars = dict(re.findall(r"(\w+)\s*=\s*(\d+)", re.sub(r"//[^\n]*", "", _installed_schema("scalar_type.fbs"))))
    assert {int(v) for v in scalars.values()} == set(ps.SCALAR_TYPES)
    assert ps.SCALAR_TYPES[int(scalars["FLOAT"])] == ("float32", 4)
    assert ps.SCALAR_TYPES[int(scalars["CHAR"])] == ("int8", 1)


@pytest.mark.parametrize(("data", "message"), [
    (b"", "only 0 bytes"),
    (b"\x10\x00\x00\x00PK\x03\x04" + bytes(40), "bytes 4..8 are b'PK\\x03\\x04', a .pte has b'ET12' there"),
    (b"\x10\x00\x00\x00ET12eh00" + struct.pack("<IQQQ", 32, 5000, 5008, 100), "the program flatbuffer is 5,000 bytes, but the file is only 40 bytes"),
    (b"\xf0\x00\x00\x00ET12" + bytes(8), "outside its 16 bytes (a truncated file looks like this)"),
])
def test_damaged_files_are_named_precisely(data: bytes, message: str) -> None:
    with pytest.raises(ps.PteFormatError) as info:
        ps.read_pte(data)
    assert message in str(info.value)


def _block(name: str, data: bytes, external: bool = False) -> bytes:
    header = name.encode().ljust(16, b"\0") + struct.pack("<IB11x", len(data), int(external))
    return header + data + bytes(-len(data) % 16)


def _io(shape: tuple[int, ...], elem: int = 1) -> bytes:
    return struct.pack("<i", 1) + struct.pack("<6iiii", *((1,) * (6 - len(shape)) + shape), elem, 0, 1)


def test_vela_payload_blocks_are_parsed_within_their_delegate_data() -> None:
    payload = b"".join([
        _block("vela_bin_stream", b""), _block("cmd_data", b"COP1" + bytes(12)), _block("weight_data", bytes(5)),
        _block("scratch_size", struct.pack("<I", 1024)), _block("inputs", _io((28, 28, 1))),
        _block("outputs", _io((10,))), _block("vela_end_stream", b""),
    ])
    p = parse_payload(payload + b"trailing", 0, len(payload))
    assert p.blocks[0] == "vela_bin_stream" and p.blocks[-1] == "vela_end_stream"
    assert p.command_stream_magic == b"COP1" and p.scratch_size == 1024 and p.length == len(payload)
    assert p.inputs[0].shape == (28, 28, 1) and p.inputs[0].elements == 784 and p.outputs[0].elements == 10
    with pytest.raises(PayloadError, match=r"block 'outputs' at byte \d+ \(40 bytes\) runs past the end of its payload"):
        parse_payload(payload, 0, len(payload) - 32 - 10)
    with pytest.raises(PayloadError, match=r"cut off at byte .* before vela_end_stream"):
        parse_payload(payload, 0, len(payload) - 16)
