"""A hand-out parses its .pte once (issue 44): the structure check, the memory figures and the fetch
summary read one parsed ``Program``, each further reading of the bytes made once.

The readers are counted by their code objects, so an import under another name counts too."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

from tests.fake_compile import FakeCompile
from zoo import Artifact, Zoo
from zoo.cli.format import _summary
from zoo.registry.pte import pte_structure, vela_payload
from zoo.registry.verify.structure_check import Expected, check_structure

READERS: dict[CodeType, str] = {
    pte_structure.read_pte.__code__: "program",  # the flatbuffer's program, as the checks read it
    pte_structure.Reader.__init__.__code__: "flatbuffer reader",  # each walk of the flatbuffer starts with one
    vela_payload.parse_payload.__code__: "Vela payload",
}


def _counted(run: Callable[[], Any]) -> Counter[str]:
    counts: Counter[str] = Counter()

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "call" and frame.f_code in READERS:
            counts[READERS[frame.f_code]] += 1

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return counts


def test_a_cache_hit_with_its_summary_parses_the_pte_once(fake_compile: FakeCompile, tmp_path: Path) -> None:
    Zoo().fetch("add", "u55-128")  # built through the fake compile into the cache
    arts: list[Artifact] = []

    def hand_out() -> None:
        arts.append(Zoo().fetch("add", "u55-128", out_dir=tmp_path / "out"))
        _summary(arts[0], layouts=("nchw",))

    counts = _counted(hand_out)
    assert arts[0].source == "cache" and arts[0].verification is not None and arts[0].verification.passed
    # The program once, its one delegate's payload once, and the flatbuffer walked twice: the
    # program, and the forward method's every value for the method allocator's replay (both ABIs).
    assert counts == {"program": 1, "Vela payload": 1, "flatbuffer reader": 2}, counts


def test_the_checks_of_a_parsed_program_are_those_of_its_bytes(fake_compile: FakeCompile) -> None:
    from zoo.registry.pte.program import read_program

    art = Zoo().fetch("add", "u55-128")
    data = art.pte.read_bytes()
    expected = Expected.from_manifest(art.manifest)
    program = read_program(data)
    assert [c.to_json() for c in check_structure(program, expected)] == \
        [c.to_json() for c in check_structure(data, expected)]
    assert _counted(lambda: check_structure(program, expected)) == {}  # everything read the first time
