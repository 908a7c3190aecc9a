"""The manifest's schema: the dataclasses' own field types, plus the nested values its views
and the structural checks read. Every reader (cache, remotes, report) relies on it, so a
manifest that breaks it is refused with the first field that is wrong."""

from __future__ import annotations

import dataclasses
import functools
import json
import types
import typing
from typing import Any

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
def _nested_rules(vela_totals: type) -> tuple[tuple[str, Any, bool], ...]:
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
        *((f"vela.total.{name}", hint, False) for name, hint in _hints(vela_totals).items()),
        ("vela.partitions", list[dict[str, Any]], False),
        ("vela.partitions.*.core_clock_hz", int, False),
        # Absent from manifests written before zoo recorded them (io_saving then says so).
        ("vela.partitions.*.input_transposes", list[dict[str, Any]], False),
        *((f"vela.partitions.*.input_transposes.*.{name}", hint, True)
          for name, hint in (("operator", str), ("cycles", int))),
        ("header.array", str, False),
        ("header.section", str, False),
        ("header.macros", dict[str, str | int | float | None], False),
        ("header.decoding", dict[str, str | int | float] | None, False),
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
        # The NPU-program level (CHECK_VERSION 6), which Manifest.npu_program and zoo report read.
        ("verification.numerics.npu_program", dict[str, Any] | None, False),
        ("verification.numerics.npu_program.outcome", str, False),
        ("verification.numerics.npu_program.samples", int, False),
        ("verification.bundle", dict[str, Any] | None, False),
        ("verification.bundle.macros", dict[str, str | int | float | None], False),
        # Written by zoo alone (a remote's claims are dropped as it downloads): who signed it, checked here.
        ("verification.signature", dict[str, Any] | None, False),
        *((f"verification.signature.{name}", str, True) for name in ("key", "key_file", "format")),
        ("verification.local_build", bool, False),
        ("io.mode", str, True),
        ("io.layout", str, True),
        ("io.axes", str, False),
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


def validate(data: dict[str, Any], manifest: type, file_record: type, vela_totals: type) -> None:
    """ValueError naming the first field of ``data`` that is not what ``manifest`` (the
    dataclass; ``file_record`` its files' records, ``vela_totals`` Vela's totals) and the nested rules say."""
    hints = _hints(manifest)
    for f in dataclasses.fields(manifest):
        if f.name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ValueError(f"field {f.name!r} is missing")
        elif f.name != "files":  # its records are checked one by one below
            _check(f.name, data[f.name], hints[f.name])
    _check("files", data["files"], list[dict[str, Any]])
    for i, record in enumerate(data["files"]):
        for name, hint in _hints(file_record).items():
            if name not in record:
                raise ValueError(f"field 'files[{i}]' has no {name!r}, which is required")
            _check(f"files[{i}].{name}", record[name], hint)
    for path, hint, required in _nested_rules(vela_totals):
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
