"""Bounds on what one run may allocate and compute, checked before anything is allocated.

A command stream's registers can describe a 65536 x 65536 OFM, a 65536 x 65536 kernel or a
scratch of 4 GiB in a few words. Each operation's maps, padded input, kernel and work are
checked here against its regions and a fixed limit first, so that a crafted stream ends in a
``StreamError`` (or, beyond a fixed limit a real program could reach, ``not implemented``,
which skips the level), never in a ``MemoryError`` or a run of minutes. The limits are far
above mv2's largest map at 224 x 224 (112 x 112 x 96, 1.2 M elements).
"""

from __future__ import annotations

from zoo.registry.command_stream.errors import NotInterpreted, StreamError

__all__ = ["MAX_ELEMENTS", "MAX_MACS", "MAX_REGION_BYTES", "MAX_WEIGHT_CHUNKS", "elements", "fits", "macs",
           "region_size"]

MAX_ELEMENTS = 1 << 24
"""Elements of one map, padded input or accumulator: 128 MiB as int64, the interpreter's working type."""
MAX_MACS = 1 << 32
"""Multiply-accumulates of one operation: a few seconds of numpy."""
MAX_REGION_BYTES = 1 << 30
"""The scratch or fast scratch a run allocates."""
MAX_WEIGHT_CHUNKS = 1 << 18
"""OFM blocks x IFM blocks x 8x8 sub-kernels of one weight stream's brick order."""


def elements(shape: tuple[int, ...], what: str) -> int:
    """The element count of ``shape``, refused if it exceeds ``MAX_ELEMENTS``."""
    n = 1
    for d in shape:
        n *= d
    if n > MAX_ELEMENTS:
        raise NotInterpreted(f"{what} of {'x'.join(str(d) for d in shape)} = {n:,} elements, more than the "
                             f"interpreter's limit of {MAX_ELEMENTS:,}")
    return n


def macs(count: int, what: str) -> None:
    if count > MAX_MACS:
        raise NotInterpreted(f"{what}: {count:,} multiply-accumulates, more than the interpreter's limit of {MAX_MACS:,}")


def fits(nbytes: int, region: int, size: int, what: str) -> None:
    """A map whose elements each have their own bytes (an OFM) cannot hold more than its region."""
    if nbytes > size:
        raise StreamError(f"{what} is {nbytes:,} bytes, more than region {region} holds ({size:,} bytes)")


def region_size(size: int, what: str) -> int:
    if size < 0:
        raise StreamError(f"{what} is {size} bytes: a size cannot be negative")
    if size > MAX_REGION_BYTES:
        raise NotInterpreted(f"{what} of {size:,} bytes, more than the interpreter's limit of {MAX_REGION_BYTES:,}")
    return size
