"""The precision a program is quantized at (``--precision``): which of Arm's
quantization configs ``EthosUQuantizer`` applies to the whole model.

``int8`` is zoo's recipe since its first build: int8 activations and weights,
per-channel weights, min/max observers. ``a16w8`` keeps int8 weights and
quantizes every activation to int16 (ExecuTorch's
``get_symmetric_a16w8_quantization_config``): more SRAM and NPU time for less
quantization noise. Torch-free: the CLI validates choices and the key names the
config with this module, and the structure check reads it back from a .pte.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from zoo._errors import UsageError
from zoo._options import PRECISIONS
from zoo.registry.checks import Check
from zoo.registry.pte_structure import PteInfo
from zoo.registry.targets import Target

_CONFIGS = {
    "int8": "get_symmetric_quantization_config",
    "a16w8": "get_symmetric_a16w8_quantization_config",
}
"""The function of ``executorch.backends.arm.quantizer`` that gives each precision's config."""
_ACTIVATION_DTYPES = {"int8": "int8", "a16w8": "int16"}
_FLOAT_OPS = {"a16w8": ("sqrt",)}
"""Operators left unquantized, in float on the CPU: ExecuTorch 1.5.1 lowers an int16 sqrt to a
TOSA TABLE whose interpolation is hundreds of steps off near 0 (docs/upstream.md)."""


@dataclass(frozen=True)
class Precision:
    name: str = "int8"

    def __post_init__(self) -> None:
        if self.name not in PRECISIONS:
            raise UsageError(f"--precision {self.name!r} is not a precision: choose one of {', '.join(PRECISIONS)}")

    @property
    def config(self) -> str:
        """The name of the quantization config function in ``executorch.backends.arm.quantizer``."""
        return _CONFIGS[self.name]

    @property
    def activation_dtype(self) -> str:
        return _ACTIVATION_DTYPES[self.name]

    @property
    def float_ops(self) -> tuple[str, ...]:
        return _FLOAT_OPS.get(self.name, ())

    def key_fields(self) -> dict[str, Any]:
        """The build key's ``quantization``. int8's is exactly what keys held before
        ``--precision`` existed, so those builds keep their keys."""
        fields: dict[str, Any] = {
            "quantizer": "EthosUQuantizer",
            "config": self.config,
            "is_per_channel": True,
            "is_qat": False,
        }
        if self.name == "int8":
            return fields
        return {**fields, "precision": self.name, **({"float_ops": list(self.float_ops)} if self.float_ops else {})}


DEFAULT = Precision()


def of_key(quantization: dict[str, Any] | None) -> str:
    """The precision a build key's ``quantization`` names: ``float`` for a program
    that is not quantized (the portable target)."""
    if not quantization:
        return "float"
    return str(quantization.get("precision") or "int8")


def choose(model: str, target: Target, precision: str | None, io_mode: str, quantized: bool) -> Precision:
    """The precision ``model`` is built at for ``target``; UsageError says what cannot be built and why."""
    chosen = Precision(precision or DEFAULT.name)
    if chosen == DEFAULT:
        return chosen
    if target.is_portable or not quantized:
        raise UsageError(f"--precision {chosen.name}: {target.name!r} runs {model!r} in float on the CPU, "
                         "so it takes no precision; leave --precision out")
    if io_mode != "float":
        raise UsageError(
            f"--precision {chosen.name} quantizes the program's inputs and outputs to {chosen.activation_dtype}, "
            f"which --io {io_mode} does not describe: build it with --io float (the CPU quantizes the input and "
            "dequantizes the output)"
        )
    return chosen


def check_precision(info: PteInfo, precision: str, source: str = "manifest") -> Check:
    """The precision the ``source`` records against the integer tensors the .pte's methods
    pass between the CPU and the NPU: int16 ones for a16w8, none for int8."""
    dtypes = {t.dtype for plan in info.plans for t in plan.tensors.values()}
    integer = sorted(dtypes & {"int8", "uint8", "int16"})
    seen = ", ".join(integer) or "none"
    if precision == "float":
        return Check("precision", True, f"float: not quantized (integer tensors: {seen})")
    wanted = Precision(precision).activation_dtype
    problem = None
    if wanted not in integer:
        problem = f"the {source} records {precision}, but no tensor of the program is {wanted}"
    elif precision == "int8" and "int16" in integer:
        problem = f"the {source} records int8, but the program passes int16 tensors (an a16w8 build?)"
    elif precision == "a16w8" and "int8" in integer:
        problem = f"the {source} records a16w8, but the program passes int8 tensors"
    return Check("precision", problem is None, problem or f"{precision}: the program's integer tensors are {seen}")
