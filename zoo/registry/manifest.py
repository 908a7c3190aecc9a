"""The manifest that travels with every artifact: what went in, what came out."""

from __future__ import annotations

import dataclasses
import functools
import json
import types
import typing
from dataclasses import asdict, dataclass, field
from typing import Any

from zoo._errors import UsageError
from zoo.registry.targets import PORTABLE, Target, TargetTable

if typing.TYPE_CHECKING:
    from zoo.registry.measured_metric import MeasuredMetric

SCHEMA = 1


@dataclass(frozen=True)
class VelaTotals:
    """Vela's estimates for the whole program (every NPU partition)."""

    inference_time_ms: float | None = None
    inferences_per_second: float | None = None
    sram_bytes: int | None = None
    dram_bytes: int | None = None
    on_chip_flash_bytes: int | None = None
    off_chip_flash_bytes: int | None = None

    @property
    def flash_bytes(self) -> int | None:
        if self.on_chip_flash_bytes is None and self.off_chip_flash_bytes is None:
            return None
        return (self.on_chip_flash_bytes or 0) + (self.off_chip_flash_bytes or 0)

    @classmethod
    def from_json(cls, total: dict[str, Any]) -> VelaTotals:
        return cls(**{f.name: total.get(f.name) for f in dataclasses.fields(cls)})


@dataclass(frozen=True)
class TargetOptions:
    """The target an artifact was built for, as its build key records it."""

    accelerator: str | None
    system_config: str | None = None
    memory_mode: str | None = None
    extra_flags: tuple[str, ...] = ()
    vela_ini: str | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TargetOptions:
        return cls(
            data.get("accelerator"), data.get("system_config"), data.get("memory_mode"),
            tuple(data.get("extra_flags") or ()), data.get("vela_ini"),
        )

    def target(self, name: str, *, extra_flags: tuple[str, ...] | None = None) -> Target:
        """The ``Target`` these options describe, named ``name``."""
        if self.accelerator is None:
            return Target(PORTABLE, None)
        target = Target(
            name, self.accelerator, self.system_config, self.memory_mode,
            extra_flags=self.extra_flags if extra_flags is None else extra_flags,
        )
        return dataclasses.replace(target, vela_ini=self.vela_ini) if self.vela_ini else target

    @property
    def slug(self) -> str:
        """The folder name of the target, e.g. ``u55-128`` or ``u65-256-shared_sram``."""
        return self.target(self.accelerator or PORTABLE).slug

    def fetch_args(self) -> str:
        """The ``--target`` (and options) of ``zoo fetch`` that resolve to these options, quoted for a shell."""
        import shlex

        return shlex.join(self.fetch_argv())

    def fetch_argv(self) -> list[str]:
        """``fetch_args`` as separate arguments."""
        if self.accelerator is None:
            return ["--target", PORTABLE]
        argv = ["--target", self.accelerator]
        try:
            defaults = TargetTable().defaults(self.accelerator)
            default_options = (defaults.system_config, defaults.memory_mode)
        except UsageError:  # an accelerator this zoo does not know
            default_options = (None, None)
        if (self.system_config, self.memory_mode) != default_options:
            argv += ["--system-config", str(self.system_config), "--memory-mode", str(self.memory_mode)]
        return argv


@dataclass(frozen=True)
class FileRecord:
    name: str
    kind: str
    size: int
    sha256: str


@dataclass
class Manifest:
    key: str
    model: str
    target: str
    key_inputs: dict[str, Any]
    files: list[FileRecord]
    vela: dict[str, Any] | None = None
    delegation: dict[str, Any] = field(default_factory=dict)
    cpu_operators: list[str] = field(default_factory=list)
    calibration: dict[str, Any] | None = None
    labels: list[str] | None = None
    header: dict[str, Any] = field(default_factory=dict)
    build: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    verification: dict[str, Any] | None = None
    """``structure`` (checks at build time), ``numerics`` (None unless built with
    --verify or --bundle) and ``bundle`` (the .bpte's test cases and tolerance)."""
    io: dict[str, Any] | None = None
    """The program's boundary: ``mode`` (float, int8, uint8, pixels), ``layout``,
    and per input and output its dtype, shape, dim_order and quantization."""
    memory: dict[str, Any] | None = None
    """What the firmware reserves (``memory_plan.py``): planned buffers, scratch,
    arena cache, constant, delegate and flash bytes, and the method and temp allocators' needs."""
    weights_info: dict[str, Any] | None = None
    """The weights' name, description, origin, licence and declared ``reference`` figures;
    not in the key (words do not change the bytes); None in manifests from before it."""
    memory_fit: dict[str, Any] | None = None
    """For a target with an SRAM budget (``--sram-budget`` or a board's SRAM): the
    budget, the Vela options tried and the one chosen, and whether it fits."""
    schema: int = SCHEMA

    # Typed, read-only views: callers read these, not the JSON-shaped fields.

    @property
    def vela_flags(self) -> tuple[str, ...]:
        """The target's extra Vela flags plus those chosen to fit its SRAM budget."""
        chosen = (self.memory_fit or {}).get("selected_flags") or ()
        return (*self.target_options.extra_flags, *chosen)

    @property
    def reference(self) -> dict[str, float]:
        """The weights' declared figures by metric name, in each metric's unit."""
        return dict((self.weights_info or {}).get("reference") or {})

    @property
    def metrics(self) -> list[dict[str, Any]]:
        """Each declared metric as ``--verify`` measured it (float and program)."""
        return list(((self.verification or {}).get("numerics") or {}).get("metrics") or [])

    @property
    def output_sqnr(self) -> list[dict[str, float | None]]:
        """Per output, as ``--verify`` measured it: the program's SQNR against float in dB,
        the fake-quantized model's, and the program's lowest cosine to float."""
        outputs = ((self.verification or {}).get("numerics") or {}).get("outputs") or []
        return [{"sqnr_db": (o.get("vs_float") or {}).get("sqnr_db"),
                 "fake_quant_sqnr_db": (o.get("fake_quant_vs_float") or {}).get("sqnr_db"),
                 "min_cosine": (o.get("vs_float") or {}).get("min_cosine")} for o in outputs if isinstance(o, dict)]

    def metric(self, name: str) -> MeasuredMetric:
        """Metric ``name`` as ``--verify`` measured it; KeyError naming what was measured."""
        from zoo.registry.measured_metric import MeasuredMetric

        for m in self.metrics:
            if m.get("name") == name:
                return MeasuredMetric.from_json(m)
        measured = ", ".join(str(m.get("name")) for m in self.metrics) or "none (fetch with verify=True)"
        raise KeyError(f"{self.model} for {self.target} has no measured metric {name!r}; measured: {measured}")

    @property
    def target_options(self) -> TargetOptions:
        return TargetOptions.from_json(self.key_inputs.get("target") or {})

    @property
    def built_target(self) -> Target:
        """The target rebuilt from the key, with every Vela flag the build used."""
        return self.target_options.target(self.target, extra_flags=self.vela_flags)

    @property
    def vela_total(self) -> VelaTotals | None:
        """Vela's estimates; None for the portable target."""
        total = (self.vela or {}).get("total")
        return VelaTotals.from_json(total) if total else None

    @property
    def weights(self) -> str | None:
        return (self.key_inputs.get("weights") or {}).get("name")

    @property
    def precision(self) -> str:
        """``int8``, ``a16w8`` (``--precision``), or ``float`` for a program that is not quantized."""
        from zoo.registry.precision import of_key

        return of_key(self.key_inputs.get("quantization"))

    @property
    def model_version(self) -> str | None:
        return (self.key_inputs.get("model") or {}).get("version")

    @property
    def tools(self) -> dict[str, str | None]:
        return dict(self.key_inputs.get("tools") or {})

    @property
    def built_at(self) -> str | None:
        return self.build.get("built_at")

    @property
    def sram_budget_bytes(self) -> int | None:
        return (self.memory_fit or {}).get("sram_budget_bytes")

    @property
    def io_text(self) -> str:
        """``--io`` and, when not NCHW, ``--layout``: ``int8``, ``pixels nhwc`` (float before ``--io``)."""
        io = self.io or {}
        layout = io.get("layout", "nchw")
        return str(io.get("mode", "float")) + ("" if layout == "nchw" else f" {layout}")

    @property
    def variant(self) -> str:
        """What tells this artifact from its siblings of one model and target: weights, I/O, budget, memory mode."""
        target = self.key_inputs.get("target") or {}
        budget = self.sram_budget_bytes
        parts = [f"weights {self.weights or '-'}", f"io {self.io_text}",
                 *([f"precision {self.precision}"] if self.precision not in ("int8", "float") else []),
                 f"memory mode {target.get('memory_mode') or '-'}"]
        return ", ".join(parts + ([f"SRAM budget {budget:,} B"] if budget is not None else []))

    def file(self, kind: str) -> FileRecord | None:
        return next((f for f in self.files if f.kind == kind), None)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, data: Any) -> Manifest:
        """The manifest in ``data``; ValueError naming the first field that is not
        what the schema says (every reader, cache, remotes and report, relies on it)."""
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            raise ValueError(f"unsupported manifest schema {data.get('schema') if isinstance(data, dict) else data!r}")
        _validate(data)
        # Fields a later zoo added are left out rather than making the entry unreadable.
        known = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        record_fields = [f.name for f in dataclasses.fields(FileRecord)]
        values["files"] = [FileRecord(**{k: f[k] for k in record_fields}) for f in data["files"]]
        return cls(**values)

    @classmethod
    def loads(cls, text: str) -> Manifest:
        try:
            data = json.loads(text)
        except RecursionError:
            raise ValueError("it nests too deeply to be a manifest") from None
        return cls.from_json(data)


# --- the schema: the dataclasses' own field types, plus the nested values the views read ---

_JSON_TYPES = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "an integer",
               float: "a number", type(None): "null"}


def _conforms(value: Any, hint: Any) -> bool:
    if hint is Any:
        return True
    args = typing.get_args(hint)
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_conforms(value, a) for a in args)
    if origin is list or origin is tuple:
        return isinstance(value, list) and all(_conforms(v, args[0]) for v in value)
    if origin is dict:
        return isinstance(value, dict) and all(isinstance(k, str) and _conforms(v, args[1]) for k, v in value.items())
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, hint)


def _describe(hint: Any) -> str:
    args = typing.get_args(hint)
    origin = typing.get_origin(hint)
    if hint is Any:
        return "anything"
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(a) for a in args)
    if origin is list or origin is tuple:
        return "a list" if args[0] is Any else f"a list of {_describe(args[0]).split(' ', 1)[1]}s"
    if origin is dict:
        return "an object"
    return _JSON_TYPES.get(hint) or str(hint.__name__)


def _found(value: Any) -> str:
    kind = next((text for t, text in _JSON_TYPES.items() if type(value) is t), type(value).__name__)
    shown = json.dumps(value)[:40] if isinstance(value, (str, int, float, bool)) else ""
    return f"{kind} {shown}".rstrip()


def _check(where: str, value: Any, hint: Any) -> None:
    if _conforms(value, hint):
        return
    # A list or object of the right kind: name the item in it that is wrong.
    arms = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    for arm in arms:
        origin, args = typing.get_origin(arm), typing.get_args(arm)
        if origin in (list, tuple) and isinstance(value, list):
            for i, item in enumerate(value):
                _check(f"{where}[{i}]", item, args[0])
        elif origin is dict and isinstance(value, dict):
            for k, item in value.items():
                _check(f"{where}.{k}", item, args[1])
    raise ValueError(f"field '{where}' should be {_describe(hint)}, not {_found(value)}")


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


# Values inside the JSON-shaped fields that the typed views and the structural
# checks read; ``*`` is every item of a list. A missing key is allowed (views use
# .get) unless the rule says it is required.
@functools.cache
def _nested_rules() -> tuple[tuple[str, Any, bool], ...]:
    """Built on first use: evaluating the type hints costs milliseconds that a light command need not pay."""
    return (
        ("key_inputs.target", dict[str, Any] | None, False),
        ("key_inputs.target.accelerator", str | None, False),
        ("key_inputs.target.system_config", str | None, False),
        ("key_inputs.target.memory_mode", str | None, False),
        ("key_inputs.target.extra_flags", list[str] | None, False),
        ("key_inputs.target.vela_ini", str | None, False),
        ("key_inputs.inputs", list[dict[str, Any]] | None, False),
        ("key_inputs.inputs.*.name", str, True),
        ("key_inputs.inputs.*.shape", list[int], True),
        ("key_inputs.inputs.*.dtype", str, False),
        ("key_inputs.model", dict[str, Any] | None, False),
        ("key_inputs.weights", dict[str, Any] | None, False),
        ("key_inputs.tools", dict[str, str | None] | None, False),
        ("vela.total", dict[str, Any] | None, False),
        *((f"vela.total.{name}", hint, False) for name, hint in _hints(VelaTotals).items()),
        ("header.array", str, False),
        ("header.section", str, False),
        ("header.macros", dict[str, str | int | float | None], False),
        ("build.built_at", str | None, False),
        ("build.payloads", list[dict[str, Any]] | None, False),
        ("build.payloads.*.scratch_size", int, True),
        ("delegation.partitions", int | None, False),
        ("weights_info", dict[str, Any] | None, False),
        *((f"weights_info.{name}", str, False) for name in ("name", "description", "origin", "licence")),
        ("weights_info.reference", dict[str, float], False),
        ("verification.structure", dict[str, Any] | None, False),
        ("verification.numerics", dict[str, Any] | None, False),
        ("verification.numerics.metrics", list[dict[str, Any]] | None, False),
        *((f"verification.numerics.metrics.*.{name}", hint, True) for name, hint in (
            ("name", str), ("unit", str), ("float", float), ("program", float), ("passed", bool))),
        ("verification.bundle", dict[str, Any] | None, False),
        ("verification.bundle.macros", dict[str, str | int | float | None], False),
        # Written by zoo alone (a remote's claims are dropped as it downloads): who signed it, checked here.
        ("verification.signature", dict[str, Any] | None, False),
        *((f"verification.signature.{name}", str, True) for name in ("key", "key_file", "format")),
        ("verification.local_build", bool, False),
        ("io.mode", str, True),
        ("io.layout", str, True),
        *((f"io.{side}", list[dict[str, Any]], True) for side in ("inputs", "outputs")),
        *((f"io.{side}.*.{name}", hint, True) for side in ("inputs", "outputs") for name, hint in (
            ("name", str), ("dtype", str), ("shape", list[int]), ("dim_order", list[int]),
            ("scale", float | None), ("zero_point", int | None), ("qmin", int | None), ("qmax", int | None))),
        ("memory.planned_buffers", list[int], True),
        *((f"memory.{name}", int, True) for name in ("planned_bytes", "constant_bytes", "delegate_bytes", "flash_bytes")),
        *((f"memory.{name}", int | None, True) for name in ("scratch_bytes", "arena_cache_bytes")),
        *((f"memory.{name}{abi}", int | None, False) for name in ("method_allocator_bytes", "load_temp_bytes")
          for abi in ("", "_lp64")),
        ("header.style", str, False),
        ("memory_fit.sram_budget_bytes", int | None, False),
        ("memory_fit.selected_flags", list[str], False),
    )


def _nested(data: Any, path: list[str], where: str, hint: Any, required: bool) -> None:
    head, rest = path[0], path[1:]
    if head == "*":
        items: list[Any] = data if isinstance(data, list) else []
        for i, item in enumerate(items):
            _nested_step(item, rest, f"{where}[{i}]", hint, required)
        return
    if not isinstance(data, dict) or head not in data:
        if required and not rest and isinstance(data, dict):
            raise ValueError(f"field '{where}' has no {head!r}, which is required")
        return
    _nested_step(data[head], rest, f"{where}.{head}", hint, required)


def _nested_step(value: Any, rest: list[str], where: str, hint: Any, required: bool) -> None:
    if rest:
        _nested(value, rest, where, hint, required)
    else:
        _check(where, value, hint)


def _validate(data: dict[str, Any]) -> None:
    hints = _hints(Manifest)
    for f in dataclasses.fields(Manifest):
        if f.name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ValueError(f"field {f.name!r} is missing")
        elif f.name != "files":  # its records are checked one by one below
            _check(f.name, data[f.name], hints[f.name])
    _check("files", data["files"], list[dict[str, Any]])
    for i, record in enumerate(data["files"]):
        for name, hint in _hints(FileRecord).items():
            if name not in record:
                raise ValueError(f"field 'files[{i}]' has no {name!r}, which is required")
            _check(f"files[{i}].{name}", record[name], hint)
    for path, hint, required in _nested_rules():
        head, *rest = path.split(".")
        if data.get(head) is not None:
            _nested_step(data[head], rest, head, hint, required)
    _check_header_grammar(data)


def _check_header_grammar(data: dict[str, Any]) -> None:
    """What a header is rendered from keeps the grammar of ``macros.py``: a manifest
    that carries anything else (a newline in a macro, say) is corrupt, wherever it came from."""
    from zoo.registry.firmware.c_header import labels_array, stored_options
    from zoo.registry.firmware.macros import labels_problem, macros_problem

    header = data.get("header") or {}
    bundle = (data.get("verification") or {}).get("bundle") or {}
    for where, macros in (("header.macros", header.get("macros")), ("verification.bundle.macros", bundle.get("macros"))):
        problem = macros_problem(macros) if macros is not None else None
        if problem is not None:
            raise ValueError(f"field '{where}': {problem}")
    try:
        stored_options(header)
        if data.get("labels") is not None:
            labels_array(data["model"])
    except ValueError as exc:
        raise ValueError(f"field 'header': {exc}") from None
    problem = labels_problem(data["labels"]) if data.get("labels") is not None else None
    if problem is not None:
        raise ValueError(f"field 'labels': {problem}")
