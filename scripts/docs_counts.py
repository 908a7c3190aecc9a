"""Write the registry's counts (models, tasks, trained models, torchvision classifiers) into the
sentences of README.md, docs/index.md and docs/catalogue.md that quote them, or with --check say
which differ (exit 1). Counts every installed plugin: run it with the four packs installed, as
`make setup` installs them.

    .venv/bin/python scripts/docs_counts.py [--check]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from zoo import Zoo
from zoo.registry.catalog.counts import counts, rewrite, stale

ROOT = Path(__file__).resolve().parent.parent
PAGES = ("README.md", "docs/index.md", "docs/catalogue.md")
PACKS = ("audio", "vision", "sensors", "mediapipe")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="Change nothing: list the counts that differ.")
    args = parser.parse_args()
    zoo = Zoo()
    loaded = {p.name for p in zoo.plugins if p.status == "ok"}
    if missing := [p for p in PACKS if p not in loaded]:
        raise SystemExit(f"the packs {', '.join(missing)} are not loaded: make setup installs them "
                         "(pip install --no-deps -e plugins/zoo-NAME)")
    c = counts(zoo.models())
    print(f"{c.models} models in {c.tasks} tasks; {c.trained_models} trained in {c.trained_tasks} tasks; "
          f"{c.torchvision} torchvision classifiers")
    problems = 0
    for page in PAGES:
        path = ROOT / page
        text = path.read_text(encoding="utf-8")
        if args.check:
            for line in stale(text, c):
                print(f"{page}: {line}")
                problems += 1
        elif (new := rewrite(text, c)) != text:
            path.write_text(new, encoding="utf-8")
            print(f"wrote {page}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
