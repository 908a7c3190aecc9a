"""``mtcnn-pnet``, ``mtcnn-rnet``, ``mtcnn-onet``: MTCNN's three face-detection CNNs in
facenet-pytorch's layout (PReLU, ceil-mode max pools, softmax face scores), so that its state dicts load.

facenet-pytorch pins torch < 2.3 and so cannot be a dependency. Its weights are offered as the
``facenet`` variant from a folder the user names in ``ZOO_MTCNN_WEIGHTS``, holding
``pnet.pt``, ``rnet.pt`` and ``onet.pt`` (facenet_pytorch/data/ in the facenet-pytorch 2.6.0 wheel, or
the repository's data/ folder); each file must have the sha256 below, so any other bytes are refused.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import zoo
from zoo import BuildError, Dataset, InputSpec, Metric, ModelSpec, WeightsVariant
from zoo.datasets import lfw_subset as lfw
from zoo_vision import boxes

VERSION = "1"
RANDOM_SEED = 0
WEIGHTS_ENV = "ZOO_MTCNN_WEIGHTS"
WHEEL = "facenet-pytorch 2.6.0 (pip download facenet-pytorch==2.6.0 --no-deps; the .pt files are in facenet_pytorch/data/)"
KEEP = 5
PREPROCESSING = (
    "lfw_subset's 25×25 grey crops resized (bilinear) and repeated on 3 channels, in [-1, 1] as facenet-pytorch's "
    "(pixel - 127.5) / 128 gives (within 1/256)"
)


@dataclass(frozen=True)
class Net:
    name: str
    file: str
    sha256: str
    side: int
    outputs: str


NETS = {
    "pnet": Net("mtcnn-pnet", "pnet.pt", "a2a71925e0b9996a42f63e47efc1ca19043e69558b5c523b978d611dfae49c8f", 48,
                "box regression (1, 4, 19, 19) and face probability (1, 2, 19, 19) for each 12×12 window at stride 2"),
    "rnet": Net("mtcnn-rnet", "rnet.pt", "bbb937de72efc9ef83b186c49f5f558467a1d7e3453a8ece0d71a886633f6a86", 24,
                "box regression (1, 4) and face probability (1, 2)"),
    "onet": Net("mtcnn-onet", "onet.pt", "165bfbe42940416ccfb977545cf0e976d5bf321f67083ae2aaaa5c764280118d", 48,
                "box regression (1, 4), five landmarks (1, 10) and face probability (1, 2)"),
}


@cache
def network_classes() -> dict[str, type[Any]]:
    """The three nn.Module classes; parameter names as facenet-pytorch's, so its state dicts load."""
    from torch import nn

    def stage(cin: int, cout: int, kernel: int) -> tuple[nn.Conv2d, nn.PReLU]:
        return nn.Conv2d(cin, cout, kernel), nn.PReLU(cout)

    class PNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1, self.prelu1 = stage(3, 10, 3)
            self.pool1 = nn.MaxPool2d(2, 2, ceil_mode=True)
            self.conv2, self.prelu2 = stage(10, 16, 3)
            self.conv3, self.prelu3 = stage(16, 32, 3)
            self.conv4_1, self.softmax4_1 = nn.Conv2d(32, 2, 1), nn.Softmax(dim=1)
            self.conv4_2 = nn.Conv2d(32, 4, 1)

        def forward(self, x: Any) -> tuple[Any, Any]:
            x = self.pool1(self.prelu1(self.conv1(x)))
            x = self.prelu3(self.conv3(self.prelu2(self.conv2(x))))
            return self.conv4_2(x), self.softmax4_1(self.conv4_1(x))

    class RNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1, self.prelu1 = stage(3, 28, 3)
            self.pool1 = nn.MaxPool2d(3, 2, ceil_mode=True)
            self.conv2, self.prelu2 = stage(28, 48, 3)
            self.pool2 = nn.MaxPool2d(3, 2, ceil_mode=True)
            self.conv3, self.prelu3 = stage(48, 64, 2)
            self.dense4, self.prelu4 = nn.Linear(576, 128), nn.PReLU(128)
            self.dense5_1, self.softmax5_1 = nn.Linear(128, 2), nn.Softmax(dim=1)
            self.dense5_2 = nn.Linear(128, 4)

        def forward(self, x: Any) -> tuple[Any, Any]:
            x = self.pool1(self.prelu1(self.conv1(x)))
            x = self.pool2(self.prelu2(self.conv2(x)))
            x = self.prelu3(self.conv3(x)).permute(0, 3, 2, 1).contiguous()
            x = self.prelu4(self.dense4(x.flatten(1)))
            return self.dense5_2(x), self.softmax5_1(self.dense5_1(x))

    class ONet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1, self.prelu1 = stage(3, 32, 3)
            self.pool1 = nn.MaxPool2d(3, 2, ceil_mode=True)
            self.conv2, self.prelu2 = stage(32, 64, 3)
            self.pool2 = nn.MaxPool2d(3, 2, ceil_mode=True)
            self.conv3, self.prelu3 = stage(64, 64, 3)
            self.pool3 = nn.MaxPool2d(2, 2, ceil_mode=True)
            self.conv4, self.prelu4 = stage(64, 128, 2)
            self.dense5, self.prelu5 = nn.Linear(1152, 256), nn.PReLU(256)
            self.dense6_1, self.softmax6_1 = nn.Linear(256, 2), nn.Softmax(dim=1)
            self.dense6_2 = nn.Linear(256, 4)
            self.dense6_3 = nn.Linear(256, 10)

        def forward(self, x: Any) -> tuple[Any, Any, Any]:
            x = self.pool1(self.prelu1(self.conv1(x)))
            x = self.pool2(self.prelu2(self.conv2(x)))
            x = self.pool3(self.prelu3(self.conv3(x)))
            x = self.prelu4(self.conv4(x)).permute(0, 3, 2, 1).contiguous()
            x = self.prelu5(self.dense5(x.flatten(1)))
            return self.dense6_2(x), self.dense6_3(x), self.softmax6_1(self.dense6_1(x))

    return {"pnet": PNet, "rnet": RNet, "onet": ONet}


def weights_file(key: str) -> Path:
    """The facenet state dict of one net, from the folder in ZOO_MTCNN_WEIGHTS, hash-checked."""
    net = NETS[key]
    folder = os.environ.get(WEIGHTS_ENV)
    if not folder:
        raise BuildError(
            f"{net.name}: the facenet weights need {WEIGHTS_ENV} set to a folder holding {net.file} "
            f"(from {WHEEL}); or build with --weights random"
        )
    return zoo.checked_file(Path(folder).expanduser() / net.file, net.sha256, owner=net.name,
                            remedy=f"{WEIGHTS_ENV}={folder} must hold facenet-pytorch's {net.file}: take it from {WHEEL}")


def build(key: str, variant: str) -> Any:
    import torch

    net = NETS[key]
    model = zoo.seeded_network(network_classes()[key], RANDOM_SEED)
    if variant == "facenet":
        state = torch.load(weights_file(key), map_location="cpu", weights_only=True)
        model.load_state_dict(state, strict=True)
    elif variant != "random":  # MTCNN has no BatchNorm: PyTorch's init is the whole random variant
        raise BuildError(f"{net.name} has no weights variant {variant!r}; choose facenet or random")
    return model.eval()


def samples(key: str, split: str) -> list[tuple[Any, ...]]:
    return zoo.one_input_samples(lfw.load(split, NETS[key].side)[0])


def decoder(key: str) -> Any:
    side = NETS[key].side

    def decode(sample_outputs: Any) -> list[boxes.Detection]:
        regression, probs = sample_outputs[0], sample_outputs[-1]
        if key == "pnet":
            return boxes.decode_pnet(regression, probs, score_threshold=0.0, keep=KEEP)
        return boxes.decode_refine(regression, probs, side)

    return decode


def spec(key: str) -> ModelSpec:
    net = NETS[key]
    split = lfw.snapshot()["split"]

    def data(part: str) -> str:
        return f"{lfw.identity(part)};side:{net.side}"

    truth = (f"the float model's {KEEP} best windows on each" if key == "pnet"
             else "the float model's refined box and face/no-face call on each")
    return ModelSpec(
        name=net.name,
        version=VERSION,
        description=(f"MTCNN's {key[0].upper()}-Net (Zhang et al. 2016) in facenet-pytorch's layout at "
                     f"{net.side}×{net.side}×3; outputs: {net.outputs}. Input: {PREPROCESSING}."),
        task="face-detection",
        inputs=(InputSpec("image", (1, 3, net.side, net.side), "float32", range=(-1.0, 1.0)),),
        outputs=("regression", "landmarks", "probability") if key == "onet" else ("regression", "probability"),
        build=lambda variant: build(key, variant),
        example_inputs=lambda: samples(key, "calibration")[0],
        calibration=Dataset(split["calibration"], f"{split['calibration']} lfw_subset training crops, half faces",
                            lambda: samples(key, "calibration"), lambda: data("calibration")),
        training=Dataset(split["calibration"], f"the {split['calibration']} calibration crops again, for --qat",
                         lambda: samples(key, "calibration"), lambda: data("calibration")),
        evaluation=Dataset(split["held_out"], f"{split['held_out']} held-out lfw_subset crops, half faces; {truth} "
                           "is the truth", lambda: [(s, None) for s in samples(key, "held_out")],
                           lambda: data("held_out")),
        weights=(
            WeightsVariant(
                name="random",
                description=f"untrained: PyTorch's default init after torch.manual_seed({RANDOM_SEED})",
                origin="generated",
                licence="n/a",
                identity=lambda: f"seed:{RANDOM_SEED}",
            ),
            WeightsVariant(
                name="facenet",
                description=(f"facenet-pytorch's {net.file} (MTCNN's Caffe weights converted), read from "
                             f"${WEIGHTS_ENV}/{net.file} and checked against its sha256"),
                origin=f"${WEIGHTS_ENV}/{net.file} from {WHEEL}; also github.com/timesler/facenet-pytorch data/",
                licence="MIT (facenet-pytorch); MTCNN weights by Zhang et al. (kpzhang93/MTCNN_face_detection_alignment)",
                identity=lambda: f"sha256:{net.sha256}",
            ),
        ),
        metrics=(Metric(
            "recall50", zoo.recall_vs_float(net.name, decoder(key)), higher_is_better=True, max_drop=30.0,
            description=f"recall at IoU 0.5 of {truth.replace(' on each', '')} on the {split['held_out']} crops",
        ),),
        labels=("no-face", "face"),
        default_weights="random",
        layouts=("nchw", "nhwc"),
    )
