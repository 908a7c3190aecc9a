"""The "NPU program" level of the Ethos-U check (numerics/npu_program.py) on hand-built Vela payloads:
its three outcomes, the record and the lines ``zoo fetch`` and ``zoo verify`` print from it."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from tests.command_stream.programs import U55_128, cmd0, cmd1, cmd_data
from zoo.cli.format import _verification_line, npu_program_line, verification_lines
from zoo.registry.checks import Check
from zoo.registry.npu.memory_fit import fast_scratch
from zoo.registry.npu.targets import TargetTable
from zoo.registry.numerics.npu_program import NpuProgram, with_level
from zoo.registry.verify.verification import Verification

U85_256 = (2 << 28) | (U55_128 & 0x0FFFFFF0) | 8


def _block(name: str, data: bytes) -> bytes:
    return name.encode().ljust(16, b"\0") + struct.pack("<I", len(data)) + bytes(12) + data + bytes(-len(data) % 16)


def _tensors(*offsets: int, size: int = 16) -> bytes:
    return struct.pack("<i", len(offsets)) + b"".join(struct.pack("<6iiii", 1, 1, 1, 1, 1, size, 1, o, 1) for o in offsets)


def _processed(words: list[int], config: int = U55_128) -> bytes:
    """A delegate's processed bytes: a Vela payload whose 16-byte input is at 0 and output at 64 of the scratch."""
    return b"".join([
        _block("vela_bin_stream", b""), _block("cmd_data", cmd_data(words, config)), _block("weight_data", b""),
        _block("scratch_size", struct.pack("<i", 128)), _block("inputs", _tensors(0)), _block("outputs", _tensors(64)),
        _block("vela_end_stream", b""),
    ])


# The input copied to the output by one DMA: the program computes the identity.
COPY = (cmd0("NPU_SET_DMA0_SRC_REGION", 1) + cmd1("NPU_SET_DMA0_SRC", 0) + cmd0("NPU_SET_DMA0_DST_REGION", 1)
        + cmd1("NPU_SET_DMA0_DST", 64) + cmd1("NPU_SET_DMA0_LEN", 16) + cmd0("NPU_OP_DMA_START")
        + cmd0("NPU_OP_DMA_WAIT") + cmd0("NPU_OP_STOP", 0xFFFF))
SAMPLE = np.arange(-8, 8, dtype=np.int8)
ARGMAX = [5 | 6 << 16, *cmd0("NPU_OP_STOP", 0xFFFF)]  # NPU_OP_POOL ARGMAX_X: a U85 mode its interpreter does not model


def _run(level: NpuProgram, processed: bytes, samples: int, reference: np.ndarray = SAMPLE) -> NpuProgram:
    for i in range(samples):
        level.start_sample(i)
        level.delegate_call(processed, [SAMPLE], [reference])
        level.delegate_call(processed, [SAMPLE], [reference])  # a second delegate in the same sample
    return level


def test_an_equal_program_passes_on_the_first_samples_only() -> None:
    level = _run(NpuProgram(samples=3), _processed(COPY), samples=5)
    check = level.check()
    assert check == {"name": "npu_program", "passed": True, "skipped": False, "detail": (
        "NPU program (command-stream interpreter, a stand-in for the NPU): bit-exact with the TOSA reference "
        "model on 3 samples (the first 3 at most), 6 delegate calls")}
    assert level.record()["outcome"] == "passed" and level.record()["samples"] == 3


def test_a_differing_output_fails_with_its_first_element() -> None:
    reference = SAMPLE.copy()
    reference[5] = 77
    level = _run(NpuProgram(), _processed(COPY), samples=2, reference=reference)
    check = level.check()
    assert not check["passed"] and not check["skipped"]
    assert ("differs from the TOSA reference model at sample 0, delegate call 0, output 0, element 5: "
            "interpreter -3, TOSA reference model 77 (last written by DMA_START at byte 0x20 writing its "
            "destination)") in check["detail"]
    assert level.calls == 1  # it stops at the first difference
    assert level.record()["first_difference"] == {"sample": 0, "delegate_call": 0, "output": 0, "element": 5,
                                                   "interpreter": -3, "reference": 77,
                                                   "written_by": "DMA_START at byte 0x20 writing its destination",
                                                   "in_program": True}


def test_an_output_vela_dropped_fails_as_unwritten_and_the_others_pair_by_size() -> None:
    """LRASPP's case (tests/lost_output_model.py): the TOSA graph has two outputs, Vela's program one.
    The program's output pairs with the graph's of its size; the other is written by nothing."""
    dropped = np.concatenate([np.zeros(3, dtype=np.int8), np.full(29, 9, dtype=np.int8)])
    level = NpuProgram()
    level.start_sample(0)
    level.delegate_call(_processed(COPY), [SAMPLE], [dropped, SAMPLE])
    check = level.check()
    assert not check["passed"]
    assert ("at sample 0, delegate call 0, output 0, element 3: interpreter 0, TOSA reference model 9 "
            "(Vela's program has no such output: nothing writes it)") in check["detail"]
    first = level.record()["first_difference"]
    assert (first["in_program"], first["written_by"]) == (False, None)

    kept = NpuProgram()
    kept.start_sample(0)
    kept.delegate_call(_processed(COPY), [SAMPLE], [np.zeros(32, dtype=np.int8), SAMPLE])
    assert kept.check()["passed"]  # what no command writes stays zero, which is what this graph computes

    unmatched = NpuProgram()
    unmatched.start_sample(0)
    unmatched.delegate_call(_processed(COPY), [SAMPLE], [np.zeros(32, dtype=np.int8)])
    assert ("could not run Vela's program: sample 0, delegate call 0: Vela's program has outputs of [16] elements, "
            "which do not follow the TOSA graph's [32]") in unmatched.check()["detail"]


def test_a_command_it_does_not_model_skips_the_level_and_passes() -> None:
    words = cmd0("NPU_OP_CONV", 1) + cmd0("NPU_OP_STOP", 0xFFFF)
    check = _run(NpuProgram(), _processed(words), samples=2).check()
    assert check["passed"] and check["skipped"]
    assert check["detail"] == ("NPU program (command-stream interpreter, a stand-in for the NPU): skipped, not "
                               "implemented: CONV at byte 0x0 with parameter 0x1; a skipped level does not fail the build")


def test_a_u85_program_runs_on_the_u85_interpreter() -> None:
    """The level picks the interpreter by config_r's product: the same copy on the U85's (its DMA opcodes are
    the U55's), and what that one does not model (an ARGMAX pool) skips the level."""
    level = _run(NpuProgram(), _processed(COPY, U85_256), samples=2)
    assert level.check()["passed"] and level.record()["outcome"] == "passed" and level.calls == 4  # two a sample
    skipped = _run(NpuProgram(), _processed(ARGMAX, U85_256), samples=1)
    assert skipped.check()["passed"] and skipped.record()["outcome"] == "skipped"
    assert skipped.skipped == "not implemented: POOL ARGMAX_X"


def test_a_program_that_reaches_past_its_memory_fails() -> None:
    words = COPY[:6] + cmd1("NPU_SET_DMA0_LEN", 4096) + COPY[8:]
    check = _run(NpuProgram(), _processed(words), samples=1).check()
    assert not check["passed"] and "could not run Vela's program: sample 0, delegate call 0:" in check["detail"]


def test_a_retargeted_program_runs_the_same_calls_and_its_failure_fails_the_record() -> None:
    leader = _processed(COPY)
    level = _run(NpuProgram(), leader, samples=2)
    record = {"checks": [{"name": "vs_float", "passed": True, "detail": ""}, level.check()], "passed": True,
              "npu_program": level.record()}
    off_by_one = COPY[:4] + cmd1("NPU_SET_DMA0_DST", 65) + COPY[6:]  # writes the output one byte late
    again = level.rerun({leader: _processed(off_by_one)}, {})
    assert again.calls == 1 and again.difference is not None and again.difference.element == 0
    assert again.difference.text().endswith("interpreter 0, TOSA reference model -8 (which no command wrote)")
    changed = with_level(record, again)
    assert not changed["passed"] and changed["npu_program"]["outcome"] == "failed"
    assert changed["checks"][0] == record["checks"][0] and record["passed"]
    same = level.rerun({leader: leader}, {})
    assert same.check() == level.check()
    unmapped = level.rerun({}, {}).check()
    assert not unmapped["passed"] and "has no payload in the retargeted one" in unmapped["detail"]


def test_fetch_and_verify_show_the_level_and_name_the_stand_in() -> None:
    level = _run(NpuProgram(), _processed(COPY), samples=8)
    numerics = {"passed": True, "samples": 100, "dataset": "evaluation", "method": "tosa_reference_model",
                "checks": [level.check()], "npu_program": level.record()}
    v = Verification("mnist for u55-128", [Check("file", True, "ok")], numerics=numerics)
    assert _verification_line(v).endswith("; NPU program bit-exact on 8 samples, 16 delegate calls "
                                          "(command-stream interpreter, a stand-in for the NPU)")
    skipped = _run(NpuProgram(), _processed(ARGMAX, U85_256), samples=1)
    v = Verification("add for u85-256", [], numerics={**numerics, "checks": [skipped.check()],
                                                      "npu_program": skipped.record()})
    assert "; NPU program skipped, not implemented: POOL ARGMAX_X" in _verification_line(v)
    (line,) = [x for x in verification_lines(v) if "npu_program" in x]
    assert line.startswith("  skip  npu_program  NPU program (command-stream interpreter, a stand-in for the NPU)")


@pytest.mark.parametrize(("target", "flags", "size"), [
    ("u65-256", [], 384 * 1024),  # Dedicated_Sram_384KB: the arena in DRAM, cached in 384 KiB of SRAM
    ("u65-256", ["--arena-cache-size=200000"], 200000),
    ("u55-128", [], 0),  # Shared_Sram: the arena is in SRAM, no fast scratch
    ("imx93", [], 0),
])
def test_the_fast_scratch_is_the_arena_cache_the_build_used(target: str, flags: list[str], size: int) -> None:
    assert fast_scratch(TargetTable().resolve(target), flags) == size


def test_zoo_report_shows_the_level_and_names_the_stand_in() -> None:
    from zoo.cli.report_render import render_html, render_text
    from zoo.registry.report import Report, ReportRow

    fields = {f: None for f in ("model_version", "accelerator", "system_config", "memory_mode",
                                "sram_budget_bytes", "weights", "pte_bytes", "inference_time_ms",
                                "inferences_per_second", "sram_bytes", "dram_bytes", "on_chip_flash_bytes",
                                "off_chip_flash_bytes", "npu_ops", "cpu_ops", "partitions", "built_at")}
    passed = _run(NpuProgram(), _processed(COPY), samples=8).record()
    skipped = _run(NpuProgram(), _processed(ARGMAX, U85_256), samples=1).record()
    rows = [ReportRow(model="add", target=t, key=t * 4, extra_flags=(), npu_program=level, **fields)
            for t, level in (("u55-128", passed), ("u85-256", skipped), ("portable", None))]
    assert [r.npu_program_text for r in rows] == ["bit-exact (8 samples)", "skipped", "-"]
    text = render_text(Report("add", rows), width=400)
    assert "NPU program" in text and "bit-exact (8 samples)" in text
    assert "zoo's command-stream interpreter, a stand-in for the NPU" in text
    page = render_html(Report("add", rows))
    assert "<th>NPU program<br><small>on the interpreter, a stand-in for the NPU</small></th>" in page
    assert 'title="not implemented: POOL ARGMAX_X' in page


def test_a_build_whose_samples_call_no_delegate_is_skipped_never_bit_exact() -> None:
    """An Ethos-U build in which no delegate ran compared nothing (issue 55): a skip that says why."""
    level = NpuProgram()
    for i in range(8):
        level.start_sample(i)
    check, record = level.check(), level.record()
    assert check["skipped"] and check["passed"]
    assert check["detail"] == ("NPU program (command-stream interpreter, a stand-in for the NPU): skipped, no delegate "
                               "ran: the samples never called an Ethos-U delegate, so no NPU program was compared; "
                               "a skipped level does not fail the build")
    assert (record["outcome"], record["samples"], record["delegate_calls"]) == ("skipped", 0, 0)
    assert record["skipped"].startswith("no delegate ran")
    old = {"npu_program": {**record, "outcome": "passed", "samples": 8, "skipped": None}}  # as zoo recorded it before
    line = npu_program_line(old) or ""
    assert "bit-exact" not in line and "compared nothing: no delegate call ran" in line


def test_zoo_report_all_shows_the_level_in_its_own_column() -> None:
    """Issue 58, item 3: the catalogue's table has the level's column where a build recorded it."""
    from zoo.cli.catalogue_render import render_catalogue_text
    from zoo.registry.report import ReportRow
    from zoo.registry.report.catalogue import Catalogue, Cell

    fields = {f: None for f in ("model_version", "accelerator", "system_config", "memory_mode",
                                "sram_budget_bytes", "weights", "pte_bytes", "inference_time_ms",
                                "inferences_per_second", "sram_bytes", "dram_bytes", "on_chip_flash_bytes",
                                "off_chip_flash_bytes", "npu_ops", "cpu_ops", "partitions", "built_at")}
    passed = _run(NpuProgram(), _processed(COPY), samples=8).record()
    cells = {("add", "-", t): Cell("add", "-", t, ReportRow(model="add", target=t, key=t * 4, extra_flags=(),
                                                            npu_program=level, **fields))
             for t, level in (("u55-128", passed), ("portable", None))}
    text = render_catalogue_text(Catalogue([("add", "-")], ["u55-128", "portable"], cells))
    header, _, first, second = text.splitlines()[:4]
    assert "NPU program" in header
    assert "bit-exact (8 samples)" in first and "bit-exact" not in second
    plain = render_catalogue_text(Catalogue([("add", "-")], ["portable"], {k: v for k, v in cells.items() if k[2] == "portable"}))
    assert "NPU program" not in plain
