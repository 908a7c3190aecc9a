"""A pack's shipped classifier is built by zoo's `ShippedClassifier`, so its ``build`` is
zoo._shipped_classifier's: the key must still cover the pack's own network and data code
(``ModelSpec.code``), or an edited network would be answered by a stale cached program (found in issue 59's review of the training data)."""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from zoo import Zoo
from zoo._api import ZooOptions
from zoo.registry.request import code_identity

OWN_MODULES = {
    "vww-mobilenetv1-025": ("zoo_vision.vww", "zoo.datasets.lfw_subset"),
    "ds-cnn-fsdd": ("zoo_audio.ds_cnn", "zoo_audio.fsdd"),
    "har-cnn-spar": ("zoo_sensors.har", "zoo_sensors.net"),
    "speaker-id-vowels": ("zoo_sensors.series_models", "zoo_sensors.net", "zoo_sensors.series"),
    "appliance-id-plaid": ("zoo_sensors.series_models", "zoo_sensors.net", "zoo_sensors.series"),
    "ad-autoencoder-spar": ("zoo_sensors.ad_autoencoder", "zoo_sensors.net", "zoo_sensors.novelty"),
}


@pytest.fixture(scope="module")
def zoo() -> Zoo:
    return Zoo()


def _edit(monkeypatch: pytest.MonkeyPatch, edited: str) -> None:
    """As if ``edited``'s source file had other bytes."""
    read = code_identity._source_digest
    monkeypatch.setattr(code_identity, "_source_digest",
                        lambda module: "sha256:" + "e" * 64 if module == edited else read(module))


@pytest.mark.parametrize(("model", "module"), [(m, n) for m, names in OWN_MODULES.items() for n in names])
def test_editing_a_pack_models_own_module_changes_its_key(zoo: Zoo, monkeypatch: pytest.MonkeyPatch,
                                                          model: str, module: str) -> None:
    before = zoo.request(model, "u55-128").key()
    _edit(monkeypatch, "zoo_vision.yolo_tiny")  # another model's module
    assert zoo.request(model, "u55-128").key() == before
    _edit(monkeypatch, module)
    assert zoo.request(model, "u55-128").key() != before


def test_a_models_build_is_followed_into_its_own_package(zoo: Zoo) -> None:
    """mnist declares no ``code``: its build's module and the sibling module holding its digits' split are in the key,
    and so are the sibling modules a pack's build reaches (segmentation's networks, MediaPipe's files)."""
    assert set(code_identity.code_identity(zoo.model("mnist"))["modules"]) == {"zoo.plugins.mnist", "zoo.plugins._mnist5k"}
    for model, module in (("lraspp-mobilenetv3-large-nearest", "zoo_vision.seg_networks"),
                          ("crepe-tiny", "zoo_audio.crepe_net"), ("silero-vad", "zoo_audio.silero_net"),
                          ("hand-landmark-lite", "zoo_mediapipe.files")):
        assert module in code_identity.code_identity(zoo.model(model))["modules"], model


_PACK = {
    "__init__.py": "",
    "layers.py": '''
        WIDTH = {width}

        def make():
            import torch
            return torch.nn.Linear(WIDTH, 2)
    ''',
    "model.py": '''
        from pathlib import Path

        from zoo import InputSpec, ShippedClassifier, hookimpl
        from author_shipped import layers

        CLASSIFIER = ShippedClassifier("shipped", lambda: layers.make(), lambda split: (None, None),
                                       Path(__file__).parent / "weights.bin", "mine", remedy="reinstall it")

        @hookimpl
        def register_models(register):
            register(CLASSIFIER.spec(
                version="1", description="a pack's classifier", task="classification",
                inputs=(InputSpec("x", (1, 4)),), labels=("a", "b"), data_identity=lambda split: split,
                sizes={{"calibration": 1, "held_out": 1}}, calibration="one", evaluation="one", samples="rows",
                trained=CLASSIFIER.trained_variant(description="mine", origin="here", licence="n/a", reference={{}}),
                metrics=(),
            ))
    ''',
}


@pytest.fixture
def pack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "author_shipped"
    folder.mkdir()
    (folder / "weights.bin").write_bytes(b"weights")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield folder
    for name in [n for n in sys.modules if n.startswith("author_shipped")]:
        sys.modules.pop(name)


def _write(folder: Path, width: int) -> None:
    for name, text in _PACK.items():
        path = folder / name
        before = path.stat().st_mtime_ns if path.exists() else 0
        path.write_text(textwrap.dedent(text).format(width=width))
        later = max(before + 2_000_000_000, path.stat().st_mtime_ns)  # an edit a moment later: no stale bytecode
        os.utime(path, ns=(later, later))


def _key() -> str:
    """A new process's view: the pack imported afresh."""
    for name in [n for n in sys.modules if n.startswith("author_shipped")]:
        sys.modules.pop(name)
    return Zoo(ZooOptions(plugins=("author_shipped.model",))).request("shipped", "u55-128").key()


def test_editing_the_network_module_a_shipped_classifier_calls_changes_its_key(pack: Path) -> None:
    _write(pack, width=4)
    first = _key()
    _write(pack, width=4)  # written again, the same bytes
    assert _key() == first
    _write(pack, width=8)  # layers.py only: the spec's version and model.py stay as they were
    assert _key() != first
