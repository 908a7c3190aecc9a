"""Build keys: a sha256 over canonical JSON of everything that changes a .pte's bytes.

Computing a key never imports torch, so a cache hit stays instant.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from zoo._errors import MissingExtraError, PluginError, UsageError
from zoo._spec import Dataset, ModelSpec, WeightsVariant
from zoo.registry.dists import installed_version
from zoo.registry.npu.targets import Target
from zoo.registry.request import precision as _precision
from zoo.registry.request import reproducible
from zoo.registry.request.code_identity import code_identity
from zoo.registry.request.io_boundary import DEFAULT, Boundary, choose
from zoo.registry.request.precision import Precision

# Bump when the pipeline changes in a way that changes the bytes it produces.
# 2: torch runs on one thread for the whole build, since the bytes depended on the thread count.
# 3: the float work runs in a reproducible numerics mode (reproducible.py), since the bytes
#    depended on the host CPU's instruction set; the key also covers the model's code.
# 4: the model comes out as a macros-only header and a .s holding the array (c_header.py),
#    float macros are f-suffixed, and the header and manifest carry the memory plan.
# 5: integer inputs' headers carry the exact inverse scale (INV_SCALE, _BITS) quantizing multiplies by,
#    and NPU artifacts come with their I/O helpers (<stem>_io.h, <stem>_io.c; model_io.py).
# 6: headers name the CPU kernels the runtime must register and their libraries (cpu_kernels.py).
# 7: the memory plan carries the method and temp allocators' needs (method_allocator.py), and
#    headers name each input and output (MODEL_PTE_INPUT0_NAME, MODEL_PTE_INPUT_IMAGE …).
# 8: the temp allocator's figure covers the runtime's test before it uses the pool (temp_floor_bytes),
#    and the method allocator's no longer counts the Ethos-U backend's handle, which is on the heap
#    (both measured on a Cortex-M55 through ExecuTorch's runtime, tests/firmware/test_firmware_project.py).
# 9: headers name the precision the program was quantized at (MODEL_PTE_PRECISION, --precision).
# 10: a ReLU or ReLU6 after a convolution or linear layer stays a TOSA CLAMP that Vela fuses into the
#     operator (compile/activations.py), instead of ExecuTorch removing it; U55 costs fall to the TFLite flow's.
# 11: a mean over the spatial dimensions of a 4-D tensor lowers to one AVG_POOL2D (compile/spatial_mean.py)
#     instead of ExecuTorch's REDUCE_SUM and MUL with transposes; mnasnet's and shufflenet's programs change.
# 12: a ReLU after a grouped convolution that is not depthwise clamps each group's convolution, where Vela
#     fuses it, instead of following the concat as an operator of its own (compile/activations.py); RegNets change.
# 13: hard-swish, hard-sigmoid and SiLU written as arithmetic become the aten operator (one TABLE;
#     compile/hard_activations.py), and constant scales and shifts next to a convolution fold into it
#     (compile/conv_fold.py); the PP-OCR models change.
# 14: a rewrite before quantization is made only where each replaced node keeps its shape and dtype
#     (compile/graph_edit.py), and a one-element constant with more dimensions than the tensor it meets
#     is no scalar (issue 55): such a model lost the broadcast dimensions. mnist's and paddle-tiny's bytes
#     are unchanged.
# 15: on the U55 and U65 a ×2 half-pixel bilinear upsampling becomes nearest ×2, the border repeated and two
#     2×2 average pools (compile/bilinear_x2.py), which the NPU runs, instead of a CPU operator between partitions.
# 16: a floating neg becomes a multiplication by -1 before quantization (compile/negation.py): ExecuTorch
#     lowered an int8 neg without rescaling to its own output grid (issue 56); a model with -x changes.
#     And on the U85 a linear layer of one vector 9 to 32 features wide is padded to 64 features after
#     quantization, its int8 weight with zero columns (compile/widen_linear.py), where Vela's estimate measured
#     it cheaper: the same integers, fewer cycles (ad-autoencoder-spar on u85-256).
# 17: on u85-128, -256 and -512 a linear layer over 2 to 4 vectors of 17 to 32 features with 64 outputs or
#     more is padded to 64 features too (compile/widen_linear.py, issue 59), where it saved 22 to 63 %; no
#     catalogue model has such a layer, so no shipped build's bytes change (mnist's golden digests hold).
PIPELINE_VERSION = "17"
TOOLS = ("torch", "torchao", "executorch", "ethos-u-vela", "tosa-tools")


@cache
def tool_versions() -> dict[str, str | None]:
    return {name: installed_version(name) for name in TOOLS}


def canonical_json(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def key_of(key_inputs: dict[str, Any]) -> str:
    """The build key: sha256 over the canonical JSON of the key inputs."""
    return hashlib.sha256(canonical_json(key_inputs)).hexdigest()


@dataclass(frozen=True)
class BuildRequest:
    """One model for one target, with the choices that shape it."""

    spec: ModelSpec
    target: Target
    weights: WeightsVariant
    calibration: Dataset
    boundary: Boundary = DEFAULT
    precision: Precision = _precision.DEFAULT

    @classmethod
    def create(
        cls, spec: ModelSpec, target: Target, *, weights: str | None = None, calibration: Dataset | None = None,
        io: str | None = None, layout: str | None = None, precision: str | None = None, recipe: Path | None = None,
        qat: int | None = None, weights_transform: str | None = None,
    ) -> BuildRequest:
        """Raises UsageError for an I/O mode, layout or precision ``spec`` cannot be built with for ``target``."""
        boundary = choose(spec, target, io, layout)
        return cls(spec, target, spec.weights_variant(weights), calibration or spec.calibration, boundary,
                   _precision.choose(spec, target, precision, recipe, boundary.mode, qat, weights_transform))

    def key_inputs(self) -> dict[str, Any]:
        quantized = self.spec.quantize and not self.target.is_portable
        return {
            "zoo_pipeline": PIPELINE_VERSION,
            "model": {"name": self.spec.name, "version": self.spec.version, "code": code_identity(self.spec)},
            "weights": {"name": self.weights.name, "identity": self._identity("weights", self.weights.identity)},
            "inputs": [i.to_json() for i in self.spec.inputs],
            # Absent for torch's NCHW, so earlier builds keep their keys; the manifest's io records it too.
            **({"axes": self.spec.axes} if self.spec.axes != "nchw" else {}),
            # The header and manifest carry the names; absent when none are declared.
            **({"outputs": list(self.spec.outputs)} if self.spec.outputs else {}),
            "calibration": (
                {"size": self.calibration.size, "identity": self._identity("calibration data", self.calibration.identity)}
                if quantized else None
            ),
            "quantization": self.precision.key_fields() if quantized else None,
            **({"training": self._training()} if quantized and self.precision.qat else {}),
            "target": self.target.key_fields(),
            "tools": tool_versions(),
            "float_numerics": reproducible.MODE,
            # Absent for ExecuTorch's default boundary, so earlier builds keep their keys.
            **({"io": io} if (io := self.boundary.key_fields()) else {}),
        }

    def key(self) -> str:
        return key_of(self.key_inputs())

    def _training(self) -> dict[str, Any]:
        training = self.spec.training
        if training is None:
            raise UsageError(f"{self.precision.name}: {self.spec.name!r} declares no training data to fine-tune on")
        return {"size": training.size, "identity": self._identity("training data", training.identity)}

    def _identity(self, what: str, identity: Callable[[], str]) -> str:
        """A plugin's ``identity()``: what goes wrong in it is the plugin's error, naming the
        model and the variant (a missing weights file, a bug), never a raw traceback."""
        try:
            value = identity()
        except MissingExtraError:
            raise
        except Exception as exc:
            message = str(exc).strip().splitlines()
            raise PluginError(
                self.spec.source or "unknown", self.spec.distribution or None,
                f"model {self.spec.name!r} (weights {self.weights.name!r}): the {what}'s identity() raised "
                f"{type(exc).__name__}{': ' + message[0] if message else ''}; it must name the exact {what} "
                "cheaply (a digest, a seed) without failing",
            ) from exc
        if not isinstance(value, str) or not value:
            raise PluginError(
                self.spec.source or "unknown", self.spec.distribution or None,
                f"model {self.spec.name!r} (weights {self.weights.name!r}): the {what}'s identity() returned "
                f"{value!r}, not a non-empty string",
            )
        return value

    @property
    def stem(self) -> str:
        """File name stem of the artifacts, e.g. ``mnist_u55-128``, ``silero-vad_u85-256_a16w8``."""
        suffix = "" if self.precision == _precision.DEFAULT else "_" + re.sub(r"[^a-z0-9._-]+", "-", self.precision.name.lower())
        return f"{self.spec.name}_{self.target.slug}{suffix}"


def can_compile_here() -> bool:
    """Whether this install has the compile stack, i.e. a local build key means anything."""
    return tool_versions().get("executorch") is not None
