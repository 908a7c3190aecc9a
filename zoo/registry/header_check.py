"""The C header beside a .pte: its array must hold exactly the .pte, and its
section and macros must be the manifest's. Pure Python, no torch; runs on every
hand-out, so a header that is consistent in every hash but holds another program
(or another target's macros) is never handed out."""

from __future__ import annotations

import hashlib
import re

from zoo.registry.checks import Check
from zoo.registry.manifest import Manifest


def check_header(pte: bytes, header_text: str, header_name: str, array: str | None = None) -> Check:
    """The header's array must hold exactly the .pte's bytes, and its LEN/SHA256 macros must agree."""
    from zoo.registry.c_header import foreign_line, parse_array

    try:
        found_array, data, macros = parse_array(header_text, array)
    except ValueError as exc:
        return Check("header", False, f"{header_name}: {exc}")
    problems = []
    if data != pte:
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
    foreign = foreign_line(header_text)
    if foreign is not None:
        problems.append(f"line {foreign[0]} is not one zoo writes ({foreign[1][:60]!r}): it would be compiled as code")
    if problems:
        return Check("header", False, f"{header_name} does not match its .pte: " + "; ".join(problems))
    return Check("header", True, f"{header_name}: array {found_array}[] holds exactly the .pte's {len(pte):,} bytes")


def check_stored_header(pte: bytes, header: bytes, header_name: str, manifest: Manifest) -> Check:
    """An artifact's header must hold its .pte, in the manifest's section, with every
    macro (target, length, sha256, alignment, scratch, …) as the manifest records it.
    A header that is consistent in every hash can still hold another program or
    another target's macros."""
    from zoo.registry.c_header import DEFINE, HeaderOptions, parse_array, pte_header

    meta = manifest.header
    try:
        options = HeaderOptions(str(meta.get("array", "model_pte")), str(meta.get("section", "network_model_sec")))
        macros = dict(meta.get("macros") or {})
        # The manifest keeps its keys sorted: render them in the order the header has them.
        preamble = header[:header.find(b"__attribute__")].decode("ascii", errors="replace")
        order = {name: i for i, (name, _) in enumerate(DEFINE.findall(preamble))}
        prefix = options.array.upper()
        macros = dict(sorted(macros.items(), key=lambda kv: order.get(f"{prefix}_{kv[0].upper()}", len(order))))
        expected = pte_header(pte, file_name=header_name, options=options, macros=macros)
    except (TypeError, ValueError, AttributeError) as exc:
        return Check("header", False, f"the manifest's header record is unusable ({exc})")
    passed = Check("header", True, f"{header_name}: the .pte's {len(pte):,} bytes, with the manifest's section and macros")
    if header == expected.encode("ascii"):
        return passed
    text = header.decode("ascii", errors="replace")
    array = check_header(pte, text, header_name, options.array)
    if not array.passed:
        return array
    found = parse_array(text, options.array)[2]
    wanted = parse_array(expected, options.array)[2]
    problems = [f"{name} is {found.get(name, 'missing')}, the manifest says {value}"
                for name, value in wanted.items() if found.get(name) != value]
    problems += [f"{name} is not in the manifest" for name in found if name not in wanted]
    section = _SECTION.search(text)
    if section is None or section.group(1) != options.section:
        problems.append(f"the array is in section {section.group(1) if section else 'none'!r}, "
                        f"the manifest says {options.section!r}")
    if problems:
        return Check("header", False, f"{header_name} does not match its manifest: " + "; ".join(problems))
    return passed


_SECTION = re.compile(r'__attribute__\(\(section\("([^"]*)"\)')
