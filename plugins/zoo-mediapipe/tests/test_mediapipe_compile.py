"""The MediaPipe pack, compile tier: its smallest model, blazeface-short-range, built once for
u55-128 with --verify from the wheel's real file; its detection metrics recorded, float and int8."""

from __future__ import annotations

from pathlib import Path

import pytest
from zoo_mediapipe import blazeface, files

from zoo import Artifact, Zoo
from zoo.registry.catalog.plugin_loader import Registry

pytestmark = [
    pytest.mark.compile,
    pytest.mark.skipif(not (files.folder() / "face_detection_short_range.tflite").is_file(),
                       reason=f"MediaPipe's files are absent from {files.folder()} (make setup extracts them; "
                              f"or set {files.ENV})"),
]


@pytest.fixture(scope="module")
def blazeface_u55(tmp_path_factory: pytest.TempPathFactory) -> Artifact:
    cache: Path = tmp_path_factory.mktemp("mediapipe-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOO_CACHE_DIR", str(cache))
        import zoo_mediapipe.plugin

        registry = Registry()
        assert registry.add_plugin(zoo_mediapipe.plugin, "mediapipe").status == "ok"
        return Zoo(registry=registry).fetch(blazeface.NAME, "u55-128", verify=True)


def test_blazeface_verifies_with_its_detection_metrics_recorded(blazeface_u55: Artifact) -> None:
    manifest = blazeface_u55.manifest.to_json()
    assert manifest["delegation"]["npu_fraction"] > 0.9, manifest["delegation"]
    n = (blazeface_u55.manifest.verification or {})["numerics"]
    assert n["passed"], n
    metrics = {m["name"]: m for m in n["metrics"]}
    assert set(metrics) == {"recall50", "precision50", "ap50"}
    assert all(m["samples"] == 60 and m["passed"] for m in metrics.values()), metrics
    # The float figures measured in docs/mediapipe-pack.md: the real weights find the pasted faces.
    assert metrics["recall50"]["float"] == pytest.approx(86.67, abs=0.01)
    assert metrics["ap50"]["float"] == pytest.approx(86.15, abs=0.01)
