"""The U65-512's dual-core programs: PARALLEL_MODE DUAL_CORE_DEPTH, each core's weight and scale streams."""

from __future__ import annotations

import numpy as np
import pytest

from tests.command_stream.programs import NHWC, U65_512, block, cmd0, cmd1, fm, io, payload
from zoo.registry.command_stream import StreamError, parse, run


def _streams(w: np.ndarray, bias: np.ndarray, scale: int, shift: int, cores: int, depthwise: bool) -> list[tuple[bytes, bytes]]:
    """Each core's (scale records, weight stream), encoded by Vela's own codec: core k holds the OFM channels
    k, k + cores, ... in the brick order of an OFM block ``cores`` times shallower."""
    from ethosu import mlw_codec
    from ethosu.vela.weight_compressor import encode_bias

    out = []
    for core in range(cores):
        part = w[core::cores]
        if not len(part):
            out.append((b"", b""))
            continue
        stream, _ = mlw_codec.reorder_encode(8, 8, part, (16 + cores - 1 - core) // cores, depthwise, False, 8, 8, 8)
        records = b"".join(bytes(encode_bias(np.int64(b), scale, shift)) for b in bias[core::cores])
        out.append((records + bytes(-len(records) % 16), bytes(stream)))
    return out


def _program(x: np.ndarray, streams: list[tuple[bytes, bytes]], channels: int, cores: int,
             op: str = "NPU_OP_CONV") -> tuple[list[int], bytes]:
    h, wd, _ = x.shape
    data = b"".join(r + s for r, s in streams)
    words = cmd0("NPU_SET_PARALLEL_MODE", 1) if cores == 2 else []
    words += fm("IFM", 0, x.shape, zero_point=-3) + fm("OFM", 256, (h, wd, channels), NHWC, zero_point=5)
    words += block((3, 3), pad=1) + cmd0("NPU_SET_WEIGHT_REGION", 0) + cmd0("NPU_SET_SCALE_REGION", 0)
    at = 0
    for core, (records, stream) in enumerate(streams):
        suffix = "1" if core else ""
        if records:
            words += cmd1(f"NPU_SET_SCALE{suffix}_BASE", at) + cmd1(f"NPU_SET_WEIGHT{suffix}_BASE", at + len(records))
        words += cmd1(f"NPU_SET_SCALE{suffix}_LENGTH", len(records)) + cmd1(f"NPU_SET_WEIGHT{suffix}_LENGTH", len(stream))
        at += len(records) + len(stream)
    words += cmd0("NPU_SET_OFM_BLK_DEPTH_M1", 15) + cmd0(op) + cmd0("NPU_OP_STOP", 0xFFFF)
    return words, data


def _definition(x: np.ndarray, w: np.ndarray, bias: np.ndarray, scale: int, shift: int, depthwise: bool) -> np.ndarray:
    padded = np.pad(x.astype(np.int64) + 3, ((1, 1), (1, 1), (0, 0)))
    h, wd, _ = x.shape
    want = np.zeros((h, wd, w.shape[0]), dtype=np.int64)
    for y in range(h):
        for xx in range(wd):
            for o in range(w.shape[0]):
                window = padded[y:y + 3, xx:xx + 3, o:o + 1] if depthwise else padded[y:y + 3, xx:xx + 3, :]
                acc = int((window * w[o].astype(np.int64)).sum()) + int(bias[o])
                want[y, xx, o] = min(127, max(-128, ((acc * scale + (1 << (shift - 1))) >> shift) + 5))
    return want


@pytest.mark.parametrize(("channels", "depthwise"), [(20, False), (19, False), (1, False), (20, True)])
def test_a_convolution_split_over_two_cores_is_its_definition(channels: int, depthwise: bool) -> None:
    """Odd depths give core 0 one channel more; one channel leaves core 1 with empty streams (Regor writes
    only their lengths, 0)."""
    rng = np.random.default_rng(channels)
    x = rng.integers(-128, 128, size=(4, 5, channels if depthwise else 3)).astype(np.int8)
    w = rng.integers(-127, 128, size=(channels, 3, 3, 1 if depthwise else 3)).astype(np.int16)
    bias = rng.integers(-5000, 5000, size=channels)
    scale, shift = 1 << 30, 36
    op = "NPU_OP_DEPTHWISE" if depthwise else "NPU_OP_CONV"
    want = _definition(x, w, bias, scale, shift, depthwise)
    for cores, config in ((2, U65_512), (1, None)):
        words, data = _program(x, _streams(w, bias, scale, shift, cores, depthwise), channels, cores, op)
        kwargs = {"config": config} if config else {}
        program = payload(words, weights=data, scratch=1024, inputs=[io(0, x.shape)],
                          outputs=[io(256, (4, 5, channels))], **kwargs)
        (out,) = run(program, [x.tobytes()])
        assert np.array_equal(np.frombuffer(out, dtype=np.int8).reshape(4, 5, channels), want), f"{cores} core(s)"


def test_the_u65_512_has_two_cores_each_with_its_own_shram() -> None:
    config = parse(payload(cmd0("NPU_OP_STOP"), config=U65_512).data["cmd_data"]).config
    assert (config.cores, config.macs_per_cycle, config.shram_kib) == (2, 512, 96)


def test_a_core_without_channels_must_have_empty_streams() -> None:
    rng = np.random.default_rng(5)
    x = rng.integers(-128, 128, size=(4, 5, 3)).astype(np.int8)
    w = rng.integers(-127, 128, size=(1, 3, 3, 3)).astype(np.int16)
    streams = _streams(w, np.zeros(1, dtype=np.int64), 1 << 30, 36, 2, False)
    words, data = _program(x, streams, 1, 2)
    words = words[:-2] + cmd1("NPU_SET_WEIGHT1_LENGTH", 16) + words[-2:]
    program = payload(words, weights=data, scratch=1024, inputs=[io(0, x.shape)], config=U65_512)
    with pytest.raises(StreamError, match="core 1 has no OFM channel, yet its stream lengths are not 0"):
        run(program, [x.tobytes()])
    bad_mode = cmd0("NPU_SET_PARALLEL_MODE", 2) + words[1:]
    with pytest.raises(StreamError, match="PARALLEL_MODE 2, which is reserved"):
        run(payload(bad_mode, weights=data, scratch=1024, inputs=[io(0, x.shape)], config=U65_512), [x.tobytes()])
