"""zoo: a model zoo registry for ExecuTorch on Arm Ethos-U NPUs.

Importing zoo is cheap: torch and ExecuTorch load only when something compiles.
"""

from __future__ import annotations

from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

from zoo._version import __version__

if _TYPE_CHECKING:
    from zoo._api import Zoo, ZooOptions, build, fetch
    from zoo._batchnorm import reestimate_batchnorm
    from zoo._board import Board
    from zoo._checked_file import PackageData, checked_file, file_sha256, package_file
    from zoo._errors import (
        BuildError,
        CacheError,
        ConfigError,
        IntegrityError,
        MissingExtraError,
        PluginError,
        PublishConflict,
        RemoteError,
        RemoteUnavailable,
        SpecError,
        UnknownModelError,
        UnknownTargetError,
        UsageError,
        VerificationError,
        ZooError,
    )
    from zoo._hookspecs import hookimpl, hookspec
    from zoo._metric import Metric, MetricFn
    from zoo._onnx import read_onnx, reader_identity
    from zoo._options import BuildChoices, Choices, FetchArgs, FetchOptions
    from zoo._recipe import Recipe
    from zoo._samples import labelled_samples, one_input_samples
    from zoo._sensor import SensorInput
    from zoo._shipped_classifier import ShippedClassifier, load_weights, seeded_network
    from zoo._spec import (
        Dataset,
        InputSpec,
        ModelSpec,
        Sample,
        WeightsVariant,
    )
    from zoo._tflite import read_tflite, tflite_reader_identity
    from zoo._training import (
        TrainedWeights,
        TrainingRecipe,
        classifier_accuracy,
        pin_numerics,
        save_weights,
        train_autoencoder,
        train_classifier,
        train_shipped_weights,
        train_with_loss,
    )
    from zoo._window_features import WINDOW_STATISTICS
    from zoo.registry.evaluators.base import Evaluator
    from zoo.registry.evaluators.classification import top1
    from zoo.registry.evaluators.detection import map_at, precision_at, recall_at, recall_vs_float
    from zoo.registry.evaluators.pitch import decode_pitch, raw_pitch_accuracy
    from zoo.registry.evaluators.ranking import f1_at, reconstruction_roc_auc, roc_auc
    from zoo.registry.evaluators.segmentation import miou
    from zoo.registry.evaluators.text import (
        char_error_rate,
        ctc_greedy,
        edit_distance,
        word_error_rate,
    )
    from zoo.registry.handout import Artifact
    from zoo.registry.model_files.hub_checkpoint import hub_checkpoint
    from zoo.registry.npu.targets import Target
    from zoo.registry.remotes.base import PublishReport, Remote
    from zoo.registry.skipped import Skipped
    from zoo.registry.store.failures import Failure
    from zoo.registry.verify.verification import Verification

# Keep `import zoo` light: everything loads on first use.
_LAZY = {
    # The types a plugin names at registration, and the errors: `import zoo` itself stays
    # nearly free, so a command answered from its snapshot (zoo.cli.snapshot) loads none of them.
    **dict.fromkeys(["BuildError", "CacheError", "ConfigError", "IntegrityError", "MissingExtraError",
                     "PluginError", "PublishConflict", "RemoteError", "RemoteUnavailable", "SpecError",
                     "UnknownModelError", "UnknownTargetError", "UsageError", "VerificationError",
                     "ZooError"], "zoo._errors"),
    "Recipe": "zoo._recipe",
    "SensorInput": "zoo._sensor",
    "WINDOW_STATISTICS": "zoo._window_features",
    "hookimpl": "zoo._hookspecs",
    "hookspec": "zoo._hookspecs",
    **dict.fromkeys(["BuildChoices", "Choices", "FetchArgs", "FetchOptions"], "zoo._options"),
    "Board": "zoo._board",
    **dict.fromkeys(["Dataset", "InputSpec", "ModelSpec", "Sample", "WeightsVariant"], "zoo._spec"),
    **dict.fromkeys(["Metric", "MetricFn"], "zoo._metric"),
    "Zoo": "zoo._api",
    "ZooOptions": "zoo._api",
    "fetch": "zoo._api",
    "build": "zoo._api",
    "Artifact": "zoo.registry.handout",
    "Failure": "zoo.registry.store.failures",
    "Skipped": "zoo.registry.skipped",
    "PublishReport": "zoo.registry.remotes.base",
    "Remote": "zoo.registry.remotes.base",
    "Target": "zoo.registry.npu.targets",
    "Verification": "zoo.registry.verify.verification",
    # Evaluators for zoo.Metric, each from its own module: a plugin that names top1 at
    # registration (every command) loads only that one.
    "Evaluator": "zoo.registry.evaluators.base",
    "char_error_rate": "zoo.registry.evaluators.text",
    "ctc_greedy": "zoo.registry.evaluators.text",
    "edit_distance": "zoo.registry.evaluators.text",
    "f1_at": "zoo.registry.evaluators.ranking",
    "map_at": "zoo.registry.evaluators.detection",
    "miou": "zoo.registry.evaluators.segmentation",
    **dict.fromkeys(["decode_pitch", "raw_pitch_accuracy"], "zoo.registry.evaluators.pitch"),
    "precision_at": "zoo.registry.evaluators.detection",
    "recall_at": "zoo.registry.evaluators.detection",
    "recall_vs_float": "zoo.registry.evaluators.detection",
    "reconstruction_roc_auc": "zoo.registry.evaluators.ranking",
    "roc_auc": "zoo.registry.evaluators.ranking",
    "top1": "zoo.registry.evaluators.classification",
    "word_error_rate": "zoo.registry.evaluators.text",
    "reestimate_batchnorm": "zoo._batchnorm",
    # For model packs: their files read by sha256 (torch-free), and training (torch inside).
    **dict.fromkeys(["PackageData", "checked_file", "file_sha256", "package_file"], "zoo._checked_file"),
    **dict.fromkeys(["labelled_samples", "one_input_samples"], "zoo._samples"),
    **dict.fromkeys(["ShippedClassifier", "load_weights", "seeded_network"], "zoo._shipped_classifier"),
    **dict.fromkeys(["TrainedWeights", "TrainingRecipe", "classifier_accuracy", "pin_numerics", "save_weights",
                     "train_autoencoder", "train_classifier", "train_shipped_weights", "train_with_loss"],
                    "zoo._training"),
    "hub_checkpoint": "zoo.registry.model_files.hub_checkpoint",
    **dict.fromkeys(["read_onnx", "reader_identity"], "zoo._onnx"),
    **dict.fromkeys(["read_tflite", "tflite_reader_identity"], "zoo._tflite"),
}


__all__ = [
    "WINDOW_STATISTICS",
    "Artifact",
    "Board",
    "BuildChoices",
    "BuildError",
    "CacheError",
    "Choices",
    "ConfigError",
    "Dataset",
    "Evaluator",
    "Failure",
    "FetchArgs",
    "FetchOptions",
    "InputSpec",
    "IntegrityError",
    "Metric",
    "MetricFn",
    "MissingExtraError",
    "ModelSpec",
    "PackageData",
    "PluginError",
    "PublishConflict",
    "PublishReport",
    "Recipe",
    "Remote",
    "RemoteError",
    "RemoteUnavailable",
    "Sample",
    "SensorInput",
    "ShippedClassifier",
    "Skipped",
    "SpecError",
    "Target",
    "TrainedWeights",
    "TrainingRecipe",
    "UnknownModelError",
    "UnknownTargetError",
    "UsageError",
    "Verification",
    "VerificationError",
    "WeightsVariant",
    "Zoo",
    "ZooError",
    "ZooOptions",
    "__version__",
    "build",
    "char_error_rate",
    "checked_file",
    "classifier_accuracy",
    "ctc_greedy",
    "decode_pitch",
    "edit_distance",
    "f1_at",
    "fetch",
    "file_sha256",
    "hookimpl",
    "hookspec",
    "hub_checkpoint",
    "labelled_samples",
    "load_weights",
    "map_at",
    "miou",
    "one_input_samples",
    "package_file",
    "pin_numerics",
    "precision_at",
    "raw_pitch_accuracy",
    "read_onnx",
    "read_tflite",
    "reader_identity",
    "recall_at",
    "recall_vs_float",
    "reconstruction_roc_auc",
    "reestimate_batchnorm",
    "roc_auc",
    "save_weights",
    "seeded_network",
    "tflite_reader_identity",
    "top1",
    "train_autoencoder",
    "train_classifier",
    "train_shipped_weights",
    "train_with_loss",
    "word_error_rate",
]


def __getattr__(name: str) -> _Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'zoo' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
