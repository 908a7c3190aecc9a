"""What the site shows, as one view over both sources: a cached manifest or a remote's
index record becomes a ``Build``, a failure record a ``Failed``; ``Site`` groups them by model.

Everything a remote supplies is its word, not checked here: numbers that are not numbers
read as unknown, and every string is escaped where a page shows it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from zoo.registry.report.rows import declared_metrics, npu_share
from zoo.registry.request.precision import of_key
from zoo.registry.site.variants import (
    io_text,
    options_text,
    precision_option,
    variant_key,
    variant_labels,
)
from zoo.registry.store.manifest import TargetOptions

if TYPE_CHECKING:
    from zoo._spec import ModelSpec
    from zoo.registry.remotes.index import IndexRecord
    from zoo.registry.store.failures import Failure
    from zoo.registry.store.manifest import Manifest


def target_order(name: str) -> tuple[Any, ...]:
    """Sorts targets by accelerator, then MACs: u55-32 before u55-128 (as strings it comes after)."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name))


def number(value: Any) -> float | None:
    """A figure, or None for anything that is not a number (a remote's claim may be anything)."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: Any) -> str:
    return "" if value is None else str(value)


@dataclass(frozen=True)
class File:
    name: str
    kind: str
    size: int
    sha256: str
    href: str | None = None
    """Where to download it; None for a site made from the local cache."""


@dataclass(frozen=True)
class Build:
    """One artifact: a model, weights variant, I/O boundary and Vela options on one target."""

    model: str
    weights: str
    target: str
    key: str
    accelerator: str | None
    system_config: str | None
    memory_mode: str | None
    extra_flags: tuple[str, ...]
    sram_budget: int | None
    io: str
    layout: str
    io_in_key: bool
    """Whether the build key names the boundary (it does when it is not float NCHW)."""
    precision: str
    """``int8``, ``a16w8`` (``--precision``) or ``float`` (portable)."""
    inputs: tuple[dict[str, Any], ...]
    time_ms: float | None
    per_second: float | None
    sram_bytes: float | None
    flash_bytes: float | None
    pte_bytes: int | None
    npu_ops: int | None
    cpu_ops: int | None
    partitions: int | None
    cpu_op_names: tuple[str, ...]
    metrics: tuple[dict[str, Any], ...]
    weights_info: dict[str, Any]
    tools: dict[str, str]
    built_at: str
    files: tuple[File, ...] = ()
    signed: bool = False
    remote: str | None = None
    dram_bytes: float | None = None
    axes: str = "nchw"
    """The model's declared axes (``ModelSpec.axes``, the build key's ``axes``): ``nhwc`` for a TFLite model."""
    planned_bytes: int | None = None
    method_allocator_bytes: int | None = None
    temp_allocator_bytes: int | None = None
    """The kernels' metadata while loading and, with an NPU, its scratch (the header's TEMP_ALLOCATOR_BYTES)."""
    arena_cache_bytes: int | None = None
    model_file: str | None = None
    """The ``--model-file`` it was built from (the path as given then), if any."""

    def with_memory(self, record: Any) -> Build:
        """This build with the runtime's figures of a manifest's ``memory`` record, as the header's
        macros give them; unchanged where the record has none (built before pipeline 7)."""
        from dataclasses import replace

        from zoo.registry.firmware.memory_plan import macros

        if not isinstance(record, dict) or not isinstance(record.get("planned_buffers"), list):
            return self
        try:
            m = macros(record)
        except (TypeError, ValueError):
            return self
        return replace(self, planned_bytes=count(m.get("planned_bytes")),
                       method_allocator_bytes=count(m.get("method_allocator_bytes")),
                       temp_allocator_bytes=count(m.get("temp_allocator_bytes")),
                       arena_cache_bytes=count(m.get("arena_cache_bytes")))

    @property
    def reserve_bytes(self) -> int | None:
        """RAM the runtime needs besides the .pte: planned buffers, method and temp allocators."""
        parts = (self.planned_bytes, self.method_allocator_bytes, self.temp_allocator_bytes)
        return None if any(p is None for p in parts) else sum(p for p in parts if p is not None)

    def problem(self) -> str | None:
        """Why a page cannot show this build (a remote's record may hold anything); None if it can.
        The one place a record is judged: the figures, the inputs, the metrics and every string."""
        import json
        import math
        from dataclasses import asdict

        for name in ("time_ms", "per_second", "sram_bytes", "flash_bytes", "dram_bytes"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value >= 0):
                return f"{name} is {value}, not a figure ≥ 0"
        for what, items in (("inputs", self.inputs), ("metrics", self.metrics)):
            if not all(isinstance(x, dict) for x in items):
                return f"its {what} are not a list of records"
        try:
            json.dumps(asdict(self), allow_nan=False, ensure_ascii=False).encode("utf-8")
        except (TypeError, ValueError) as exc:  # NaN, infinities, lone surrogates, objects
            return f"it holds what no page can show ({exc})"
        return None

    @property
    def column(self) -> str:
        """Where the heat map shows it: its accelerator (a board's build sits under its NPU), or portable."""
        return self.accelerator or "portable"

    @property
    def board(self) -> str | None:
        """The board preset it was fetched for, if any."""
        return self.target if self.accelerator and self.target != self.accelerator else None

    @property
    def npu_share(self) -> float | None:
        return npu_share(self.npu_ops, self.cpu_ops)

    @property
    def memory_layout(self) -> str:
        """How the program's image lies in memory, for the page: ``layout`` (``--layout``) of an NCHW
        model; a model whose axes are NHWC (a TFLite file) takes its image channels-last as declared."""
        return "nhwc" if self.axes == "nhwc" else self.layout

    @property
    def variant(self) -> tuple[str, ...]:
        """What sets this build apart from the model's other builds on any target."""
        return variant_key(self.weights, self.io, self.layout, self.sram_budget, self.extra_flags, self.precision)

    def fetch_line(self) -> str:
        """The ``zoo fetch`` command for exactly this build, quoted for a POSIX shell."""
        options = TargetOptions(self.accelerator, self.system_config, self.memory_mode)
        argv = ["zoo", *(["--model-file", self.model_file] if self.model_file else []), "fetch", self.model,
                *options.fetch_argv(), "--weights", self.weights]
        if self.io_in_key:
            argv += ["--io", self.io, "--layout", self.layout]
        if self.sram_budget:
            argv += ["--sram-budget", str(self.sram_budget)]
        if precision_option(self.precision):
            argv += ["--precision", self.precision]
        if self.remote:
            argv += ["--remote", self.remote]
        return shlex.join(argv)

    @classmethod
    def from_manifest(cls, m: Manifest) -> Build:
        total = m.vela_total
        io = m.io or {}
        key_io = m.key_inputs.get("io") or {}
        pte = m.file("pte")
        return cls(
            model=m.model, weights=m.weights or "", target=m.target, key=m.key,
            accelerator=m.target_options.accelerator, system_config=m.target_options.system_config,
            memory_mode=m.target_options.memory_mode, extra_flags=m.vela_flags, sram_budget=m.sram_budget_bytes,
            io=str(io.get("mode") or key_io.get("mode") or "float"),
            layout=str(io.get("layout") or key_io.get("layout") or "nchw"), io_in_key=bool(key_io),
            precision=m.precision,
            inputs=tuple(i for i in m.key_inputs.get("inputs") or () if isinstance(i, dict)),
            time_ms=total.inference_time_ms if total else None,
            per_second=total.inferences_per_second if total else None,
            sram_bytes=total.sram_bytes if total else None, flash_bytes=total.flash_bytes if total else None,
            pte_bytes=pte.size if pte else None,
            npu_ops=count(m.delegation.get("npu_ops")), cpu_ops=count(m.delegation.get("cpu_ops")),
            partitions=count(m.delegation.get("partitions")),
            cpu_op_names=tuple(str(x) for x in m.delegation.get("cpu_op_names") or ()),
            metrics=declared_metrics(m),
            weights_info=dict(m.weights_info or {}), tools={k: _text(v) for k, v in m.tools.items()},
            built_at=m.built_at or "",
            files=tuple(File(f.name, f.kind, f.size, f.sha256) for f in m.files),
            signed=bool((m.verification or {}).get("signature")),
            dram_bytes=total.dram_bytes if total else None, model_file=_model_file(m.key_inputs, m.weights_info),
            axes=str(m.key_inputs.get("axes") or "nchw"),
        ).with_memory(m.memory)

    @classmethod
    def from_record(cls, r: IndexRecord, *, remote: str, href: Callable[[str], str | None]) -> Build:
        """``href(path inside the remote)``: the link to download a file, or None where there is none."""
        ki = r.key_inputs
        target, key_io = _dict(ki.get("target")), _dict(ki.get("io"))
        vela = r.vela or {}
        d = r.delegation or {}
        accuracy = r.accuracy.get("metrics") if isinstance(r.accuracy, dict) else None
        pte = r.file("pte")
        flags = target.get("extra_flags")
        return cls(
            model=r.model, weights=r.weights, target=r.target, key=r.key,
            accelerator=_str_or_none(target.get("accelerator")), system_config=_str_or_none(target.get("system_config")),
            memory_mode=_str_or_none(target.get("memory_mode")),
            extra_flags=tuple(str(x) for x in flags) if isinstance(flags, list) else (),
            sram_budget=count(target.get("sram_budget")),
            io=_text(key_io.get("mode") or "float"), layout=_text(key_io.get("layout") or "nchw"), io_in_key=bool(key_io),
            axes=_text(ki.get("axes") or "nchw"),
            precision=_text(of_key(_dict(ki.get("quantization")))),
            inputs=tuple(i for i in ki.get("inputs") or () if isinstance(i, dict)),
            time_ms=number(vela.get("inference_time_ms")), per_second=number(vela.get("inferences_per_second")),
            sram_bytes=number(vela.get("sram_bytes")), flash_bytes=number(vela.get("flash_bytes")),
            pte_bytes=pte.size if pte else None,
            npu_ops=count(d.get("npu_ops")), cpu_ops=count(d.get("cpu_ops")), partitions=count(d.get("partitions")),
            cpu_op_names=tuple(str(x) for x in d.get("cpu_op_names") or () if isinstance(d.get("cpu_op_names"), list)),
            metrics=tuple(x for x in accuracy or () if isinstance(x, dict)),
            weights_info=dict(r.weights_info or {}), tools={k: _text(v) for k, v in r.tools.items()},
            built_at=r.built_at,
            files=tuple(File(f.name, f.kind, f.size, f.sha256, href(f"{r.folder}/{f.name}")) for f in r.files),
            signed=r.signature is not None, remote=remote,
            dram_bytes=number(vela.get("dram_bytes")), model_file=_model_file(ki, r.weights_info),
        ).with_memory(r.memory)


_MODEL_FILE_LOADERS = frozenset({"zoo.registry.model_files.py_file", "zoo.registry.model_file"})


def _model_file(key_inputs: dict[str, Any], weights_info: Any) -> str | None:
    """The path a --model-file build was made from: its model's code is zoo's model-file
    loader (zoo/registry/model_files/py_file.py, zoo/registry/model_file.py before issue 44 moved it),
    and its weights' origin the path."""
    modules = _dict(_dict(_dict(key_inputs.get("model")).get("code")).get("modules"))
    origin = _dict(weights_info).get("origin")
    if not _MODEL_FILE_LOADERS.isdisjoint(modules) and isinstance(origin, str) and origin:
        return origin
    return None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


@dataclass(frozen=True)
class Failed:
    """A build that failed and was recorded (only a local cache keeps these)."""

    model: str
    weights: str
    target: str
    where: str
    message: str
    io: str = "float"
    layout: str = "nchw"
    sram_budget: int | None = None
    extra_flags: tuple[str, ...] = ()
    precision: str = "int8"

    @classmethod
    def from_failure(cls, f: Failure) -> Failed:
        variant = _dict(f.variant)
        target, io = _dict(variant.get("target")), _dict(variant.get("io"))
        flags = target.get("extra_flags")
        return cls(f.model, f.weights, f.target, f.where, f.message, io=_text(io.get("mode") or "float"),
                   layout=_text(io.get("layout") or "nchw"), sram_budget=count(target.get("sram_budget")),
                   extra_flags=tuple(str(x) for x in flags) if isinstance(flags, list) else (),
                   precision=_text(variant.get("precision") or "int8"))

    @property
    def variant(self) -> tuple[str, ...]:
        """As ``Build.variant``: the failure sits on the row of the builds it would have joined."""
        return variant_key(self.weights, self.io, self.layout, self.sram_budget, self.extra_flags, self.precision)

    @property
    def options(self) -> str:
        """Whatever its key names besides model, weights and target ("" for none)."""
        return options_text(io_text(self.io, self.layout), self.sram_budget, self.extra_flags, self.precision)

    @property
    def label(self) -> str:
        """What sets it apart, for a row of its own: the weights, and whatever else its key names."""
        return ", ".join(filter(None, [f"weights {self.weights}", self.options]))


@dataclass
class Model:
    name: str
    task: str
    description: str
    builds: list[Build] = field(default_factory=list)
    failures: list[Failed] = field(default_factory=list)

    def labels(self) -> dict[str, str]:
        """Each build's variant named by what differs among this model's builds (weights,
        I/O, SRAM budget, Vela options; then tools and build date), never by its key; "" if nothing does."""
        return variant_labels(self.builds)


@dataclass
class Site:
    source: str
    """Where the figures come from: "the local cache" or the remote's URL."""
    models: dict[str, Model]
    from_remote: bool = False
    columns: Mapping[str, str] = field(default_factory=dict)
    """Each target name (boards too) → its heat-map column, the accelerator or portable."""

    def column_of(self, target: str) -> str:
        return self.columns.get(target, target)

    @property
    def builds(self) -> list[Build]:
        return [b for m in self.models.values() for b in m.builds]

    @property
    def failures(self) -> list[Failed]:
        return [f for m in self.models.values() for f in m.failures]

    def targets(self, order: Mapping[str, int]) -> list[str]:
        """Every column with a build or a failure (a board's under its accelerator), in ``order``
        (zoo's own), then by accelerator and MACs."""
        names = {b.column for b in self.builds} | {self.column_of(f.target) for f in self.failures}
        return sorted(names, key=lambda t: (order.get(t, len(order)), target_order(t)))

    def tasks(self) -> dict[str, list[Model]]:
        out: dict[str, list[Model]] = {}
        for model in sorted(self.models.values(), key=lambda m: (m.task, m.name)):
            out.setdefault(model.task, []).append(model)
        return out


def gather(source: str, builds: Iterable[Build], failures: Iterable[Failed],
           specs: Mapping[str, ModelSpec], *, from_remote: bool) -> Site:
    """Group by model; the task and description come from the model's plugin where it is installed."""
    models: dict[str, Model] = {}

    def model(name: str) -> Model:
        if name not in models:
            spec = specs.get(name)
            models[name] = Model(name, spec.task if spec else "task not recorded", spec.description if spec else "")
        return models[name]

    for b in builds:
        model(b.model).builds.append(b)
    for f in failures:
        model(f.model).failures.append(f)
    for m in models.values():
        m.builds.sort(key=lambda b: (target_order(b.column), b.variant, b.target, b.built_at, b.key))
        m.failures.sort(key=lambda f: (target_order(f.target), f.weights))
    return Site(source, models, from_remote)
