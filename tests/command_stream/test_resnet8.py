"""resnet8-cifar's u55-128 program (CONV, the copy pools, ELEMENTWISE ADD, a global AVERAGE pool)
against its bundle's TOSA reference outputs: the oracle for ADD's operand scaling."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.command_stream.bundles import Bundled, bundled, changed, differing
from tests.conftest import in_shared_cache
from zoo import Artifact
from zoo.registry.command_stream import program_of, run

pytestmark = pytest.mark.compile


@pytest.fixture(scope="module")
def resnet8(shared_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Bundled:
    """One build for the session's cache (int8 I/O, so the delegate's bytes are the bundle's; 35 s)."""
    from zoo import Zoo

    with in_shared_cache(shared_cache, tmp_path_factory.mktemp("resnet8-build")):
        art: Artifact = Zoo().fetch("resnet8-cifar", "u55-128", verify=True, io="int8", bundle=True)
    return bundled(art, (3 * 32 * 32, 10))


def test_the_outputs_are_the_tosa_reference_models(resnet8: Bundled) -> None:
    names = [c.name for c in program_of(resnet8.payload).commands]
    assert names.count("NPU_OP_ELEMENTWISE") == 3
    for i, (given, expected) in enumerate(resnet8.cases):
        (got,) = run(resnet8.payload, [given])
        assert got == expected, f"case {i}: interpreter {list(got)}, TOSA reference {list(expected)}"


def test_a_changed_add_scale_changes_the_outputs(resnet8: Bundled) -> None:
    program = program_of(resnet8.payload)
    header = len(resnet8.payload.data["cmd_data"]) - (program.commands[-1].offset + 4)
    opa = next(c for c in program.commands if c.name == "NPU_SET_OPA_SCALE")

    def one_more(data: bytearray) -> None:
        at = header + opa.offset + 4  # the payload word: the 32-bit scale
        data[at + 3] ^= 0x08

    assert differing(resnet8, changed(resnet8.payload, "cmd_data", one_more)) == 3
