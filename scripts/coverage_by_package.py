"""Line coverage of zoo's packages from ``make coverage``'s combined data: one row per package
(a folder of ``zoo/``, the loose modules of a folder counted with it, and each model pack).

    python scripts/coverage_by_package.py [--json coverage.json] [--depth 2] [--under DIR]

``--under`` counts only the files of one source tree: a test that starts ``zoo`` without the
tree's path (a light install, a cleared environment) runs the installed copy, whose lines would
otherwise count a second time, and from other sources.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOTS = ("zoo", "zoo_audio", "zoo_vision", "zoo_sensors")


def package_of(path: str, depth: int) -> str:
    """``…/zoo/registry/compile/pipeline.py`` at depth 2 is ``zoo.registry``, ``…/zoo/cli/main.py`` is
    ``zoo.cli``, and a module at the top of ``zoo`` counts as ``zoo``."""
    parts = Path(path).parts
    start = max(i for i, part in enumerate(parts[:-1]) if part in ROOTS)
    return ".".join(parts[start:-1][:depth])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, default=Path("coverage.json"))
    parser.add_argument("--depth", type=int, default=2)
    parser.add_argument("--under", type=Path, help="count only the files under this folder")
    args = parser.parse_args()
    if not args.json.exists():
        subprocess.run([sys.executable, "-m", "coverage", "json", "-q", "-o", str(args.json)], check=True)
    files = json.loads(args.json.read_text())["files"]
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    under = str(args.under.resolve()) + "/" if args.under else "/"
    for path, data in files.items():
        if not path.startswith(under):
            continue
        row = totals[package_of(path, args.depth)]
        row[0] += data["summary"]["covered_lines"]
        row[1] += data["summary"]["num_statements"]
    width = max(map(len, totals))
    print(f"{'package':<{width}}  {'lines':>6}  {'covered':>7}  {'%':>6}")
    for name, (covered, statements) in sorted(totals.items()):
        print(f"{name:<{width}}  {statements:>6}  {covered:>7}  {100 * covered / max(statements, 1):>6.1f}")
    covered = sum(c for c, _ in totals.values())
    statements = sum(s for _, s in totals.values())
    print(f"{'all':<{width}}  {statements:>6}  {covered:>7}  {100 * covered / max(statements, 1):>6.1f}")


if __name__ == "__main__":
    main()
