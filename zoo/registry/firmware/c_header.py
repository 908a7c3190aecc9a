"""C sources for firmware: the macros header, the .pte as an aligned array, and labels.

An artifact's model comes out in two files (the ``split`` style, the default):

- ``<stem>.h``: every macro and an ``extern`` declaration of the array, so any
  number of translation units may include it;
- ``<stem>.s``: the array itself, in its section and 16-byte aligned, as an
  ``.incbin`` of the ``.pte`` beside it.

Why assembly with ``.incbin`` rather than a ``.c`` holding the bytes: the bytes
stay in the ``.pte`` (the ``.s`` is a few hundred bytes for any model, where
mv2's ``.c`` would be 20 MB of hex that gcc needs seconds and hundreds of MB to
compile), and every cache hit hashes every file, so a small file keeps a
hand-out as fast for mv2 as for mnist. The assembler checks the length of
what it included, so a wrong ``.pte`` on the include path fails the build.

The ``single`` style keeps one header with the array too, defined only where
``<ARRAY>_DEFINE`` is defined (one translation unit owns it). ``legacy`` is the
header of zoo before the split (array always defined, guard from the file
name): it is rendered only to check entries cached before then.

Output is deterministic (no timestamps, no paths), so the same .pte always
gives the same files.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from zoo.registry.firmware.macros import c_number, c_string, labels_problem, macro_problem

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")
_PER_LINE = 16

DEFAULT_ARRAY = "model_pte"
DEFAULT_SECTION = "network_model_sec"
# The Ethos-U runtime requires the .pte (and the payloads inside it) 16-byte aligned.
ALIGNMENT = 16
HeaderStyle = Literal["split", "single", "legacy"]
STYLES: tuple[HeaderStyle, ...] = ("split", "single")
"""What a caller may ask for; ``legacy`` only checks old cache entries."""


@dataclass(frozen=True)
class HeaderOptions:
    array: str = DEFAULT_ARRAY
    section: str = DEFAULT_SECTION
    style: HeaderStyle = "split"

    def __post_init__(self) -> None:
        if not _IDENT.match(self.array):
            raise ValueError(f"header array name {self.array!r} is not a C identifier; "
                             "use letters, digits and '_', not starting with a digit")
        if not self.section or any(c in self.section for c in '"\\?') or not self.section.isascii() \
                or not self.section.isprintable():
            raise ValueError(f"header section name {self.section!r} cannot be used in a section attribute; "
                             "use printable ASCII without '\"', '\\' or '?'")
        if self.style not in (*STYLES, "legacy"):
            raise ValueError(f"header style {self.style!r} is not one of {', '.join(STYLES)}")

    @property
    def prefix(self) -> str:
        return self.array.upper()

    @property
    def guard(self) -> str:
        """From the array name: two artifacts that can link into one firmware have two
        array names, so their headers never skip one another."""
        return f"{self.prefix}_H_"


def stored_options(record: Mapping[str, object]) -> HeaderOptions:
    """The options a manifest's ``header`` record was rendered with; ValueError if unusable.
    A record without ``style`` predates the split: its header is ``legacy``."""
    style = record.get("style", "legacy")
    if style not in ("split", "single", "legacy"):
        raise ValueError(f"header style {style!r} is not one zoo writes")
    return HeaderOptions(str(record.get("array", DEFAULT_ARRAY)), str(record.get("section", DEFAULT_SECTION)),
                         style)  # checked just above


def _guard(file_name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "_", file_name).upper().lstrip("_") + "_"


def _hex_lines(data: bytes) -> str:
    """``    0x12, 0x34, …,`` with _PER_LINE bytes a line. Every byte takes exactly six
    characters ("0x12, "), so the lines are fixed-width slices of one string."""
    if not data:
        return ""
    flat = "0x" + data.hex(",").replace(",", ", 0x") + ", "
    step = 6 * _PER_LINE
    return "\n".join(["    " + flat[i:i + step].rstrip() for i in range(0, len(flat), step)])


def _defines(prefix: str, length: int, macros: Mapping[str, str | int | float | None], legacy: bool) -> list[str]:
    defines = [f"#define {prefix}_LEN {length}u", f"#define {prefix}_ALIGNMENT {ALIGNMENT}"]
    for name, value in macros.items():
        problem = macro_problem(name, value)
        if problem is not None:
            raise ValueError(problem)
        if value is None:
            continue
        rendered = c_number(value, name, legacy=legacy) if isinstance(value, (int, float)) else c_string(value)
        defines.append(f"#define {prefix}_{name.upper()} {rendered}")
    return defines


_EXTERN = ("extern const unsigned char {array}[{prefix}_LEN] __attribute__((aligned({align})));\n"
           "extern const unsigned int {array}_len;\n")
_DEFINED_ELSEWHERE = "/* The array is defined in the .s file beside this header (see zoo's README). */\n"


def pte_header(
    pte: bytes,
    *,
    file_name: str,
    options: HeaderOptions,
    macros: Mapping[str, str | int | float | None],
) -> str:
    """The header in ``options.style``. ``macros`` become ``#define <ARRAY>_<NAME> value``:
    strings are quoted, numbers bare (floats ``f``-suffixed, ``*_bits`` in hex).
    ValueError for a macro outside the grammar (``macros.py``): a header is code, so
    nothing unchecked is written into one, whoever checked the manifest before."""
    prefix = options.prefix
    guard = _guard(file_name) if options.style == "legacy" else options.guard
    defines = "\n".join(_defines(prefix, len(pte), macros, options.style == "legacy"))
    head = f"/* Generated by zoo. Do not edit. */\n#ifndef {guard}\n#define {guard}\n\n{defines}\n\n"
    extern = _EXTERN.format(array=options.array, prefix=prefix, align=ALIGNMENT)
    definition = (
        f"__attribute__((section({c_string(options.section)}), aligned({ALIGNMENT})))\n"
        f"const unsigned char {options.array}[{prefix}_LEN] = {{\n"
        f"{_hex_lines(pte)}\n"
        f"}};\n"
        f"const unsigned int {options.array}_len = {prefix}_LEN;\n"
    )
    if options.style == "split":
        body = extern + _DEFINED_ELSEWHERE
    elif options.style == "single":
        body = f"{extern}\n#ifdef {prefix}_DEFINE\n{definition}#endif /* {prefix}_DEFINE */\n"
    else:
        body = definition
    return f"{head}{body}\n#endif /* {guard} */\n"


def pte_asm(pte_name: str, length: int, options: HeaderOptions) -> str:
    """The array of a ``split`` header: ``.incbin`` of ``pte_name`` (found beside the
    ``.s`` when assembled there, else on the include path, ``-I<dir>``, which gcc passes on).
    Plain assembly (``.s``, no preprocessor); ``/* */`` comments, since ``@`` and ``#``
    start comments on some targets and not on others."""
    if "/" in pte_name or "\\" in pte_name or not pte_name.isascii() or not pte_name.isprintable() \
            or '"' in pte_name:
        raise ValueError(f".pte file name {pte_name[:60]!r} cannot be named in an .incbin directive")
    a = options.array
    return (
        "/* Generated by zoo. Do not edit. */\n"
        f"/* The .pte as the array {a}[] declared in the header: assemble with the .pte beside\n"
        "   this file or on the include path (-I<dir>). */\n"
        f"    .section {c_string(options.section)}, \"a\", %progbits\n"
        f"    .balign {ALIGNMENT}\n"
        f"    .global {a}\n"
        f"    .type {a}, %object\n"
        f"{a}:\n"
        f"    .incbin \"{pte_name}\"\n"
        f".L{a}_end:\n"
        f"    .if (.L{a}_end - {a}) - {length}\n"
        f"    .error \"{pte_name} is not the {length}-byte program this file was generated for\"\n"
        "    .endif\n"
        f"    .size {a}, {length}\n"
        "    .section .rodata, \"a\", %progbits\n"
        "    .balign 4\n"
        f"    .global {a}_len\n"
        f"    .type {a}_len, %object\n"
        f"{a}_len:\n"
        f"    .4byte {length}\n"
        f"    .size {a}_len, 4\n"
        "    .section .note.GNU-stack, \"\", %progbits\n"  # no executable stack, where a linker asks
    )


def asm_name(header_name: str) -> str:
    """``mnist_u55-128.s`` beside ``mnist_u55-128.h``."""
    return header_name[:-2] + ".s" if header_name.endswith(".h") else header_name + ".s"


def labels_array(model: str) -> str:
    """The labels header's array name for ``model``; ValueError if it is no C identifier."""
    array = f"{model.replace('-', '_').replace('.', '_')}_labels"
    if not _IDENT.match(array):
        raise ValueError(f"model name {model[:40]!r} gives no C identifier for its labels array")
    return array


def labels_header(labels: Sequence[str], *, file_name: str, array: str) -> str:
    """ValueError for a label outside the grammar (``macros.py``) or an array name that is no C identifier."""
    problem = labels_problem(labels)
    if problem is not None:
        raise ValueError(problem)
    if not _IDENT.match(array):
        raise ValueError(f"labels array name {array[:40]!r} is not a C identifier")
    guard = _guard(file_name)
    body = "\n".join(f"    {c_string(label)}," for label in labels)
    return (
        f"/* Generated by zoo. Do not edit. */\n"
        f"#ifndef {guard}\n"
        f"#define {guard}\n\n"
        f"#define {array.upper()}_COUNT {len(labels)}u\n\n"
        f"static const char *const {array}[{array.upper()}_COUNT] = {{\n{body}\n}};\n\n"
        f"#endif /* {guard} */\n"
    )


_ARRAY = re.compile(r"const\s+unsigned\s+char\s+([A-Za-z_]\w*)\s*\[[^\]]*\]\s*=\s*\{")
_DECLARED = re.compile(r"^extern const unsigned char ([A-Za-z_]\w*)\[", re.M)
DEFINE = re.compile(r"^#define[ \t]+([A-Za-z_]\w*)[ \t]+(.+?)[ \t]*$", re.M)


def declared_array(text: str) -> str | None:
    """The array a macros-only (``split``) header declares ``extern``; None if it declares none."""
    m = _DECLARED.search(text)
    return m.group(1) if m else None


def parse_array(text: str, array: str | None = None) -> tuple[str, bytes, dict[str, str]]:
    """The array name, its bytes and the header's ``#define`` values, from a header
    written by ``pte_header`` with the array in it. ``array`` picks one array; default: the first."""
    for m in _ARRAY.finditer(text):
        if array is not None and m.group(1) != array:
            continue
        end = text.find("};", m.end())
        if end == -1:
            raise ValueError(f"the array {m.group(1)}[] is not closed with '}};' (truncated?)")
        body = text[m.end():end].replace("0x", "").replace(",", "")
        try:
            data = bytes.fromhex(body)
        except ValueError:
            raise ValueError(f"the array {m.group(1)}[] holds something other than 0x.. byte values") from None
        return m.group(1), data, dict(DEFINE.findall(text))
    wanted = f"array named {array}" if array else "'const unsigned char NAME[] = {...}' array"
    raise ValueError(f"found no {wanted}; is this a header zoo wrote?")


_NUMBER = r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?[uf]?|0x[0-9a-f]+u"
_STRING = r'"(?:[ !#-\[\]-~]|\\["\\?])*"'  # printable ASCII; only ", \ and ? escaped
_ZOO_LINE = re.compile("|".join((
    r"/\* Generated by zoo\. Do not edit\. \*/",
    r"#ifndef \w+", r"#ifdef \w+_DEFINE", r"#define \w+", rf"#define \w+ (?:{_NUMBER}|{_STRING})",
    r"#endif /\* \w+ \*/", r"",
    rf"__attribute__\(\(section\({_STRING}\), aligned\(\d+\)\)\)",
    r"const unsigned char \w+\[\w+\] = \{", r" {4}0x[0-9a-f]{2}(?:, 0x[0-9a-f]{2})*,?", r"\};",
    r"const unsigned int \w+ = \w+;",
    r"extern const unsigned char \w+\[\w+\] __attribute__\(\(aligned\(\d+\)\)\);",
    r"extern const unsigned int \w+;",
    re.escape(_DEFINED_ELSEWHERE.rstrip("\n")),
)))


def foreign_line(text: str) -> tuple[int, str] | None:
    """The first line (number, text) of a header that ``pte_header`` never writes: a
    header is code, and a line of anything else (a function, a macro broken over
    two lines) would be compiled into the firmware."""
    for n, line in enumerate(text.split("\n"), 1):
        if not _ZOO_LINE.fullmatch(line):
            return n, line
    return None
