"""Which of ExecuTorch's kernel libraries the firmware must link for the CPU
operators a program still calls, by the operator's namespace.

zoo leaves ExecuTorch's portable quantized kernels (``quantized_decomposed::``,
in ``quantized_ops_lib``) at a float program's boundary, as the Ethos-U flow's
``to_edge_transform_and_lower`` emits them; ExecuTorch's Arm ``executor_runner``
links that library by default. ``aot_arm_compiler`` instead rewrites them to
the CMSIS-NN kernels (``cortex_m::``, in ``cortex_m_ops_lib``), which needs the
Cortex-M backend's library in the firmware as well. ``--io int8`` and
``--io pixels`` leave no CPU kernel at all, which is the choice that needs neither.
"""

from __future__ import annotations

from collections.abc import Iterable

LIBRARIES = {
    "quantized_decomposed": "quantized_ops_lib",
    "aten": "portable_ops_lib",
    "dim_order_ops": "portable_ops_lib",
    "cortex_m": "cortex_m_ops_lib",
}


def libraries(operators: Iterable[str]) -> list[str]:
    """The libraries, sorted, that provide ``operators`` (``namespace::name.overload``);
    an unknown namespace is named as itself."""
    return sorted({LIBRARIES.get(op.split("::", 1)[0], op.split("::", 1)[0]) for op in operators})


def macros(operators: list[str]) -> dict[str, str | int | None]:
    """The header's ``CPU_KERNELS`` (how many the runtime must register) and ``CPU_KERNEL_LIBS``."""
    return {"cpu_kernels": len(operators), "cpu_kernel_libs": " ".join(libraries(operators)) or None}
