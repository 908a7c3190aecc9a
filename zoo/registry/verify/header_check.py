"""The C sources beside a .pte: the header, and the ``.s`` that holds the array.

The array must hold exactly the .pte (for the ``.s``: include the manifest's
.pte by name, whose sha256 the cache matches, and check its length as it
assembles), in the manifest's section, and every macro must be the manifest's.
Pure Python, no torch; a header that is consistent in every hash but holds
another program (or another target's macros) is never handed out."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from pathlib import Path

from zoo.registry.checks import Check
from zoo.registry.firmware.header_macros import Macros, header_macros
from zoo.registry.pte.program import Parsed, Program, Unreadable
from zoo.registry.request.keys import PIPELINE_VERSION
from zoo.registry.store.manifest import Manifest


def check_header(pte: bytes, header_text: str, header_name: str, array: str | None = None) -> Check:
    """A header from anywhere against a .pte: its array, if it holds one, must hold exactly the
    .pte's bytes; its LEN/SHA256 macros must agree (a macros-only header must have both)."""
    from zoo.registry.firmware.c_header import DEFINE, declared_array, foreign_line, parse_array

    declared = declared_array(header_text)
    data: bytes | None = None
    try:
        found_array, data, macros = parse_array(header_text, array)
    except ValueError as exc:
        if declared is None or (array is not None and declared != array):
            return Check("header", False, f"{header_name}: {exc}")
        found_array, macros = declared, dict(DEFINE.findall(header_text))
    problems = []
    if data is not None and data != pte:
        problems.append(
            f"its array {found_array}[] holds {len(data):,} bytes with sha256 {hashlib.sha256(data).hexdigest()[:16]}…, "
            f"the .pte is {len(pte):,} bytes with sha256 {hashlib.sha256(pte).hexdigest()[:16]}…"
        )
    prefix = found_array.upper()
    length = macros.get(f"{prefix}_LEN")
    if length is not None and length.rstrip("uU") != str(len(pte)):
        problems.append(f"{prefix}_LEN is {length}, the .pte is {len(pte)} bytes")
    sha = macros.get(f"{prefix}_SHA256")
    if sha is not None and sha.strip('"') != hashlib.sha256(pte).hexdigest():
        problems.append(f"{prefix}_SHA256 is {sha}, not the .pte's sha256")
    if data is None and (length is None or sha is None):
        problems.append(f"it declares {found_array}[] without the {prefix}_LEN and {prefix}_SHA256 macros that "
                        "tie a macros-only header to its .pte")
    foreign = foreign_line(header_text)
    if foreign is not None:
        problems.append(f"line {foreign[0]} is not one zoo writes ({foreign[1][:60]!r}): it would be compiled as code")
    if problems:
        return Check("header", False, f"{header_name} does not match its .pte: " + "; ".join(problems))
    if data is None:
        return Check("header", True, f"{header_name}: {prefix}_LEN and {prefix}_SHA256 are the .pte's "
                     f"({len(pte):,} bytes); the array {found_array}[] is in the .s beside it")
    return Check("header", True, f"{header_name}: array {found_array}[] holds exactly the .pte's {len(pte):,} bytes")


def check_stored_header(program: Parsed, header: bytes, header_name: str, manifest: Manifest) -> Check:
    """An artifact's header must hold (or declare) its .pte, in the manifest's section, with
    every macro (target, length, sha256, alignment, scratch, …) as the manifest records it.
    A header that is consistent in every hash can still hold another program or another
    target's macros."""
    from zoo.registry.firmware.c_header import DEFINE, pte_header, stored_options

    if isinstance(program, Unreadable):
        return Check("header", False, f"{header_name}: cannot read its .pte ({program.error})")
    pte = program.data
    derived = check_macros(program, manifest)
    if not derived.passed:
        return Check("header", False, f"{header_name}: {derived.detail}")
    meta = manifest.header
    try:
        options = stored_options(meta)
        macros = dict(meta.get("macros") or {})
        # The manifest keeps its keys sorted: render them in the order the header has them.
        cut = min((i for i in (header.find(b"\nextern "), header.find(b"__attribute__")) if i >= 0), default=len(header))
        preamble = header[:cut].decode("ascii", errors="replace")
        order = {name: i for i, (name, _) in enumerate(DEFINE.findall(preamble))}
        macros = dict(sorted(macros.items(), key=lambda kv: order.get(f"{options.prefix}_{kv[0].upper()}", len(order))))
        expected = pte_header(pte, file_name=header_name, options=options, macros=macros)
    except (TypeError, ValueError, AttributeError) as exc:
        return Check("header", False, f"the manifest's header record is unusable ({exc})")
    passed = Check("header", True, f"{header_name}: the .pte's {len(pte):,} bytes, with the manifest's section, "
                   "and macros that are zoo's own, each figure as the .pte and the build give it")
    if header == expected.encode("ascii"):
        return passed
    text = header.decode("ascii", errors="replace")
    array = check_header(pte, text, header_name, options.array)
    if not array.passed:
        return array
    found, wanted = dict(DEFINE.findall(text)), dict(DEFINE.findall(expected))
    problems = [f"{name} is {found.get(name, 'missing')}, the manifest says {value}"
                for name, value in wanted.items() if found.get(name) != value]
    problems += [f"{name} is not in the manifest" for name in found if name not in wanted]
    section = _SECTION.search(text)
    if options.style != "split" and (section is None or section.group(1) != options.section):
        problems.append(f"the array is in section {section.group(1) if section else 'none'!r}, "
                        f"the manifest says {options.section!r}")
    if not problems:
        line = _first_difference(text, expected)
        problems.append(f"line {line[0]} is {line[1][:60]!r}, zoo writes {line[2][:60]!r} there")
    return Check("header", False, f"{header_name} does not match its manifest: " + "; ".join(problems))


def check_stored_asm(pte_name: str, pte_size: int, asm: bytes, asm_name: str, manifest: Manifest) -> Check:
    """The ``.s`` of a split header: it must include the manifest's .pte by name, check its
    length, and define the manifest's array, aligned, in the manifest's section; that is,
    be exactly what zoo renders from the manifest."""
    from zoo.registry.firmware.c_header import pte_asm, stored_options

    try:
        expected = pte_asm(pte_name, pte_size, stored_options(manifest.header))
    except (TypeError, ValueError, AttributeError) as exc:
        return Check("model_asm", False, f"the manifest's header record is unusable ({exc})")
    if asm == expected.encode("ascii"):
        return Check("model_asm", True, f"{asm_name}: .incbin of {pte_name} ({pte_size:,} bytes), "
                     "in the manifest's section, 16-byte aligned")
    line = _first_difference(asm.decode("ascii", errors="replace"), expected)
    return Check("model_asm", False, f"{asm_name} is not the assembly zoo writes for {pte_name} and the manifest's "
                 f"array and section: line {line[0]} is {line[1][:60]!r}, expected {line[2][:60]!r}")


def check_stored_io(header_name: str, io_header: bytes, io_source: bytes, manifest: Manifest) -> Check:
    """The I/O helpers (``<stem>_io.h``, ``<stem>_io.c``) must be exactly what zoo renders from the
    manifest's header macros and array: they are code, and their constants are the rounding rule's."""
    from zoo.registry.firmware.c_header import stored_options
    from zoo.registry.firmware.model_io import io_names, render_io

    names = io_names(header_name)
    try:
        macros = manifest.header.get("macros") or {}
        expected = render_io(header_name, stored_options(manifest.header), macros)
        if io_header != expected[0].encode("ascii"):  # an artifact from before the helpers were C++'s too
            earlier = render_io(header_name, stored_options(manifest.header), macros, c_only=True)
            expected = earlier if io_header == earlier[0].encode("ascii") else expected
    except (TypeError, ValueError, AttributeError) as exc:
        return Check("model_io", False, f"the manifest's header record cannot give the I/O helpers ({exc})")
    for name, data, want in zip(names, (io_header, io_source), expected, strict=True):
        if data != want.encode("ascii"):
            line = _first_difference(data.decode("ascii", errors="replace"), want)
            return Check("model_io", False, f"{name} is not what zoo writes from the manifest's macros: "
                         f"line {line[0]} is {line[1][:60]!r}, expected {line[2][:60]!r}")
    return Check("model_io", True, f"{names[0]} and {names[1]}: the I/O helpers of the manifest's macros")


def check_io_files(manifest: Manifest, read: Callable[[str], bytes]) -> Check | None:
    """``check_stored_io`` on the helpers the manifest lists, read by name; None if it lists none
    (artifacts built before them, and the portable target's)."""
    header, io_h, io_c = manifest.file("header"), manifest.file("io_header"), manifest.file("io_source")
    if header is None or io_h is None or io_c is None:
        return None if io_h is None and io_c is None else Check(
            "model_io", False, "the manifest lists only one of the I/O helpers' two files, or no header")
    return check_stored_io(header.name, read(io_h.name), read(io_c.name), manifest)


def check_asm_file(pte: bytes, pte_name: str, asm: Path, header_text: str) -> Check:
    """A ``.s`` from anywhere (``zoo verify PATH.pte``): it must be what zoo writes for this .pte
    beside it, with the header's array, in the section it names."""
    from zoo.registry.firmware.c_header import HeaderOptions, declared_array, pte_asm

    try:
        text = asm.read_text(encoding="ascii", errors="replace")
    except OSError as exc:
        return Check("model_asm", False, f"cannot read {asm}: {exc.strerror or exc}")
    section = _ASM_SECTION.search(text)
    array = declared_array(header_text)
    if section is None or array is None:
        missing = "a .section line zoo writes" if section is None else "no extern array in the header"
        return Check("model_asm", False, f"{asm.name}: {missing}; is this a file zoo wrote?")
    try:
        expected = pte_asm(pte_name, len(pte), HeaderOptions(array, section.group(1)))
    except ValueError as exc:
        return Check("model_asm", False, f"{asm.name}: {exc}")
    if text == expected:
        return Check("model_asm", True, f"{asm.name}: .incbin of {pte_name} ({len(pte):,} bytes) as "
                     f"{array}[], section {section.group(1)!r}, 16-byte aligned")
    line = _first_difference(text, expected)
    return Check("model_asm", False, f"{asm.name} is not the assembly zoo writes for {pte_name} and the header's "
                 f"array {array}[]: line {line[0]} is {line[1][:60]!r}, expected {line[2][:60]!r}")


def manifest_macros(program: Program, m: Manifest) -> Macros:
    """``header_macros`` for the manifest's .pte, from what the manifest alone can know."""
    return header_macros(
        program, target=m.built_target, model=m.model, model_version=m.model_version, weights=m.weights,
        precision=m.precision, build_key=m.key, tools=dict(m.build.get("tools") or {}), vela_total=dict((m.vela or {}).get("total") or {}),
        memory_fit=m.memory_fit, io=m.io, decoding=m.header.get("decoding"), inputs=m.key_inputs.get("inputs"),
    )


def check_macros(program: Program, m: Manifest) -> Check:
    """The manifest's header macros against those derived from its .pte. A manifest of an
    earlier pipeline is held to the macros both have: it may lack a figure added since."""
    recorded = m.header.get("macros")
    if not isinstance(recorded, dict):
        return Check("header_macros", False, "the manifest's header record has no macros")
    try:
        derived = manifest_macros(program, m)
    except (KeyError, TypeError, ValueError) as exc:
        return Check("header_macros", False, f"cannot derive the header's macros from the .pte: {exc}")
    current = m.key_inputs.get("zoo_pipeline") == PIPELINE_VERSION
    problems = [f"{name!r} is not a macro zoo writes for this program" for name in recorded if name not in derived]
    problems += [f"{name.upper()} is {recorded[name]!r} in the manifest; the .pte gives {value!r}"
                 for name, value in derived.items()
                 if name in recorded and not _same(recorded[name], value)]
    if current:
        problems += [f"{name.upper()} is missing; the .pte gives {value!r}" for name, value in derived.items()
                     if name not in recorded and value is not None]
    if problems:
        return Check("header_macros", False, "the header's macros are not the .pte's: " + "; ".join(problems))
    return Check("header_macros", True, f"all {len(recorded)} macros are zoo's own, each figure as the .pte "
                 "and the build give it")


def _same(a: object, b: object) -> bool:
    """Equal and of one kind: ``1`` for ``1.0`` or ``True`` would render another C literal."""
    return type(a) is type(b) and a == b


def _first_difference(text: str, expected: str) -> tuple[int, str, str]:
    got, want = text.split("\n"), expected.split("\n")
    for n in range(max(len(got), len(want))):
        a = got[n] if n < len(got) else "<end of file>"
        b = want[n] if n < len(want) else "<end of file>"
        if a != b:
            return n + 1, a, b
    return len(got), "", ""


_SECTION = re.compile(r'__attribute__\(\(section\("([^"]*)"\)')
_ASM_SECTION = re.compile(r'^    \.section "([^"]*)", "a", %progbits$', re.M)
