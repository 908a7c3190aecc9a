"""Crafted streams that describe huge maps, kernels or regions end in a StreamError before anything is
allocated (issue 55, defect 3): a map is checked against its region and a fixed limit first."""

from __future__ import annotations

import random
import tracemalloc

import pytest
from ethosu import mlw_codec

from tests.command_stream.programs import block, cmd0, cmd1, fm, io, payload
from zoo.registry.command_stream import NotInterpreted, StreamError, run
from zoo.registry.command_stream.limits import MAX_ELEMENTS
from zoo.registry.command_stream.weights import WeightLayout, brick_count, brick_order

_PEAK = 64 << 20
"""Bytes a refused stream may allocate at most (tracemalloc sees numpy's buffers)."""


def _refused(program: object, inputs: list[bytes], error: type[StreamError], match: str, **kwargs: int) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(error, match=match):
            run(program, inputs, **kwargs)  # type: ignore[arg-type]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < _PEAK, f"the refusal allocated {peak:,} bytes first"


def _padded_max_pool(ofm: tuple[int, int, int], pads: tuple[int, int, int, int]) -> list[int]:
    """A MAX pool over a 3x3 IFM at 0 whose padding makes the OFM ``ofm``."""
    words = fm("IFM", 0, (3, 3, ofm[2])) + fm("OFM", 160, ofm) + block((1, 1))
    for side, pad in zip(("TOP", "LEFT", "BOTTOM", "RIGHT"), pads, strict=True):
        words += cmd0(f"NPU_SET_IFM_PAD_{side}", pad)
    words += cmd0("NPU_SET_OFM_PRECISION", 0x8101) + cmd1("NPU_SET_OFM_SCALE", 1, 0)
    return words + cmd0("NPU_OP_POOL", 0) + cmd0("NPU_OP_STOP", 0xFFFF)


def test_a_65536_square_ofm_over_a_3x3_ifm_is_refused_by_its_region() -> None:
    """Was a MemoryError in np.pad (32 GiB)."""
    program = payload(_padded_max_pool((65536, 65536, 1), (32767, 32767, 32766, 32766)), inputs=[io(0, (3, 3, 1))])
    _refused(program, [bytes(9)], StreamError,
             r"POOL at byte 0x[0-9a-f]+'s OFM is 4,294,967,296 bytes, more than region 1 holds \(256 bytes\)")


def test_a_4096_square_ofm_of_16_channels_is_refused_before_it_is_allocated() -> None:
    """Was more than 2 GiB allocated with no check first."""
    program = payload(_padded_max_pool((4096, 4096, 16), (2047, 2047, 2046, 2046)), inputs=[io(0, (3, 3, 16))])
    _refused(program, [bytes(144)], StreamError, r"OFM is 268,435,456 bytes, more than region 1 holds")


def test_a_map_its_region_holds_but_beyond_the_fixed_limit_stops_the_run() -> None:
    """The limit a real program could reach skips the level (not implemented), a region overflow fails it."""
    height = MAX_ELEMENTS // 4096 + 1
    program = payload(_padded_max_pool((height, 4096, 1), (height // 2, 2047, height - height // 2 - 3, 2046)),
                      inputs=[io(0, (3, 3, 1))], scratch=160 + height * 4096)
    with pytest.raises(NotInterpreted, match=rf"OFM of {height}x4096x1 = {height * 4096:,} elements, more than "
                                             rf"the interpreter's limit of {MAX_ELEMENTS:,}"):
        run(program, [bytes(9)])


def test_a_65536_square_kernel_with_a_short_weight_stream_is_refused_at_once() -> None:
    """Was more than 60 s listing the brick order before the stream's length was compared."""
    stream = bytes(mlw_codec.encode(list(range(-60, 60))))
    words = fm("IFM", 0, (65536, 65536, 1)) + fm("OFM", 64, (1, 1, 16)) + block((65536, 65536))
    words += cmd0("NPU_SET_WEIGHT_REGION", 0) + cmd1("NPU_SET_WEIGHT_BASE", 160) + cmd1("NPU_SET_WEIGHT_LENGTH", len(stream))
    words += cmd0("NPU_SET_SCALE_REGION", 0) + cmd1("NPU_SET_SCALE_BASE", 0) + cmd1("NPU_SET_SCALE_LENGTH", 160)
    words += cmd0("NPU_SET_OFM_BLK_DEPTH_M1", 15) + cmd0("NPU_OP_CONV") + cmd0("NPU_OP_STOP", 0xFFFF)
    program = payload(words, weights=bytes(160) + stream)
    _refused(program, [], StreamError, r"the weight stream decodes to 120 values, the op's shape and block depth 16 "
                                       r"take 2199023255552$")


@pytest.mark.parametrize(("scratch", "fast", "match"), [
    (-1, 0, r"the payload's scratch_size is -1 bytes: a size cannot be negative"),
    (16, -1, r"the fast scratch is -1 bytes: a size cannot be negative"),
])
def test_a_negative_region_size_is_refused(scratch: int, fast: int, match: str) -> None:
    """scratch_size = -1 was a ValueError (negative count)."""
    with pytest.raises(StreamError, match=match):
        run(payload(cmd0("NPU_OP_STOP"), scratch=scratch), [], fast_scratch=fast)


def test_a_region_beyond_the_fixed_limit_stops_the_run_unallocated() -> None:
    _refused(payload(cmd0("NPU_OP_STOP"), scratch=1 << 40), [], NotInterpreted,
             r"the payload's scratch_size of 1,099,511,627,776 bytes, more than the interpreter's limit")


def test_brick_count_is_the_brick_orders_length() -> None:
    rng = random.Random(7)
    for _ in range(300):
        depthwise = rng.random() < 0.3
        part_kernel = not depthwise and rng.random() < 0.4
        o = rng.randint(1, 70)
        layout = WeightLayout(o, rng.randint(1, 11), rng.randint(1, 11), o if depthwise else rng.randint(1, 80),
                              rng.choice([8, 16, 24, 32]), depthwise, part_kernel, rng.choice([8, 16]),
                              rng.choice([8, 4]), rng.choice([8, 4]), 8, rng.choice([4, 8]))
        assert brick_count(layout) == brick_order(layout).size, layout
