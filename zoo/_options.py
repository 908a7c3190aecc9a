"""What a caller can ask of a fetch or a build, as plain, typed data.

``Choices`` shape the artifact itself (and so its build key); the rest of
``FetchOptions`` says where the artifact may come from and how it is handed
out. The CLI, the Python API and the engine all pass these, never loose
keyword bags.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypedDict, Union, cast

from zoo._errors import UsageError

ExecutorName = Literal["inline", "processes", "ray"]
IO_MODES = ("float", "int8", "uint8", "pixels")
PRECISIONS = ("int8", "a16w8")
"""What ``--precision`` takes, the default first (``zoo.registry.request.precision``)."""


@dataclass(frozen=True)
class Choices:
    """Everything besides the model and the target that changes the artifact."""

    weights: str | None = None
    """A weights variant (``zoo info MODEL``); None: the model's default."""
    calibration_dir: Path | None = None
    """Calibrate on these samples instead of the model's own set."""
    system_config: str | None = None
    memory_mode: str | None = None
    sram_budget: int | None = None
    """Bytes; None: the board's SRAM, if it states one."""
    io: str | None = None
    """The program's inputs and outputs: ``float`` (ExecuTorch's default), ``int8``,
    ``uint8`` or ``pixels`` (raw uint8 image bytes); None: zoo.toml's ``default_io``."""
    layout: str | None = None
    """``nchw`` or ``nhwc`` for image inputs; None: the model's default."""
    precision: str | None = None
    """What the program is quantized at: ``int8`` (the default), ``a16w8`` (int16
    activations, int8 weights), or a recipe the model declares; ``zoo.registry.request.precision``."""
    recipe: Path | None = None
    """A recipe file (JSON, ``zoo._recipe.Recipe``) instead of ``precision``."""
    qat: int | None = None
    """Steps of quantization-aware training on the model's training data; None: the recipe's, else none."""
    weights_transform: str | None = None
    """``palette8``, ``palette16``, ``palette32`` (U55, U65) or ``sparse24`` (U85): weights the NPU reads
    faster (``zoo._recipe.WEIGHT_TRANSFORMS``); None: the recipe's, else the weights as trained."""

    def __post_init__(self) -> None:
        check_types(self)


@dataclass(frozen=True)
class FetchOptions(Choices):
    """How ``zoo fetch`` / ``zoo build`` resolve and hand out artifacts."""

    out_dir: Path | None = None
    """Copy the artifacts here (a folder per artifact when there are several)."""
    header_array: str = "model_pte"
    header_section: str = "network_model_sec"
    header_style: Literal["split", "single"] = "split"
    """``split``: a macros-only header and a .s with the array; ``single``: one header
    that defines the array where ``<ARRAY>_DEFINE`` is defined."""
    labels_header: bool = False
    overwrite: bool = False
    """Replace files in ``out_dir`` that belong to another artifact (``--force``); without it
    such a hand-out is refused, so no variant silently replaces another."""
    build: bool = True
    """Compile here when neither the cache nor a remote has the artifact."""
    force_build: bool = False
    """Compile here even if the cache has it, replacing the cached entry."""
    verify: bool | None = None
    """True: also need the numerical check; False: hand out an artifact that fails a check."""
    bundle: bool = False
    eval_dir: Path | None = None
    """Run the numerical check on these labelled images (a subfolder per class, named
    by label or index) instead of the model's own data; implies ``verify``."""
    remotes: tuple[str, ...] | None = None
    """Replaces zoo.toml's remotes; None: zoo.toml's."""
    trusted_keys: tuple[Path, ...] = ()
    """Public keys (PEM files), one of which must have signed every artifact fetched
    from any remote, besides each remote's own ``trusted_keys`` in zoo.toml."""
    any_toolchain: bool = False
    offline: bool | None = None
    """None: zoo.toml / ZOO_OFFLINE."""
    jobs: int = 1
    executor: ExecutorName | None = None
    """Where builds run; None: ``processes`` when ``jobs`` > 1, else ``inline``."""
    keep_going: bool = False
    """Build every other artifact when one fails; the failures are recorded in the
    cache (so ``fetch`` does not compile them again) and reported together."""
    ray_address: str | None = None
    """The Ray cluster of ``executor="ray"``; None: Ray's own rule (RAY_ADDRESS, a
    running local cluster, else a new one)."""
    ray_results: str | None = None
    """A remote every Ray node can write and the driver read (a shared directory,
    ``s3://BUCKET/PREFIX``, ``hf://ORG/REPO``) through which Ray tasks hand their
    artifacts over; None: Ray's object store. Implies ``executor="ray"``."""
    shard: tuple[int, int] | None = None
    """(K, N): only the build units of shard K of N (``--shard K/N``), for CI matrices."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.jobs < 1:
            raise UsageError(f"--jobs must be at least 1, got {self.jobs}")
        if self.shard is not None and not 1 <= self.shard[0] <= self.shard[1]:
            raise UsageError(f"--shard {self.shard[0]}/{self.shard[1]}: shards are numbered 1 to N, so K must be one of those")
        # An empty value is a mistake (an unset variable in a CI script), never "the default": refuse it.
        if self.ray_address is not None and not self.ray_address.strip():
            raise UsageError(f"--ray-address {self.ray_address!r} is empty: give the cluster's address, e.g. "
                             "--ray-address ray://head:10001, or leave the option out")
        if self.ray_results is not None and not self.ray_results.strip():
            raise UsageError(f"--ray-results {self.ray_results!r} is empty: give a remote every node can write, e.g. "
                             "--ray-results s3://BUCKET/PREFIX, or leave the option out")
        if self.ray_address is not None and self.executor not in (None, "ray"):
            raise UsageError(f"--ray-address {self.ray_address} is for --executor ray, not --executor {self.executor}")
        if self.ray_results is not None and self.executor not in (None, "ray"):
            raise UsageError(f"--ray-results {self.ray_results} is for --executor ray, not --executor {self.executor}")
        if isinstance(self.trusted_keys, (str, Path)):
            raise UsageError(f"trusted_keys must be a sequence of key files, not one path: ({str(self.trusted_keys)!r},)")
        object.__setattr__(self, "trusted_keys", tuple(Path(p) for p in self.trusted_keys))

    @property
    def choices(self) -> Choices:
        return Choices(**choice_args(self))


def choice_args(choices: Choices) -> BuildChoices:
    """The build choices as the keyword arguments ``Zoo.request``, ``Zoo.verify`` and ``FetchOptions`` take."""
    return cast("BuildChoices", {name: getattr(choices, name) for name in CHOICE_NAMES})


def choices_from(given: BuildChoices, where: str) -> Choices:
    """``Choices`` from the keyword arguments ``where`` was given, refused as Python refuses
    a keyword a function does not take."""
    unknown = sorted(set(given) - set(CHOICE_NAMES))
    if unknown:
        raise TypeError(f"{where}() got an unexpected keyword argument {unknown[0]!r}")
    return Choices(**given)


class BuildChoices(TypedDict, total=False):
    """``Choices`` as keyword arguments, each None by default: ``zoo.Zoo().request("mnist", "u55-128", io="int8")``."""

    weights: str | None
    calibration_dir: Path | None
    system_config: str | None
    memory_mode: str | None
    sram_budget: int | None
    io: str | None
    layout: str | None
    precision: str | None
    recipe: Path | None
    qat: int | None
    weights_transform: str | None


CHOICE_NAMES = tuple(f.name for f in dataclasses.fields(Choices))


class FetchArgs(BuildChoices, total=False):
    """``FetchOptions`` as keyword arguments: ``zoo.fetch("mnist", "u55-128", verify=True)``."""

    out_dir: Path | None
    header_array: str
    header_section: str
    header_style: Literal["split", "single"]
    labels_header: bool
    overwrite: bool
    build: bool
    force_build: bool
    verify: bool | None
    bundle: bool
    eval_dir: Path | None
    remotes: tuple[str, ...] | None
    trusted_keys: tuple[Path, ...]
    any_toolchain: bool
    offline: bool | None
    jobs: int
    executor: ExecutorName | None
    keep_going: bool
    ray_address: str | None
    ray_results: str | None
    shard: tuple[int, int] | None


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))
    return _HINTS[cls]


def check_types(options: Choices) -> None:
    """Refuse a field whose value is not of its declared type, naming the keyword, before any
    work: from Python, ``zoo.fetch(..., io=3)`` or ``verify="yes"`` would otherwise be taken
    for something else (a truthy string is not ``True``) or fail deep in a build."""
    for f in dataclasses.fields(options):
        value = getattr(options, f.name)
        problem = _mismatch(value, _hints(type(options))[f.name])
        if problem is not None:
            error = ValueError if problem.startswith("one of") else TypeError
            got = "" if ", but item" in problem else f", got {type(value).__name__}"
            raise error(f"{f.name}={value!r}: expected {problem}{got}")


def _mismatch(value: Any, hint: Any) -> str | None:
    """What ``value`` should be to match ``hint`` (None if it does)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        misses = [_mismatch(value, a) for a in args if a is not type(None)]
        if any(m is None for m in misses):
            return None
        text = " or ".join(m for m in misses if m)
        return text + (" or None" if type(None) in args and ", but item" not in text else "")
    if origin is Literal:
        return None if value in args and isinstance(value, str) else "one of " + ", ".join(map(repr, args))
    if hint is bool:
        return None if isinstance(value, bool) else "True or False"
    if hint is int:
        return None if isinstance(value, int) and not isinstance(value, bool) else "an int"
    if hint is str:
        return None if isinstance(value, str) else "a str"
    if hint is Path:
        return None if isinstance(value, (str, os.PathLike)) else "a path (str or os.PathLike)"
    if origin is tuple:
        each = args[-1] is Ellipsis
        what = f"a tuple of {_name(args[0])}" if each else f"a tuple ({', '.join(_name(a) for a in args)})"
        if isinstance(value, (str, bytes, os.PathLike)) or not isinstance(value, (tuple, list)):
            return what
        if not each and len(value) != len(args):
            return what
        for i, item in enumerate(value):
            if _mismatch(item, args[0] if each else args[i]) is not None:
                return f"{what}, but item {i} is {item!r}"
    return None


def _name(hint: Any) -> str:
    return {str: "str", int: "int", Path: "paths"}.get(hint, str(hint))
