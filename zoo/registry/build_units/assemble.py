"""Turn one target's compile result into its artifact: the .pte, the C header
and the .s that holds its array (and labels header, and the .bpte self-test when asked), and the manifest
that describes them. Pure data in, bytes out: nothing touches the cache."""

from __future__ import annotations

import platform
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from zoo.registry.build_units.unit import BuiltArtifact
from zoo.registry.firmware.c_header import (
    HeaderOptions,
    asm_name,
    labels_array,
    labels_header,
    pte_asm,
    pte_header,
)
from zoo.registry.firmware.header_macros import Macros, header_macros, memory_of
from zoo.registry.firmware.model_io import has_io, io_names, pitch_macros, render_io
from zoo.registry.pte.program import read_program
from zoo.registry.request import precision
from zoo.registry.request.keys import tool_versions
from zoo.registry.store.cache import sha256_bytes
from zoo.registry.store.manifest import FileRecord, Manifest
from zoo.registry.verify.verification import build_record

if TYPE_CHECKING:
    from zoo._spec import WeightsVariant
    from zoo.registry.compile import CompileResult
    from zoo.registry.request.keys import BuildRequest

def weights_info(w: WeightsVariant) -> dict[str, Any]:
    """What travels with the artifact about its weights: origin, licence, declared figures."""
    return {"name": w.name, "description": w.description, "origin": w.origin, "licence": w.licence,
            "reference": w.references()}


def assemble(
    request: BuildRequest,
    result: CompileResult,
    *,
    seconds: float,
    built_with: list[str] | None,
    bundle: bool,
) -> BuiltArtifact:
    key = request.key()
    spec, target = request.spec, request.target
    pte = result.pte
    program = read_program(pte)
    payloads = program.payloads()
    tools = tool_versions()
    vela_total = (result.vela or {}).get("total", {})
    header_name = f"{request.stem}.h"
    decoding = dict(pitch_macros(spec.task, [m.fn for m in spec.metrics])) or None
    macros: Macros = header_macros(
        program, target=target, model=spec.name, model_version=spec.version, weights=request.weights.name,
        precision=precision.of_key(request.key_inputs()["quantization"]),
        build_key=key, tools=tools, vela_total=vela_total, memory_fit=result.memory_fit, io=result.io, decoding=decoding,
        inputs=request.key_inputs()["inputs"],
    )
    memory = memory_of(program, target, vela_total)
    options = HeaderOptions()
    header = pte_header(pte, file_name=header_name, options=options, macros=macros).encode("ascii")
    pte_name = f"{request.stem}.pte"
    files: dict[str, tuple[str, bytes]] = {
        pte_name: ("pte", pte),
        header_name: ("header", header),
        asm_name(header_name): ("model_asm", pte_asm(pte_name, len(pte), options).encode("ascii")),
    }
    if has_io(macros):
        for name, text in zip(io_names(header_name), render_io(header_name, options, macros), strict=True):
            files[name] = ("io_header" if name.endswith(".h") else "io_source", text.encode("ascii"))
    labels = spec.load_labels()
    if labels:
        name = f"{spec.name}_labels.h"
        files[name] = ("labels_header", labels_header(labels, file_name=name, array=labels_array(spec.name)).encode("utf-8"))
    bundle_record = _bundle_files(request, result, macros, files) if bundle else None
    manifest = Manifest(
        key=key,
        model=spec.name,
        target=target.name,
        key_inputs=request.key_inputs(),
        files=[FileRecord(n, kind, len(data), sha256_bytes(data)) for n, (kind, data) in files.items()],
        vela=result.vela,
        delegation=result.delegation,
        cpu_operators=result.cpu_operators,
        calibration=result.calibration,
        labels=list(labels) if labels else None,
        header={"array": options.array, "section": options.section, "style": options.style, "macros": macros,
                **({"decoding": decoding} if decoding else {})},
        build={
            "built_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "seconds": seconds,
            **({"built_with": built_with} if built_with else {}),
            "tools": tools,
            "python": platform.python_version(),
            "machine": platform.machine(),
            "payloads": [
                {"offset": p.offset, "scratch_size": p.scratch_size, "blocks": p.blocks}
                for p in payloads
            ],
        },
        warnings=result.warnings,
        memory_fit=result.memory_fit,
        io=result.io,
        memory=memory,
        weights_info=weights_info(request.weights),
    )
    from zoo.registry.verify.structure_check import Expected, check_structure

    manifest.verification = build_record(
        check_structure(program, Expected.from_manifest(manifest)),
        result.numerics.record if result.numerics else None,
        bundle_record,
    )
    return BuiltArtifact(manifest, {n: data for n, (_, data) in files.items()})


def _bundle_files(
    request: BuildRequest,
    result: CompileResult,
    macros: Macros,
    files: dict[str, tuple[str, bytes]],
) -> dict[str, Any]:
    """Add the .bpte and its header to ``files``; return what the manifest records."""
    from zoo.registry.compile import bundle
    numerics = result.numerics
    assert numerics is not None
    bpte = bundle.bundle_program(result.pte, numerics.cases)
    if request.target.is_portable:  # the host can run it, so it must pass its own test cases
        bundle.run_on_host(bpte, **numerics.tolerance)
    name = f"{request.stem}.bpte"
    header_name = f"{request.stem}_bundle.h"
    bundle_macros: Macros = {
        **macros,
        "bundle_sha256": sha256_bytes(bpte),
        "bundle_test_cases": len(numerics.cases),
        "bundle_atol": numerics.tolerance["atol"],
        "bundle_rtol": numerics.tolerance["rtol"],
    }
    files[name] = ("bundle", bpte)
    # One header holding the array (a .bpte replaces the .pte, so one firmware has one):
    # the unit that defines <ARRAY>_DEFINE owns it.
    header = pte_header(bpte, file_name=header_name, options=HeaderOptions(style="single"), macros=bundle_macros)
    files[header_name] = ("bundle_header", header.encode("ascii"))
    return {
        "file": name,
        "header": header_name,
        "method": bundle.METHOD,
        "test_cases": len(numerics.cases),
        "expected_outputs": numerics.record["method"],
        "atol": numerics.tolerance["atol"],
        "rtol": numerics.tolerance["rtol"],
        "macros": bundle_macros,
    }
