"""A single-input classifier that a model pack trains itself and ships the weights of.

The callables its `ModelSpec` needs (build, calibration, evaluation, example inputs, the
weights' identity) for two variants: the trained one, read from the file the pack ships, and
``random``, PyTorch's init from a seed with every BatchNorm re-estimated on the calibration data.
Torch loads inside the methods only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zoo._batchnorm import reestimate_batchnorm
from zoo._checked_file import file_sha256, open_for_pack
from zoo._errors import BuildError
from zoo._metric import Metric
from zoo._samples import labelled_samples, one_input_samples
from zoo._spec import Dataset, InputSpec, ModelSpec, WeightsVariant

__all__ = ["ShippedClassifier", "load_weights", "seeded_network"]


@dataclass(frozen=True)
class ShippedClassifier:
    """The model ``name``: ``network()`` makes the untrained `nn.Module`; ``split(name)`` returns
    a split's inputs (one tensor, samples along the first axis) and labels (class indices) for
    ``"calibration"`` and ``"held_out"``; the variant ``trained`` loads ``weights_file`` (as
    `zoo.save_weights` wrote it), and ``random`` keeps the init from ``seed``. ``remedy`` says what
    to do when ``weights_file`` is missing (``"reinstall my-pack"``).

    `spec` makes the whole `ModelSpec` from what differs; or pass its methods to `ModelSpec`
    (``build=``, ``example_inputs=``, ``weights=`` its two variants) and `Dataset` (``load=``); ``new_network`` is what `zoo.train_classifier` takes, and
    `zoo.train_shipped_weights` trains and writes ``weights_file``."""

    name: str
    network: Callable[[], Any]
    split: Callable[[str], tuple[Any, Any]]
    weights_file: Path
    trained: str
    remedy: str
    seed: int = 0

    def new_network(self, seed: int | None = None) -> Any:
        """``network()`` initialised from ``seed`` (by default the random variant's); torch's
        random state is left as it was."""
        return seeded_network(self.network, self.seed if seed is None else seed)

    def build(self, variant: str) -> Any:
        """The model of weights variant ``variant``, in eval mode."""
        model = self.new_network()
        if variant == self.trained:
            load_weights(model, self.weights_file, owner=self.name, remedy=self.remedy)
        elif variant == "random":
            reestimate_batchnorm(model, self.calibration())
        else:
            raise BuildError(f"{self.name} has no weights variant {variant!r}; choose {self.trained} or random")
        return model.eval()

    def calibration(self) -> list[tuple[Any, ...]]:
        """The calibration split's inputs, one sample each."""
        return one_input_samples(self.split("calibration")[0])

    def evaluation(self) -> list[tuple[tuple[Any, ...], int]]:
        """The held-out split's inputs, each with its label."""
        return labelled_samples(*self.split("held_out"))

    def example_inputs(self) -> tuple[Any, ...]:
        """The first calibration sample."""
        return self.calibration()[0]

    def trained_variant(self, *, description: str, origin: str, licence: str,
                        reference: dict[str, float]) -> WeightsVariant:
        """The `WeightsVariant` ``trained``: the shipped file, its digest as the identity."""
        return WeightsVariant(name=self.trained, description=description, origin=origin, licence=licence,
                              identity=self.weights_identity, reference=reference)

    def random_variant(self, calibration_identity: Callable[[], str], samples: str) -> WeightsVariant:
        """The `WeightsVariant` ``random``: PyTorch's init from ``seed``, every BatchNorm re-estimated
        on the calibration data (``calibration_identity()`` names it; ``samples`` says what it holds,
        ``"clips"``)."""
        return WeightsVariant(
            name="random",
            description=(f"untrained: PyTorch's default init after torch.manual_seed({self.seed}), then every "
                         f"BatchNorm's statistics re-estimated on the calibration {samples}"),
            origin="generated",
            licence="n/a",
            identity=lambda: f"seed:{self.seed};bn-reestimated-on:{calibration_identity()}",
        )

    def spec(self, *, version: str, description: str, task: str, inputs: tuple[InputSpec, ...],
             labels: tuple[str, ...], data_identity: Callable[[str], str], sizes: Mapping[str, int],
             calibration: str, evaluation: str, samples: str, trained: WeightsVariant,
             metrics: tuple[Metric, ...], layouts: tuple[str, ...] = ("nchw",)) -> ModelSpec:
        """The model's `ModelSpec`, ``trained`` (`trained_variant`) its default weights and `random_variant`
        the other. Its calibration and evaluation `Dataset` are the splits ``"calibration"`` and
        ``"held_out"``: ``sizes[split]`` samples, described by ``calibration`` and ``evaluation``, with
        the identity ``data_identity(split)``; ``samples`` says what the calibration split holds (``"clips"``);
        ``layouts`` the input layouts it builds for (``ModelSpec.layouts``). Its ``code`` is ``network``
        and ``split``, so editing them (or the pack's modules they reach) changes the build key."""
        return ModelSpec(
            name=self.name,
            version=version,
            description=description,
            task=task,
            inputs=inputs,
            build=self.build,
            example_inputs=self.example_inputs,
            calibration=Dataset(size=sizes["calibration"], description=calibration, load=self.calibration,
                                identity=lambda: data_identity("calibration")),
            evaluation=Dataset(size=sizes["held_out"], description=evaluation, load=self.evaluation,
                               identity=lambda: data_identity("held_out")),
            weights=(trained, self.random_variant(lambda: data_identity("calibration"), samples)),
            metrics=metrics,
            default_weights=self.trained,
            labels=labels,
            layouts=layouts,
            # build is this module's: the key covers the pack's network and data code through these.
            code=(self.network, self.split),
        )

    def weights_identity(self) -> str:
        """``sha256:`` and the shipped weights file's digest (hashlib only, no torch)."""
        return "sha256:" + file_sha256(self.weights_file, owner=self.name, remedy=self.remedy)


def seeded_network(make: Callable[[], Any], seed: int) -> Any:
    """``make()``, with torch's random numbers seeded by ``seed`` while it runs: the same
    initial weights every time, and the caller's random state left as it was."""
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return make()


def load_weights(model: Any, path: Path | str, *, owner: str, remedy: str) -> Any:
    """``model`` with the safetensors state dict at ``path`` loaded into it, every key matching
    (what `save_weights` wrote); a missing file raises `zoo.BuildError` as `zoo.file_sha256` does."""
    from safetensors.torch import load

    with open_for_pack(Path(path), owner=owner, remedy=remedy) as opened:
        data = opened.read()
    model.load_state_dict(load(data), strict=True)
    return model
