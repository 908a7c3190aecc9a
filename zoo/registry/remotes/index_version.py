"""Which zoo versions can read an ``index.json``, and the policy behind it.

An index records its ``schema``, the zoo that wrote it (``written_by``) and the
zoo versions that read it (``readable_by``, a PEP 440 specifier). A change a
reader can skip (a new optional field) keeps the schema; one it cannot, bumps
it, and ``readable_by`` starts at the first zoo that reads the new one. A zoo
reads every schema in ``READS``; one it does not, or a ``readable_by`` that
leaves it out, is refused with the zoo to install instead.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

from zoo._errors import RemoteError
from zoo._version import __version__

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet

SCHEMA = 1
READS = (1,)
"""The schemas this zoo reads: every one from the first it still supports to ``SCHEMA``."""
SCHEMA_SINCE = "0.1.0"
"""The first zoo that reads ``SCHEMA``."""
READABLE_BY = f">={SCHEMA_SINCE}"
"""What a written index puts in ``readable_by``, and what one without it means."""


def check_readable(data: dict[str, Any], source: str) -> str:
    """``readable_by`` of an index this zoo can read; else RemoteError naming the zoo that can."""
    schema, writer, readable = data.get("schema"), data.get("written_by"), data.get("readable_by")
    by = f", written by zoo {writer}" if isinstance(writer, str) else ""
    if schema not in READS:
        if isinstance(schema, int) and not isinstance(schema, bool):
            if schema > max(READS):
                raise RemoteError(f"{source}: index.json has schema {schema}{by}; this zoo ({__version__}) reads "
                                  f"schema {max(READS)} at most; upgrade it: pip install -U ethosu-zoo")
            raise RemoteError(f"{source}: index.json has schema {schema}{by}, which this zoo ({__version__}) no longer "
                              f"reads; read it with an older zoo, or publish its artifacts again with this one")
        raise RemoteError(f"{source}: index.json has schema {schema!r}; this zoo reads schemas "
                          f"{', '.join(map(str, READS))}; is this a zoo remote?")
    if readable is None:
        return READABLE_BY
    wanted = _specifier(readable, source)
    if not wanted.contains(__version__, prereleases=True):
        # Built from the parsed specifier and quoted: readable_by is the remote's text, and this line gets pasted.
        install = shlex.quote(f"ethosu-zoo{wanted}")
        raise RemoteError(f"{source}: index.json{by + ',' if by else ''} says only zoo {wanted} can read it, and this "
                          f"is zoo {__version__}; install one that can: pip install {install}")
    return str(readable)


def _specifier(readable: object, source: str) -> SpecifierSet:
    """``readable_by`` parsed; RemoteError if it is no PEP 440 specifier of versions. Arbitrary
    equality (``===``) is refused too: it compares any text, and names no release to install."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        wanted = SpecifierSet(readable) if isinstance(readable, str) else None
    except InvalidSpecifier:
        wanted = None
    if wanted is None or any(s.operator == "===" for s in wanted):
        raise RemoteError(f"{source}: index.json's readable_by is {readable!r}, not a version specifier such as "
                          "'>=0.1.0'; the index is malformed: publish to it again with zoo, or tell its owner")
    return wanted
