"""What one method of a ``.pte`` holds, value by value: the program-schema facts the firmware's
replay of ``load_method`` counts (``firmware/method_allocator.py``), read without ExecuTorch.

``pte_structure.read_pte`` reads only the values zoo checks; this reads every value of one
method, its delegates and its instructions, and judges none of them: which of them the
replay covers is the replay's to say.
"""

from __future__ import annotations

from dataclasses import dataclass

from zoo.registry.pte.flatbuffer import PteFormatError, Reader, Table
from zoo.registry.pte.pte_structure import (
    BACKEND_DELEGATE,
    CHAIN,
    DELEGATE_CALL,
    EVALUE,
    EXECUTION_PLAN,
    INSTRUCTION,
    INSTRUCTION_ARGUMENTS,
    KERNEL_CALL,
    KERNEL_TYPES,
    PROGRAM,
    TENSOR,
)

__all__ = ["LIST_KINDS", "CallLayout", "DelegateLayout", "MethodLayout", "ValueLayout", "read_method"]

LIST_KINDS = {"IntList": 8, "DoubleList": 8, "BoolList": 1, "TensorList": 4, "OptionalTensorList": 4}
"""The list values, by the byte size of one item."""
# Program-schema fields read beyond pte_structure's.
_EXTRA_TENSOR_INFO_LOCATION = 2
_EXTERNAL = 1
_LIST_ITEMS = 0
_KERNEL_CALL = INSTRUCTION_ARGUMENTS.index("KernelCall")
_DELEGATE_CALL = INSTRUCTION_ARGUMENTS.index("DelegateCall")


@dataclass(frozen=True)
class ValueLayout:
    kind: str
    """``KERNEL_TYPES``' name, or ``union member N`` for one the schema here does not know."""
    has_body: bool
    items: int = 0
    """A list's length."""
    rank: int | None = None
    """A tensor's rank."""
    dynamic: bool = False
    """A tensor whose shape is not static."""
    external: bool = False
    """A tensor whose data lives in an external ``.ptd``."""


@dataclass(frozen=True)
class DelegateLayout:
    backend_id: str
    compile_specs: int


@dataclass(frozen=True)
class CallLayout:
    kind: str
    """``kernel`` or ``delegate``."""
    args: tuple[int, ...]


@dataclass(frozen=True)
class MethodLayout:
    name: str
    values: tuple[ValueLayout, ...]
    inputs: int
    delegates: tuple[DelegateLayout, ...]
    chains: tuple[tuple[CallLayout | None, ...], ...]
    """Each chain's instructions: the calls, None for any other instruction."""


def read_method(data: bytes, program_end: int, name: str = "forward") -> MethodLayout:
    """The layout of method ``name`` in the program flatbuffer ``data[:program_end]``;
    PteFormatError if the program has no such method or a read falls outside it."""
    reader = Reader(data, program_end)
    root = reader.root("Program")
    plans = [p for p in root.tables(PROGRAM["execution_plan"], "Program.execution_plan")
             if p.string(EXECUTION_PLAN["name"], "ExecutionPlan.name") == name]
    if not plans:
        raise PteFormatError(f"the program has no method {name!r}")
    plan = plans[0]
    return MethodLayout(
        name=name,
        values=tuple(_value(v) for v in plan.tables(EXECUTION_PLAN["values"], "ExecutionPlan.values")),
        inputs=len(plan.ints(EXECUTION_PLAN["inputs"], "ExecutionPlan.inputs")),
        delegates=tuple(
            DelegateLayout(d.string(BACKEND_DELEGATE["id"], "BackendDelegate.id") or "",
                           len(d.tables(BACKEND_DELEGATE["compile_specs"], "BackendDelegate.compile_specs")))
            for d in plan.tables(EXECUTION_PLAN["delegates"], "ExecutionPlan.delegates")),
        chains=tuple(tuple(_call(i) for i in chain.tables(CHAIN["instructions"], "Chain.instructions"))
                     for chain in plan.tables(EXECUTION_PLAN["chains"], "ExecutionPlan.chains")),
    )


def _value(value: Table) -> ValueLayout:
    kind_id = value.scalar(EVALUE["val_type"], "<B")
    kind = KERNEL_TYPES[kind_id] if kind_id < len(KERNEL_TYPES) else f"union member {kind_id}"
    body = value.table(EVALUE["val"], kind) if kind not in ("NONE", "Null") else None
    if body is None:
        return ValueLayout(kind, has_body=False)
    if kind == "Tensor":
        extra = body.table(TENSOR["extra_tensor_info"], "ExtraTensorInfo")
        return ValueLayout(
            kind, has_body=True, rank=len(body.ints(TENSOR["sizes"], "Tensor.sizes")),
            dynamic=bool(body.scalar(TENSOR["shape_dynamism"], "<b")),
            external=extra is not None and extra.scalar(_EXTRA_TENSOR_INFO_LOCATION, "<b") == _EXTERNAL)
    if kind in LIST_KINDS:
        span = body.span(_LIST_ITEMS, f"{kind}.items", LIST_KINDS[kind])
        return ValueLayout(kind, has_body=True, items=span[1] if span else 0)
    return ValueLayout(kind, has_body=True)


def _call(instruction: Table) -> CallLayout | None:
    kind = instruction.scalar(INSTRUCTION["instr_args_type"], "<B")
    if kind not in (_KERNEL_CALL, _DELEGATE_CALL):
        return None
    call = instruction.table(INSTRUCTION["instr_args"], INSTRUCTION_ARGUMENTS[kind])
    fields = KERNEL_CALL if kind == _KERNEL_CALL else DELEGATE_CALL
    args = call.ints(fields["args"], "call args") if call else ()
    return CallLayout("kernel" if kind == _KERNEL_CALL else "delegate", args)
