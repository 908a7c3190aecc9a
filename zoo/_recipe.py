"""A quantization recipe: the precision of the whole model, and of the modules that differ.

A plugin declares named recipes per model (``ModelSpec.recipes``, taken with ``--precision
NAME``); ``--recipe FILE`` reads one from JSON, such as ``zoo tune`` writes. Torch-free.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zoo._errors import UsageError
from zoo._regular_file import open_regular

BASES = ("int8", "a16w8")
"""What a whole model can be quantized at: int8 activations, or int16 ones; int8 weights either way."""
PARTS = (*BASES, "float")
"""What a module can be: ``float`` leaves it unquantized, in float on the CPU."""
OBSERVERS = ("histogram", "minmax", "moving_average", "percentile")
"""How activation ranges are observed in calibration, Arm's default (histogram) first: the
running min/max, its moving average, or the 0.01 %/99.99 % percentiles of each sample."""
WEIGHT_TRANSFORMS = {"palette8": ("u55", "u65"), "palette16": ("u55", "u65"), "palette32": ("u55", "u65"),
                     "sparse24": ("u85",)}
"""What a recipe's ``weights`` (``--weights-transform``) may be, and the NPU families each speeds up:
N shared int8 values per layer, which Vela's weight codec packs as a palette on the U55 and U65,
or 2:4 structured sparsity, whose zeros the U85's MACs skip (``zoo.registry.compile.weight_transforms``)."""
ROOT = "."
"""The module name for the operators the model's own ``forward`` runs, outside every submodule."""


@dataclass(frozen=True)
class Recipe:
    """``default`` for the whole model; ``modules`` maps a module's name in
    ``model.named_modules()`` (e.g. ``"encoder.0"``), or ``"."`` for the operators of the model's
    own ``forward`` outside every submodule, to ``int8``, ``a16w8`` or ``float``.
    Weights are quantized per channel unless ``per_channel`` is False."""

    default: str = "int8"
    modules: Mapping[str, str] = field(default_factory=dict)
    per_channel: bool = True
    description: str = ""
    """Why this recipe: words only, not part of the build key."""
    qat: int = 0
    """Steps of quantization-aware training (``--qat``); 0 for none."""
    observer: str = "histogram"
    """How activation ranges are observed (``OBSERVERS``); weights' always take their min/max."""
    weights: str = ""
    """A weight transform (``WEIGHT_TRANSFORMS``), or "" for the weights as trained."""

    def problems(self) -> list[str]:
        out = []
        if self.default not in BASES:
            out.append(f"default {self.default!r} must be one of {', '.join(BASES)}")
        if not isinstance(self.modules, Mapping):
            return [*out, f"modules must map module names to one of {', '.join(PARTS)}, not {self.modules!r}"]
        for name, part in self.modules.items():
            if not isinstance(name, str) or not name:
                out.append(f"module name {name!r} must be a non-empty string, as model.named_modules() gives it")
            elif part not in PARTS:
                out.append(f"module {name!r}: {part!r} must be one of {', '.join(PARTS)}")
        if not isinstance(self.per_channel, bool):
            out.append(f"per_channel must be true or false, not {self.per_channel!r}")
        if isinstance(self.qat, bool) or not isinstance(self.qat, int) or self.qat < 0:
            out.append(f"qat must be a number of training steps (0 for none), not {self.qat!r}")
        if self.observer not in OBSERVERS:
            out.append(f"observer {self.observer!r} must be one of {', '.join(OBSERVERS)}")
        if self.weights != "" and (not isinstance(self.weights, str) or self.weights not in WEIGHT_TRANSFORMS):
            out.append(f"weights {self.weights!r} must be one of {', '.join(WEIGHT_TRANSFORMS)} (or left out)")
        if not isinstance(self.description, str):
            out.append(f"description must be a string, not {self.description!r}")
        return out

    def to_json(self) -> dict[str, Any]:
        return {"default": self.default, "modules": dict(sorted(self.modules.items())),
                "per_channel": self.per_channel, **({"qat": self.qat} if self.qat else {}),
                **({"observer": self.observer} if self.observer != OBSERVERS[0] else {}),
                **({"weights": self.weights} if self.weights else {}), "description": self.description}

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2) + "\n"

    @classmethod
    def from_json(cls, data: Any, where: str) -> Recipe:
        """``data`` as a recipe; UsageError naming ``where`` and what is wrong."""
        if not isinstance(data, dict):
            raise UsageError(f"{where}: a recipe is a JSON object with 'default' and 'modules', not {type(data).__name__}")
        unknown = sorted(set(data) - {"default", "modules", "per_channel", "qat", "observer", "weights", "description"})
        if unknown:
            raise UsageError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; a recipe has 'default', "
                             "'modules', 'per_channel', 'qat', 'observer', 'weights' and 'description'")
        recipe = cls(default=data.get("default", "int8"), modules=data.get("modules") or {},
                     per_channel=data.get("per_channel", True), description=data.get("description", ""),
                     qat=data.get("qat", 0), observer=data.get("observer", OBSERVERS[0]),
                     weights=data.get("weights", ""))
        problems = recipe.problems()
        if problems:
            raise UsageError(f"{where}: " + "; ".join(problems))
        return recipe

    @classmethod
    def load(cls, path: Path) -> Recipe:
        """A recipe file (``--recipe FILE``); UsageError naming the file and what is wrong."""
        where = f"--recipe {path}"
        try:
            return cls.from_json(json.loads(_read_regular_file(Path(path), where)), where)
        except FileNotFoundError:
            raise UsageError(f"{where}: no such file") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"{where}: cannot be read ({exc})") from None
        except json.JSONDecodeError as exc:
            raise UsageError(f"{where}: not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
        except RecursionError:
            raise UsageError(f"{where}: nested too deeply to be a recipe; a recipe is one JSON object of "
                             "'default', 'modules' (module name to precision) and a few flags") from None


def _read_regular_file(path: Path, where: str) -> str:
    """The text of ``path`` if it is a regular file (zoo._regular_file says why)."""
    f = open_regular(path)
    if f is None:
        raise UsageError(f"{where}: not a regular file (a pipe, a device or a folder); give a recipe's JSON file")
    with f:
        return f.read().decode("utf-8")
