"""A build's bundle as the interpreter's oracle: its payload and the (input, expected output) bytes of its test cases.

The expected outputs are what zoo's numerical check computed by running the build's TOSA graph on
``tosa_reference_model`` (``numerics/reference.py``). With ``io="int8"`` the delegate is the whole
program, so they are the delegate's own input and output bytes.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

from zoo import Artifact
from zoo.registry.command_stream import run
from zoo.registry.pte.vela_payload import VelaPayload, find_payloads


@dataclass
class Bundled:
    payload: VelaPayload
    cases: list[tuple[bytes, bytes]]


def bundled(art: Artifact, sizes: tuple[int, int] = (784, 10)) -> Bundled:
    """The program's one payload and its bundle's (input, expected output) bytes."""
    from executorch.devtools.bundled_program.serialize import (
        deserialize_from_flatbuffer_to_bundled_program,
    )

    assert art.bundle is not None
    bundled = deserialize_from_flatbuffer_to_bundled_program(art.bundle.read_bytes())
    (payload,) = find_payloads(bytes(bundled.program))
    cases = [(bytes(c.inputs[0].val.data), bytes(c.expected_outputs[0].val.data))
             for c in bundled.method_test_suites[0].test_cases]
    assert len(cases) == 3 and all((len(i), len(o)) == sizes for i, o in cases)
    return Bundled(payload, cases)


def changed(payload: VelaPayload, block: str, change: Callable[[bytearray], None]) -> VelaPayload:
    changed = copy.copy(payload)
    changed.data = dict(payload.data)
    data = bytearray(payload.data[block])
    change(data)
    changed.data[block] = bytes(data)
    return changed


def differing(bundle: Bundled, payload: VelaPayload) -> int:
    return sum(run(payload, [given])[0] != expected for given, expected in bundle.cases)
