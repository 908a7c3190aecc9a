"""The precision a program is quantized at (``--precision``, ``--recipe``): which of Arm's
quantization configs ``EthosUQuantizer`` applies to the whole model, and to the modules a
recipe names (``zoo._recipe``).

``int8`` is zoo's recipe since its first build: int8 activations and weights,
per-channel weights, min/max observers. ``a16w8`` keeps int8 weights and
quantizes every activation to int16 (ExecuTorch's
``get_symmetric_a16w8_quantization_config``): more SRAM and NPU time for less
quantization noise. Torch-free: the CLI validates choices and the key names the
config with this module, and the structure check reads it back from a .pte.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from zoo._errors import UsageError
from zoo._options import PRECISIONS
from zoo._recipe import OBSERVERS, WEIGHT_TRANSFORMS, Recipe
from zoo._spec import ModelSpec
from zoo.registry.checks import Check
from zoo.registry.npu.targets import Target
from zoo.registry.pte.pte_structure import PteInfo

_CONFIGS = {
    "int8": "get_symmetric_quantization_config",
    "a16w8": "get_symmetric_a16w8_quantization_config",
}
"""The function of ``executorch.backends.arm.quantizer`` that gives each precision's config."""
QAT: dict[str, Any] = {
    "method": "distillation: mean squared error to the float model's outputs, each scaled by its RMS",
    "optimiser": "sgd", "learning_rate": 1e-3, "schedule": "linear to 0", "momentum": 0.9, "batch": 16, "seed": 0,
    "activation_ranges": "calibrated as without --qat, then frozen",
    "batchnorm": "folded into the convolution or linear layer before training, as without --qat",
    "check_every": 50, "kept": "the weights with the lowest loss on the whole training set, PTQ's included",
}
"""How ``--qat STEPS`` fine-tunes (``zoo.registry.compile.qat``); in the build key of a QAT build."""
TRANSFORM: dict[str, Any] = {
    "palette": "1-D k-means (Lloyd, quantile start, float64) of each layer's per-channel normalised weights "
               "into N integer levels in [-127, 127], both ends fixed",
    "sparse24": "2 largest magnitudes kept in each 4 consecutive input channels (ties: the lower channel); "
                "convolutions with groups=1 and fully connected layers",
    "qat": "projected in the weights' fake quantizers (palette: straight-through) and after training",
}
"""How ``--weights-transform`` changes the weights (``zoo.registry.compile.weight_transforms``); in its build key."""
SPARSE24_LEARNING_RATE = 1e-2
"""``sparse24``'s fine-tuning starts at this learning rate, not ``QAT``'s: pruning sets half the weights
to 0, so the rest must move much further than from a PTQ program (ds-cnn-fsdd after 300 steps: 98.5 %
top-1 at 1e-3, the training set's loss 0.195 and still falling; 99.33 % at 1e-2, 0.089). In a sparse24
QAT build's key."""
SPARSE24_QAT = 300
"""The fine-tuning steps ``sparse24`` takes where the model has training data and no ``--qat`` is given:
2:4 pruning without it costs whole points of accuracy."""
_FLOAT_OPS = {"a16w8": ("sqrt",)}
"""Operators left unquantized, in float on the CPU: ExecuTorch 1.5.1 lowers an int16 sqrt to a
TOSA TABLE whose interpolation is hundreds of steps off near 0 (docs/upstream.md)."""


@dataclass(frozen=True)
class Precision:
    """``int8``, ``a16w8``, or a recipe: a ``base`` for the whole model and the modules that differ."""

    name: str = "int8"
    base: str = ""
    """The whole model's precision; "" for a preset, whose name it is."""
    modules: tuple[tuple[str, str], ...] = ()
    """(module name, ``int8`` | ``a16w8`` | ``float``), sorted by name."""
    per_channel: bool = True
    qat: int = 0
    """Steps of quantization-aware training; 0 for post-training quantization alone."""
    observer: str = OBSERVERS[0]
    """How activation ranges are observed (``zoo._recipe.OBSERVERS``)."""
    transform: str = ""
    """A weight transform (``zoo._recipe.WEIGHT_TRANSFORMS``), or "" for the weights as trained."""

    def __post_init__(self) -> None:
        if not self.base:
            if self.name not in PRECISIONS:
                raise UsageError(f"--precision {self.name!r} is not a precision: choose one of {', '.join(PRECISIONS)}, "
                                 "or a recipe the model declares ('zoo info MODEL'), or --recipe FILE")
            object.__setattr__(self, "base", self.name)

    @classmethod
    def of_recipe(cls, name: str, recipe: Recipe) -> Precision:
        """A recipe's precision. Its name never reads as a preset's (``int8``, ``a16w8+qat5``), so that
        the key says the recipe and the structure check takes the base precision from it, not the name."""
        if "+" in name or name in PRECISIONS:
            raise UsageError(f"the recipe name {name!r} reads as a preset's; a recipe's name has no '+' and is no "
                             f"precision's ({', '.join(PRECISIONS)})")
        return cls(name, recipe.default, tuple(sorted(recipe.modules.items())), recipe.per_channel, recipe.qat,
                   recipe.observer, recipe.weights)

    def with_qat(self, steps: int) -> Precision:
        """This precision fine-tuned for ``steps`` (``--qat``), named e.g. ``int8+qat200``."""
        name = self.name.split("+qat")[0] if self.qat else self.name
        return replace(self, name=f"{name}+qat{steps}", base=self.base, qat=steps)

    def with_transform(self, transform: str) -> Precision:
        """This precision with its weights transformed (``--weights-transform``), named e.g. ``int8+palette16``."""
        name = self.name.split("+qat")[0]
        if self.transform:
            name = name.removesuffix("+" + self.transform)
        return replace(self, name=f"{name}+{transform}" + (f"+qat{self.qat}" if self.qat else ""), transform=transform)

    @property
    def is_recipe(self) -> bool:
        return (self.name.split("+")[0] not in PRECISIONS or bool(self.modules) or not self.per_channel
                or self.observer != OBSERVERS[0])

    @property
    def config(self) -> str:
        """The name of the whole model's config function in ``executorch.backends.arm.quantizer``."""
        return _CONFIGS[self.base]

    def uses(self, part: str) -> bool:
        return self.base == part or any(p == part for _, p in self.modules)

    @property
    def float_ops(self) -> tuple[str, ...]:
        return _FLOAT_OPS.get("a16w8", ()) if self.uses("a16w8") else ()

    def key_fields(self) -> dict[str, Any]:
        """The build key's ``quantization``. int8's is exactly what keys held before
        ``--precision`` existed, so those builds keep their keys."""
        fields: dict[str, Any] = {
            "quantizer": "EthosUQuantizer",
            "config": self.config,
            "is_per_channel": self.per_channel,
            "is_qat": self.qat > 0,
        }
        if self.name == "int8" and not self.is_recipe:
            return fields
        if self.is_recipe:
            fields["recipe"] = {"default": self.base, "modules": dict(self.modules)}
        return {**fields, "precision": self.name, **({"float_ops": list(self.float_ops)} if self.float_ops else {}),
                **({"qat": {"steps": self.qat, **QAT, **self._qat_changes()}} if self.qat else {}),
                **({"observer": self.observer} if self.observer != OBSERVERS[0] else {}),
                **({"weights_transform": {"name": self.transform, **TRANSFORM}} if self.transform else {})}

    def _qat_changes(self) -> dict[str, Any]:
        return {"learning_rate": SPARSE24_LEARNING_RATE} if self.transform == "sparse24" else {}

    @property
    def learning_rate(self) -> float:
        """Where ``--qat``'s SGD starts: ``QAT``'s, or ``sparse24``'s own."""
        return float({**QAT, **self._qat_changes()}["learning_rate"])

    @classmethod
    def from_key(cls, quantization: dict[str, Any] | None) -> Precision | None:
        """What a build key's ``quantization`` asked for; None for a program that is not quantized."""
        if not quantization:
            return None
        name = str(quantization.get("precision") or "int8")
        qat = quantization.get("qat")
        steps = int(qat.get("steps") or 0) if isinstance(qat, dict) else 0
        observer = str(quantization.get("observer") or OBSERVERS[0])
        weights = quantization.get("weights_transform")
        transform = str(weights.get("name") or "") if isinstance(weights, dict) else ""
        recipe = quantization.get("recipe")
        if isinstance(recipe, dict):
            modules = recipe.get("modules")
            modules = modules if isinstance(modules, dict) else {}
            return cls(name, str(recipe.get("default") or "int8"),
                       tuple(sorted((str(k), str(v)) for k, v in modules.items())),
                       bool(quantization.get("is_per_channel", True)), steps, observer, transform)
        preset = name.split("+")[0]  # int8+qat300 is int8's config, a16w8+palette16 a16w8's
        return cls(name, preset if preset in PRECISIONS else "int8", qat=steps, observer=observer, transform=transform)


DEFAULT = Precision()


def of_key(quantization: dict[str, Any] | None) -> str:
    """The precision a build key's ``quantization`` names: ``float`` for a program
    that is not quantized (the portable target)."""
    if not quantization:
        return "float"
    return str(quantization.get("precision") or "int8")


_LABEL = re.compile(r"[a-z0-9][a-z0-9_.-]*")
"""What a plugin's recipe name may be, and so a recipe file's name."""


def recipe_label(path: Path, option: str = "--recipe") -> str:
    """The precision label of ``--recipe PATH``: the file's name without its extension, ``recipe-``
    before a preset's name. It names the artifacts and is in the build key and the C header, so
    UsageError, before anything is built, unless it is what a plugin's recipe name may be."""
    stem = path.stem
    if "+" in stem:
        raise UsageError(f"{option} {path}: the file's name {stem!r} would read as a preset's name with QAT steps "
                         "(int8+qat200), and the recipe's own precision would be mistaken for the name's; rename it, "
                         f"e.g. {_suggested(stem)}.json (QAT steps go in the recipe's 'qat' or --qat)")
    if not _LABEL.fullmatch(stem):
        raise UsageError(f"{option} {path}: the file's name {stem!r} becomes the build's precision label, in the "
                         "artifacts' names, the build key and the C header, so it may hold only lower-case ASCII "
                         f"letters, digits, '-', '_' and '.', starting with a letter or a digit; rename it, e.g. "
                         f"{_suggested(stem)}.json")
    return f"recipe-{stem}" if stem in PRECISIONS else stem


def _suggested(stem: str) -> str:
    folded = unicodedata.normalize("NFKD", stem).encode("ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9_.-]+", "-", folded).strip("-_.") or "my-recipe"


def choose(spec: ModelSpec, target: Target, precision: str | None, recipe: Path | None, io_mode: str,
           qat: int | None = None, transform: str | None = None) -> Precision:
    """The precision ``spec`` is built at for ``target``: a preset, one of its recipes, or a
    recipe file, with ``qat`` steps of quantization-aware training (else the recipe's) and its
    weights ``transform``ed (else the recipe's); UsageError says what cannot be built and why."""
    if precision is not None and recipe is not None:
        raise UsageError(f"give --precision {precision} or --recipe {recipe}, not both")
    if recipe is not None:
        chosen = Precision.of_recipe(recipe_label(Path(recipe)), Recipe.load(recipe))
    elif precision is not None and precision in spec.recipes:
        chosen = Precision.of_recipe(precision, spec.recipes[precision])
    else:
        chosen = Precision(precision or DEFAULT.name)
    if qat is not None and qat < 0:
        raise UsageError(f"--qat {qat}: give a number of training steps, at least 1 (e.g. --qat 200), or 0 for none")
    steps = chosen.qat if qat is None else qat
    if transform is not None and transform not in WEIGHT_TRANSFORMS:
        raise UsageError(f"--weights-transform {transform!r} is not a weight transform: choose one of "
                         f"{', '.join(WEIGHT_TRANSFORMS)}")
    from_recipe = chosen.transform
    transform = transform or from_recipe
    chosen = replace(chosen, qat=0, transform="")
    if transform:  # a recipe's own transform is named by the recipe; one asked on top of it is named
        chosen = replace(chosen, transform=transform) if transform == from_recipe else chosen.with_transform(transform)
        if transform == "sparse24" and qat is None and not steps and spec.training is not None:
            steps = SPARSE24_QAT  # 2:4 pruning is fine-tuned where it can be: it is the recipe, not an option
    if steps:
        chosen = chosen.with_qat(steps)
    if chosen == DEFAULT:
        return chosen
    asked = (f"--recipe {recipe}" if recipe is not None else f"--precision {precision}" if precision is not None
             else f"--weights-transform {transform}" if transform else f"--qat {steps}")
    if target.is_portable or not spec.quantize:
        raise UsageError(f"{asked}: {target.name!r} runs {spec.name!r} in float on the CPU, "
                         "so it takes no precision; leave it out")
    if transform and target.family not in WEIGHT_TRANSFORMS[transform]:
        takes = [t for t, families in WEIGHT_TRANSFORMS.items() if target.family in families]
        raise UsageError(f"weights transform {transform}: {target.name!r} does not benefit from it: {transform} is for "
                         f"Ethos-{'/'.join(f.upper() for f in WEIGHT_TRANSFORMS[transform])} targets"
                         + (f", and {target.name!r} takes {', '.join(takes)}" if takes else ""))
    if steps and spec.training is None:
        raise UsageError(f"--qat {steps}: {spec.name!r} declares no training data (its plugin's ModelSpec.training), "
                         "so there is nothing to fine-tune on; build it without --qat")
    if io_mode != "float" and chosen.uses("a16w8"):
        raise UsageError(
            f"{asked} quantizes the program's inputs and outputs to int16, which --io {io_mode} does not "
            "describe: build it with --io float (the CPU quantizes the input and dequantizes the output)"
        )
    return chosen


def check_precision(info: PteInfo, precision: Precision | None, source: str = "manifest") -> Check:
    """The precision the ``source`` records against the integer tensors the .pte's methods
    pass between the CPU and the NPU: int16 ones only where a16w8 is used, and int16 at the
    boundary where the whole model is a16w8."""
    dtypes = {t.dtype for plan in info.plans for t in plan.tensors.values()}
    integer = sorted(dtypes & {"int8", "uint8", "int16"})
    seen = ", ".join(integer) or "none"
    if precision is None:
        return Check("precision", True, f"float: not quantized (integer tensors: {seen})")
    problem = None
    if "int16" in integer and not precision.uses("a16w8"):
        problem = f"the {source} records {precision.name}, which uses no a16w8, but the program passes int16 tensors"
    elif precision.base == "a16w8" and "int16" not in integer:
        problem = f"the {source} records {precision.name} (a16w8 for the whole model), but no tensor of the program is int16"
    elif precision.base == "a16w8" and not precision.uses("int8") and {"int8", "uint8"} & set(integer):
        problem = f"the {source} records {precision.name}, which uses no int8, but the program passes 8-bit tensors"
    elif not integer:
        problem = f"the {source} records {precision.name}, but no tensor of the program is an integer: nothing is quantized"
    return Check("precision", problem is None, problem or f"{precision.name}: the program's integer tensors are {seen}")
