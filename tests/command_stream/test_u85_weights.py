"""The U85 weight and scale formats (``command_stream/u85/weights.py``): FWD in each of its modes, the brick
orders' bijection onto OHWI, the scale records, and the streams Vela 5.1.0 wrote for mnist on u85-256."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from zoo.registry.command_stream.decoder import Decoder
from zoo.registry.command_stream.errors import NotInterpreted, StreamError
from zoo.registry.command_stream.u85 import weights as w85

DATA = Path(__file__).parent / "data" / "mnist_u85-256_weights.npz"


def _bits(fields: list[tuple[int, int]]) -> bytes:
    """``(width, value)`` fields packed from bit 0 of byte 0 up, padded with zeros to 32 bytes."""
    out, pos = 0, 0
    for width, value in fields:
        out |= (value & ((1 << width) - 1)) << pos
        pos += width
    size = -(-pos // 256) * 32
    return out.to_bytes(size, "little")


def _fold(v: int) -> int:
    return (abs(v) << 1) | (1 if v < 0 else 0)


def _fwd(values: list[int], mode: str, adjust: int = 0, palette: list[int] | None = None) -> bytes:
    """An FWD stream as ``mlw_encode_fwd.cpp`` lays it out (written from the format, for the test)."""
    pal = (palette or []) + [0] * (16 - len(palette or []))
    head = [(1, mode == "raw"), (1, mode == "lut2"), (102, 0), (8, adjust)] + [(9, _fold(p)) for p in pal]
    if mode == "raw":
        body = [(8, v + adjust) for v in values]
    else:
        body = [(2 if mode == "lut2" else 4, pal.index(v)) for v in values]
    return _bits([(w, int(v)) for w, v in head] + body)


def test_fwd_raw_takes_the_zero_adjustment_off() -> None:
    values = list(range(-100, 151, 7))  # above 127: Regor adjusts the raw bytes by 127 - 150
    got = w85.fwd_values(_fwd(values, "raw", adjust=-23), len(values), "test")
    assert got.tolist() == values


@pytest.mark.parametrize(("mode", "palette"), [("lut4", [3, -7, 0, 120, -128, 5]), ("lut2", [0, -1, 9, -200])])
def test_fwd_palettes_index_their_folded_entries(mode: str, palette: list[int]) -> None:
    rng = np.random.default_rng(1)
    values = [palette[i] for i in rng.integers(0, len(palette), 77)]
    assert w85.fwd_values(_fwd(values, mode, palette=palette), len(values), "test").tolist() == values


def test_fwd_refuses_reserved_header_bits_and_a_short_stream() -> None:
    data = bytearray(_fwd([1, 2, 3], "raw"))
    data[5] |= 4
    with pytest.raises(NotInterpreted, match="reserved bits 2-103"):
        w85.fwd_values(bytes(data), 3, "test")
    with pytest.raises(StreamError, match="take 65"):
        w85.fwd_values(_fwd([1, 2, 3], "raw"), 33, "test")


LAYOUTS = [
    # ofm, kh, kw, ifm, ofm block, ifm block, ublock depth, traversal, bits, stride, dilation, sparse, cores, macs
    w85.Layout(16, 3, 3, 1, 16, 16, 8, w85.PART_KERNEL, 8, (1, 1), (1, 1), True, 1, 256),
    w85.Layout(40, 5, 3, 24, 16, 16, 16, w85.PART_KERNEL, 8, (2, 2), (1, 1), False, 2, 512),
    w85.Layout(24, 3, 3, 1, 16, 1, 16, w85.DEPTHWISE, 8, (2, 1), (1, 1), False, 4, 1024),
    w85.Layout(72, 5, 5, 1, 64, 1, 64, w85.DEPTHWISE, 8, (1, 1), (1, 1), False, 4, 2048),
    w85.Layout(70, 1, 1, 200, 32, 64, 16, w85.DEPTH_FIRST, 8, (1, 1), (1, 1), False, 2, 512),
    w85.Layout(20, 3, 3, 300, 16, 128, 8, w85.DEPTH_FIRST, 8, (1, 1), (1, 1), True, 1, 128),
    w85.Layout(8, 9, 10, 5, 8, 16, 8, w85.PART_KERNEL, 8, (1, 1), (2, 1), False, 1, 256),
]


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda lay: f"{lay.traversal}-{lay.macs}")
@pytest.mark.parametrize("fwd", [False, True])
def test_every_brick_order_places_each_weight_once(layout: w85.Layout, fwd: bool) -> None:
    if fwd and layout.traversal == w85.DEPTHWISE:
        pytest.skip("Regor writes depthwise weights in SWD only")
    orders = w85.brick_order(layout, fwd)
    assert len(orders) == (1 if fwd else layout.cores)
    shape = (layout.ofm_depth, layout.kernel_h, layout.kernel_w, layout.ifm_depth)
    expected = np.arange(int(np.prod(shape))).reshape(shape) + 1
    streams = [np.where(o >= 0, expected.reshape(-1)[o] * (o >= 0), 0) for o in orders]
    assert (w85.scatter(streams, orders, shape, "test") == expected).all()


def test_scale_records_of_both_accumulators() -> None:
    acc32 = (-5).to_bytes(4, "little", signed=True) + (0x7FFF_FFFF).to_bytes(4, "little") + bytes([63, 0])
    acc48 = (-(1 << 40)).to_bytes(6, "little", signed=True) + (0x7FFF).to_bytes(2, "little") + bytes([17, 0])
    r32 = w85.scale_records(acc32 + bytes(6), 1, False, "test")
    r48 = w85.scale_records(acc48 + bytes(6), 1, True, "test")
    assert (r32.bias[0], r32.scale[0], r32.shift[0]) == (-5, 0x7FFF_FFFF, 63)
    assert (r48.bias[0], r48.scale[0], r48.shift[0]) == (-(1 << 40), 0x7FFF, 17)
    with pytest.raises(StreamError, match="reserved bit"):
        w85.scale_records(acc32[:7] + bytes([0x80, 63, 0]), 1, False, "test")


def _stored() -> dict[str, np.ndarray[Any, Any]]:
    with np.load(DATA) as data:
        return {k: data[k] for k in data.files}


@pytest.mark.parametrize(("layer", "layout"), [
    ("conv1", w85.Layout(16, 3, 3, 1, 16, 16, 8, w85.PART_KERNEL, 8, (1, 1), (1, 1), True, 1, 256)),
    ("conv2", w85.Layout(32, 3, 3, 16, 16, 16, 8, w85.PART_KERNEL, 8, (1, 1), (1, 1), False, 1, 256)),
    ("fc2", w85.Layout(10, 1, 1, 64, 16, 64, 8, w85.DEPTH_FIRST, 8, (1, 1), (1, 1), False, 1, 256)),
])
def test_mnist_u85_256_streams_hold_the_u55_programs_weights(layer: str, layout: w85.Layout) -> None:
    """Vela's streams for mnist on u85-256 (conv1 SWD 2:4 sparse, conv2 and fc2 FWD) decode to the weights
    the u55-128 program of the same model holds (decoded by the U55 interpreter, another format and order)."""
    stored = _stored()
    data, want = stored[f"{layer}_stream"].tobytes(), stored[f"{layer}_weights"]
    (order,) = w85.brick_order(layout, layer != "conv1")
    if layer == "conv1":
        with Decoder() as decoder:
            from zoo.registry.command_stream.weights import decode_stream
            values = decode_stream(data, layer, decoder)
    else:
        values = w85.fwd_values(data, order.size, layer)
    got = w85.scatter([values], (order,), want.shape, layer)
    assert (got == want).all()
