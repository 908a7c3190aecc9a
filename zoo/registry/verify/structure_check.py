"""Structural checks of a .pte against what it should hold. Pure Python, no torch.

Each check returns a ``Check`` naming what was looked at and, on failure,
exactly what is wrong. ``check_structure`` runs on every artifact ``zoo fetch``
hands out, so it only parses (about 1 ms for MobileNetV2), and once: the checks read
the parsed ``Program`` (``pte/program.py``), and the caller passes it on.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from zoo._spec import InputSpec
from zoo.registry.checks import Check
from zoo.registry.firmware.memory_plan import check_memory
from zoo.registry.npu.targets import Target
from zoo.registry.pte.program import Parsed, Program, Unreadable, parse
from zoo.registry.pte.pte_structure import ETHOSU_BACKEND_ID as BACKEND_ID
from zoo.registry.pte.pte_structure import (
    Delegate,
    ExecutionPlan,
    PteInfo,
)
from zoo.registry.pte.vela_payload import (
    START,
    PayloadError,
    TensorInfo,
    VelaPayload,
)
from zoo.registry.request.precision import Precision, check_precision
from zoo.registry.store.manifest import Manifest
from zoo.registry.verify.boundary_check import check_boundary

COMMAND_STREAM_MAGICS = (b"COP1", b"COP2")
REQUIRED_BLOCKS = ("cmd_data", "weight_data", "scratch_size", "inputs", "outputs")
PAYLOAD_ALIGNMENT = 16  # the Ethos-U driver rejects a command stream that is not 16-byte aligned
_BUNDLE_IDENTIFIER = re.compile(rb"^BP\d\d\Z")


@dataclass(frozen=True)
class Expected:
    """What the artifact should be; None means "unknown, do not compare"."""

    target: Target | None = None
    inputs: tuple[InputSpec, ...] | None = None
    cpu_operators: tuple[str, ...] | None = None
    partitions: int | None = None
    scratch_sizes: tuple[int, ...] | None = None
    io: dict[str, Any] | None = None
    """The manifest's ``io``: the boundary the .pte must have (``io_boundary.record``)."""
    axes: str = "nchw"
    """The model's declared axes (``ModelSpec.axes``) as its build key holds them: ``io.axes`` must say the same."""
    memory: dict[str, Any] | None = None
    """The manifest's ``memory``: the figures the firmware reserves (``memory_plan``)."""
    precision: Precision | None = None
    """What the manifest's key asked for; None for a float program, or to not compare."""
    source: str = "manifest"
    """Where the expectation comes from, for messages: ``manifest`` or ``--target``."""

    @classmethod
    def from_manifest(cls, m: Manifest) -> Expected:
        target = m.built_target
        # With integer I/O the program takes the quantized tensor, not the model's float one.
        dtypes = [str(t["dtype"]) for t in m.io["inputs"]] if m.io else []
        inputs = tuple(
            InputSpec(str(i["name"]), tuple(int(d) for d in i["shape"]),
                      dtypes[n] if n < len(dtypes) else str(i.get("dtype", "float32")))
            for n, i in enumerate(m.key_inputs.get("inputs") or ())
        )
        payloads = m.build.get("payloads")
        partitions = m.delegation.get("partitions")
        return cls(
            target=target,
            inputs=inputs or None,
            cpu_operators=tuple(m.cpu_operators),
            partitions=int(partitions) if partitions is not None else None,
            scratch_sizes=tuple(int(p["scratch_size"]) for p in payloads) if payloads is not None else None,
            io=m.io,
            axes=str(m.key_inputs.get("axes") or "nchw"),
            memory=m.memory,
            precision=Precision.from_key(m.key_inputs.get("quantization")),
        )


def check_structure(pte: bytes | Parsed, expected: Expected) -> list[Check]:
    """Every structural check of ``pte`` (bytes are parsed here). A file that cannot be parsed
    gives one failed ``format`` check."""
    parsed = parse(pte) if isinstance(pte, bytes) else pte
    if isinstance(parsed, Unreadable):
        hint = ""
        if _BUNDLE_IDENTIFIER.match(bytes(parsed.data[4:8])):
            hint = " (this is a BundledProgram, .bpte: verify the .pte it was made from)"
        return [Check("format", False, f"{parsed.error}{hint}")]
    info = parsed.info
    checks = [Check("format", True, _describe_format(info))]
    if not info.plans:
        return [*checks, Check("program", False, "the program has no execution plan (method)")]
    target = expected.target
    checks.append(_check_delegates(info, expected))
    ethos = [d for d in info.delegates if d.backend_id == BACKEND_ID]
    payloads: dict[int, VelaPayload] = {}
    if ethos:
        checks.append(_check_compile_flags(ethos, target, expected.source))
        payload_check, payloads = _check_payloads(parsed, ethos, expected)
        checks.append(payload_check)
        checks.append(_check_alignment(ethos, payloads))
    checks.append(_check_io(info.plans[0], payloads, expected))
    checks.append(_check_operators(info, expected))
    if expected.io is not None:
        checks.append(check_boundary(info, expected.io, expected.source, axes=expected.axes))
    if expected.memory is not None:
        checks.append(check_memory(parsed, expected.memory, expected.source))
    if expected.precision is not None:
        checks.append(check_precision(info, expected.precision, expected.source))
    return checks


def _describe_format(info: PteInfo) -> str:
    eh = info.extended_header
    where = (
        f"; extended header: program {eh.program_size:,} bytes, segments from byte {eh.segment_base_offset:,} "
        f"({eh.segment_data_size:,} bytes)" if eh else "; no data segments"
    )
    methods = ", ".join(p.name for p in info.plans)
    return f"{info.identifier.decode()} program, {info.size:,} bytes{where}; method(s): {methods}"


def _check_delegates(info: PteInfo, expected: Expected) -> Check:
    delegates = info.delegates
    ids = [d.backend_id for d in delegates]
    problems: list[str] = []
    for plan in info.plans:
        called = {c.index for c in plan.calls if c.kind == "delegate"}
        for c in plan.calls:
            if c.kind == "delegate" and not 0 <= c.index < len(plan.delegates):
                problems.append(f"method {plan.name!r} calls delegate {c.index}, but it has {len(plan.delegates)}")
        problems += [f"delegate {d.index} ({d.backend_id}) is never called" for d in plan.delegates if d.index not in called]
    target = expected.target
    summary = f"{len(delegates)} delegate(s)" + (f": {', '.join(ids)}" if ids else "")
    if target is not None and target.is_portable:
        if delegates:
            problems.append(
                f"the portable target runs everything on the CPU, but the .pte holds {summary}"
            )
    elif target is not None:
        others = [d for d in delegates if d.backend_id != BACKEND_ID]
        problems += [
            f"delegate {d.index} has backend id {d.backend_id!r}; an {target.accelerator} artifact holds only {BACKEND_ID} delegates"
            for d in others
        ]
        count = len(delegates) - len(others)
        if count == 0:
            problems.append(
                f"no {BACKEND_ID} delegate: nothing runs on the {target.accelerator} NPU, the whole model would run on the CPU"
            )
        elif expected.partitions is not None and count != expected.partitions:
            problems.append(f"{count} {BACKEND_ID} delegate(s), but the {expected.source} records {expected.partitions} NPU partition(s)")
    if problems:
        return Check("delegates", False, "; ".join(problems))
    if target is None:
        return Check("delegates", True, f"{summary} (no target to compare with)")
    if target.is_portable:
        return Check("delegates", True, "no delegates: everything runs on the CPU, as a portable artifact should")
    return Check("delegates", True, f"{len(delegates)} {BACKEND_ID} delegate(s), one per NPU partition")


def _flag_map(flags: Iterable[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for token in flags:
        key, _, value = token.partition("=")
        out[key] = value
    return out


def _check_compile_flags(delegates: Sequence[Delegate], target: Target | None, source: str) -> Check:
    from zoo.registry.npu.vela_options import vela_flags

    expected = vela_flags(target) if target is not None and not target.is_portable else None
    problems: list[str] = []
    found: set[str] = set()
    for d in delegates:
        flags = d.spec_text("compile_flags")
        if flags is None:
            problems.append(f"delegate {d.index} has no 'compile_flags' compile spec")
            continue
        found.add(flags)
        if expected is None:
            continue
        problems += _flag_differences(d.index, flags.split(), expected, source)
        assert target is not None
        for key, want in (("target", target.accelerator), ("tosa_spec", target.tosa_spec), ("output_format", "vela")):
            have = d.spec_text(key)
            if have is not None and have != want:
                problems.append(f"delegate {d.index}'s {key!r} compile spec is {have!r}; the {source} says {want!r}")
    if problems:
        return Check("compile_flags", False, "; ".join(problems))
    shown = " | ".join(sorted(found))
    if expected is None:
        return Check("compile_flags", True, f"{shown} (no target to compare with)")
    return Check("compile_flags", True, f"{shown} (as the {source} says)")


def _flag_differences(index: int, have: list[str], want: list[str], source: str) -> list[str]:
    if have == want:
        return []
    have_map, want_map = _flag_map(have), _flag_map(want)
    out = []
    for key, value in want_map.items():
        if key not in have_map:
            out.append(f"delegate {index}'s Vela flags lack {key}{'=' + value if value else ''}, which the {source} says")
        elif have_map[key] != value:
            out.append(f"delegate {index} was compiled with {key}={have_map[key]}; the {source} says {key}={value}")
    out += [f"delegate {index}'s Vela flags add {k}{'=' + v if v else ''}, which the {source} does not say"
            for k, v in have_map.items() if k not in want_map]
    if not out:
        out.append(f"delegate {index}'s Vela flags are in a different order: {' '.join(have)}")
    return out


def _check_payloads(program: Program, delegates: Sequence[Delegate],
                    expected: Expected) -> tuple[Check, dict[int, VelaPayload]]:
    problems: list[str] = []
    payloads: dict[int, VelaPayload] = {}
    for d in delegates:
        head = bytes(program.data[d.offset:d.offset + len(START)])
        if head != START:
            problems.append(
                f"delegate {d.index}'s data ({d.location}, byte {d.offset:,}, {d.size:,} bytes) does not start with a "
                f"vela_bin_stream block (it starts with {head[:16]!r})"
            )
            continue
        try:
            p = program.delegate_payload(d)
        except PayloadError as exc:
            problems.append(f"delegate {d.index}'s Vela payload: {exc}")
            continue
        payloads[d.index] = p
        problems += [f"delegate {d.index}'s Vela payload: {m}" for m in _payload_problems(p, d)]
    if expected.scratch_sizes is not None and not problems:
        have = tuple(payloads[d.index].scratch_size for d in delegates)
        if have != expected.scratch_sizes:
            problems.append(f"scratch sizes {list(have)} differ from the {expected.source}'s {list(expected.scratch_sizes)}")
    if problems:
        return Check("payload", False, "; ".join(problems)), payloads
    parts = [
        f"delegate {i}: {len(p.blocks)} blocks, {p.command_stream_magic.decode('ascii', 'replace')} command stream, "
        f"scratch {p.scratch_size:,} bytes" + (f", external blocks {', '.join(p.external)}" if p.external else "")
        for i, p in payloads.items()
    ]
    return Check("payload", True, "; ".join(parts)), payloads


def _payload_problems(p: VelaPayload, d: Delegate) -> list[str]:
    out = []
    if p.blocks[0] != "vela_bin_stream" or p.blocks[-1] != "vela_end_stream":
        out.append(f"blocks run {p.blocks[0]} … {p.blocks[-1]}, not vela_bin_stream … vela_end_stream")
    missing = [b for b in REQUIRED_BLOCKS if b not in p.blocks]
    if missing:
        out.append(f"no {', '.join(missing)} block(s) (found {', '.join(p.blocks)})")
    if "cmd_data" in p.blocks and "cmd_data" not in p.external and p.command_stream_magic not in COMMAND_STREAM_MAGICS:
        out.append(f"the command stream starts with {p.command_stream_magic!r}, not COP1 or COP2")
    if p.scratch_size < 0:
        out.append(f"negative scratch size {p.scratch_size}")
    if p.length != d.size:
        out.append(f"the blocks take {p.length:,} bytes but the delegate data is {d.size:,} bytes")
    return out


def _check_alignment(delegates: Sequence[Delegate], payloads: dict[int, VelaPayload]) -> Check:
    bad = [d for d in delegates if d.offset % PAYLOAD_ALIGNMENT]
    if bad:
        return Check("alignment", False, "; ".join(
            f"delegate {d.index}'s Vela payload starts at byte {d.offset:,}, not a multiple of {PAYLOAD_ALIGNMENT}: "
            "the Ethos-U driver rejects a misaligned command stream"
            for d in bad
        ))
    offsets = ", ".join(f"{d.offset:,}" for d in delegates)
    return Check("alignment", True, f"payload(s) at byte {offsets}: {PAYLOAD_ALIGNMENT}-byte aligned")


def _tensor_text(dtype: str, shape: Sequence[int]) -> str:
    return f"{dtype}[{', '.join(map(str, shape))}]"


def _check_io(plan: ExecutionPlan, payloads: dict[int, VelaPayload], expected: Expected) -> Check:
    problems: list[str] = []
    if expected.inputs is not None:
        if len(plan.inputs) != len(expected.inputs):
            problems.append(f"method {plan.name!r} takes {len(plan.inputs)} input(s); the model declares {len(expected.inputs)}")
        for n, (value, spec) in enumerate(zip(plan.inputs, expected.inputs, strict=False)):
            t = plan.tensor(value)
            if t is None:
                problems.append(f"input {n} of {plan.name!r} is a {plan.value_kinds.get(value, 'missing value')}, not a tensor")
            elif t.sizes != spec.shape or t.dtype != spec.dtype:
                problems.append(
                    f"input {n} of {plan.name!r} is {_tensor_text(t.dtype, t.sizes)}; the model's input spec "
                    f"{spec.name!r} is {_tensor_text(spec.dtype, spec.shape)}"
                )
    for call in plan.calls:
        p = payloads.get(call.index) if call.kind == "delegate" else None
        if p is None:
            continue
        if len(call.args) != len(p.inputs) + len(p.outputs):
            problems.append(
                f"delegate {call.index} is called with {len(call.args)} value(s), but its Vela payload has "
                f"{len(p.inputs)} input(s) and {len(p.outputs)} output(s)"
            )
            continue
        ios = [("input", i, a, v) for i, (a, v) in enumerate(zip(call.args, p.inputs, strict=False))]
        ios += [("output", i, a, v) for i, (a, v) in enumerate(zip(call.args[len(p.inputs):], p.outputs, strict=False))]
        for kind, i, arg, vela in ios:
            problems += _io_problem(plan, call.index, kind, i, arg, vela)
    if problems:
        return Check("io_shapes", False, "; ".join(problems))
    shown = ", ".join(_tensor_text(t.dtype, t.sizes) for t in (plan.tensor(v) for v in plan.inputs) if t)
    basis = "the model's input specs" if expected.inputs is not None else "no input specs to compare with"
    return Check("io_shapes", True, f"inputs {shown} ({basis}); every delegate's Vela I/O matches the tensors the program passes it")


def _io_problem(plan: ExecutionPlan, delegate: int, kind: str, i: int, arg: int, vela: TensorInfo) -> list[str]:
    t = plan.tensor(arg)
    if t is None:
        return [f"delegate {delegate} {kind} {i} is a {plan.value_kinds.get(arg, 'missing value')}, not a tensor"]
    if t.numel != vela.elements or t.element_size != vela.element_size:
        return [
            f"delegate {delegate} {kind} {i}: the Vela payload has {vela.elements:,} element(s) of "
            f"{vela.element_size} byte(s) (shape {list(vela.shape)}), the program passes "
            f"{_tensor_text(t.dtype, t.sizes)} ({t.numel:,} of {t.element_size})"
        ]
    return []


def _check_operators(info: PteInfo, expected: Expected) -> Check:
    problems: list[str] = []
    for plan in info.plans:
        for c in plan.calls:
            if c.kind == "kernel" and not 0 <= c.index < len(plan.operators):
                problems.append(f"method {plan.name!r} calls operator {c.index}, but its table has {len(plan.operators)}")
    ops = info.operators
    if expected.cpu_operators is not None:
        want = sorted(expected.cpu_operators)
        missing = [o for o in want if o not in ops]
        extra = [o for o in ops if o not in want]
        if missing or extra:
            problems.append(
                f"the .pte's operator table ({', '.join(ops) or 'empty'}) does not match the {expected.source}'s "
                f"cpu_operators" + (f": not in the .pte: {', '.join(missing)}" if missing else "")
                + (f"; not in the {expected.source}: {', '.join(extra)}" if extra else "")
            )
    if problems:
        return Check("cpu_operators", False, "; ".join(problems))
    return Check("cpu_operators", True, f"{len(ops)} CPU kernel(s) the runtime must provide: {', '.join(ops) or 'none'}")


def check_target(pte: Parsed, wanted: Target, *, unknown: Sequence[str] = ()) -> Check:
    """Was ``pte`` built for ``wanted``: same accelerator, system config, memory mode and Vela flags?

    Flags named in ``unknown`` (e.g. those an SRAM budget chooses) are not compared."""
    from zoo.registry.npu.vela_options import vela_flags

    want = (f"{wanted.accelerator} ({wanted.system_config}, {wanted.memory_mode})"
            if wanted.accelerator else "portable (CPU only)")
    if isinstance(pte, Unreadable):
        return Check("target", False, f"cannot tell: {pte.error}")
    ethos = [d for d in pte.info.delegates if d.backend_id == BACKEND_ID]
    if not ethos:
        if wanted.is_portable:
            return Check("target", True, "built for portable (no NPU delegate), as asked")
        return Check("target", False, f"the .pte has no {BACKEND_ID} delegate (a portable or CPU-only build), not a build for {want}")
    flags = ethos[0].spec_text("compile_flags") or ""
    fm = _flag_map(flags.split())
    built = f"{fm.get('--accelerator-config', '?')} ({fm.get('--system-config', '?')}, {fm.get('--memory-mode', '?')})"
    if wanted.is_portable:
        return Check("target", False, f"the .pte was built for {built}, not for portable (CPU only)")
    def known(flags: list[str]) -> list[str]:
        return [f for f in flags if f.split("=", 1)[0] not in unknown]

    differences = [m for d in ethos for m in _flag_differences(
        d.index, known((d.spec_text("compile_flags") or "").split()), known(vela_flags(wanted)), "--target")]
    if differences:
        return Check("target", False, f"the .pte was built for {built}, not for {want}: {'; '.join(differences)}")
    return Check("target", True, f"built for {want}, as asked")


def check_file_record(pte: bytes, name: str, manifest: Manifest) -> Check:
    record = manifest.file("pte")
    if record is None:
        return Check("manifest", False, "the manifest lists no .pte file")
    digest = hashlib.sha256(pte).hexdigest()
    if record.name != name:
        return Check("manifest", False, f"the manifest describes {record.name}, not {name}")
    if len(pte) != record.size or digest != record.sha256:
        return Check("manifest", False,
                     f"{name} is {len(pte):,} bytes with sha256 {digest[:16]}…; the manifest says "
                     f"{record.size:,} bytes with sha256 {record.sha256[:16]}…")
    return Check("manifest", True, f"size and sha256 match the manifest (key {manifest.key[:12]})")
