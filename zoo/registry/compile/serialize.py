"""The canonical bytes of a .pte: ExecuTorch's serializer with its default
``ExecutorchBackendConfig()``, after a deserialize/serialize round trip, and
the operator table read back from them."""

from __future__ import annotations

from typing import Any

from zoo._errors import BuildError


def serialize(pte_file: Any) -> bytes:
    """Serialize with the ``ExecutorchBackendConfig()`` defaults: the canonical form."""
    from executorch.exir._serialize._program import serialize_pte_binary
    from executorch.exir.capture._config import ExecutorchBackendConfig

    config = ExecutorchBackendConfig()
    return bytes(
        serialize_pte_binary(
            pte_file,
            extract_delegate_segments=config.extract_delegate_segments,
            segment_alignment=config.segment_alignment,
            constant_tensor_alignment=config.constant_tensor_alignment,
            delegate_alignment=config.delegate_alignment,
        )
    )


def canonical(pte: bytes) -> bytes:
    """The canonical form of a .pte: ``serialize(deserialize(pte))`` with the
    ``ExecutorchBackendConfig()`` defaults. The emitter's own layout differs."""
    from executorch.exir._serialize._program import deserialize_pte_binary

    return serialize(deserialize_pte_binary(pte))


def operator_table(pte: bytes) -> list[str]:
    """Kernels the runtime must provide: the program's operator table, sorted and
    unique, e.g. ``quantized_decomposed::quantize_per_tensor.out``."""
    from executorch.exir._serialize._program import deserialize_pte_binary

    program = deserialize_pte_binary(pte).program
    names = {
        f"{op.name}.{op.overload}" if op.overload else op.name
        for plan in program.execution_plan
        for op in plan.operators
    }
    return sorted(names)


def _canonical(pte: bytes) -> bytes:
    once = canonical(pte)
    if canonical(once) != once:
        raise BuildError("the .pte round trip is not idempotent; its bytes are not canonical")
    return once


def _program_bytes(program: Any) -> bytes:
    if program._tensor_data:  # a .ptd beside the .pte; zoo ships one file
        raise BuildError(f"the program keeps data outside the .pte ({sorted(program._tensor_data)})")
    return bytes(program.buffer)
