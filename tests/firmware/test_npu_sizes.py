"""npu_model_sizes.h: the C model's buffers sized from the program's own command streams (issue 58), not fixed
(a fixed 131,072-value IFM buffer refused mv2's 3x224x224 first operation). The sizes are the largest each
operation takes, and a model built with them computes the program and refuses an operation one row larger."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.command_stream.programs import block, cmd0, fm, payload
from tests.firmware.test_npu_model_host import (
    HERE,
    NPU_MODEL_SOURCES,
    SANITIZE,
    TEMPLATES,
    _big_pool,
    c_run,
)
from zoo.registry.command_stream import run
from zoo.registry.firmware.npu_sizes import NpuModelSizes, program_sizes


def test_the_sizes_are_the_largest_operation_of_each_kind() -> None:
    """A 224x224x3 MAX pool (mv2's first operation), a 1x1 CONV from 16 to 24 channels, an ELEMENTWISE ADD of
    56x56x24 and a REDUCE_SUM of 7x9x5: each buffer takes the largest operation of its kind."""
    words = fm("IFM", 0, (224, 224, 3)) + fm("OFM", 0, (224, 224, 3)) + block((1, 1)) + cmd0("NPU_OP_POOL", 0)
    words += fm("IFM", 0, (8, 8, 16)) + fm("OFM", 0, (8, 8, 24)) + block((1, 1))
    words += cmd0("NPU_SET_OFM_BLK_DEPTH_M1", 15) + cmd0("NPU_OP_CONV")
    words += fm("IFM", 0, (56, 56, 24)) + fm("OFM", 0, (56, 56, 24)) + cmd0("NPU_OP_ELEMENTWISE", 1)
    words += fm("IFM", 0, (7, 9, 5)) + fm("OFM", 0, (7, 9, 1)) + cmd0("NPU_OP_POOL", 2)
    words = fm("IFM", 0, (2, 2, 2)) + fm("OFM", 0, (2, 3, 4)) + cmd0("NPU_OP_ELEMENTWISE", 1) + words  # no kernel set yet
    sizes = program_sizes(payload(words + cmd0("NPU_OP_STOP")).data["cmd_data"])
    # The CONV's stream: OFM blocks of 16 (24 channels: 16 and 8), IFM blocks of 32 (16 deep, not clipped), 8x8 each.
    assert sizes == NpuModelSizes(weight_values=(16 + 8) * 32, ifm_values=224 * 224 * 3, ofm_values=56 * 56 * 24,
                                  channels=24, operations=5)
    assert "#define NPU_MODEL_IFM_VALUES 150528\n" in sizes.header()


@pytest.mark.slow  # builds the model with the sanitizers: 2 to 4 s
@pytest.mark.skipif(shutil.which("gcc") is None, reason="no host gcc")
def test_a_model_built_with_a_programs_sizes_computes_it_and_refuses_a_larger_operation(tmp_path: Path) -> None:
    program, larger = _big_pool(20, 20), _big_pool(21, 20)  # IFMs of 39x39 and 40x40
    sizes = program_sizes(program.data["cmd_data"])
    assert (sizes.ifm_values, sizes.ofm_values) == (39 * 39, 1)
    (tmp_path / "npu_model_sizes.h").write_text(sizes.header())
    model = tmp_path / "npu_model_host"
    build = subprocess.run(["gcc", "-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", *SANITIZE, f"-I{TEMPLATES}",
                            f"-I{tmp_path}", *(str(TEMPLATES / f) for f in NPU_MODEL_SOURCES),
                            str(HERE / "npu_model_host.c"), "-o", str(model)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    given = np.random.default_rng(3).integers(0, 256, size=39 * 39).astype(np.uint8).tobytes()
    assert c_run(model, program, [given], tmp_path) == ("computed 1", run(program, [given]))
    verdict, _ = c_run(model, larger, [bytes(40 * 40)], tmp_path)
    assert re.fullmatch(r"not_implemented 0 POOL at byte 0x[0-9a-f]+: an IFM of 40x40x1, more than the model's "
                        r"buffer \(NPU_MODEL_IFM_VALUES 1521\)", verdict), verdict
