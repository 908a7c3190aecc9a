"""A light install (``pip install ethosu-zoo`` without the compile extra), made from this venv.

The site folder holds links to ethosu-zoo's declared dependencies, followed
recursively through their own requirements (markers evaluated, no extras), and
ethosu-zoo's dist-info for its entry points. Python runs with ``-S`` so the
venv's site-packages (torch, ExecuTorch, scikit-learn, ...) stay invisible,
and zoo itself comes from the worktree on PYTHONPATH.
"""

from __future__ import annotations

import os
import re
import sys
from importlib.metadata import Distribution, distribution
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def light_dependencies(root: str = "ethosu-zoo", *, without: tuple[str, ...] = ()) -> dict[str, Distribution]:
    """``root`` and what it needs, recursively; ``without``: as if these were not installed."""
    found: dict[str, Distribution] = {}
    todo = [root]
    while todo:
        name = _canonical(todo.pop())
        if name in found or name in without:
            continue
        dist = distribution(name)
        found[name] = dist
        for raw in dist.requires or []:
            req = Requirement(raw)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return found


def build_light_site(dest: Path, *, without: tuple[str, ...] = (), zoo_metadata: bool = True) -> Path:
    """``zoo_metadata``: link ethosu-zoo's dist-info (its entry points) too; not where zoo is installed."""
    dest.mkdir(parents=True, exist_ok=True)
    for name, dist in light_dependencies(without=without).items():
        if name == "ethosu-zoo" and not zoo_metadata:
            continue
        tops: set[str] = set()
        for f in dist.files or []:
            parts = Path(str(f)).parts
            if not parts or parts[0] in ("..", "__pycache__") or parts[0].endswith(".pth"):
                continue
            if name == "ethosu-zoo" and not parts[0].endswith(".dist-info"):
                continue  # zoo itself comes from the worktree
            tops.add(parts[0])
        for top in tops:
            src = Path(str(dist.locate_file(top)))
            link = dest / top
            if src.exists() and not link.exists():
                link.symlink_to(src)
    return dest


def light_env(site: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(site)])
    env.update(extra)
    return env


def light_command(*args: str) -> list[str]:
    return [sys.executable, "-S", *args]
