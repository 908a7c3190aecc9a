"""What an Ethos-U85 command-stream interpreter would meet: a census of the U85 streams in .pte files (issue 46, item 5).

Run: .venv/bin/python benchmarks/u85_streams.py FILE.pte [FILE.pte ...] [--weights] [--markdown]

Builds nothing. Each delegate's Vela payload is read with zoo's reader (``zoo.registry.pte.vela_payload``), its
``cmd_data`` split with zoo's (``zoo.registry.command_stream.stream.split``), and the words decoded against the
Ethos-U85 register map (``ethosu85_interface.h`` of ethos-u-core-driver; its opcode tables and the bit fields
read here are copied below). Per delegate it prints the commands and how often, the operations by mode, the
fields each operation reads from the registers that are new or changed since the U55, and what zoo's U55 decoder
makes of the same words. ``--weights`` also hands each convolution's weight stream to ``ethosu.mlw_codec.decode``
(through zoo's forked ``Decoder``); ``--markdown`` ends with one table over all the files.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from zoo.registry.command_stream.decoder import Decoder
from zoo.registry.command_stream.errors import StreamError
from zoo.registry.command_stream.regs import CMD0 as U55_CMD0
from zoo.registry.command_stream.regs import CMD1 as U55_CMD1
from zoo.registry.command_stream.stream import Command, Config, decode, decode_words, split
from zoo.registry.pte.vela_payload import VelaPayload, find_payloads

__all__ = ["CMD0", "CMD1", "FIELDS", "Census", "U85Config", "WeightProbe", "census", "decode_u85", "main", "summary"]

U85 = 2

CMD0: dict[int, str] = {
    0: "NPU_OP_STOP", 1: "NPU_OP_IRQ", 2: "NPU_OP_CONV", 3: "NPU_OP_DEPTHWISE", 5: "NPU_OP_POOL",
    6: "NPU_OP_ELEMENTWISE", 7: "NPU_OP_RESIZE", 16: "NPU_OP_DMA_START", 17: "NPU_OP_DMA_WAIT",
    18: "NPU_OP_KERNEL_WAIT", 19: "NPU_OP_PMU_MASK", 256: "NPU_SET_IFM_PAD_TOP", 257: "NPU_SET_IFM_PAD_LEFT",
    258: "NPU_SET_IFM_PAD_RIGHT", 259: "NPU_SET_IFM_PAD_BOTTOM", 260: "NPU_SET_IFM_DEPTH_M1",
    261: "NPU_SET_IFM_PRECISION", 263: "NPU_SET_IFM_UPSCALE", 264: "NPU_SET_IFM_BROADCAST",
    265: "NPU_SET_IFM_ZERO_POINT", 266: "NPU_SET_IFM_WIDTH0_M1", 267: "NPU_SET_IFM_HEIGHT0_M1",
    268: "NPU_SET_IFM_HEIGHT1_M1", 271: "NPU_SET_IFM_REGION", 273: "NPU_SET_OFM_WIDTH_M1",
    274: "NPU_SET_OFM_HEIGHT_M1", 275: "NPU_SET_OFM_DEPTH_M1", 276: "NPU_SET_OFM_PRECISION",
    277: "NPU_SET_OFM_BLK_WIDTH_M1", 278: "NPU_SET_OFM_BLK_HEIGHT_M1", 279: "NPU_SET_OFM_BLK_DEPTH_M1",
    280: "NPU_SET_OFM_ZERO_POINT", 282: "NPU_SET_OFM_WIDTH0_M1", 283: "NPU_SET_OFM_HEIGHT0_M1",
    284: "NPU_SET_OFM_HEIGHT1_M1", 287: "NPU_SET_OFM_REGION", 288: "NPU_SET_KERNEL_WIDTH_M1",
    289: "NPU_SET_KERNEL_HEIGHT_M1", 290: "NPU_SET_KERNEL_STRIDE", 292: "NPU_SET_ACC_FORMAT",
    293: "NPU_SET_ACTIVATION", 294: "NPU_SET_ACTIVATION_MIN", 295: "NPU_SET_ACTIVATION_MAX",
    296: "NPU_SET_WEIGHT_REGION", 297: "NPU_SET_SCALE_REGION", 298: "NPU_SET_RESIZE_X_SCALE_N_M1",
    299: "NPU_SET_RESIZE_Y_SCALE_N_M1", 300: "NPU_SET_RESIZE_X_OFFSET", 301: "NPU_SET_RESIZE_Y_OFFSET",
    302: "NPU_SET_WEIGHT_FORMAT", 303: "NPU_SET_BLOCKDEP", 304: "NPU_SET_DMA0_SRC_REGION",
    305: "NPU_SET_DMA0_DST_REGION", 306: "NPU_SET_DMA0_SIZE0", 307: "NPU_SET_DMA0_SIZE1",
    308: "NPU_SET_DMA0_IDX_REGION", 384: "NPU_SET_IFM2_BROADCAST", 389: "NPU_SET_IFM2_PRECISION",
    393: "NPU_SET_IFM2_ZERO_POINT", 394: "NPU_SET_IFM2_WIDTH0_M1", 395: "NPU_SET_IFM2_HEIGHT0_M1",
    396: "NPU_SET_IFM2_HEIGHT1_M1", 399: "NPU_SET_IFM2_REGION",
}
"""``cmd0_opcode`` of ``ethosu85_interface.h``."""

CMD1: dict[int, str] = {
    0: "NPU_SET_IFM_BASE0", 1: "NPU_SET_IFM_BASE1", 2: "NPU_SET_IFM_BASE2", 3: "NPU_SET_IFM_BASE3",
    4: "NPU_SET_IFM_STRIDE_X", 5: "NPU_SET_IFM_STRIDE_Y", 6: "NPU_SET_IFM_STRIDE_C", 16: "NPU_SET_OFM_BASE0",
    17: "NPU_SET_OFM_BASE1", 18: "NPU_SET_OFM_BASE2", 19: "NPU_SET_OFM_BASE3", 20: "NPU_SET_OFM_STRIDE_X",
    21: "NPU_SET_OFM_STRIDE_Y", 22: "NPU_SET_OFM_STRIDE_C", 32: "NPU_SET_WEIGHT_BASE", 33: "NPU_SET_WEIGHT_LENGTH",
    34: "NPU_SET_SCALE_BASE", 35: "NPU_SET_SCALE_LENGTH", 36: "NPU_SET_OFM_SCALE", 37: "NPU_SET_IFM_SCALE",
    38: "NPU_SET_IFM2_SCALE", 39: "NPU_SET_OP_SCALAR", 48: "NPU_SET_DMA0_SRC", 49: "NPU_SET_DMA0_DST",
    50: "NPU_SET_DMA0_LEN", 51: "NPU_SET_DMA0_SRC_STRIDE0", 52: "NPU_SET_DMA0_SRC_STRIDE1",
    53: "NPU_SET_DMA0_DST_STRIDE0", 54: "NPU_SET_DMA0_DST_STRIDE1", 55: "NPU_SET_DMA0_IDX",
    56: "NPU_SET_DMA0_IDX_MAX", 57: "NPU_SET_DMA0_IDX_SKIP1", 128: "NPU_SET_IFM2_BASE0", 129: "NPU_SET_IFM2_BASE1",
    130: "NPU_SET_IFM2_BASE2", 131: "NPU_SET_IFM2_BASE3", 132: "NPU_SET_IFM2_STRIDE_X",
    133: "NPU_SET_IFM2_STRIDE_Y", 134: "NPU_SET_IFM2_STRIDE_C", 144: "NPU_SET_WEIGHT1_BASE",
    145: "NPU_SET_WEIGHT1_LENGTH", 146: "NPU_SET_WEIGHT2_BASE", 147: "NPU_SET_WEIGHT2_LENGTH",
    148: "NPU_SET_WEIGHT3_BASE", 149: "NPU_SET_WEIGHT3_LENGTH", 150: "NPU_SET_RESIZE_X", 151: "NPU_SET_RESIZE_Y",
    256: "NPU_OP_BRANCH",
}
"""``cmd1_opcode`` of ``ethosu85_interface.h``: a 32-bit payload word follows."""

_PRECISION = ("B8", "B16", "B32", "B64")
_FORMAT = ("NHWC", "NHCWB16")
_STORAGE = ("TILE2X2", "TILE3X1", "CHAINED", "NONE")
_SIGN = ("UNSIGNED", "SIGNED")
_BROADCAST = ("NONE", "H", "W", "HW", "C", "CH", "CW", "CWH", "SCALAR")
_ELEMENTWISE = {0: "MUL", 1: "ADD", 2: "SUB", 3: "MIN", 4: "MAX", 5: "LRELU", 6: "ABS", 7: "CLZ", 8: "SHR",
                9: "SHL", 10: "LSR", 11: "DIV", 16: "CMP_EQ", 17: "CMP_NE", 18: "CMP_GE", 19: "CMP_GT", 33: "AND",
                34: "OR", 35: "XOR", 36: "NOT", 42: "AND_NOT"}
_FUNCTION = {0: "LUT_NONE", 1: "LUT_U8_U8", 4: "LUT_S8_S8", 5: "LUT_S8_S16", 7: "LUT_S8_S32", 8: "LUT_S16_S16",
             9: "LUT_S16_S32", 10: "LUT_TANH", 11: "LUT_SIGMOID"}


@dataclass(frozen=True)
class Field:
    name: str
    lsb: int
    """Bit position in the command's first word (the parameter starts at bit 16)."""
    width: int
    labels: tuple[str, ...] | dict[int, str] = ()

    def read(self, cmd: Command) -> str:
        value = (cmd.param >> (self.lsb - 16)) & ((1 << self.width) - 1)
        if isinstance(self.labels, dict):
            return self.labels.get(value, str(value))
        return self.labels[value] if value < len(self.labels) else str(value)


_ACTIVATION_FIELDS = (Field("type", 16, 1, _SIGN), Field("precision", 18, 2, _PRECISION),
                      Field("format", 22, 2, _FORMAT), Field("storage", 30, 2, _STORAGE))
FIELDS: dict[str, tuple[Field, ...]] = {
    "NPU_OP_CONV": (Field("weights_ifm2", 16, 1),),
    "NPU_OP_POOL": (Field("mode", 16, 3, ("MAX", "AVERAGE", "REDUCE_SUM", "SUM", "NONE", "MIN", "ARGMAX_X",
                                          "ARGMAX_Y")),),
    "NPU_OP_ELEMENTWISE": (Field("mode", 16, 6, _ELEMENTWISE),),
    "NPU_OP_RESIZE": (Field("mode", 16, 2, ("BILINEAR", "REPLICATE", "NEAREST")),),
    "NPU_SET_IFM_PRECISION": _ACTIVATION_FIELDS,
    "NPU_SET_IFM2_PRECISION": _ACTIVATION_FIELDS,
    "NPU_SET_OFM_PRECISION": (Field("type", 16, 1, _SIGN), Field("precision", 17, 2, _PRECISION),
                              Field("format", 22, 2, _FORMAT), Field("scale_mode", 24, 1, ("PER_CHANNEL", "GLOBAL")),
                              Field("reverse", 25, 2, ("NONE", "H", "W", "C")),
                              Field("transpose", 27, 3, ("HWC", "WHC", "HCW", "WCH", "4", "5", "CHW", "CWH")),
                              Field("storage", 30, 2, _STORAGE)),
    "NPU_SET_IFM_BROADCAST": (Field("mode", 16, 4, _BROADCAST),),
    "NPU_SET_IFM2_BROADCAST": (Field("mode", 16, 4, _BROADCAST),),
    "NPU_SET_IFM_UPSCALE": (Field("mode", 16, 2, ("NONE", "NEAREST", "ZEROS")),),
    "NPU_SET_KERNEL_STRIDE": (Field("weight_order", 18, 1, ("DEPTH_FIRST", "PART_KERNEL_FIRST")),
                              Field("dilation_x", 19, 1, ("NONE", "X2")), Field("decomposition", 21, 1,
                                                                                  ("D8X8", "D4X4"))),
    "NPU_SET_ACC_FORMAT": (Field("format", 16, 2, ("I32", "I48")), Field("input", 20, 2, ("RESET", "KEEP", "IFM2")),
                           Field("output", 22, 1, ("ENABLE", "DISABLE")),
                           Field("microblock", 24, 3, ("U1X1", "U1X2", "U1X4", "U2X2", "U2X4", "U4X4"))),
    "NPU_SET_ACTIVATION": (Field("function", 16, 5, _FUNCTION), Field("table", 21, 3),
                           Field("clip_range", 28, 1, ("B16", "NONE"))),
    "NPU_SET_WEIGHT_FORMAT": (Field("format", 16, 1, ("SWD", "FWD")), Field("sparsity", 20, 1, ("NONE", "SPARSE_2_4"))),
    "NPU_SET_OFM_SCALE": (Field("round_mode", 29, 3, ("DOUBLE_SYMMETRIC", "NATURAL", "DOUBLE_ASYMMETRIC", "SYMMETRIC",
                                                      "TRUNCATE_TO_ZERO", "TRUNCATE_TO_LOWER")),),
    "NPU_SET_IFM_SCALE": (Field("round_mode", 29, 1, ("DOUBLE_SYMMETRIC", "NATURAL")),),
    "NPU_SET_IFM2_SCALE": (Field("round_mode", 29, 1, ("DOUBLE_SYMMETRIC", "NATURAL")),),
    "NPU_SET_DMA0_SRC_REGION": (Field("region_mode", 24, 1, ("EXTERNAL", "INTERNAL")),
                                Field("stride_mode", 25, 2, ("D1", "D2", "D3")), Field("idx_mode", 27, 1)),
    "NPU_SET_DMA0_DST_REGION": (Field("region_mode", 24, 1, ("EXTERNAL", "INTERNAL")), Field("idx_mode", 27, 1)),
}
"""The bit fields of ``ethosu85_interface.h``'s command structs that the census reads (operation modes, and the
registers whose layout the U85 changed or added)."""

_READ_BY = {
    "NPU_OP_CONV": ("IFM_PRECISION", "OFM_PRECISION", "ACC_FORMAT", "ACTIVATION", "OFM_SCALE", "KERNEL_STRIDE",
                    "WEIGHT_FORMAT", "IFM_BROADCAST", "IFM_UPSCALE"),
    "NPU_OP_POOL": ("IFM_PRECISION", "OFM_PRECISION", "ACC_FORMAT", "ACTIVATION", "OFM_SCALE", "KERNEL_STRIDE",
                    "IFM_BROADCAST", "IFM_UPSCALE"),
    "NPU_OP_ELEMENTWISE": ("IFM_PRECISION", "IFM2_PRECISION", "OFM_PRECISION", "ACC_FORMAT", "ACTIVATION",
                           "OFM_SCALE", "IFM_SCALE", "IFM2_SCALE", "IFM_BROADCAST", "IFM2_BROADCAST"),
    "NPU_OP_RESIZE": ("IFM_PRECISION", "OFM_PRECISION", "ACC_FORMAT", "ACTIVATION", "OFM_SCALE"),
    "NPU_OP_DMA_START": ("DMA0_SRC_REGION", "DMA0_DST_REGION"),
}
_READ_BY["NPU_OP_DEPTHWISE"] = _READ_BY["NPU_OP_CONV"]
_WEIGHT_STREAMS = ("WEIGHT", "WEIGHT1", "WEIGHT2", "WEIGHT3")


@dataclass(frozen=True)
class U85Config:
    """``config_r`` as the U85 lays it out: no SHRAM size (the U55's bits 8-15), but AXI ports and weight decoders."""

    raw: int

    @property
    def product(self) -> int:
        return self.raw >> 28

    def describe(self) -> str:
        r = self.raw
        return (f"Ethos-U85, {1 << (r & 0xF)} MACs/cycle, command stream version {(r >> 4) & 0xF}, "
                f"{1 << ((r >> 8) & 3)} AXI SRAM port(s), {1 << ((r >> 10) & 1)} AXI external port(s), "
                f"{1 << ((r >> 12) & 3)} weight decoder(s)")


def decode_u85(words: tuple[int, ...] | list[int]) -> list[Command]:
    """The commands of an Ethos-U85 stream, in order: the U55's word layout with the U85's opcodes."""
    return decode_words(words, CMD0, CMD1, "Ethos-U85")


def _operation(cmd: Command) -> str:
    fields = FIELDS.get(cmd.name, ())
    mode = next((f.read(cmd) for f in fields if f.name == "mode"), "")
    name = cmd.name.removeprefix("NPU_OP_")
    if cmd.name == "NPU_OP_CONV" and cmd.param:
        return f"{name} (weights from IFM2)"
    return f"{name} {mode}" if mode else name


@dataclass
class WeightProbe:
    """What ``mlw_codec.decode`` made of one convolution's weight streams."""

    offset: int
    operation: str
    weight_format: str
    streams: int
    stream_bytes: int
    expected_values: int
    decoded_values: int | None
    said: str | None


@dataclass
class Census:
    config: U85Config
    words: int
    weight_bytes: int
    commands: Counter[str] = field(default_factory=Counter)
    operations: Counter[str] = field(default_factory=Counter)
    fields: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(register.field, value) as each operation reads it, counted over operations."""
    blocks: Counter[str] = field(default_factory=Counter)
    """The OFM block (width x height x depth) of each CONV, DEPTHWISE, POOL, ELEMENTWISE and RESIZE."""
    weight_streams: Counter[int] = field(default_factory=Counter)
    """How many of WEIGHT, WEIGHT1..3 a convolution reads (nonzero length)."""
    u55_reading: str = ""
    """What zoo's U55 decoder makes of the words."""
    renamed: Counter[str] = field(default_factory=Counter)
    """Commands whose opcode names another register on the U55 (``U85 name <- U55 name``)."""
    probes: list[WeightProbe] = field(default_factory=list)


def _u55_reading(words: tuple[int, ...], commands: list[Command]) -> tuple[str, Counter[str]]:
    try:
        decode(words, 0)
        said = "decodes every word"
    except StreamError as e:
        said = str(e)
    renamed: Counter[str] = Counter()
    for cmd in commands:
        u55 = (U55_CMD1 if cmd.payload is not None else U55_CMD0).get(cmd.opcode)
        if u55 is not None and u55 != cmd.name:
            renamed[f"{cmd.name} <- {u55}"] += 1
    return said, renamed


def census(payload: VelaPayload, decoder: Decoder | None = None) -> Census:
    """The census of one payload's U85 command stream; with ``decoder``, each convolution's weights are decoded too."""
    if "cmd_data" not in payload.data or "cmd_data" in payload.external:
        raise StreamError("the Vela payload has no cmd_data block of its own; rebuild without named data")
    config, words = split(payload.data["cmd_data"])
    if config.product != U85:
        raise StreamError(f"this is not an Ethos-U85 command stream: {Config(config.raw, config.id_r).describe()}")
    commands = decode_u85(words)
    weights = payload.data.get("weight_data", b"")
    out = Census(U85Config(config.raw), len(words), len(weights))
    out.u55_reading, out.renamed = _u55_reading(words, commands)
    regs: dict[str, Command] = {}
    for cmd in commands:
        out.commands[cmd.name] += 1
        if cmd.name.startswith("NPU_SET_"):
            regs[cmd.name.removeprefix("NPU_SET_")] = cmd
            continue
        out.operations[_operation(cmd)] += 1
        read = _READ_BY.get(cmd.name)
        if read is None:
            continue
        for reg in read:
            if (set_by := regs.get(reg)) is not None:
                for f in FIELDS[set_by.name]:
                    out.fields[(f"{reg}.{f.name}", f.read(set_by))] += 1
        if cmd.name != "NPU_OP_DMA_START":
            out.blocks["x".join(str(_value(regs, f"OFM_BLK_{d}_M1") + 1) for d in ("WIDTH", "HEIGHT", "DEPTH"))] += 1
        if cmd.name in ("NPU_OP_CONV", "NPU_OP_DEPTHWISE"):
            used = [s for s in _WEIGHT_STREAMS if _value(regs, f"{s}_LENGTH") > 0]
            out.weight_streams[len(used)] += 1
            if decoder is not None:
                out.probes.append(_probe(cmd, regs, used, weights, decoder))
    return out


def _value(regs: dict[str, Command], name: str) -> int:
    cmd = regs.get(name)
    if cmd is None:
        return -1
    return cmd.payload if cmd.payload is not None else cmd.value


def _probe(cmd: Command, regs: dict[str, Command], used: list[str], weights: bytes, decoder: Decoder) -> WeightProbe:
    """Decode the convolution's weight streams, each where WEIGHT_REGION 0 (the payload's weight_data) holds it."""
    kernel = (_value(regs, "KERNEL_HEIGHT_M1") + 1) * (_value(regs, "KERNEL_WIDTH_M1") + 1)
    ifm = 1 if cmd.name == "NPU_OP_DEPTHWISE" else _value(regs, "IFM_DEPTH_M1") + 1
    expected = (_value(regs, "OFM_DEPTH_M1") + 1) * kernel * ifm
    data = b""
    for s in used:
        base, length = _value(regs, f"{s}_BASE"), _value(regs, f"{s}_LENGTH")
        data += weights[base:base + length]
    fmt = regs.get("WEIGHT_FORMAT")
    formats = "unset" if fmt is None else "/".join(f.read(fmt) for f in FIELDS[fmt.name])
    probe = WeightProbe(cmd.offset, _operation(cmd), formats, len(used), len(data), expected, None, None)
    if _value(regs, "WEIGHT_REGION") != 0:
        probe.said = f"weights in region {_value(regs, 'WEIGHT_REGION')}, not the payload's weight_data"
        return probe
    values, said = decoder.decode(data)
    probe.said = said
    if said is None:
        probe.decoded_values = len(values) // 2
    return probe


def _text(name: str, index: int, payload: VelaPayload, c: Census) -> list[str]:
    lines = [f"{name}, delegate {index} (payload at byte {payload.offset}): {c.config.describe()} "
             f"(config {c.config.raw:#010x})",
             f"  {sum(c.commands.values()):,} commands in {c.words:,} words; weight_data {c.weight_bytes:,} bytes",
             "  operations: " + ", ".join(f"{k} {v}" for k, v in sorted(c.operations.items())),
             "  commands: " + ", ".join(f"{k.removeprefix('NPU_')} {v}" for k, v in sorted(c.commands.items()))]
    new = sorted(k for k in c.commands if k not in U55_CMD0.values() and k not in U55_CMD1.values())
    lines.append("  not in the U55's command set: " + (", ".join(new) or "none"))
    lines.append("  zoo's U55 decoder on these words: " + c.u55_reading)
    if c.renamed:
        lines.append("  opcodes the U55 reads as another register: "
                     + ", ".join(f"{k} ({v})" for k, v in sorted(c.renamed.items())))
    lines.append("  fields as the operations read them:")
    by_field: dict[str, list[str]] = {}
    for (f, value), n in sorted(c.fields.items()):
        by_field.setdefault(f, []).append(f"{value} {n}")
    lines += [f"    {f}: {', '.join(v)}" for f, v in by_field.items()]
    lines.append("  OFM blocks (W x H x D): " + ", ".join(f"{k} {v}" for k, v in c.blocks.most_common()))
    lines.append("  weight streams per convolution: "
                 + (", ".join(f"{k} stream(s) {v}" for k, v in sorted(c.weight_streams.items())) or "no convolution"))
    for p in c.probes:
        got = f"{p.decoded_values:,} values" if p.decoded_values is not None else f"no values ({p.said})"
        lines.append(f"  weights of {p.operation} at byte {p.offset:#x} ({p.weight_format}): {p.streams} stream(s), "
                     f"{p.stream_bytes:,} "
                     f"bytes; mlw_codec.decode gives {got}; the operation has {p.expected_values:,} weights")
    return lines


def _fields(cs: list[Census], register_field: str, *values: str) -> str:
    n = Counter[str]()
    for c in cs:
        for (f, value), k in c.fields.items():
            if f == register_field:
                n[value] += k
    return ", ".join(f"{v} {n[v]}" for v in (values or sorted(n)) if n[v]) or "0"


def _count(cs: list[Census], register_field: str, value: str) -> int:
    return sum(c.fields[(register_field, value)] for c in cs)


def summary(cs: list[Census]) -> dict[str, str]:
    """One file's delegates in a column of ``--markdown``'s table."""
    ops, commands, blocks = Counter[str](), Counter[str](), Counter[str]()
    for c in cs:
        ops.update(c.operations)
        commands.update(c.commands)
        blocks.update(c.blocks)
    new = {k: v for k, v in commands.items() if k not in U55_CMD0.values() and k not in U55_CMD1.values()}
    probes = [p for c in cs for p in c.probes]
    row = {
        "delegates": str(len(cs)),
        "commands": f"{sum(commands.values()):,}",
        "operations": ", ".join(f"{k} {v}" for k, v in sorted(ops.items()) if k not in ("STOP", "DMA_WAIT")),
        "commands the U55 lacks": ", ".join(f"`{k.removeprefix('NPU_SET_')}` {v}" for k, v in sorted(new.items())),
        "chained OFM / IFM, IFM2 (storage `CHAINED`)": (f"{_count(cs, 'OFM_PRECISION.storage', 'CHAINED')} / "
                                                        f"{_count(cs, 'IFM_PRECISION.storage', 'CHAINED')}, "
                                                        f"{_count(cs, 'IFM2_PRECISION.storage', 'CHAINED')}"),
        "accumulator kept (`ACC_FORMAT` input / output)": (f"{_fields(cs, 'ACC_FORMAT.input')} / "
                                                           f"{_fields(cs, 'ACC_FORMAT.output')}"),
        "OFM transposes, reversals": (f"{_fields(cs, 'OFM_PRECISION.transpose')}; "
                                      f"{_fields(cs, 'OFM_PRECISION.reverse')}"),
        "IFM / OFM layouts": f"{_fields(cs, 'IFM_PRECISION.format')} / {_fields(cs, 'OFM_PRECISION.format')}",
        "precisions (IFM / OFM)": f"{_fields(cs, 'IFM_PRECISION.precision')} / {_fields(cs, 'OFM_PRECISION.precision')}",
        "LUT activations": _fields(cs, "ACTIVATION.function"),
        "weight formats (`WEIGHT_FORMAT`)": (f"{_fields(cs, 'WEIGHT_FORMAT.format')}; "
                                             f"{_fields(cs, 'WEIGHT_FORMAT.sparsity')}"
                                             if any(c.weight_streams for c in cs) else "no convolution"),
        "weight order (`KERNEL_STRIDE`)": _fields(cs, "KERNEL_STRIDE.weight_order"),
        "micro-blocks (`ACC_FORMAT`)": _fields(cs, "ACC_FORMAT.microblock"),
        "distinct OFM blocks": str(len(blocks)),
        "U55 decoder stops at": "; ".join(sorted({c.u55_reading.split(" at word")[0] for c in cs})),
    }
    if probes:
        formats = sorted({p.weight_format for p in probes})
        row["`mlw_codec.decode` on the weights"] = ", ".join(
            f"{f} {sum(p.decoded_values is not None for p in probes if p.weight_format == f)} of "
            f"{sum(p.weight_format == f for p in probes)}" for f in formats)
    return row


def _markdown(names: list[str], rows: list[dict[str, str]]) -> list[str]:
    keys = list(dict.fromkeys(k for row in rows for k in row))
    lines = ["| | " + " | ".join(names) + " |", "| --- |" + " --- |" * len(names)]
    lines += [f"| {k} | " + " | ".join(row.get(k, "") for row in rows) + " |" for k in keys]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pte", nargs="+", type=Path)
    parser.add_argument("--weights", action="store_true", help="decode each convolution's weights with mlw_codec")
    parser.add_argument("--markdown", action="store_true", help="end with one table over all the files")
    args = parser.parse_args(argv)
    names: list[str] = []
    rows: list[dict[str, str]] = []
    with Decoder() as decoder:
        for path in args.pte:
            try:
                payloads = find_payloads(path.read_bytes())
            except (OSError, ValueError) as e:
                print(f"error: {path}: {e}", file=sys.stderr)
                return 1
            if not payloads:
                print(f"error: {path} holds no Vela payload; give a .pte built for an Ethos-U85 target",
                      file=sys.stderr)
                return 1
            found: list[Census] = []
            for i, payload in enumerate(payloads):
                try:
                    c = census(payload, decoder if args.weights else None)
                except StreamError as e:
                    print(f"error: {path}, delegate {i}: {e}", file=sys.stderr)
                    return 1
                print("\n".join(_text(path.name, i, payload, c)))
                found.append(c)
            names.append(path.stem)
            rows.append(summary(found))
    if args.markdown:
        print("\n".join(["", *_markdown(names, rows)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
