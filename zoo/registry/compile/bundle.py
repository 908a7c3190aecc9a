"""The on-device self-test: a BundledProgram (``.bpte``) holding the .pte unchanged,
a few real inputs and the outputs the artifact must give.

ExecuTorch's Arm ``executor_runner`` built with ``-DET_BUNDLE_IO`` takes the
.bpte in place of the .pte (same ``model_pte`` array), runs test case 0 and
compares the outputs within ``ET_ATOL``/``ET_RTOL``. The expected outputs come
from the numerical check: the TOSA reference run for Ethos-U, the host runtime
for portable. ExecuTorch is imported inside functions.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from zoo._errors import BuildError
from zoo._spec import Sample

METHOD = "forward"


def bundle_program(pte: bytes, cases: list[tuple[Sample, list[Any]]]) -> bytes:
    """Serialize ``cases`` (inputs, expected outputs) with ``pte``; the .pte bytes are stored as they are."""
    from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
    from executorch.devtools.bundled_program.core import BundledProgram
    from executorch.devtools.bundled_program.serialize import (
        deserialize_from_flatbuffer_to_bundled_program,
        serialize_from_bundled_program_to_flatbuffer,
    )

    if not cases:
        raise BuildError("no test cases to bundle: the numerical check ran on no samples")
    suite = MethodTestSuite(
        method_name=METHOD,
        test_cases=[MethodTestCase(inputs=[_dense(t) for t in inputs], expected_outputs=[_dense(o) for o in outputs])
                    for inputs, outputs in cases],
    )
    with tempfile.TemporaryDirectory(prefix="zoo-bundle-") as tmp:
        path = Path(tmp) / "program.pte"
        path.write_bytes(pte)
        data = bytes(serialize_from_bundled_program_to_flatbuffer(BundledProgram(None, [suite], pte_file_path=str(path))))
    stored = deserialize_from_flatbuffer_to_bundled_program(data)
    if bytes(stored.program) != pte:
        raise BuildError("the BundledProgram does not hold the .pte bytes unchanged")
    return data


def _dense(t: Any) -> Any:
    """Contiguous in the tensor's own dim order: an NHWC input stays channels-last."""
    import torch

    if t.dim() == 4 and t.is_contiguous(memory_format=torch.channels_last) and not t.is_contiguous():
        return t
    return t.contiguous()


def run_on_host(bpte: bytes, *, atol: float, rtol: float) -> int:
    """Run every bundled test case on the host runtime (portable programs only) and
    check the outputs the way the device runner does. Returns the number of cases."""
    from executorch.devtools.bundled_program.serialize import (
        deserialize_from_flatbuffer_to_bundled_program,
    )
    from executorch.extension.pybindings.portable_lib import _load_bundled_program_from_buffer

    from zoo.registry.numerics import captured_native_output

    count = len(deserialize_from_flatbuffer_to_bundled_program(bpte).method_test_suites[0].test_cases)
    with captured_native_output() as printed:
        bundle = _load_bundled_program_from_buffer(bpte)
        for i in range(count):
            try:  # loads case i's inputs, runs the method, compares like the device runner
                bundle.verify_result_with_bundled_expected_output(METHOD, i, rtol, atol)
            except Exception as exc:
                printed.seek(0)
                said = printed.read().decode("utf-8", "replace").strip()
                raise BuildError(
                    f"bundled test case {i} fails on the host runtime (atol {atol:g}, rtol {rtol:g}): {exc}"
                    + (f" ({said.splitlines()[-1]})" if said else "")
                ) from exc
    return count
