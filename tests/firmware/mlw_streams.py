"""Weight streams in Vela's mlw format, crafted slice by slice for tests/firmware/test_npu_model_host.py: each
slice's header as given and a body of zero bits exactly as long as the decoder reads (zero bits decode to
symbols of 0, so the length follows from the header alone), then the end-of-stream marker."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Slice", "long_code", "stream"]

ZDIV_DISABLE, ZDIV_EOS, WDIV_UNCOMPRESSED = 6, 7, 7
PALBITS = 8
"""Every new palette here is empty, with 8-bit direct values offset by 3."""


@dataclass(frozen=True)
class Slice:
    z_div: int
    w_div: int
    new_palette: bool
    values: int


def _body_bits(s: Slice, palbits: int) -> int:
    """The bits the decoder reads after the header of ``s`` when they are all 0 (its chunk loop, counted)."""
    zero_runs = s.z_div != ZDIV_DISABLE
    z_div = s.z_div if zero_runs else 0
    z_values = s.values + int(s.new_palette)
    uncompressed = s.w_div == WDIV_UNCOMPRESSED
    w_div = palbits if uncompressed else s.w_div
    w_symbols = 8 if uncompressed and w_div > 5 else 12
    z_unary = 12 if z_div < 3 else 8
    total = w_pos = z_pos = w_done = z_done = w_prev = z_prev = 0
    while True:
        balance = w_pos - z_pos if zero_runs else 0
        w_on = (balance < 8 or not zero_runs) and w_pos < s.values
        z_on = balance >= 0 and zero_runs and z_pos < z_values
        total += (12 if w_on and not uncompressed else 0) + (z_unary if z_on else 0)
        z_pos += z_unary if z_on else 0
        w_pos += w_symbols if w_on else 0
        n = min(w_prev, s.values - w_done)
        total, w_done = total + n * w_div, w_done + n
        n = min(z_prev, z_values - z_done)
        total, z_done = total + n * z_div, z_done + n
        if not (w_on or z_on):
            return total
        w_prev, z_prev = (w_symbols if w_on else 0), (z_unary if z_on else 0)


def stream(*slices: Slice) -> bytes:
    value = bits = 0

    def put(v: int, width: int) -> None:
        nonlocal value, bits
        value |= (v & ((1 << width) - 1)) << bits
        bits += width

    for s in slices:
        put(s.z_div, 3)
        put(s.values - 1, 15)
        put(s.w_div, 3)
        put(0, 1)  # no truncation
        put(int(s.new_palette), 1)
        if s.new_palette:
            put(3, 5)  # direct offset
            put(0, 5)  # no palette
            put(PALBITS - 2, 3)
        bits += _body_bits(s, PALBITS)
    put(ZDIV_EOS, 3)
    bits += -bits % 8
    return value.to_bytes(bits // 8, "little")


def long_code(q: int, remainder: int) -> bytes:
    """One slice of one weight whose code is ``q << 5 | remainder`` (weight divisor 5, no zero runs, no palette):
    ``q`` in Golomb-Rice unary, codes of 2 and a last code below 2, up to 23. A code of 512 or more is no 9-bit
    weight's, which Vela's encoder refuses and its decoder decodes all the same."""
    value = bits = 0

    def put(v: int, width: int) -> None:
        nonlocal value, bits
        value |= (v & ((1 << width) - 1)) << bits
        bits += width

    twos, one = divmod(q, 2)
    for v, width in ((ZDIV_DISABLE, 3), (0, 15), (5, 3), (0, 1), (1, 1), (0, 5), (0, 5), (PALBITS - 2, 3)):
        put(v, width)
    put((1 << (twos + one)) - 1, 12)  # the first unary part: a bit for each code above 0
    put((1 << twos) - 1, twos + one)  # the second: a bit for each code of 2
    put(remainder, 5)
    put(ZDIV_EOS, 3)
    bits += -bits % 8
    return value.to_bytes(bits // 8, "little")
