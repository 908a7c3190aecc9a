"""``fc-autoencoder-640``: MLPerf Tiny's anomaly-detection autoencoder, random weights."""

from __future__ import annotations

import itertools
from functools import cache
from typing import Any

from zoo import BuildError, Dataset, InputSpec, ModelSpec, WeightsVariant
from zoo_audio import synthetic

NAME = "fc-autoencoder-640"
VERSION = "1"
FEATURES = 640
HIDDEN = 128
BOTTLENECK = 8
RANDOM_SEED = 0
CALIBRATION_SIZE = 64
CALIBRATION_SEED = 2

DESCRIPTION = (
    f"MLPerf Tiny's fully-connected autoencoder for machine-sound anomaly detection: {FEATURES} inputs "
    f"(5 frames × 128 log-mel energies), four {HIDDEN}-unit layers, an {BOTTLENECK}-unit bottleneck, four "
    f"{HIDDEN}-unit layers and {FEATURES} outputs, each hidden layer with BatchNorm and ReLU. The anomaly "
    "score is the reconstruction's mean squared error. No machine-sound data can be had offline."
)


@cache
def network_class() -> type[Any]:
    from torch import nn

    def dense(cin: int, cout: int) -> list[nn.Module]:
        return [nn.Linear(cin, cout), nn.BatchNorm1d(cout), nn.ReLU()]

    class FCAutoencoder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            widths = [FEATURES, HIDDEN, HIDDEN, HIDDEN, HIDDEN, BOTTLENECK, HIDDEN, HIDDEN, HIDDEN, HIDDEN]
            layers: list[nn.Module] = []
            for cin, cout in itertools.pairwise(widths):
                layers += dense(cin, cout)
            self.layers = nn.Sequential(*layers, nn.Linear(HIDDEN, FEATURES))

        def forward(self, x: Any) -> Any:
            return self.layers(x)

    return FCAutoencoder


def _build(variant: str) -> Any:
    import torch

    if variant != "random":
        raise BuildError(f"{NAME} has no weights variant {variant!r}; it has only random")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(RANDOM_SEED)
        model = network_class()()
    norms = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm1d)]
    for m in norms:  # untrained statistics (0, 1) would fade the signal: use the calibration set's
        m.reset_running_stats()
        m.momentum = None
        m.train()
    with torch.no_grad():
        model(torch.cat([s[0] for s in _calibration()]))
    return model.eval()


def _calibration() -> list[tuple[Any, ...]]:
    return synthetic.gaussian((1, FEATURES), CALIBRATION_SIZE, CALIBRATION_SEED)


def spec() -> ModelSpec:
    return ModelSpec(
        name=NAME,
        version=VERSION,
        description=DESCRIPTION,
        task="anomaly-detection",
        inputs=(InputSpec("log_mel", (1, FEATURES), "float32"),),
        build=_build,
        example_inputs=lambda: _calibration()[0],
        calibration=Dataset(
            size=CALIBRATION_SIZE,
            description=(
                f"{CALIBRATION_SIZE} synthetic standard-normal vectors (numpy PCG64 seed {CALIBRATION_SEED}); "
                "no machine sound. Reconstruction ROC-AUC needs labelled normal and anomalous sound and "
                "weights trained on the normal, so the elementwise checks alone judge this model"
            ),
            load=_calibration,
            identity=lambda: f"gaussian:shape=1x{FEATURES},count={CALIBRATION_SIZE},seed={CALIBRATION_SEED}",
        ),
        weights=(
            WeightsVariant(
                name="random",
                description=(
                    f"untrained: PyTorch's default init after torch.manual_seed({RANDOM_SEED}), then every "
                    "BatchNorm's statistics re-estimated on the calibration vectors"
                ),
                origin="generated",
                licence="n/a",
                identity=lambda: (f"seed:{RANDOM_SEED};bn-reestimated-on:gaussian:1x{FEATURES},"
                                  f"count={CALIBRATION_SIZE},seed={CALIBRATION_SEED}"),
            ),
        ),
    )
