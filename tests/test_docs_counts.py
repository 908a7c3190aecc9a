"""The README, the site's front page and docs/catalogue.md quote the registry's counts (issue 57):
models, tasks, trained models and torchvision classifiers. A count typed by hand that drifts
fails here; `python scripts/docs_counts.py` writes the registry's."""

from __future__ import annotations

import re

import pytest

from tests.conftest import ROOT
from zoo import Zoo
from zoo.registry.catalog.counts import PHRASES, Counts, counts, rewrite, stale

PACKS = ("audio", "vision", "sensors", "mediapipe")
QUOTED = {"README.md": (0, 2, 3), "docs/index.md": (2, 3), "docs/catalogue.md": (1, 2, 3)}
"""Which of PHRASES each page quotes: one that went missing is a count nobody checks any more."""


def test_the_counts_the_docs_quote_are_the_registrys() -> None:
    zoo = Zoo()
    missing = [p for p in PACKS if p not in {s.name for s in zoo.plugins if s.status == "ok"}]
    if missing:
        pytest.skip(f"the packs {', '.join(missing)} are not installed (make setup installs them)")
    c = counts(zoo.models())
    assert c.torchvision == 24 and c.tasks >= 16 and c.trained_models < c.models
    for page, phrases in QUOTED.items():
        text = (ROOT / page).read_text(encoding="utf-8")
        for i in phrases:
            assert re.search(PHRASES[i][0], text), f"{page} no longer quotes {PHRASES[i][0]!r}"
        assert stale(text, c) == [], f"{page}: run python scripts/docs_counts.py"


def test_a_count_typed_by_hand_is_named_and_rewritten() -> None:
    c = Counts(models=58, tasks=18, trained_models=28, trained_tasks=17, torchvision=24)
    text = "and the 23 torchvision\n  classifiers; zoo lists 58 models in\n19 tasks; 28 models in 17 tasks have weights trained or shipped"
    assert stale(text, c) == ["'the 23 torchvision classifiers' says 23 torchvision; the registry has 24",
                              "'zoo lists 58 models in 19 tasks' says 19 tasks; the registry has 18"]
    fixed = rewrite(text, c)
    assert fixed == ("and the 24 torchvision\n  classifiers; zoo lists 58 models in\n18 tasks; 28 models in 17 "
                     "tasks have weights trained or shipped") and stale(fixed, c) == []
