"""The manifest that travels with every artifact: what went in, what came out."""

from __future__ import annotations

import dataclasses
import json
import typing
from dataclasses import asdict, dataclass, field
from typing import Any

from zoo._errors import UsageError
from zoo.registry.npu.targets import PORTABLE, Target, TargetTable
from zoo.registry.store.manifest_schema import validate

if typing.TYPE_CHECKING:
    from zoo.registry.store.measured_metric import MeasuredMetric

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
    """``vela_report.summarize``: Vela's figures per partition (with ``input_transposes``, the NPU
    operators that transpose its input, absent before zoo recorded them) and in ``total``; None for portable."""
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
    def npu_program(self) -> dict[str, Any] | None:
        """The "NPU program" level as ``--verify`` recorded it (``numerics/npu_program.py``); None before it."""
        level = ((self.verification or {}).get("numerics") or {}).get("npu_program")
        return dict(level) if isinstance(level, dict) else None

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
        from zoo.registry.store.measured_metric import MeasuredMetric

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
        from zoo.registry.request.precision import of_key

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
        validate(data, cls, FileRecord, VelaTotals)
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
