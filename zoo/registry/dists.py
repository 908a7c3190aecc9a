"""Installed distributions' names and versions, read without parsing their METADATA.

``importlib.metadata``'s ``Distribution.name`` and ``.version`` parse the whole
METADATA file with the email package, about 1 ms each: over every plugin's entry
point and the build key's tool versions that was a fifth of ``zoo list``. A wheel's
``NAME-VERSION.dist-info`` folder already says both (PEP 427); anything else (an
``.egg-info``, such as an editable install's) has its two header lines read.
"""

from __future__ import annotations

import re
from importlib.metadata import Distribution, PackageNotFoundError, distribution

_DIST_INFO = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)\.dist-info\Z")


def canonical(name: str) -> str:
    """PEP 503's form: ``Ethos_U.vela`` and ``ethos-u-vela`` are one project."""
    return re.sub(r"[-_.]+", "-", name).lower()


def name_version(dist: Distribution) -> tuple[str, str]:
    """``(canonical name, version)`` of an installed distribution."""
    folder = getattr(dist, "_path", None)  # PathDistribution's folder: the only kind pip installs
    found = _DIST_INFO.match(getattr(folder, "name", "") or "")
    if found:
        return canonical(found["name"]), found["version"]
    name, version = _headers(dist)
    return canonical(name or dist.name), version or dist.version


def _headers(dist: Distribution) -> tuple[str | None, str | None]:
    """``Name`` and ``Version`` from the core metadata's headers, which come first."""
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or ""
    name = version = None
    for line in text.splitlines():
        if not line:
            break  # the description follows the headers
        if line.startswith("Name:"):
            name = line[5:].strip()
        elif line.startswith("Version:"):
            version = line[8:].strip()
    return name, version


def installed_version(name: str) -> str | None:
    try:
        return name_version(distribution(name))[1]
    except PackageNotFoundError:
        return None
