""""Did you mean" for a mistyped model or target name (torch-free, stdlib only).

Names are compared without case, ``ethos-`` and punctuation, so ``u55`` meets
``u55-64`` and ``mobilenetv3`` meets ``mobilenet-v3-small``; each suggestion is
the thing's own name (``u55-64``, never the spelling ``u5564`` it also answers to)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping


def _plain(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower().removeprefix("ethos-"))


def suggest(word: str, names: Mapping[str, str], n: int = 4) -> list[str]:
    """Up to ``n`` display names for ``word``: ``names`` maps every accepted spelling to
    what to show for it. Names that start with the word come first, then close ones."""
    plain = _plain(word)
    shown: dict[str, str] = {}
    for spelling, display in names.items():
        shown.setdefault(_plain(spelling), display)
    if not plain:
        return []
    starts = [shown[p] for p in sorted(shown, key=lambda p: (len(p), p)) if p.startswith(plain) and p != plain]
    close = [shown[p] for p in difflib.get_close_matches(plain, list(shown), n=n * 3, cutoff=0.6)]
    return list(dict.fromkeys(starts + close))[:n]
