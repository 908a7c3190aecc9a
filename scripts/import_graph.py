"""zoo's import graph, summed up: its parts, the arrows between them, how many levels
they stand on, and any cycle; then the largest modules. A part is one of zoo's top-level
modules or packages, and inside ``zoo.registry`` (``--open``) each module or package.
Imports inside functions count: they are arrows all the same.

    python scripts/import_graph.py [--open zoo.registry] [--largest 10] [--arrows]
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import grimp


def part_of(module: str, opened: tuple[str, ...]) -> str:
    """``zoo.registry.store.cache`` is ``zoo.registry.store`` when ``zoo.registry`` is opened,
    ``zoo.cli.app`` is ``zoo.cli``, and ``zoo`` itself is ``zoo``."""
    names = module.split(".")
    for package in sorted(opened, key=len, reverse=True):
        if module.startswith(package + "."):
            return ".".join(names[: package.count(".") + 2])
    return ".".join(names[:2])


def arrows_between(graph: grimp.ImportGraph, opened: tuple[str, ...]) -> dict[str, set[str]]:
    arrows: dict[str, set[str]] = defaultdict(set)
    for module in graph.modules:
        source = part_of(module, opened)
        arrows[source]  # every part is listed, even one that imports nothing
        for imported in graph.find_modules_directly_imported_by(module):
            target = part_of(imported, opened)
            if imported.split(".")[0] == "zoo" and target != source and target not in opened and source not in opened:
                arrows[source].add(target)
    for package in opened:
        arrows.pop(package, None)
    return arrows


def cycles(arrows: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of more than one member (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    for root in sorted(arrows):
        if root in index:
            continue
        work = [(root, iter(sorted(arrows[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    work.append((child, iter(sorted(arrows[child]))))
                elif child in stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                member = stack.pop()
                group = [member]
                while member != node:
                    member = stack.pop()
                    group.append(member)
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def levels(arrows: dict[str, set[str]]) -> dict[str, int]:
    """Level 1 imports no other part; every other part stands one above the highest it imports."""
    level: dict[str, int] = {}

    def of(node: str) -> int:
        if node not in level:
            level[node] = 0  # a cycle ends here instead of recursing for ever
            level[node] = 1 + max((of(child) for child in arrows[node]), default=0)
        return level[node]

    for node in sorted(arrows):
        of(node)
    return level


def largest(root: Path, count: int) -> list[tuple[int, str]]:
    sizes = [(len(path.read_text().splitlines()), str(path.relative_to(root.parent))) for path in root.rglob("*.py")]
    return sorted(sizes, reverse=True)[:count]


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--open", nargs="*", default=["zoo.registry"], help="packages whose modules are parts of their own")
    parser.add_argument("--largest", type=int, default=10, help="how many of the largest modules to list")
    parser.add_argument("--arrows", action="store_true", help="list each part with its level and the parts it imports")
    args = parser.parse_args()
    opened = tuple(args.open)
    graph = grimp.build_graph("zoo", cache_dir=None)
    arrows = arrows_between(graph, opened)
    found = cycles(arrows)
    level = levels(arrows)
    print(f"parts {len(arrows)}, arrows {sum(map(len, arrows.values()))}, levels {max(level.values())}, "
          f"cycles {len(found)}")
    for group in found:
        print("  cycle: " + " <-> ".join(group))
    if args.arrows:
        for node in sorted(arrows, key=lambda n: (-level[n], n)):
            print(f"  {level[node]:>2} {node} -> {', '.join(sorted(arrows[node])) or '-'}")
    print(f"largest modules (lines), of {len(list(Path('zoo').rglob('*.py')))} in zoo/:")
    for lines, path in largest(Path("zoo"), args.largest):
        print(f"  {lines:>5} {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
