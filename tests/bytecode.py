"""Where the suite's processes keep their bytecode when the environment says to write none."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import MutableMapping
from pathlib import Path

__all__ = ["keep_bytecode"]


def keep_bytecode(environ: MutableMapping[str, str]) -> str | None:
    """Under PYTHONDONTWRITEBYTECODE every pytest worker and every ``zoo`` the suite starts compiles zoo and
    the tests from source (a quarter of the fast tier's CPU). Rewrites ``environ`` so that they write it
    under a private folder outside the tree instead, which keeps the tree as clean as asked; returns that
    folder, or None where bytecode is written as usual or no such folder can be had."""
    if not environ.get("PYTHONDONTWRITEBYTECODE"):
        return None
    prefix = environ.get("PYTHONPYCACHEPREFIX") or _private_folder()
    if prefix is None:
        return None
    del environ["PYTHONDONTWRITEBYTECODE"]
    environ["PYTHONPYCACHEPREFIX"] = prefix
    return prefix


def _private_folder() -> str | None:
    """A folder of this user's alone in the temporary directory: Python runs the bytecode it finds there."""
    folder = Path(tempfile.gettempdir()) / f"zoo-tests-pycache-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        st = folder.lstat()
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None
    return str(folder)
