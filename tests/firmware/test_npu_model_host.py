"""npu_model.c and npu_mlw.c, the stand-in's C model of the NPU, built with the host's gcc under
``-fsanitize=address,undefined`` (tests/firmware/npu_model_host.c) and run on hand-built command streams:
bit-equal to the host interpreter wherever both compute, bounded in work, and free of undefined behaviour
(issue 55). The QEMU runs of tests/firmware/test_firmware_project.py check the same model on real programs."""

from __future__ import annotations

import itertools
import re
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.command_stream.programs import block, cmd0, cmd1, fm, io, payload
from tests.firmware.mlw_streams import Slice, long_code, stream
from zoo.registry.command_stream import StreamError, run
from zoo.registry.firmware.project import NPU_MODEL_FILES
from zoo.registry.pte.vela_payload import VelaPayload

# slow: the module's first test builds the C sources with the sanitizers, 2 to 4 s on two busy cores.
pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("gcc") is None, reason="no host gcc")]

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE.parents[1] / "zoo" / "registry" / "firmware" / "templates"
NPU_MODEL_SOURCES = tuple(f for f in NPU_MODEL_FILES if f.endswith(".c"))
SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The model and its decoder, with the harness, as the firmware compiles them (-Werror) plus the sanitizers."""
    out = tmp_path_factory.mktemp("npu_model") / "npu_model_host"
    build = subprocess.run(["gcc", "-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", *SANITIZE, f"-I{TEMPLATES}", f"-I{HERE}",
                            *(str(TEMPLATES / f) for f in NPU_MODEL_SOURCES), str(HERE / "npu_model_host.c"),
                            "-o", str(out)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    return out


def c_run(model: Path, program: VelaPayload, inputs: list[bytes], tmp_path: Path, *, fast_scratch: int = 0,
          timeout: float = 60) -> tuple[str, list[bytes]]:
    """The C model's verdict line and its outputs, for the payload and inputs ``run`` takes."""
    scratch = bytearray(program.scratch_size)
    for given, info in zip(inputs, program.inputs, strict=True):
        scratch[info.offset:info.offset + len(given)] = given
    files = {name: tmp_path / name for name in ("cmd", "weights", "scratch", "out")}
    files["cmd"].write_bytes(program.data["cmd_data"])
    files["weights"].write_bytes(program.data["weight_data"])
    files["scratch"].write_bytes(bytes(scratch))
    done = subprocess.run([str(model), "run", *(str(files[n]) for n in ("cmd", "weights", "scratch")), str(fast_scratch),
                           str(files["out"])], capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0 and not done.stderr, done.stdout + done.stderr[-3000:]
    region = files["out"].read_bytes()
    return done.stdout.strip(), [region[o.offset:o.offset + o.elements * o.element_size] for o in program.outputs]


def _conv(x: np.ndarray[Any, Any], w: np.ndarray[Any, Any], bias: np.ndarray[Any, Any], *, ifm_zp: int, shift: int,
          pad: int, stream: bytes | None = None) -> VelaPayload:
    """One CONV of ``x`` (H, W, C int8) by ``w`` (O, KH, KW, C): scale records and weights (``w`` encoded, or
    ``stream``) DMA'd to the scratch."""
    from ethosu import mlw_codec
    from ethosu.vela.weight_compressor import encode_bias

    if stream is None:
        stream = bytes(mlw_codec.reorder_encode(8, 8, w.astype(np.int16), 16, False, False, 8, 8, 8)[0])
    records = b"".join(bytes(encode_bias(np.int64(b), 1 << 30, shift)) for b in bias)
    records += bytes(-len(records) % 16)
    h, wd, c = x.shape
    o, kh, kw, _ = w.shape
    ofm = (h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1, o)
    at = -(-(h * wd * c + 4 * ofm[0] * ofm[1] * o) // 16) * 16
    words = cmd0("NPU_SET_DMA0_SRC_REGION", 0) + cmd1("NPU_SET_DMA0_SRC", 0) + cmd0("NPU_SET_DMA0_DST_REGION", 1)
    words += cmd1("NPU_SET_DMA0_DST", at) + cmd1("NPU_SET_DMA0_LEN", len(records) + len(stream)) + cmd0("NPU_OP_DMA_START")
    words += fm("IFM", 0, x.shape, zero_point=ifm_zp) + fm("OFM", h * wd * c, ofm, zero_point=5) + block((kh, kw), pad=pad)
    words += cmd0("NPU_SET_WEIGHT_REGION", 1) + cmd1("NPU_SET_WEIGHT_BASE", at + len(records))
    words += cmd1("NPU_SET_WEIGHT_LENGTH", len(stream)) + cmd0("NPU_SET_SCALE_REGION", 1)
    words += cmd1("NPU_SET_SCALE_BASE", at) + cmd1("NPU_SET_SCALE_LENGTH", len(records))
    words += cmd0("NPU_SET_OFM_BLK_DEPTH_M1", 15) + cmd0("NPU_OP_DMA_WAIT") + cmd0("NPU_OP_CONV") + cmd0("NPU_OP_STOP", 0xFFFF)
    return payload(words, weights=records + stream, scratch=at + len(records) + len(stream),
                   inputs=[io(0, x.shape)], outputs=[io(h * wd * c, ofm)])


@pytest.mark.parametrize("ifm_zp", [-32768, 32767, -300, 0])
def test_an_ifm_zero_point_of_16_bits_gives_the_host_interpreters_bytes(model: Path, tmp_path: Path, ifm_zp: int) -> None:
    """The IFM zero point is a signed 16-bit register: an 8-bit value less it takes 17 bits, which the model
    kept in an int16 (with -32768 every output byte of mnist's first convolution differed from the host's)."""
    rng = np.random.default_rng(55)
    x = rng.integers(-128, 128, size=(5, 6, 3)).astype(np.int8)
    w = rng.integers(-127, 128, size=(8, 3, 3, 3))
    bias = rng.integers(-5000, 5000, size=8)
    reach = (128 + abs(ifm_zp)) * 127 * 27  # the accumulator's bound: the output uses about 7 bits of it
    program = _conv(x, w, bias, ifm_zp=ifm_zp, shift=30 + max(reach.bit_length() - 7, 0), pad=1)
    (want,) = run(program, [x.tobytes()])
    verdict, (got,) = c_run(model, program, [x.tobytes()], tmp_path)
    assert verdict == "computed 2"
    assert got == want, f"C model {list(got[:12])}..., host interpreter {list(want[:12])}..."
    assert len(set(want)) > 8  # the outputs are not all clamped


def test_a_deep_sum_is_exact_where_a_32_bit_partial_sum_would_overflow(model: Path, tmp_path: Path) -> None:
    """1024 channels of (127 - -32768) * 200, then as many of * -200: the sum passes 2**31 half-way and comes back
    to 0, which the host's int64 sum computes; a 32-bit partial sum over the channels overflowed (UBSan stops it)."""
    x = np.full((1, 1, 1024), 127, dtype=np.int8)
    w = np.concatenate([np.full(512, 200), np.full(512, -200)]).reshape(1, 1, 1, 1024)
    program = _conv(x, w, np.array([1000]), ifm_zp=-32768, shift=40, pad=0)
    (want,) = run(program, [x.tobytes()])
    verdict, (got,) = c_run(model, program, [x.tobytes()], tmp_path)
    assert (verdict, got) == ("computed 2", want)


def _stride_zero_conv(size: int) -> VelaPayload:
    """A 1x1 CONV to a ``size`` x ``size`` OFM whose strides are 0, over a 3x3 IFM at the top-left of a padding of
    ``size - 3`` below and right: every write lands on one byte, in bounds (issue 55's 65536**2 OFM)."""
    from ethosu import mlw_codec
    from ethosu.vela.weight_compressor import encode_bias

    stream = bytes(mlw_codec.reorder_encode(8, 8, np.ones((1, 1, 1, 1), dtype=np.int16), 16, False, False, 8, 8, 8)[0])
    records = bytes(encode_bias(np.int64(0), 1 << 30, 30)) + bytes(6)
    words = fm("IFM", 0, (3, 3, 1)) + fm("OFM", 16, (size, size, 1)) + block((1, 1))
    for name in ("OFM_STRIDE_X", "OFM_STRIDE_Y", "OFM_STRIDE_C"):
        words += cmd1(f"NPU_SET_{name}", 0)
    words += cmd0("NPU_SET_IFM_PAD_BOTTOM", size - 3) + cmd0("NPU_SET_IFM_PAD_RIGHT", size - 3)
    words += cmd0("NPU_SET_WEIGHT_REGION", 0) + cmd1("NPU_SET_WEIGHT_BASE", 16) + cmd1("NPU_SET_WEIGHT_LENGTH", len(stream))
    words += cmd0("NPU_SET_SCALE_REGION", 0) + cmd1("NPU_SET_SCALE_BASE", 0) + cmd1("NPU_SET_SCALE_LENGTH", 16)
    words += cmd0("NPU_SET_OFM_BLK_DEPTH_M1", 0) + cmd0("NPU_OP_CONV") + cmd0("NPU_OP_STOP", 0xFFFF)
    return payload(words, weights=records + stream, scratch=64, inputs=[io(0, (3, 3, 1))], outputs=[io(16, (1,))])


def _big_pool(ofm: int, kernel: int) -> VelaPayload:
    """A MAX pool to an ``ofm`` x ``ofm`` map, ``kernel`` x ``kernel`` each: OFM and IFM fit their buffers."""
    ifm = (ofm + kernel - 1, ofm + kernel - 1, 1)
    words = fm("IFM", 0, ifm) + fm("OFM", ifm[0] * ifm[1], (ofm, ofm, 1)) + block((kernel, kernel))
    words += cmd0("NPU_SET_OFM_PRECISION", 0x8101) + cmd1("NPU_SET_OFM_SCALE", 1, 0) + cmd0("NPU_OP_POOL", 0)
    return payload(words + cmd0("NPU_OP_STOP", 0xFFFF), scratch=ifm[0] * ifm[1] + ofm * ofm,
                   inputs=[io(0, ifm)], outputs=[io(ifm[0] * ifm[1], (ofm, ofm, 1))])


def test_the_work_of_an_operation_is_bounded_and_the_reason_printed(model: Path, tmp_path: Path) -> None:
    """Each write in bounds, the IFM and weights within their buffers: before the bound, the stride-0 OFM's 2**32
    writes ran past the 30 s timeout here (in QEMU they would hold the firmware), and the pool's 2**29.6 taps
    ran for seconds."""
    x = bytes(range(9))
    verdict, _ = c_run(model, _stride_zero_conv(65536), [x], tmp_path, timeout=30)
    assert re.fullmatch(r"not_implemented 0 CONV at byte 0x[0-9a-f]+: an OFM of 65536x65536x1 elements, more than "
                        r"region 1's 64 bytes \(its writes would overlap\)", verdict), verdict
    small = _stride_zero_conv(6)  # the same with a 6x6 OFM: computed, as the host computes it
    assert c_run(model, small, [x], tmp_path)[1] == run(small, [x])
    pool = _big_pool(170, 170)
    verdict, _ = c_run(model, pool, [bytes(339 * 339)], tmp_path, timeout=30)
    assert re.fullmatch(r"not_implemented 0 POOL at byte 0x[0-9a-f]+: 28900 OFM elements of 28900 taps each, more work "
                        r"than the model's bound \(NPU_MODEL_WORK_LIMIT 268435456 multiply-accumulates\)", verdict), verdict
    pool = _big_pool(20, 20)
    given = np.random.default_rng(1).integers(0, 256, size=39 * 39).astype(np.uint8).tobytes()
    assert c_run(model, pool, [given], tmp_path) == ("computed 1", run(pool, [given]))


def test_a_0_byte_dma_from_an_absent_fast_scratch_is_no_undefined_behaviour(model: Path, tmp_path: Path) -> None:
    """No fast scratch: region 2 is a null base of 0 bytes, and a 0-byte copy from it is in bounds (the host
    interpreter runs it); memmove with a null pointer was undefined behaviour (UBSan: nonnull-attribute)."""
    words = cmd0("NPU_SET_DMA0_SRC_REGION", 2) + cmd1("NPU_SET_DMA0_SRC", 0) + cmd0("NPU_SET_DMA0_DST_REGION", 1)
    words += cmd1("NPU_SET_DMA0_DST", 0) + cmd1("NPU_SET_DMA0_LEN", 0) + cmd0("NPU_OP_DMA_START")
    program = payload(words + cmd0("NPU_OP_STOP"), scratch=16, outputs=[io(0, (16,))])
    assert c_run(model, program, [], tmp_path) == ("computed 1", run(program, []))
    one = payload(words[:-3] + cmd1("NPU_SET_DMA0_LEN", 1) + cmd0("NPU_OP_DMA_START") + cmd0("NPU_OP_STOP"), scratch=16)
    with pytest.raises(StreamError, match="region 2, which holds 0x0 bytes"):
        run(one, [])
    assert c_run(model, one, [], tmp_path)[0] == ("stream_error 0 DMA_START at byte 0x20: reading its source reaches "
                                                  "bytes 0x0..0x1 of region 2, which holds 0x0 bytes")


def test_a_weight_stream_shorter_than_the_walk_is_malformed_in_both(model: Path, tmp_path: Path) -> None:
    """The brick walk stops at the stream's end (a walk over a kernel the stream does not hold is bounded by the
    stream, not by the kernel); the interpreter also calls the stream malformed."""
    from ethosu import mlw_codec

    x = np.zeros((2, 2, 3), dtype=np.int8)
    program = _conv(x, np.ones((8, 1, 1, 3)), np.zeros(8), ifm_zp=0, shift=30, pad=0,
                    stream=bytes(mlw_codec.encode([1, 2, 3])))
    with pytest.raises(StreamError, match="the weight stream decodes to 3 values, the op's shape"):
        run(program, [x.tobytes()])
    verdict, _ = c_run(model, program, [x.tobytes()], tmp_path)
    assert re.fullmatch(r"stream_error 1 CONV at byte 0x[0-9a-f]+: the weight stream decodes to 3 values, the op's "
                        r"shape and block depth 8 take more", verdict), verdict


ZERO_RUN, WEIGHT, MODE, FIRST, LONG = ("a reserved zero-run divisor", "a reserved weight divisor",
                                       "a slice that changes the zero-run mode without a new palette",
                                       "a first slice without a palette of its own", "a weight code above 9 bits")
"""What npu_mlw.c does not model of the streams Vela's decoder takes (docs/firmware-run.md lists them): each
stops the call as not implemented (-2), not as a malformed stream."""


def _refused_for(*streams: tuple[tuple[int, int, bool], ...]) -> str | None:
    """The documented refusal the C decoder gives the concatenated ``streams`` (each its slices' zero-run divisor,
    weight divisor and new-palette flag, then an end-of-stream marker), or None: the first in the stream's order."""
    z_prev = None
    for slices in streams:
        for i, (z, w, new_palette) in enumerate(slices):
            if z in (4, 5):
                return ZERO_RUN
            if not new_palette and not i:
                return FIRST
            if not new_palette and (z == 6) != (z_prev == 6):
                return MODE
            if w == 6:
                return WEIGHT
            z_prev = z
    return None


def _with_divisors(data: bytes, z_div: int, w_div: int) -> bytes:
    """A one-slice stream with its header's zero-run divisor (bits 0-2) and weight divisor (bits 18-20) replaced."""
    v = int.from_bytes(data, "little") & ~0x7 & ~(0x7 << 18)
    return (v | z_div | w_div << 18).to_bytes(len(data), "little")


VELA_DECODES = """
import struct, sys
import numpy as np
from zoo.registry.command_stream.decoder import Decoder
data, at = open(sys.argv[1], "rb").read(), 0
with Decoder() as vela:
    while at < len(data):
        (n,) = struct.unpack_from("<I", data, at)
        values, error = vela.decode(data[at + 4:at + 4 + n])
        at += 4 + n
        print("refused" if error is not None else " ".join(["ok", *map(str, np.frombuffer(values, np.int16))]))
"""


def _vela_decodes(streams: Path) -> list[str | None]:
    """Vela's mlw_codec.decode of each stream of the file (as the C harness reads it), in the harness's words, or
    None where it refuses. In a process of its own: the decoder forks a child for each stream it refuses, which
    costs a second apiece in a process that has loaded torch (here, when the suite has)."""
    import sys

    done = subprocess.run([sys.executable, "-c", VELA_DECODES, str(streams)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return [None if line == "refused" else line for line in done.stdout.splitlines()]


def test_the_c_weight_decoder_takes_what_vela_decodes_but_the_documented_reserved_fields(model: Path,
                                                                                       tmp_path: Path) -> None:
    """1,252 crafted streams through npu_mlw.c and Vela's mlw_codec.decode: two slices with every zero-run
    divisor, weight divisor and palette flag; first slices without a palette; weight codes around 512; and
    Vela's own streams of five
    weight sets with every pair of divisors in the header. Where the C decoder decodes, Vela's decodes the same
    values; where it refuses a stream Vela decodes, it is exactly for the reserved fields the docs list, and as
    not modelled (the call's outputs not computed), not as a malformed stream."""
    from ethosu import mlw_codec

    cases: list[tuple[bytes, str | None]] = []
    for z1, z2, w2, palette in itertools.product(range(7), range(7), range(8), (False, True)):
        slices = (Slice(z1, 7, True, 3), Slice(z2, w2, palette, 2))
        cases.append((stream(*slices), _refused_for(((z1, 7, True), (z2, w2, palette)))))
    # A first slice without a palette: of the stream, or after an end-of-stream marker (Vela's decoder starts from a
    # palette of zeros, or keeps the one before the marker).
    for z, w in itertools.product(range(7), range(8)):
        cases.append((stream(Slice(z, w, False, 3)), _refused_for(((z, w, False),))))
        cases.append((stream(Slice(0, 7, True, 3)) + stream(Slice(z, w, False, 2)),
                      _refused_for(((0, 7, True),), ((z, w, False),))))
    cases += [(long_code(q, r), LONG if q << 5 | r >= 512 else None) for q in range(12, 24) for r in (0, 17, 31)]
    rng = np.random.default_rng(55)
    for weights in ([0, 0, 0, 5, 0, 0, -3] * 5, rng.integers(-127, 128, 40), rng.integers(-3, 4, 60),
                    rng.integers(-255, 256, 25), rng.choice([0, 0, 0, 0, 9, -9], 80)):
        encoded = bytes(mlw_codec.encode([int(v) for v in weights]))
        cases += [(_with_divisors(encoded, z, w), _refused_for(((z, w, True),))) for z in range(8) for w in range(8)]
    (tmp_path / "streams").write_bytes(b"".join(struct.pack("<I", len(d)) + d for d, _ in cases))
    done = subprocess.run([str(model), "mlw", str(tmp_path / "streams")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and not done.stderr, done.stderr[-3000:]
    said = done.stdout.splitlines()
    assert len(said) == len(cases) == 1252
    seen: dict[str, int] = {}
    for (data, refusal), line, vela in zip(cases, said, _vela_decodes(tmp_path / "streams"), strict=True):
        kind = "vela refuses" if vela is None else refusal or "both decode"
        seen[kind] = seen.get(kind, 0) + 1
        if vela is None:  # C never takes what Vela refuses (it may stop first at a field it does not model)
            assert line.startswith("refused "), (data.hex(), line[:200])
        elif refusal is not None:
            assert line.startswith(f"refused -2 {refusal}, which Vela's decoder takes and this one does not model "
                                   "(at bit "), (data.hex(), refusal, line[:200])
        else:
            assert line == vela, (data.hex(), line[:200], vela[:200])
    assert seen == {"both decode": 321, ZERO_RUN: 414, WEIGHT: 43, MODE: 64, FIRST: 75, LONG: 24, "vela refuses": 311}, seen
    docs = " ".join((HERE.parents[1] / "docs" / "firmware-run.md").read_text().split())
    assert all(what in docs for what in (ZERO_RUN, WEIGHT, MODE, FIRST, LONG)), "docs/firmware-run.md lists what npu_mlw.c refuses"


def _elementwise(rng: np.random.Generator) -> tuple[VelaPayload, int]:
    """One ELEMENTWISE of random mode, maps (8- or 32-bit IFMs, 8-, 16- or 32-bit OFMs, NHWC or NHCWB16), IFM2
    form (a tensor, broadcast in any of H, W, C, or a scalar; reversed or not), zero points, operand and OFM
    scales, rounding and clamp (its low end above its high end too), optionally through a LUT that a DMA puts
    in the SHRAM; the inputs fill the IFM and IFM2. Returns the program and its input's size."""
    mode = int(rng.choice([0, 1, 2, 3, 4, 6]))
    bits = int(rng.choice([8, 32], p=[0.7, 0.3]))
    ofm_bits = int(rng.choice([8, 16, 32], p=[0.6, 0.2, 0.2]))
    shape = (int(rng.integers(1, 5)), int(rng.integers(1, 5)), int(rng.integers(1, 21)))
    broadcast = int(rng.integers(8)) * bool(rng.integers(2)) | int(rng.choice([0, 0x40])) | int(rng.choice([0, 0, 0x80]))
    ifm2 = (1 if broadcast & 1 else shape[0], 1 if broadcast & 2 else shape[1], 1 if broadcast & 4 else shape[2])
    e = bits // 8
    sizes = [shape[0] * shape[1] * 16 * -(-shape[2] // 16) * e, ifm2[0] * ifm2[1] * 16 * -(-ifm2[2] // 16) * e]
    lut = bits == 8 and ofm_bits == 8 and rng.integers(4) == 0
    at = [0, sizes[0], sizes[0] + sizes[1]]

    def zp() -> int:
        return 0 if bits == 32 else int(rng.integers(-300, 300))

    words = []
    if lut:  # a table in slot 3 of u55-128's 24 KiB SHRAM: its last 2 KiB hold the 8 slots
        words += cmd0("NPU_SET_DMA0_SRC_REGION", 0) + cmd1("NPU_SET_DMA0_SRC", 0) + cmd0("NPU_SET_DMA0_DST_REGION", 0x103)
        words += cmd1("NPU_SET_DMA0_DST", 24 * 1024 - 2048 + 3 * 256) + cmd1("NPU_SET_DMA0_LEN", 256)
        words += cmd0("NPU_OP_DMA_START") + cmd0("NPU_OP_DMA_WAIT")
    layouts = [int(rng.integers(2)) for _ in range(3)]
    words += fm("IFM", at[0], shape, layouts[0], zp(), bits) + fm("IFM2", at[1], ifm2, layouts[1], zp(), bits)
    words += fm("OFM", at[2], shape, layouts[2], int(rng.integers(-20, 20)) if ofm_bits < 32 else 0, ofm_bits)
    scale_mode = int(rng.choice([0, 1, 2], p=[0.2, 0.4, 0.4]))
    round_mode = int(rng.choice([0, 2], p=[0.2, 0.8]))
    words += cmd0("NPU_SET_IFM_PRECISION", 1 | layouts[0] << 6 | {8: 0, 32: 2}[bits] << 2 | scale_mode << 8 | round_mode << 14)
    ofm_code = {8: 0, 16: 1, 32: 2}[ofm_bits]
    words += cmd0("NPU_SET_OFM_PRECISION", 1 | ofm_code << 1 | layouts[2] << 6 | int(mode not in (3, 4)) << 8 | round_mode << 14)
    words += cmd0("NPU_SET_IFM2_BROADCAST", broadcast) + cmd0("NPU_SET_IFM2_SCALAR", int(rng.integers(0, 1 << 16)))
    words += cmd1("NPU_SET_OPA_SCALE", int(rng.integers(1 << 20, 1 << 31)), int(rng.integers(16, 40)))
    words += cmd1("NPU_SET_OPB_SCALE", 1 if scale_mode == 0 or rng.integers(4) else 3)
    scaled_down = ofm_bits == 32 or mode in (3, 4)
    words += cmd1("NPU_SET_OFM_SCALE", 1 if scaled_down else int(rng.integers(1 << 20, 1 << 31)),
                  0 if scaled_down else int(rng.integers(20 if mode else 40, 45 if mode else 60)))
    if ofm_bits == 32 and not lut:
        low, high = -32768, 32767
    elif lut:
        low, high = -128, 127
    else:
        low, high = sorted(int(v) for v in rng.integers(-200, 200, size=2))[::int(rng.choice([1, 1, 1, -1]))]
    words += cmd0("NPU_SET_ACTIVATION", (16 + 3) if lut else 0) + cmd0("NPU_SET_ACTIVATION_MIN", low)
    words += cmd0("NPU_SET_ACTIVATION_MAX", high) + cmd0("NPU_SET_ACC_FORMAT") + cmd0("NPU_OP_ELEMENTWISE", mode)
    ofm = shape[0] * shape[1] * 16 * -(-shape[2] // 16) * ofm_bits // 8
    table = rng.integers(0, 256, size=256, dtype=np.uint8).tobytes()
    program = payload(words + cmd0("NPU_OP_STOP", 0xFFFF), weights=table, scratch=at[2] + ofm,
                      inputs=[io(0, (at[2],))], outputs=[io(at[2], (ofm,))])
    return program, at[2]


def test_random_elementwise_operations_compute_as_on_the_host_interpreter(model: Path, tmp_path: Path) -> None:
    """160 ELEMENTWISE operations of every mode and operand form the host interpreter models (issue 58): where it
    computes, the C model computes the same bytes; where it refuses, the C model refuses too; no sanitizer error."""
    from zoo.registry.command_stream import NotInterpreted

    rng = np.random.default_rng(58)
    seen: dict[str, int] = {}
    for i in range(160):
        program, size = _elementwise(rng)
        given = [rng.integers(0, 256, size=size, dtype=np.uint8).tobytes()]
        try:
            want: list[bytes] | None = run(program, given)
        except (StreamError, NotInterpreted) as e:
            want, why = None, str(e)
        verdict, got = c_run(model, program, given, tmp_path)
        if want is None:
            assert not verdict.startswith("computed"), (i, why, verdict)
        else:
            assert verdict in ("computed 1", "computed 2"), (i, verdict)
            assert got == want, i
        kind = "refused" if want is None else "computed"
        seen[kind] = seen.get(kind, 0) + 1
    assert seen["computed"] >= 100 and seen["refused"] >= 20, seen


def test_an_unsigned_16_bit_ofm_reads_its_clamp_as_unsigned_as_on_the_host(model: Path, tmp_path: Path) -> None:
    """ACTIVATION_MIN/MAX in the OFM's signedness (Regor writes them from the int16 minimum to the uint16 maximum):
    a uint16 OFM clamped to [5000, 50000], whose ``0xc350`` read as two's complement made every value 50000."""
    from tests.command_stream.test_elementwise import unsigned_16_clamp

    given = [np.arange(-128, 128, 8)[:30].astype(np.int8).tobytes()]
    want = run(unsigned_16_clamp(), given)
    verdict, got = c_run(model, unsigned_16_clamp(), given, tmp_path)
    assert verdict == "computed 1", verdict
    assert got == want, f"C model {list(np.frombuffer(got[0], '<u2'))}, host {list(np.frombuffer(want[0], '<u2'))}"
    assert len(set(np.frombuffer(want[0], "<u2"))) > 3


@pytest.mark.parametrize(("channels", "depthwise"), [(20, False), (19, False), (1, False), (20, True)])
def test_a_convolution_split_over_the_u65_512s_two_cores_gives_the_host_interpreters_bytes(
        model: Path, tmp_path: Path, channels: int, depthwise: bool) -> None:
    """PARALLEL_MODE DUAL_CORE_DEPTH, each core's weight and scale streams (tests/command_stream/test_dual_core.py's
    programs): the model stopped at it as not implemented before issue 58."""
    from tests.command_stream.programs import U65_512
    from tests.command_stream.test_dual_core import _program, _streams

    rng = np.random.default_rng(channels)
    x = rng.integers(-128, 128, size=(4, 5, channels if depthwise else 3)).astype(np.int8)
    w = rng.integers(-127, 128, size=(channels, 3, 3, 1 if depthwise else 3)).astype(np.int16)
    bias = rng.integers(-5000, 5000, size=channels)
    words, data = _program(x, _streams(w, bias, 1 << 30, 36, 2, depthwise), channels, 2,
                           "NPU_OP_DEPTHWISE" if depthwise else "NPU_OP_CONV")
    program = payload(words, weights=data, scratch=1024, inputs=[io(0, x.shape)], outputs=[io(256, (4, 5, channels))],
                      config=U65_512)
    (want,) = run(program, [x.tobytes()])
    assert c_run(model, program, [x.tobytes()], tmp_path) == ("computed 1", [want])
    bad = payload(words[:-2] + cmd1("NPU_SET_WEIGHT1_LENGTH", 16) + words[-2:], weights=data, scratch=1024,
                  inputs=[io(0, x.shape)], config=U65_512)
    if channels == 1:  # core 1 has no channel: its streams must be empty, in both
        with pytest.raises(StreamError, match="core 1 has no OFM channel"):
            run(bad, [x.tobytes()])
        verdict, _ = c_run(model, bad, [x.tobytes()], tmp_path)
        assert re.fullmatch(r"stream_error 0 CONV at byte 0x[0-9a-f]+: core 1 has no OFM channel, yet its stream "
                            r"lengths are not 0", verdict), verdict
