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

from zoo.registry.pte.method_layout import MethodLayout, ValueLayout
from zoo.registry.pte.program import Program
from zoo.registry.pte.pte_structure import ETHOSU_BACKEND_ID, PteFormatError

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


def need(program: Program, abi: Abi, method: str = "forward") -> RuntimeNeed:
    """Replay ``load_method(method)``'s allocations; raise PteFormatError for what the replay does not cover."""
    return replay(program.method(method), abi)


def replay(layout: MethodLayout, abi: Abi) -> RuntimeNeed:
    """``need`` for a method's layout, read once for every ABI."""
    pool = _Pool(abi)
    pool.take("EValue", len(layout.values))
    if layout.inputs:
        pool.take("bool", layout.inputs)
    dims = [_value(pool, i, v) for i, v in enumerate(layout.values)]

    pool.take("BackendDelegate", len(layout.delegates))
    for d in layout.delegates:
        pool.take("CompileSpec", d.compile_specs)
        if d.backend_id != ETHOSU_BACKEND_ID:
            raise PteFormatError(f"a delegate for {d.backend_id!r}: only {ETHOSU_BACKEND_ID}'s init allocation is known")

    pool.take("Chain", len(layout.chains))
    temp_peak = most_args = 0
    for instructions in layout.chains:
        pool.take("pointer", len(instructions))  # an OpFunction per instruction
        pool.take("Span", len(instructions))  # and its argument list
        for call in instructions:
            if call is None:
                continue
            pool.take("pointer", len(call.args))
            if call.kind == "kernel":
                most_args = max(most_args, len(call.args))
                temp = _Pool(abi)
                temp.take("TensorMeta", len(call.args))
                for a in call.args:
                    rank = dims[a] if 0 <= a < len(dims) else None
                    if rank is not None:
                        temp.take("uint8", rank)  # the tensor's dim order
                temp_peak = max(temp_peak, temp.used)
    floor = most_args * (abi.types["TensorMeta"][0] + TENSOR_DIMENSION_LIMIT * abi.types["uint8"][0])
    return RuntimeNeed(pool.used, temp_peak, floor)


def _value(pool: _Pool, index: int, value: ValueLayout) -> int | None:
    """Take what ``Method::parse_values`` takes for one value; return a tensor's rank (None otherwise)."""
    kind = value.kind
    if kind == "Tensor" and value.has_body:
        return _tensor(pool, index, value)
    items = value.items
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


def _tensor(pool: _Pool, index: int, tensor: ValueLayout) -> int:
    rank = tensor.rank or 0
    if tensor.dynamic:
        raise PteFormatError(f"tensor value {index} has a dynamic shape; the replay covers static shapes only")
    if tensor.external:
        raise PteFormatError(f"tensor value {index} lives in an external .ptd; the replay covers .pte-only programs")
    pool.take("int32", rank)  # strides
    pool.take("TensorImpl")
    return rank
