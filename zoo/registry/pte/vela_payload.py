"""Read the Vela payloads stored inline in a delegated .pte, without torch.

A payload is a run of blocks: a 16-byte NUL-padded name, a little-endian
uint32 size, one flag byte (1: the data is a named-data key, not the data),
11 reserved bytes, then the data padded to 16 bytes. It opens with
``vela_bin_stream`` and closes with ``vela_end_stream``
(``executorch/backends/arm/arm_vela.py``).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

START = b"vela_bin_stream\x00"
END = "vela_end_stream"
_HEADER = 32


class PayloadError(ValueError):
    pass


@dataclass
class TensorInfo:
    shape: tuple[int, ...]
    element_size: int
    offset: int
    region: int

    @property
    def elements(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


@dataclass
class VelaPayload:
    offset: int
    """Byte offset of the payload in the file."""
    length: int
    blocks: list[str] = field(default_factory=list)
    command_stream_magic: bytes = b""
    scratch_size: int = 0
    inputs: list[TensorInfo] = field(default_factory=list)
    outputs: list[TensorInfo] = field(default_factory=list)
    external: list[str] = field(default_factory=list)
    """Blocks whose data lives in the program's named data, not in the payload."""
    data: dict[str, bytes] = field(default_factory=dict, repr=False)
    """Each block's bytes as stored (for an external block, its named-data key)."""


def _pad16(n: int) -> int:
    return (n + 15) & ~15


def _tensors(data: bytes) -> list[TensorInfo]:
    if len(data) < 4:
        raise PayloadError("tensor block shorter than its count")
    (count,) = struct.unpack_from("<i", data, 0)
    # Per tensor: shape[6] int32, element size, offset, region.
    per = 9 * 4
    if count < 0 or 4 + count * per > len(data):
        raise PayloadError(f"tensor block claims {count} tensors, holds {len(data)} bytes")
    out = []
    for i in range(count):
        vals = struct.unpack_from("<6iiii", data, 4 + i * per)
        dims = tuple(d for d in vals[:6])
        while len(dims) > 1 and dims[0] == 1:
            dims = dims[1:]
        out.append(TensorInfo(dims, vals[6], vals[7], vals[8]))
    return out


def parse_payload(buf: bytes, offset: int, end: int | None = None) -> VelaPayload:
    """The payload starting at ``offset``; it must close before ``end`` (default: the buffer's end)."""
    limit = len(buf) if end is None else min(end, len(buf))
    pos = offset
    payload = VelaPayload(offset=offset, length=0)
    while True:
        if pos + _HEADER > limit:
            raise PayloadError(f"payload at byte {offset} is cut off at byte {pos} before vela_end_stream")
        name = buf[pos:pos + 16].rstrip(b"\x00").decode("ascii", "replace")
        (size,) = struct.unpack_from("<I", buf, pos + 16)
        data_start = pos + _HEADER
        data_end = data_start + size
        if data_end > limit:
            raise PayloadError(f"block {name!r} at byte {pos} ({size:,} bytes) runs past the end of its payload (byte {limit:,})")
        data = buf[data_start:data_end]
        payload.blocks.append(name)
        payload.data[name] = bytes(data)
        if buf[pos + 20]:
            payload.external.append(name)
        if name == "cmd_data":
            payload.command_stream_magic = data[:4]
        elif name == "scratch_size" and size >= 4:
            (payload.scratch_size,) = struct.unpack_from("<i", data, 0)
        elif name == "inputs":
            payload.inputs = _tensors(data)
        elif name == "outputs":
            payload.outputs = _tensors(data)
        pos = data_start + _pad16(size)
        if name == END:
            payload.length = pos - offset
            return payload


def find_payloads(buf: bytes) -> list[VelaPayload]:
    out = []
    start = buf.find(START)
    while start != -1:
        payload = parse_payload(buf, start)
        out.append(payload)
        start = buf.find(START, start + payload.length)
    return out
