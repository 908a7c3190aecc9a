"""Read the structure of an ExecuTorch ``.pte`` without torch or ExecuTorch.

A .pte is a flatbuffer (schema ``executorch/exir/_serialize/program.fbs``,
file identifier ``ET12`` at bytes 4..8), optionally followed by data
segments. When segments exist, an extended header (magic ``eh00``) sits right
after the identifier and gives the program size and the segments' base offset
(``exir/_serialize/_program.py: _ExtendedHeader``).

Only the fields zoo checks are read: the execution plans' inputs and outputs,
their operator table, the delegates (backend id, compile specs and where their
processed bytes lie in the file), the instructions that call them, and the
segment table. Field ids below are the declaration order in ``program.fbs``
(a union takes two ids: its type, then its value); a test compares them with
the installed schema.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from zoo.registry.pte.flatbuffer import (
    PteFormatError as PteFormatError,  # read_pte's error, imported from here too
)
from zoo.registry.pte.flatbuffer import Reader, Table

PROGRAM_IDENTIFIER = b"ET12"
EXTENDED_HEADER_MAGIC = b"eh00"
ETHOSU_BACKEND_ID = "EthosUBackend"
"""The backend id of an Ethos-U delegate, as ExecuTorch's ``EthosUBackend`` writes it."""
_EXTENDED_HEADER_MIN = 24  # magic, length, program size, segment base offset

# Field ids, by table, in program.fbs declaration order.
PROGRAM = {"version": 0, "execution_plan": 1, "constant_buffer": 2, "backend_delegate_data": 3,
           "segments": 4, "constant_segment": 5, "mutable_data_segments": 6, "named_data": 7}
EXECUTION_PLAN = {"name": 0, "container_meta_type": 1, "values": 2, "inputs": 3, "outputs": 4,
                  "chains": 5, "operators": 6, "delegates": 7, "non_const_buffer_sizes": 8}
EVALUE = {"val_type": 0, "val": 1}
TENSOR = {"scalar_type": 0, "storage_offset": 1, "sizes": 2, "dim_order": 3, "allocation_info": 6,
          "shape_dynamism": 8, "extra_tensor_info": 9}
OPERATOR = {"name": 0, "overload": 1}
CHAIN = {"inputs": 0, "outputs": 1, "instructions": 2}
INSTRUCTION = {"instr_args_type": 0, "instr_args": 1}
KERNEL_CALL = {"op_index": 0, "args": 1}
DELEGATE_CALL = {"delegate_index": 0, "args": 1}
BACKEND_DELEGATE = {"id": 0, "processed": 1, "compile_specs": 2}
DELEGATE_DATA_REFERENCE = {"location": 0, "index": 1}
COMPILE_SPEC = {"key": 0, "value": 1}
INLINE_DATA = {"data": 0}
DATA_SEGMENT = {"offset": 0, "size": 1}
NAMED_DATA = {"key": 0, "segment_index": 1}
SUBSEGMENT_OFFSETS = {"segment_index": 0, "offsets": 1}

# Union member indices (0 is NONE).
KERNEL_TYPES = ("NONE", "Null", "Int", "Bool", "Double", "Tensor", "String", "IntList",
                "DoubleList", "BoolList", "TensorList", "OptionalTensorList")
INSTRUCTION_ARGUMENTS = ("NONE", "KernelCall", "DelegateCall", "MoveCall", "JumpFalseCall", "FreeCall")
DATA_LOCATIONS = ("inline", "segment")

# ScalarType (scalar_type.fbs) → (name, element size in bytes).
SCALAR_TYPES: dict[int, tuple[str, int]] = {
    0: ("uint8", 1), 1: ("int8", 1), 2: ("int16", 2), 3: ("int32", 4), 4: ("int64", 8),
    5: ("float16", 2), 6: ("float32", 4), 7: ("float64", 8), 11: ("bool", 1),
    12: ("qint8", 1), 13: ("quint8", 1), 14: ("qint32", 4), 15: ("bfloat16", 2),
    16: ("quint4x2", 1), 17: ("quint2x4", 1),
    22: ("bits16", 2), 23: ("float8_e5m2", 1), 24: ("float8_e4m3fn", 1),
    25: ("float8_e5m2fnuz", 1), 26: ("float8_e4m3fnuz", 1),
    27: ("uint16", 2), 28: ("uint32", 4), 29: ("uint64", 8),
}


@dataclass(frozen=True)
class ExtendedHeader:
    length: int
    program_size: int
    segment_base_offset: int
    segment_data_size: int


@dataclass(frozen=True)
class TensorValue:
    index: int
    scalar_type: int
    sizes: tuple[int, ...]
    dim_order: tuple[int, ...]

    @property
    def dtype(self) -> str:
        return SCALAR_TYPES.get(self.scalar_type, (f"scalar_type {self.scalar_type}", 0))[0]

    @property
    def element_size(self) -> int:
        return SCALAR_TYPES.get(self.scalar_type, ("", 0))[1]

    @property
    def numel(self) -> int:
        n = 1
        for d in self.sizes:
            n *= d
        return n


@dataclass(frozen=True)
class Delegate:
    index: int
    backend_id: str
    compile_specs: dict[str, bytes]
    location: str
    """``inline`` (Program.backend_delegate_data) or ``segment`` (Program.segments)."""
    data_index: int
    offset: int
    """Absolute byte offset of the processed bytes in the file."""
    size: int

    def spec_text(self, key: str) -> str | None:
        value = self.compile_specs.get(key)
        return None if value is None else value.decode("utf-8", "replace")


@dataclass(frozen=True)
class Call:
    """One instruction that runs an operator (``kernel``) or a delegate."""

    kind: str
    index: int
    """Operator-table index for a kernel call, delegate index for a delegate call."""
    args: tuple[int, ...]


@dataclass
class ExecutionPlan:
    name: str
    inputs: list[int]
    outputs: list[int]
    operators: list[str]
    """``namespace::name.overload``, as the runtime looks kernels up."""
    delegates: list[Delegate]
    calls: list[Call]
    value_kinds: dict[int, str] = field(default_factory=dict)
    """Kind (``Tensor``, ``Int`` …) of each value the plan's I/O and delegate calls use."""
    tensors: dict[int, TensorValue] = field(default_factory=dict)
    """Tensor values referenced by the plan's inputs, outputs and delegate calls."""
    scalars: dict[int, int | float] = field(default_factory=dict)
    """Int and Double values among those, e.g. the output of a constant method."""
    non_const_buffer_sizes: tuple[int, ...] = ()
    """The memory planner's buffers, in bytes, as ``program.fbs`` lists them: entry 0 is
    reserved (always 0), the runtime's planned buffer ``i`` is entry ``i + 1``."""

    def tensor(self, index: int) -> TensorValue | None:
        return self.tensors.get(index)


@dataclass
class PteInfo:
    size: int
    identifier: bytes
    extended_header: ExtendedHeader | None
    version: int
    plans: list[ExecutionPlan]
    segments: list[tuple[int, int]]
    """(absolute offset, size) of each data segment."""
    named_data: dict[str, int]
    constant_segment: int | None = None
    """Index into ``segments`` of the segment holding the CPU's constant tensors, if any."""

    @property
    def delegates(self) -> list[Delegate]:
        return [d for plan in self.plans for d in plan.delegates]

    @property
    def operators(self) -> list[str]:
        return sorted({op for plan in self.plans for op in plan.operators})

    def constant_methods(self) -> dict[str, int | float]:
        """Methods that take nothing and return one number (e.g. ``input0_scale``), by name."""
        out: dict[str, int | float] = {}
        for plan in self.plans:
            if not plan.inputs and len(plan.outputs) == 1 and plan.outputs[0] in plan.scalars:
                out[plan.name] = plan.scalars[plan.outputs[0]]
        return out


def read_extended_header(data: bytes) -> ExtendedHeader | None:
    if len(data) < 8 + _EXTENDED_HEADER_MIN or data[8:12] != EXTENDED_HEADER_MAGIC:
        return None
    length, program_size, base = struct.unpack_from("<IQQ", data, 12)
    segment_size = struct.unpack_from("<Q", data, 32)[0] if length > _EXTENDED_HEADER_MIN and len(data) >= 40 else 0
    return ExtendedHeader(length, program_size, base, segment_size)


def read_pte(data: bytes) -> PteInfo:
    """Parse ``data``; raise PteFormatError naming the first problem."""
    size = len(data)
    if size < 8:
        raise PteFormatError(f"not a .pte: the file is only {size} bytes (an ExecuTorch program starts with an 8-byte flatbuffer header)")
    identifier = bytes(data[4:8])
    if identifier != PROGRAM_IDENTIFIER:
        raise PteFormatError(
            f"not an ExecuTorch program: bytes 4..8 are {identifier!r}, a .pte has {PROGRAM_IDENTIFIER!r} there"
        )
    header = read_extended_header(data)
    end = size
    if header is not None:
        if header.length < _EXTENDED_HEADER_MIN:
            raise PteFormatError(f"the extended header (eh00) claims a length of {header.length} bytes, less than {_EXTENDED_HEADER_MIN}")
        if header.program_size > size:
            raise PteFormatError(
                f"truncated: the extended header says the program flatbuffer is {header.program_size:,} bytes, "
                f"but the file is only {size:,} bytes"
            )
        if header.segment_data_size and header.segment_base_offset + header.segment_data_size > size:
            raise PteFormatError(
                f"truncated: the extended header says the data segments end at byte "
                f"{header.segment_base_offset + header.segment_data_size:,}, but the file is only {size:,} bytes"
            )
        end = header.program_size
    reader = Reader(data, end)
    try:
        root = reader.root("Program")
        return _program(reader, root, data, header, identifier)
    except PteFormatError as exc:
        if header is None:
            raise PteFormatError(f"{exc} (a truncated file looks like this)") from None
        raise


def _program(r: Reader, root: Table, data: bytes, header: ExtendedHeader | None, identifier: bytes) -> PteInfo:
    base = header.segment_base_offset if header else 0
    segments = []
    for seg in root.tables(PROGRAM["segments"], "Program.segments"):
        offset = seg.scalar(DATA_SEGMENT["offset"], "<Q")
        length = seg.scalar(DATA_SEGMENT["size"], "<Q")
        if header is None and length:
            # The serializer leaves the header out when all segment data is empty.
            raise PteFormatError("the program lists data segments but the file has no extended header (eh00) to locate them")
        if base + offset + length > len(data):
            raise PteFormatError(
                f"truncated: data segment at byte {base + offset:,} ({length:,} bytes) runs past the end of the "
                f"file ({len(data):,} bytes)"
            )
        segments.append((base + offset, length))
    inline = [t.span(INLINE_DATA["data"], "backend_delegate_data") or (0, 0)
              for t in root.tables(PROGRAM["backend_delegate_data"], "Program.backend_delegate_data")]
    named = {}
    for nd in root.tables(PROGRAM["named_data"], "Program.named_data"):
        named[nd.string(NAMED_DATA["key"], "NamedData.key") or ""] = nd.scalar(NAMED_DATA["segment_index"], "<I")
    plans = [_plan(r, t, segments, inline) for t in root.tables(PROGRAM["execution_plan"], "Program.execution_plan")]
    constant = root.table(PROGRAM["constant_segment"], "Program.constant_segment")
    constant_index = constant.scalar(SUBSEGMENT_OFFSETS["segment_index"], "<I") if constant else None
    if not segments:  # the serializer writes index 0 when all constants are inline (or none)
        constant_index = None
    elif constant_index is not None and constant_index >= len(segments):
        raise PteFormatError(f"the constant segment is data segment #{constant_index}, "
                             f"but the program has only {len(segments)}")
    return PteInfo(
        size=len(data),
        identifier=identifier,
        extended_header=header,
        version=root.scalar(PROGRAM["version"], "<I"),
        plans=plans,
        segments=segments,
        named_data=named,
        constant_segment=constant_index,
    )


def _plan(r: Reader, t: Table, segments: list[tuple[int, int]], inline: list[tuple[int, int]]) -> ExecutionPlan:
    name = t.string(EXECUTION_PLAN["name"], "ExecutionPlan.name") or ""
    operators = []
    for op in t.tables(EXECUTION_PLAN["operators"], "ExecutionPlan.operators"):
        op_name = op.string(OPERATOR["name"], "Operator.name") or ""
        overload = op.string(OPERATOR["overload"], "Operator.overload")
        operators.append(f"{op_name}.{overload}" if overload else op_name)
    delegates = [_delegate(i, d, segments, inline)
                 for i, d in enumerate(t.tables(EXECUTION_PLAN["delegates"], "ExecutionPlan.delegates"))]
    calls = []
    for chain in t.tables(EXECUTION_PLAN["chains"], "ExecutionPlan.chains"):
        for ins in chain.tables(CHAIN["instructions"], "Chain.instructions"):
            kind = ins.scalar(INSTRUCTION["instr_args_type"], "<B")
            if kind not in (1, 2):
                continue
            args = ins.table(INSTRUCTION["instr_args"], INSTRUCTION_ARGUMENTS[kind])
            if args is None:
                continue
            ids = KERNEL_CALL if kind == 1 else DELEGATE_CALL
            index = args.scalar(ids["op_index" if kind == 1 else "delegate_index"], "<i")
            calls.append(Call("kernel" if kind == 1 else "delegate", index, args.ints(ids["args"], "call args")))
    plan = ExecutionPlan(
        name=name,
        inputs=list(t.ints(EXECUTION_PLAN["inputs"], "ExecutionPlan.inputs")),
        outputs=list(t.ints(EXECUTION_PLAN["outputs"], "ExecutionPlan.outputs")),
        operators=operators,
        delegates=delegates,
        calls=calls,
        non_const_buffer_sizes=t.ints(EXECUTION_PLAN["non_const_buffer_sizes"], "ExecutionPlan.non_const_buffer_sizes", "q"),
    )
    # Only the values zoo checks are read: a big model has thousands.
    span = t.span(EXECUTION_PLAN["values"], "ExecutionPlan.values", 4)
    start, count = span or (0, 0)
    wanted = {*plan.inputs, *plan.outputs, *(a for c in calls if c.kind == "delegate" for a in c.args)}
    for i in sorted(wanted):
        if not 0 <= i < count:
            raise PteFormatError(f"execution plan {name!r} refers to value {i}, but it has only {count} values")
        value = r.table(r.target(start + 4 * i, "ExecutionPlan.values"), "EValue")
        k = value.scalar(EVALUE["val_type"], "<B")
        plan.value_kinds[i] = KERNEL_TYPES[k] if k < len(KERNEL_TYPES) else f"union member {k}"
        if k in (KERNEL_TYPES.index("Int"), KERNEL_TYPES.index("Double")):
            number = value.table(EVALUE["val"], KERNEL_TYPES[k])
            if number is not None:
                plan.scalars[i] = number.number(0, "<q" if KERNEL_TYPES[k] == "Int" else "<d")
        if k == KERNEL_TYPES.index("Tensor"):
            tensor = value.table(EVALUE["val"], "Tensor")
            if tensor is not None:
                plan.tensors[i] = TensorValue(
                    index=i,
                    scalar_type=tensor.scalar(TENSOR["scalar_type"], "<b"),
                    sizes=tensor.ints(TENSOR["sizes"], "Tensor.sizes"),
                    dim_order=tensor.ints(TENSOR["dim_order"], "Tensor.dim_order", "B"),
                )
    return plan


def _delegate(index: int, d: Table, segments: list[tuple[int, int]], inline: list[tuple[int, int]]) -> Delegate:
    backend_id = d.string(BACKEND_DELEGATE["id"], "BackendDelegate.id") or ""
    specs: dict[str, bytes] = {}
    for cs in d.tables(BACKEND_DELEGATE["compile_specs"], "BackendDelegate.compile_specs"):
        specs[cs.string(COMPILE_SPEC["key"], "CompileSpec.key") or ""] = cs.raw(COMPILE_SPEC["value"], "CompileSpec.value") or b""
    ref = d.table(BACKEND_DELEGATE["processed"], "BackendDelegateDataReference")
    location = ref.scalar(DELEGATE_DATA_REFERENCE["location"], "<B") if ref else 0
    data_index = ref.scalar(DELEGATE_DATA_REFERENCE["index"], "<I") if ref else 0
    where = DATA_LOCATIONS[location] if location < len(DATA_LOCATIONS) else f"location {location}"
    table = segments if where == "segment" else inline
    if where not in DATA_LOCATIONS or data_index >= len(table):
        raise PteFormatError(
            f"delegate {index} ({backend_id}) points at {where} data #{data_index}, "
            f"but the program has only {len(table)} such entries"
        )
    offset, size = table[data_index]
    return Delegate(index, backend_id, specs, where, data_index, offset, size)
