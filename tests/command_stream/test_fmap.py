"""Feature-map addressing against Vela's own ``get_address``: both layouts, 8 and 16 bits, one to four tiles."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from zoo.registry.command_stream import NotInterpreted
from zoo.registry.command_stream.fmap import FeatureMap, Precision

H, W, C = 5, 7, 20
# (height0, height1, width0): one tile; tiles 0|1 side by side; 0 over 2; all four.
TILINGS = [(H, H, W), (H, 3, 4), (2, H, W), (2, 3, 4)]
BASES = [0x100, 0x2000, 0x4000, 0x6000]


def _vela_address(layout: str, bits: int, tiling: tuple[int, int, int], y: int, x: int, c: int) -> tuple[int, tuple[int, int, int]]:
    from ethosu.vela.api import NpuDataType, NpuFeatureMap, NpuLayout, NpuShape3D, NpuTileBox
    from ethosu.vela.register_command_stream_util import get_address, get_strides

    fm = NpuFeatureMap()
    fm.data_type = NpuDataType.INT8 if bits == 8 else NpuDataType.INT16
    fm.shape = NpuShape3D(height=H, width=W, depth=C)
    fm.tiles = NpuTileBox(height_0=tiling[0], height_1=tiling[1], width_0=tiling[2], addresses=BASES)
    fm.layout = NpuLayout.NHWC if layout == "NHWC" else NpuLayout.NHCWB16
    strides = get_strides(fm)
    return get_address(fm, strides, y, x, c), (strides.width, strides.height, strides.depth)


@pytest.mark.parametrize(("layout", "bits", "tiling"), list(itertools.product(["NHWC", "NHCWB16"], [8, 16], TILINGS)))
def test_addresses_are_velas(layout: str, bits: int, tiling: tuple[int, int, int]) -> None:
    _, (sx, sy, sc) = _vela_address(layout, bits, tiling, 0, 0, 0)
    fm = FeatureMap("IFM", 1, (BASES[0], BASES[1], BASES[2], BASES[3]), tiling[0], tiling[1], tiling[2], sx, sy, sc,
                    Precision(True, bits, 0 if layout == "NHWC" else 1, 0, 0))
    got = fm.addresses(H, W, C)
    want = np.array([[[_vela_address(layout, bits, tiling, y, x, c)[0] for c in range(C)] for x in range(W)]
                     for y in range(H)])
    assert np.array_equal(got, want)


def test_nhwc_ignores_stride_c_as_velas_get_address_does() -> None:
    """Regor leaves a 32-bit map's STRIDE_C of 4 for the 8-bit copies after it: in NHWC the register
    (the stride between 16-channel bricks) is not read, and channels are contiguous."""
    from ethosu.vela.api import NpuDataType, NpuFeatureMap, NpuLayout, NpuShape3D, NpuTileBox
    from ethosu.vela.register_command_stream_util import get_address

    vela = NpuFeatureMap()
    vela.data_type, vela.layout = NpuDataType.INT8, NpuLayout.NHWC
    vela.shape = NpuShape3D(height=2, width=3, depth=4)
    vela.tiles = NpuTileBox(height_0=2, height_1=2, width_0=3, addresses=BASES)
    strides = NpuShape3D(depth=4, height=4, width=28)  # mnasnet's transposing copy of int32 bytes
    nhwc = FeatureMap("OFM", 1, (BASES[0], BASES[1], BASES[2], BASES[3]), 2, 2, 3, 28, 4, 4, Precision(True, 8, 0, 0, 0))
    want = [[[get_address(vela, strides, y, x, c) for c in range(4)] for x in range(3)] for y in range(2)]
    assert nhwc.addresses(2, 3, 4).tolist() == want


def test_strides_it_does_not_model_are_refused() -> None:
    brick = FeatureMap("IFM", 1, (0, 0, 0, 0), 2, 2, 2, 32, 64, 64, Precision(True, 8, 1, 0, 0))
    with pytest.raises(NotInterpreted, match="not implemented: IFM in NHCWB16 with STRIDE_X 32 for 1-byte elements"):
        brick.addresses(2, 2, 3)
