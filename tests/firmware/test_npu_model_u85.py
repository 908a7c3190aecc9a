"""npu_model_u85.c and npu_mlw_u85.c, the stand-in's C model of the Ethos-U85 (issue 58): its copy of the U85's
opcode numbers is the host interpreter's table (zoo/registry/command_stream/u85/regs.py), and, built with the
host's gcc under the sanitizers (tests/firmware/npu_model_host.c), it runs the U85 programs the suite already
builds (mnist, mnist at a16w8, softmax and mv2 for u85-256) and one tiny network of the operations only
transformers and segmentation networks have (tests/ops_plugin.py's ops-u85-model: RESIZE, a layer norm's
REDUCE_SUM, 32-bit maps and null pool, MATMUL) bit-equal to the host U85 interpreter on the same input bytes, as
it runs tests/command_stream/test_u85_ops.py's hand-built programs. The QEMU run of
tests/firmware/test_firmware_project.py checks the same model inside the Cortex-M55 firmware."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import in_shared_cache
from tests.firmware.test_npu_model_host import HERE, NPU_MODEL_SOURCES, SANITIZE, TEMPLATES, c_run
from zoo import Artifact
from zoo.registry.command_stream.u85 import run as u85_run
from zoo.registry.command_stream.u85.regs import CMD0, CMD1, SIGNED
from zoo.registry.pte.vela_payload import VelaPayload, find_payloads

SOURCE = (TEMPLATES / "npu_model_u85_parts.h").read_text() + (TEMPLATES / "npu_model_u85.c").read_text()


def _enum() -> dict[str, int]:
    """The first enum's names and values (``C1 + n`` is a cmd1 register), implicit increments included."""
    body = re.search(r"^enum \{\n(.*?)^\};", SOURCE, re.S | re.M)
    assert body is not None
    out, value = {}, -1
    for item in filter(None, (s.strip() for s in re.sub(r"/\*.*?\*/", "", body.group(1), flags=re.S).split(","))):
        name, _, given = (part.strip() for part in item.partition("="))
        value = eval(given, {}, out) if given else value + 1  # a number, or C1 + n: Python reads it alike
        out[name] = value
    return out


def test_every_u85_register_and_opcode_name_has_the_host_tables_number() -> None:
    names = {k: v for k, v in _enum().items() if k != "C1"}
    assert len(names) > 60
    for name, value in names.items():
        if value >= 1024:
            assert CMD1.get(value - 1024) == f"NPU_SET_{name}", name
        elif name.startswith("OP_"):
            assert CMD0.get(value) == f"NPU_{name}", name
        else:
            assert CMD0.get(value) == f"NPU_SET_{name}", name


def test_the_u85_opcodes_it_accepts_and_its_signed_registers_are_the_host_tables() -> None:
    found = re.search(r"static const uint16_t cmd0\[\] = \{(.*?)\};", SOURCE, re.S)
    assert found is not None
    assert {int(v) for v in found.group(1).replace("\n", " ").split(",")} == set(CMD0)
    ranges = re.search(r"if \(control\)\n\s*return (.*?);", SOURCE, re.S)
    assert ranges is not None
    condition = " ".join(ranges.group(1).split()).replace("||", " or ").replace("&&", " and ")
    assert {n for n in range(1024) if eval(condition, {}, {"op": n})} == set(CMD1)
    signed = re.search(r"int signed_reg = (.*?);", SOURCE, re.S)
    assert signed is not None
    enum = _enum()
    assert {CMD0[enum[t]] for t in re.findall(r"opcode == (\w+)", signed.group(1))} == SIGNED


# The rest runs real programs: compile tier (the suite's session builds, shared through its cache).
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="no host gcc")


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both models with their decoders and the harness, as the firmware compiles them (-Werror) plus the sanitizers."""
    out = tmp_path_factory.mktemp("npu_model_u85") / "npu_model_host"
    build = subprocess.run(["gcc", "-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", *SANITIZE, f"-I{TEMPLATES}", f"-I{HERE}",
                            *(str(TEMPLATES / f) for f in NPU_MODEL_SOURCES), str(HERE / "npu_model_host.c"),
                            "-o", str(out)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    return out


BUILDS: dict[str, tuple[str, dict[str, object]]] = {
    "mnist": ("mnist", {"verify": True}), "mv2": ("mv2", {"weights": "random", "verify": True}),
    "softmax": ("softmax", {"verify": True}),
    "mnist a16w8": ("mnist", {"precision": "a16w8", "verify": True}),  # tests/test_precision.py's
    "ops-u85-model": ("ops-u85-model", {}),
    "ops-flip": ("ops-flip", {"verify": True}),  # tests/command_stream/test_u85_reverse.py's
    "ops-depthwise a16w8": ("ops-depthwise", {"precision": "a16w8", "verify": True}),  # as test_u85_depthwise16.py
    "ops-a16-forms a16w8": ("ops-a16-forms", {"precision": "a16w8", "verify": True}),  # as test_u85_a16_forms.py
}
"""u85-256 builds: the ``built`` fixture's keys (mnist, mv2 at random weights, softmax) and tests/test_precision.py's,
found in the run's cache (built here only if this module runs first, and then found there), and one tiny network."""


@pytest.fixture(scope="module")
def u85_build(shared_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Artifact]:
    """The build of ``BUILDS[name]``, made on first use."""
    from zoo import Zoo

    made: dict[str, Artifact] = {}

    def get(name: str) -> Artifact:
        if name not in made:
            model, options = BUILDS[name]
            with in_shared_cache(shared_cache, tmp_path_factory.mktemp("u85-build")), pytest.MonkeyPatch.context() as mp:
                if model.startswith("ops-"):
                    mp.setenv("ZOO_PLUGINS", "tests.ops_plugin")
                made[name] = Zoo().fetch(model, "u85-256", **options)  # type: ignore[arg-type]
        return made[name]
    return get


def _program(art: Artifact) -> VelaPayload:
    (payload,) = find_payloads(art.pte.read_bytes())
    return payload


OPERATIONS = {"mnist": 6, "mv2": 65, "mnist a16w8": 6, "softmax": 7, "ops-u85-model": 27, "ops-flip": 8,
              "ops-depthwise a16w8": 4, "ops-a16-forms a16w8": 14}


@needs_gcc
@pytest.mark.compile
@pytest.mark.parametrize(("name", "samples"), [("mnist", 3), ("mv2", 1), ("mnist a16w8", 2), ("softmax", 2),
                                               ("ops-u85-model", 2), ("ops-flip", 2), ("ops-depthwise a16w8", 2),
                                               ("ops-a16-forms a16w8", 2)])
def test_a_u85_program_computes_on_the_c_model_as_on_the_host_interpreter(
        model: Path, u85_build: Callable[[str], Artifact], tmp_path: Path, name: str, samples: int) -> None:
    """Every operation computed (mnist: 2:4 sparse SWD and FWD weights, pools into a CHW transpose; mv2: 65, with
    chaining into residual ADDs, a SUM pool, depthwise weights; mnist at a16w8: 16-bit maps, 48-bit accumulators
    and their scale records; softmax: REDUCE_SUM into a 32-bit map, a chained 32-bit SUB; ops-u85-model: RESIZE,
    REDUCE_SUM, 32-bit MUL, the null pool, MATMUL; ops-flip: OFMs reversed along H and W in NHCWB16 and C in NHWC;
    ops-depthwise at a16w8: 3x3 and 5x5 stride-2 DEPTHWISE of 16-bit maps, their weights padded for 16 bits;
    ops-a16-forms at a16w8: a CONV into a 64-bit OFM and the two null pools that rescale it from a 64-bit IFM2,
    PReLU's 16-bit MUL and ADD, a 1x1 SUM from 16 into 32 bits, a 32-bit MUL) and every output byte the host U85
    interpreter's."""
    program = _program(u85_build(name))
    rng = np.random.default_rng(58)
    for _ in range(samples):
        given = [rng.integers(0, 256, size=i.elements * i.element_size, dtype=np.uint8).tobytes() for i in program.inputs]
        want = u85_run(program, given)
        verdict, got = c_run(model, program, given, tmp_path, timeout=300)
        assert verdict == f"computed {OPERATIONS[name]}", verdict
        assert got == want, f"C model {list(got[0][:12])}..., host interpreter {list(want[0][:12])}..."
        assert len(set(want[0])) > 3  # the outputs are not all clamped


def _hand_built() -> dict[str, tuple[VelaPayload, bytes]]:
    """tests/command_stream/test_u85_ops.py's programs (and one of test_u85_stream.py's), each with its input."""
    from tests.command_stream.test_u85_ops import (
        ACC64,
        MUL16_IN,
        X16_ROW,
        _resize,
        matmul_program,
        mul16,
        null_pool,
        program,
        resize_x16,
    )
    from tests.command_stream.test_u85_stream import _pool, c0, reversed_pool

    row = np.asarray([0, 64, -10, 7, 10, 0, -10, 100, -128], dtype=np.int8).reshape(1, 9, 1)
    acc = np.asarray([-1000, -300, -100, -50, 0, 50, 100, 1000, 2 ** 20, -2 ** 31, 2 ** 31 - 1, 12345],
                     dtype=np.int32).reshape(1, 12, 1)
    grid = np.arange(-12, 12, dtype=np.int8).reshape(2, 3, 4)
    b = np.asarray([[1, 0, 0], [0, 1, 0], [0, 0, 1], [2, -1, 3]], dtype=np.int8)
    return {
        "RESIZE NEAREST": (program(_resize(2, 9), row, (1, 18, 1)), row.tobytes()),
        "RESIZE BILINEAR": (program(_resize(0, 9), row, (1, 18, 1)), row.tobytes()),
        "RESIZE BILINEAR x16, past 32 bits": (program(resize_x16(), X16_ROW, (1, 64, 1)), X16_ROW.tobytes()),
        "MATMUL": (matmul_program(b), np.asarray([[1, 2, 3], [-4, 5, -6]], dtype=np.int8).tobytes()),
        "POOL NONE, a 32-bit accumulator": (program(null_pool(12, 3, 4), acc, (1, 12, 1)), acc.tobytes()),
        "POOL NONE, a signed OFM's clamp read signed": (program(null_pool(12, 1, 2, clamp=(-33, 0xFFFA)), acc, (1, 12, 1)),
                                                        acc.tobytes()),
        "POOL NONE, a 48-bit accumulator from a 64-bit IFM2": (program(null_pool(10, 21253, 40, ifm2_bits=64),
                                                                       ACC64.reshape(1, 10, 1), (1, 10, 1)), ACC64.tobytes()),
        "ELEMENTWISE MUL of 16-bit maps, the 48-bit accumulator": (program(mul16(10, 3, 17), MUL16_IN, (1, 20, 1)),
                                                                   MUL16_IN.tobytes()),
        "POOL after a broadcast": (program(c0("NPU_SET_IFM_BROADCAST", 3) + _pool(1 | 1 << 8 | 6 << 11, (2, 3, 4)), grid,
                                           (4, 2, 3)), grid.tobytes()),
        **{f"POOL reversed along {axis}": (reversed_pool(reverse, (2, 3, 4)), grid.tobytes())
           for reverse, axis in ((1, "H"), (2, "W"), (3, "C"))},
    }


@needs_gcc
@pytest.mark.slow
@pytest.mark.parametrize("form", list(_hand_built()))
def test_each_hand_built_u85_operation_computes_as_on_the_host_interpreter(model: Path, tmp_path: Path, form: str) -> None:
    """RESIZE both ways, MATMUL, the null pool (a 32-bit IFM2, its clamp read in the OFM's signedness; a 64-bit IFM2
    into the 48-bit accumulator), a 16-bit MUL with the 48-bit accumulator, a POOL that
    leaves IFM_BROADCAST unread, an OFM reversed along H, W and C: the C model's bytes are the host's, and those are
    not all one value."""
    program, given = _hand_built()[form]
    want = u85_run(program, [given])
    verdict, got = c_run(model, program, [given], tmp_path)
    assert verdict.startswith("computed"), verdict
    assert got == want, f"C model {list(got[0])}, host interpreter {list(want[0])}"
    assert len(set(want[0])) > 2


@needs_gcc
@pytest.mark.slow
def test_a_48_bit_accumulator_scaled_by_more_than_15_bits_is_refused_on_both_sides(model: Path, tmp_path: Path) -> None:
    from tests.command_stream.test_u85_ops import MUL16_IN, mul16, program
    from zoo.registry.command_stream import NotInterpreted

    wide = program(mul16(10, 1 << 15, 30), MUL16_IN, (1, 20, 1))
    with pytest.raises(NotInterpreted, match="48-bit accumulator and OFM_SCALE 0x8000 "):
        u85_run(wide, [MUL16_IN.tobytes()])
    verdict, _ = c_run(model, wide, [MUL16_IN.tobytes()], tmp_path)
    assert re.fullmatch(r"not_implemented 0 ELEMENTWISE at byte 0x[0-9a-f]+: ELEMENTWISE MUL with the 48-bit accumulator "
                        r"and OFM_SCALE 0x8000 \(a scale of more than 15 bits on it is not settled\)", verdict), verdict


def _second_conv(program: VelaPayload) -> tuple[int, int]:
    """The second CONV's WEIGHT_BASE (its weights FWD, raw: a 32-byte header, then a byte a weight), and the byte
    of cmd_data holding the first NPU_SET_OFM_SCALE's parameter."""
    from zoo.registry.command_stream.stream import split
    from zoo.registry.command_stream.u85 import commands

    _, words = split(program.data["cmd_data"])
    header = len(program.data["cmd_data"]) - 4 * len(words)
    _, cmds = commands(program.data["cmd_data"])
    regs: dict[str, int] = {}
    convs = []
    for cmd in cmds:
        if cmd.name.startswith("NPU_SET_"):
            regs[cmd.name] = cmd.payload if cmd.payload is not None else cmd.param
        elif cmd.name == "NPU_OP_CONV":
            convs.append((regs["NPU_SET_WEIGHT_BASE"], regs["NPU_SET_WEIGHT_FORMAT"]))
    scale = next(c.offset for c in cmds if c.name == "NPU_SET_OFM_SCALE")
    assert convs[1][1] == 1, "the second CONV's weights are not FWD"
    return convs[1][0], header + scale + 2


@needs_gcc
@pytest.mark.compile
def test_a_changed_weight_or_register_changes_both_alike(model: Path, u85_build: Callable[[str], Artifact],
                                                         tmp_path: Path) -> None:
    """mnist's program with one weight byte of its FWD convolution flipped: the C model computes the host's new
    outputs; with its first OFM_SCALE's rounding set to SYMMETRIC, which neither models, both refuse it."""
    from dataclasses import replace

    from zoo.registry.command_stream import NotInterpreted

    program = _program(u85_build("mnist"))
    weight_base, scale_param = _second_conv(program)
    given = [bytes(range(256)) * 3 + bytes(16)]
    clean = u85_run(program, given)
    weights = bytearray(program.data["weight_data"])
    weights[weight_base + 32 + 40] ^= 0x10
    flipped = replace(program, data={**program.data, "weight_data": bytes(weights)})
    want = u85_run(flipped, given)
    verdict, got = c_run(model, flipped, given, tmp_path)
    assert verdict == "computed 6" and got == want != clean

    cmd = bytearray(program.data["cmd_data"])
    cmd[scale_param + 1] = (cmd[scale_param + 1] & 0x1F) | (3 << 5)  # rounding SYMMETRIC: parameter bits 13-15
    odd = replace(program, data={**program.data, "cmd_data": bytes(cmd)})
    with pytest.raises(NotInterpreted, match="SYMMETRIC"):
        u85_run(odd, given)
    verdict, _ = c_run(model, odd, given, tmp_path)
    assert re.fullmatch(r"not_implemented \d+ CONV at byte 0x[0-9a-f]+: OFM rounding SYMMETRIC", verdict), verdict


def _elementwise(mode: int, *, ifm2: int = 0, scales: tuple[tuple[int, int], ...] = ((1, 0), (1, 0), (1, 0)),
                 rounding: int = 1, activation: tuple[int, int, int] = (0, -128, 127), lut: bool = False) -> VelaPayload:
    """An ELEMENTWISE of the (2, 3, 4) int8 IFM at scratch 0 and an IFM2 at 0x80 (broadcast mode ``ifm2``: H 1, W 2,
    C 4, SCALAR 8), IFM, IFM2 and OFM scales ``scales`` (scale, shift), the OFM rounded ``rounding`` and written
    channels first at 0x100; ``lut``: a DMA first puts the weights' 256 bytes into LUT table 1."""
    from tests.command_stream.programs import payload
    from tests.command_stream.test_u85_stream import U85_256, _pool, c0, c1
    from zoo.registry.pte.vela_payload import TensorInfo

    words = c1("NPU_SET_DMA0_SRC", 0) + c1("NPU_SET_DMA0_DST", 256) + c1("NPU_SET_DMA0_LEN", 256)
    words = words + c0("NPU_SET_DMA0_SRC_REGION", 0) + c0("NPU_SET_DMA0_DST_REGION", 1 << 8) + c0("NPU_OP_DMA_START") \
        if lut else []
    words += _pool(1 | 1 << 8 | 6 << 11, (2, 3, 4))[:-2]
    storage = 3 << 14 if ifm2 == 8 else 0
    words += c0("NPU_SET_IFM2_PRECISION", 1 | storage) + c0("NPU_SET_IFM_BROADCAST", 0)
    words += c0("NPU_SET_IFM2_BROADCAST", ifm2) + c0("NPU_SET_IFM2_ZERO_POINT", -7) + c1("NPU_SET_OP_SCALAR", -3)
    words += c0("NPU_SET_IFM2_REGION", 1) + c1("NPU_SET_IFM2_BASE0", 0x80)
    words += [w for i in (1, 2, 3) for w in c1(f"NPU_SET_IFM2_BASE{i}", 0)]
    words += c0("NPU_SET_IFM2_HEIGHT0_M1", 1) + c0("NPU_SET_IFM2_HEIGHT1_M1", 1) + c0("NPU_SET_IFM2_WIDTH0_M1", 2)
    words += c1("NPU_SET_IFM2_STRIDE_Y", 12) + c1("NPU_SET_IFM2_STRIDE_X", 4) + c1("NPU_SET_IFM2_STRIDE_C", 1)
    (a, a_shift), (b, b_shift), (o, o_shift) = scales
    words += c1("NPU_SET_IFM_SCALE", a, 1 << 13 | a_shift) + c1("NPU_SET_IFM2_SCALE", b, 1 << 13 | b_shift)
    words += c1("NPU_SET_OFM_SCALE", o, rounding << 13 | o_shift) + c0("NPU_SET_IFM_ZERO_POINT", 5)
    words += c0("NPU_SET_OFM_ZERO_POINT", -2) + c0("NPU_SET_ACTIVATION", activation[0])
    words += c0("NPU_SET_ACTIVATION_MIN", activation[1]) + c0("NPU_SET_ACTIVATION_MAX", activation[2])
    words += c0("NPU_OP_ELEMENTWISE", mode) + c0("NPU_OP_STOP", 0xFFFF)
    table = bytes((i * 7 + 3) % 256 for i in range(256))
    return payload(words, config=U85_256, scratch=0x200, weights=table if lut else b"",
                   inputs=[TensorInfo((2, 3, 4), 1, 0, 1), TensorInfo((2, 3, 4), 1, 0x80, 1)],
                   outputs=[TensorInfo((4, 2, 3), 1, 0x100, 1)])


ELEMENTWISE_FORMS = {
    "ADD, both operands rescaled, NATURAL": dict(mode=1, scales=((3, 1), (5, 2), (1 << 14, 15))),
    "SUB of an IFM2 broadcast along C": dict(mode=2, ifm2=4, scales=((1, 0), (1, 0), (3, 1))),
    "MUL, TRUNCATE_TO_LOWER": dict(mode=0, scales=((1, 0), (1, 0), (5, 3)), rounding=5),
    "MIN of an IFM2 broadcast along H and W": dict(mode=3, ifm2=3),
    "MAX of the IFM and a scalar": dict(mode=4, ifm2=8, scales=((7, 2), (1, 0), (1, 0))),
    "ABS": dict(mode=6, scales=((1, 0), (1, 0), (3, 1))),
    "ADD through an 8-bit LUT the DMA filled": dict(mode=1, activation=(4 | 1 << 5 | 1 << 12, 0, 0), lut=True),
    "ADD with a crossed clamp": dict(mode=1, activation=(0, 20, 10)),
    "ADD with a ReLU6 below the zero point (ACTIVATION_MAX 0xfffa, -6)": dict(mode=1, activation=(0, -33, -6)),
}


@needs_gcc
@pytest.mark.slow  # the module's gcc build under the sanitizers, 2 to 4 s on two busy cores
@pytest.mark.parametrize("form", list(ELEMENTWISE_FORMS))
def test_each_elementwise_form_computes_as_on_the_host_interpreter(model: Path, tmp_path: Path, form: str) -> None:
    """The forms the catalogue's U85 programs have beyond mnist and mv2 (each operand's rescale, broadcasts, a
    scalar, the other modes, TRUNCATE_TO_LOWER, a LUT in its own memory, the clamp): the C model's bytes are the
    host's, and those are not all one value."""
    program = _elementwise(**ELEMENTWISE_FORMS[form])  # type: ignore[arg-type]
    rng = np.random.default_rng(sum(map(ord, form)))
    given = [rng.integers(0, 256, size=24, dtype=np.uint8).tobytes() for _ in range(2)]
    want = u85_run(program, given)
    verdict, got = c_run(model, program, given, tmp_path)
    assert verdict == f"computed {2 if ELEMENTWISE_FORMS[form].get('lut') else 1}", verdict
    assert got == want, f"C model {list(got[0])}, host interpreter {list(want[0])}"
    assert len(set(want[0])) > 1 or form == "ADD with a crossed clamp"


def _chained() -> VelaPayload:
    """ADD of the two inputs into chaining buffer 0; ABS of that buffer back into buffer 0 (an operation whose IFM
    and OFM are one buffer); MAX of it and a scalar into memory, channels first."""
    from tests.command_stream.programs import cmd_data
    from tests.command_stream.test_u85_stream import U85_256, c0, c1
    from zoo.registry.command_stream.stream import split

    program = _elementwise(1, scales=((3, 1), (5, 2), (1 << 14, 15)))
    first = list(split(program.data["cmd_data"])[1])[:-2]  # the ADD's registers, without its ELEMENTWISE and STOP
    chain = c0("NPU_SET_OFM_PRECISION", 1 | 1 << 8 | 2 << 14) + c0("NPU_SET_OFM_REGION", 0)
    ops = first + chain + c0("NPU_OP_ELEMENTWISE", 1)
    ops += c0("NPU_SET_IFM_PRECISION", 1 | 2 << 14) + c0("NPU_SET_IFM_REGION", 0) + c0("NPU_SET_IFM_ZERO_POINT", 0)
    ops += c1("NPU_SET_IFM_SCALE", 1, 1 << 13) + c1("NPU_SET_OFM_SCALE", 1, 1 << 13) + c0("NPU_OP_ELEMENTWISE", 6)
    ops += c0("NPU_SET_OFM_PRECISION", 1 | 1 << 8 | 6 << 11) + c0("NPU_SET_OFM_REGION", 1)
    ops += c0("NPU_SET_IFM2_PRECISION", 1 | 3 << 14) + c0("NPU_SET_IFM2_BROADCAST", 8) + c1("NPU_SET_IFM2_SCALE", 1, 1 << 13)
    ops += c0("NPU_OP_ELEMENTWISE", 4) + c0("NPU_OP_STOP", 0xFFFF)
    program.data = {**program.data, "cmd_data": cmd_data(ops, U85_256)}
    return program


@needs_gcc
@pytest.mark.slow
def test_chaining_buffers_carry_a_map_between_operations_as_on_the_host(model: Path, tmp_path: Path) -> None:
    """Three operations through chaining buffer 0, the middle one reading and writing it: the host's bytes; a
    fourth operation reading the emptied buffer is malformed on both sides."""
    from tests.command_stream.programs import cmd_data
    from tests.command_stream.test_u85_stream import U85_256, c0
    from zoo.registry.command_stream import StreamError
    from zoo.registry.command_stream.stream import split

    program = _chained()
    given = [bytes(range(0, 240, 10)), bytes(range(255, 135, -5))]
    want = u85_run(program, given)
    verdict, got = c_run(model, program, given, tmp_path)
    assert verdict == "computed 3" and got == want and len(set(want[0])) > 4, (verdict, list(got[0]), list(want[0]))
    words = list(split(program.data["cmd_data"])[1])
    again = words[:-1] + c0("NPU_SET_OFM_PRECISION", 1 | 1 << 8) + c0("NPU_OP_ELEMENTWISE", 6) + words[-1:]
    broken = _chained()
    broken.data = {**broken.data, "cmd_data": cmd_data(again, U85_256)}
    with pytest.raises(StreamError, match="chaining buffer 0, which no operation filled"):
        u85_run(broken, given)
    verdict, _ = c_run(model, broken, given, tmp_path)
    assert re.fullmatch(r"stream_error 3 ELEMENTWISE at byte 0x[0-9a-f]+: reads its IFM from chaining buffer 0, which "
                        r"no operation filled", verdict), verdict


@needs_gcc
@pytest.mark.compile
def test_mutated_u85_streams_compute_alike_or_are_refused_on_both_sides(model: Path, u85_build: Callable[[str], Artifact],
                                                                        tmp_path: Path) -> None:
    """mnist's program with one OFM width left stale, and 80 copies with one to three bits flipped in its command or
    weight stream (seeded): under
    the sanitizers, where both compute the bytes are equal, where the interpreter refuses the model does too, and
    the model refuses what the interpreter computes only past its own buffers or work bound."""
    import random
    from dataclasses import replace

    from zoo.registry.command_stream import NotInterpreted, StreamError
    from zoo.registry.command_stream.stream import split
    from zoo.registry.command_stream.u85 import commands

    program = _program(u85_build("mnist"))
    rng = random.Random(58)
    given = [bytes(rng.randrange(256) for _ in range(program.inputs[0].elements))]
    # Targeted: the last pool's NPU_SET_OFM_WIDTH_M1 turned into NPU_SET_DMA0_DST_REGION (one bit), so the pool keeps
    # the width before, twice its own: OFM elements then share addresses, and the last written must be the host's.
    cmds = commands(program.data["cmd_data"])[1]
    pool = max(i for i, c in enumerate(cmds) if c.name == "NPU_OP_POOL")
    width = max(i for i, c in enumerate(cmds[:pool]) if c.name == "NPU_SET_OFM_WIDTH_M1")
    at = len(program.data["cmd_data"]) - 4 * len(split(program.data["cmd_data"])[1]) + cmds[width].offset
    stale = bytearray(program.data["cmd_data"])
    stale[at] ^= 0x20  # opcode 273 (0x111) -> 305 (0x131): bit 5 of the command's first byte
    seen = set()
    for n in range(81):
        which = "cmd_data" if n == 0 or rng.random() < 0.6 else "weight_data"
        data = bytearray(stale if n == 0 else program.data[which])
        for _ in range(0 if n == 0 else rng.choice((1, 1, 2, 3))):
            at = rng.randrange(32 if which == "cmd_data" else 0, len(data))  # past the driver actions
            data[at] ^= 1 << rng.randrange(8)
        mutated = replace(program, data={**program.data, which: bytes(data)})
        try:
            want: list[bytes] | None = u85_run(mutated, given)
        except (StreamError, NotInterpreted):
            want = None
        verdict, got = c_run(model, mutated, given, tmp_path)
        seen.add((want is not None, verdict.split()[0]))
        assert n or (verdict, want is not None) == ("computed 6", True)
        if want is None:
            assert not verdict.startswith("computed"), verdict
        elif verdict.startswith("computed"):
            assert got == want, verdict
        else:
            assert re.search(r"more than the model's buffer|more work than the model's bound", verdict), verdict
    assert {(True, "computed"), (False, "stream_error")} <= seen, seen
