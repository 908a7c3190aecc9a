"""The catalogue's counts as the registry gives them, and the sentences of the docs that quote them.

The README, the site's front page (docs/index.md) and docs/catalogue.md say how many models,
tasks and trained models zoo has. Typed by hand, those drift as packs add models (issue 57), so
each is a phrase this module finds, checks against the registry and rewrites
(``scripts/docs_counts.py``); a fast test fails when one differs. Torch-free.

- **tasks**: the distinct ``ModelSpec.task`` values, ``operator`` (``add``, ``softmax``) aside;
- **trained**: a model with a weights variant that is trained or shipped (its origin is not
  ``generated``, as every seeded ``random`` variant's is), a metric and an evaluation set, so
  ``--verify`` measures it here. The torchvision classifiers' ImageNet weights are shipped, but
  ImageNet is not here to measure them on: they are not counted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from zoo._spec import ModelSpec

__all__ = ["PHRASES", "Counts", "counts", "rewrite", "stale"]

NOT_A_TASK = "operator"


@dataclass(frozen=True)
class Counts:
    models: int
    tasks: int
    trained_models: int
    trained_tasks: int
    torchvision: int
    """The built-in classifiers: torchvision's, by its own size rule."""


def trained(spec: ModelSpec) -> bool:
    """Weights trained or shipped, and a metric measured here on the spec's evaluation set."""
    return bool(spec.metrics) and spec.evaluation is not None and any(w.origin != "generated" for w in spec.weights)


def counts(specs: Iterable[ModelSpec]) -> Counts:
    specs = list(specs)
    tasks = {s.task for s in specs if s.task != NOT_A_TASK}
    good = [s for s in specs if trained(s)]
    return Counts(models=len(specs), tasks=len(tasks), trained_models=len(good),
                  trained_tasks=len({s.task for s in good if s.task != NOT_A_TASK}),
                  torchvision=sum(1 for s in specs if s.source == "torchvision"))


_ = r"\s+"  # a sentence may wrap between any two words
PHRASES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (rf"the{_}(\d+){_}torchvision{_}classifiers", ("torchvision",)),
    (rf"which{_}today{_}gives{_}(\d+){_}models", ("torchvision",)),
    (rf"zoo{_}lists{_}(\d+){_}models{_}in{_}(\d+){_}tasks", ("models", "tasks")),
    (rf"(\d+){_}models{_}in{_}(\d+){_}tasks{_}have{_}weights{_}trained{_}or{_}shipped",
     ("trained_models", "trained_tasks")),
)
"""Each sentence that quotes a count: its pattern, and the count each number group is."""


def stale(text: str, c: Counts) -> list[str]:
    """Each quoted count of ``text`` that is not the registry's, as ``'quoted' says N, the registry M``."""
    values = asdict(c)
    out = []
    for pattern, keys in PHRASES:
        for m in re.finditer(pattern, text):
            for group, key in enumerate(keys, 1):
                if int(m.group(group)) != values[key]:
                    quoted = " ".join(m.group(0).split())
                    out.append(f"{quoted!r} says {m.group(group)} {key.replace('_', ' ')}; the registry "
                               f"has {values[key]}")
    return out


def rewrite(text: str, c: Counts) -> str:
    """``text`` with every quoted count the registry's."""
    values = asdict(c)
    for pattern, keys in PHRASES:
        def fix(m: re.Match[str], keys: tuple[str, ...] = keys) -> str:
            out, end = [], m.start()
            for group, key in enumerate(keys, 1):
                out += [m.string[end:m.start(group)], str(values[key])]
                end = m.end(group)
            return "".join(out) + m.string[end:m.end()]
        text = re.sub(pattern, fix, text)
    return text
