"""What ExecuTorch's runtime takes from the method allocator to load ``forward`` (torch-free).

``Program::load_method`` builds the method's runtime objects in the
``MemoryManager``'s method allocator: an ``EValue`` per value, a ``TensorImpl``
and a strides array per tensor, the boxed lists, the delegates and their
compile specs, the chains' kernel and argument tables. It never frees them. While
it resolves each kernel it also takes the kernel's ``TensorMeta`` list and dim
orders from the temp allocator, and resets that after each kernel.

This module replays those allocations from the .pte, in the runtime's order and
with its alignment rule (``MemoryAllocator::allocate`` pads the cursor to the
type's alignment), for a 32-bit Cortex-M build (``ILP32``) and a 64-bit one
(``LP64``). The type sizes are ExecuTorch 1.5.1's: ``tests/firmware`` compiles its
headers with ``arm-none-eabi-g++`` and ``g++`` and compares every size and
alignment here, and loads real artifacts with the wheel's ``libexecutorch.so``
to check the 64-bit totals byte for byte.

The Ethos-U backend's ``init`` takes nothing from this allocator: its per-delegate
``ExecutionHandle`` is a heap allocation (``new (std::nothrow)`` in
``backends/arm/runtime/EthosUBackend.cpp``), so a firmware with delegates needs a heap.
The replay assumes a firmware that hands ``load_method`` a temp allocator of at least
``temp_floor_bytes``: the runtime puts a kernel's metadata in the temp allocator only if
the pool could hold a ``TensorMeta`` and a full dim order (``kTensorDimensionLimit``, 16
bytes) per argument, whatever the arguments are; below that it takes them from the
method allocator and never frees them (``Method::resolve_operator``). Measured on a
Cortex-M55 in QEMU: with a smaller temp pool mnist's method allocator needs 4,357 bytes,
not 3,624.
"""

from __future__ import annotations

from dataclasses import dataclass

from zoo.registry.pte.pte_structure import (
    BACKEND_DELEGATE,
    CHAIN,
    DELEGATE_CALL,
    ETHOSU_BACKEND_ID,
    EVALUE,
    EXECUTION_PLAN,
    INSTRUCTION,
    INSTRUCTION_ARGUMENTS,
    KERNEL_CALL,
    KERNEL_TYPES,
    PROGRAM,
    TENSOR,
    PteFormatError,
    Reader,
    Table,
    read_extended_header,
)

TENSOR_DIMENSION_LIMIT = 16
"""``kTensorDimensionLimit``: the dim-order bytes the runtime's temp-pool test counts per argument."""

Layout = tuple[int, int]
"""(sizeof, alignof) in bytes."""


def _struct(*members: Layout) -> Layout:
    """A C struct of ``members``, in order: each padded to its alignment, the whole to the largest."""
    size, align = 0, 1
    for m_size, m_align in members:
        size = -(-size // m_align) * m_align + m_size
        align = max(align, m_align)
    return -(-size // align) * align, align


@dataclass(frozen=True)
class Abi:
    name: str
    types: dict[str, Layout]


def _abi(name: str, pointer: Layout, **public: Layout) -> Abi:
    types = {"pointer": pointer, "int32": (4, 4), "int64": (8, 8), "bool": (1, 1), "uint8": (1, 1), **public}
    # Defined in method.cpp, so no header gives their size: built from their members.
    types["BackendDelegate"] = _struct(types["FreeableBuffer"], pointer, pointer)
    types["Chain"] = _struct(pointer, types["Span"], pointer)
    return Abi(name, types)


# sizeof and alignof under ExecuTorch 1.5.1's headers, as tests/firmware/runtime_types.cpp compiles them for each ABI.
ILP32 = _abi(
    "ilp32", (4, 4), EValue=(16, 8), TensorImpl=(32, 4), Tensor=(4, 4), FreeableBuffer=(32, 8),
    CompileSpec=(12, 4), TensorMeta=(12, 4), BoxedEvalueList=(12, 4), OptionalTensor=(8, 4),
    ArrayRef=(8, 4), Span=(8, 4),
)
LP64 = _abi(
    "lp64", (8, 8), EValue=(16, 8), TensorImpl=(64, 8), Tensor=(8, 8), FreeableBuffer=(40, 8),
    CompileSpec=(24, 8), TensorMeta=(24, 8), BoxedEvalueList=(24, 8), OptionalTensor=(16, 8),
    ArrayRef=(16, 8), Span=(16, 8),
)
ABIS = (ILP32, LP64)

# Program-schema fields this replay reads beyond pte_structure's.
_EXTRA_TENSOR_INFO_LOCATION = 2
_EXTERNAL = 1
_LIST_ITEMS = 0
_ITEM_BYTES = {"IntList": 8, "DoubleList": 8, "BoolList": 1, "TensorList": 4, "OptionalTensorList": 4}
_DELEGATE_CALL = INSTRUCTION_ARGUMENTS.index("DelegateCall")
_KERNEL_CALL = INSTRUCTION_ARGUMENTS.index("KernelCall")


class _Pool:
    """``MemoryAllocator``'s bump rule, from a cursor at an aligned start."""

    def __init__(self, abi: Abi) -> None:
        self.types = abi.types
        self.used = 0

    def take(self, type_name: str, count: int = 1) -> None:
        size, align = self.types[type_name]
        self.used = -(-self.used // align) * align + size * count


@dataclass(frozen=True)
class RuntimeNeed:
    method_bytes: int
    """The method allocator's use once ``load_method`` returns."""
    load_temp_bytes: int
    """The most the temp allocator holds at once during ``load_method`` (one kernel's metadata)."""
    temp_floor_bytes: int
    """The smallest temp pool the runtime puts every kernel's metadata in (see above)."""


def need(pte: bytes, abi: Abi, method: str = "forward") -> RuntimeNeed:
    """Replay ``load_method(method)``'s allocations; raise PteFormatError for what the replay does not cover."""
    header = read_extended_header(pte)
    reader = Reader(pte, header.program_size if header else len(pte))
    root = reader.table(reader.scalar("<I", 0, "the root offset"), "Program")
    plans = [p for p in root.tables(PROGRAM["execution_plan"], "Program.execution_plan")
             if p.string(EXECUTION_PLAN["name"], "ExecutionPlan.name") == method]
    if not plans:
        raise PteFormatError(f"the program has no method {method!r}")
    plan = plans[0]
    pool = _Pool(abi)
    values = plan.tables(EXECUTION_PLAN["values"], "ExecutionPlan.values")
    pool.take("EValue", len(values))
    n_inputs = len(plan.scalars(EXECUTION_PLAN["inputs"], "i", "ExecutionPlan.inputs"))
    if n_inputs:
        pool.take("bool", n_inputs)
    dims = [_value(pool, i, v) for i, v in enumerate(values)]

    delegates = plan.tables(EXECUTION_PLAN["delegates"], "ExecutionPlan.delegates")
    pool.take("BackendDelegate", len(delegates))
    for d in delegates:
        pool.take("CompileSpec", len(d.tables(BACKEND_DELEGATE["compile_specs"], "BackendDelegate.compile_specs")))
        backend = d.string(BACKEND_DELEGATE["id"], "BackendDelegate.id")
        if backend != ETHOSU_BACKEND_ID:
            raise PteFormatError(f"a delegate for {backend!r}: only {ETHOSU_BACKEND_ID}'s init allocation is known")

    chains = plan.tables(EXECUTION_PLAN["chains"], "ExecutionPlan.chains")
    pool.take("Chain", len(chains))
    temp_peak = most_args = 0
    for chain in chains:
        instructions = chain.tables(CHAIN["instructions"], "Chain.instructions")
        pool.take("pointer", len(instructions))  # an OpFunction per instruction
        pool.take("Span", len(instructions))  # and its argument list
        for ins in instructions:
            kind = ins.scalar(INSTRUCTION["instr_args_type"], "<B")
            if kind not in (_KERNEL_CALL, _DELEGATE_CALL):
                continue
            call = ins.table(INSTRUCTION["instr_args"], INSTRUCTION_ARGUMENTS[kind])
            fields = KERNEL_CALL if kind == _KERNEL_CALL else DELEGATE_CALL
            args = call.scalars(fields["args"], "i", "call args") if call else ()
            pool.take("pointer", len(args))
            if kind == _KERNEL_CALL:
                most_args = max(most_args, len(args))
                temp = _Pool(abi)
                temp.take("TensorMeta", len(args))
                for a in args:
                    rank = dims[a] if 0 <= a < len(dims) else None
                    if rank is not None:
                        temp.take("uint8", rank)  # the tensor's dim order
                temp_peak = max(temp_peak, temp.used)
    floor = most_args * (abi.types["TensorMeta"][0] + TENSOR_DIMENSION_LIMIT * abi.types["uint8"][0])
    return RuntimeNeed(pool.used, temp_peak, floor)


def _value(pool: _Pool, index: int, value: Table) -> int | None:
    """Take what ``Method::parse_values`` takes for one value; return a tensor's rank (None otherwise)."""
    kind_id = value.scalar(EVALUE["val_type"], "<B")
    kind = KERNEL_TYPES[kind_id] if kind_id < len(KERNEL_TYPES) else f"union member {kind_id}"
    body = value.table(EVALUE["val"], kind) if kind not in ("NONE", "Null") else None
    if kind == "Tensor" and body is not None:
        return _tensor(pool, index, body)
    listed = body is not None and kind in _ITEM_BYTES
    span = body.span(_LIST_ITEMS, f"{kind}.items", _ITEM_BYTES[kind]) if listed and body is not None else None
    items = span[1] if span else 0
    if kind == "IntList":
        pool.take("pointer", items)
        pool.take("int64", items)
        pool.take("BoxedEvalueList")
    elif kind in ("BoolList", "DoubleList", "String"):
        pool.take("ArrayRef")
    elif kind == "TensorList":
        pool.take("Tensor", items)
        pool.take("pointer", items)
        pool.take("BoxedEvalueList")
    elif kind == "OptionalTensorList":
        pool.take("pointer", items)
        pool.take("OptionalTensor", items)
        pool.take("BoxedEvalueList")
    elif kind not in ("NONE", "Null", "Int", "Bool", "Double"):
        raise PteFormatError(f"value {index} is a {kind}, which the method-allocator replay does not know")
    return None


def _tensor(pool: _Pool, index: int, tensor: Table) -> int:
    rank = len(tensor.scalars(TENSOR["sizes"], "i", "Tensor.sizes"))
    if tensor.scalar(TENSOR["shape_dynamism"], "<b"):
        raise PteFormatError(f"tensor value {index} has a dynamic shape; the replay covers static shapes only")
    extra = tensor.table(TENSOR["extra_tensor_info"], "ExtraTensorInfo")
    if extra is not None and extra.scalar(_EXTRA_TENSOR_INFO_LOCATION, "<b") == _EXTERNAL:
        raise PteFormatError(f"tensor value {index} lives in an external .ptd; the replay covers .pte-only programs")
    pool.take("int32", rank)  # strides
    pool.take("TensorImpl")
    return rank
