"""npu_standin.c, the driver stand-in of a QEMU firmware, built with the host's gcc under
``-fsanitize=address,undefined`` (tests/firmware/npu_standin_host.c, the driver's types from host_driver/) and
handed crafted Vela payloads: its walk of the blocks and its reading of the I/O records are bounded by the .pte,
in 32-bit arithmetic as on the target (issue 55)."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.command_stream.programs import cmd0, cmd1, cmd_data
from tests.firmware.test_npu_model_host import NPU_MODEL_SOURCES

# slow: the module's first test builds the C sources with the sanitizers, 2 to 4 s on two busy cores.
pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("gcc") is None, reason="no host gcc")]

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE.parents[1] / "zoo" / "registry" / "firmware" / "templates"
LEAD = 64
"""Bytes of the .pte before the payload."""


@pytest.fixture(scope="module")
def standin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("npu_standin") / "npu_standin_host"
    # -Wno-format: the stand-in prints a size_t with %u, which is the target's unsigned int.
    build = subprocess.run(["gcc", "-std=gnu11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-Wno-format",
                            "-fsanitize=address,undefined", "-fno-sanitize-recover=all", f"-I{TEMPLATES}",
                            f"-I{HERE / 'host_driver'}", f"-I{HERE}", str(HERE / "npu_standin_host.c"), *(str(TEMPLATES / f) for f in NPU_MODEL_SOURCES),
                            "-o", str(out)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    return out


def _block(name: str, data: bytes, size: int | None = None) -> bytes:
    head = name.encode().ljust(16, b"\0") + struct.pack("<I", len(data) if size is None else size) + bytes(12)
    return head + data + bytes(-len(data) % 16)


def _io(shape: tuple[int, ...], offset: int) -> bytes:
    return struct.pack("<6iiii", *shape, *[1] * (6 - len(shape)), 1, offset, 1)


def _pte(*, before_cmd: bytes = b"", inputs: bytes | None = None) -> tuple[bytes, dict[str, int]]:
    """A .pte's bytes around one payload: a 16-byte DMA from the weights into the scratch, which is the output."""
    words = cmd0("NPU_SET_DMA0_SRC_REGION", 0) + cmd1("NPU_SET_DMA0_SRC", 0) + cmd0("NPU_SET_DMA0_DST_REGION", 1)
    words += cmd1("NPU_SET_DMA0_DST", 16) + cmd1("NPU_SET_DMA0_LEN", 16) + cmd0("NPU_OP_DMA_START") + cmd0("NPU_OP_STOP")
    cmd, weights = cmd_data(words), bytes(range(100, 116))
    head = bytes(LEAD) + _block("vela_bin_stream", b"") + before_cmd
    at = {"cmd": len(head) + 32, "cmd_size": len(cmd)}
    body = head + _block("cmd_data", cmd)
    at["weights"] = len(body) + 32
    body += _block("weight_data", weights) + _block("scratch_size", struct.pack("<i", 32))
    body += _block("inputs", struct.pack("<i", 1) + _io((1, 16), 0) if inputs is None else inputs)
    body += _block("outputs", struct.pack("<i", 1) + _io((1, 16), 16)) + _block("vela_end_stream", b"")
    return body + bytes(48), at


def _invoke(standin: Path, pte: bytes, at: dict[str, int], tmp_path: Path,
            scratch: int = 32) -> tuple[list[dict[str, Any]], str]:
    """One invoke with a scratch of ``scratch`` bytes (the payload says 32): its records and its last line."""
    (tmp_path / "model.pte").write_bytes(pte)
    done = subprocess.run([str(standin), "invoke", str(tmp_path / "model.pte"), str(at["cmd"]), str(at["cmd_size"]),
                           str(at["weights"]), "16", str(scratch)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and not done.stderr, done.stdout[-2000:] + done.stderr[-3000:]
    lines = done.stdout.splitlines()
    return [json.loads(line.split(" ", 1)[1]) for line in lines if line.startswith("npu_standin {")], lines[-1]


def test_a_payload_the_stand_in_reads_whole(standin: Path, tmp_path: Path) -> None:
    records, last = _invoke(standin, *_pte(), tmp_path)
    assert last == "failures 0" and not any("check_failed" in r for r in records), records
    outputs = next(r["outputs"] for r in records if "outputs" in r)
    assert outputs == [{"offset": 16, "bytes": 16, "region": 1, "in_scratch": 1, "fnv1a": _fnv1a(bytes(range(100, 116)))}]
    assert any(r.get("model") == "computed by zoo's model of the NPU" for r in records)


def _fnv1a(data: bytes) -> str:
    h = 2166136261
    for b in data:
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return f"{h:08x}"


def test_a_block_size_near_2_to_the_32_ends_the_walk(standin: Path, tmp_path: Path) -> None:
    """A block of 0xFFFFFFE0 bytes: its header, rounded up to 16 and added in 32 bits, is a step of 0 (the walk
    never ended); now a block whose data runs past the .pte ends the walk, and the stand-in finds no cmd_data."""
    records, last = _invoke(standin, *_pte(before_cmd=_block("junk", b"", 0xFFFFFFE0)), tmp_path)
    assert {"call": 0, "check_failed": "command stream = cmd_data block"} in records and last != "failures 0"
    assert not any("model" in r for r in records)


def test_an_io_count_the_block_cannot_hold_is_a_failed_check_not_a_read_past_it(standin: Path, tmp_path: Path) -> None:
    """print_ios read as many 36-byte records as the count said (ASan: a read past the .pte)."""
    pte, at = _pte(inputs=struct.pack("<i", 0x7FFFFFFF) + _io((1, 16), 0))
    records, last = _invoke(standin, pte, at, tmp_path)
    assert {"call": 0, "inputs": []} in records and last != "failures 0"
    assert {"call": 0, "check_failed": "inputs", "count": 0x7FFFFFFF, "block_bytes": 40} in records


def test_an_io_size_past_32_bits_is_not_in_the_scratch(standin: Path, tmp_path: Path) -> None:
    """65536 x 65536 bytes: the product wrapped to 0 in 32 bits, and the check called it inside the scratch."""
    records, last = _invoke(standin, *_pte(inputs=struct.pack("<i", 1) + _io((65536, 65536), 0)), tmp_path)
    inputs = next(r["inputs"] for r in records if "inputs" in r)
    assert inputs == [{"offset": 0, "bytes": 1 << 32, "region": 1, "in_scratch": 0, "fnv1a": "00000000"}]
    assert {"call": 0, "check_failed": "inputs"} in records and last != "failures 0"


def test_a_scratch_smaller_than_the_payload_says_is_not_read_past(standin: Path, tmp_path: Path) -> None:
    """The payload's scratch_size is 32 and the backend hands over 16 bytes: a failed check, and the output at 16
    is not hashed (it was: ASan, a read past the scratch)."""
    records, last = _invoke(standin, *_pte(), tmp_path, scratch=16)
    assert {"call": 0, "check_failed": "scratch at least the payload's scratch_size"} in records
    outputs = next(r["outputs"] for r in records if "outputs" in r)
    assert outputs == [{"offset": 16, "bytes": 16, "region": 1, "in_scratch": 0, "fnv1a": "00000000"}]
    assert last != "failures 0" and {"call": 0, "not_run": "a check failed"} in records


@pytest.mark.parametrize(("at", "size", "limit", "after"), [
    (0, 0, 64, 32),
    (0, 1, 64, 48),
    (0, 0xFFFFFFE0, 0xFFFFFFFF, 0),  # the data runs past the limit, however it is rounded
    (16, 0xFFFFFFF1, 0xFFFFFFFF, 0),  # rounded up to 16, the size wraps to 0
    (0xFFFFFF00, 0xC0, 0xFFFFFFFF, 0xFFFFFFE0),
    (0xFFFFFF00, 0xC1, 0xFFFFFFFF, 0xFFFFFFF0),
    (0xFFFFFF00, 0xDF, 0xFFFFFFFF, 0xFFFFFFFF),  # the data fits and its padding does not: the walk ends there
    (0xFFFFFF00, 0xE0, 0xFFFFFFFF, 0),
    (0xFFFFFFF0, 0, 0xFFFFFFFF, 0),  # no room for a header
    (100, 0, 64, 0),
])
def test_the_step_to_the_next_block_is_checked_at_the_32_bit_edges(standin: Path, at: int, size: int, limit: int,
                                                                    after: int) -> None:
    done = subprocess.run([str(standin), "after", str(at), str(size), str(limit)], capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 0 and done.stdout == f"{after}\n", done.stdout + done.stderr
