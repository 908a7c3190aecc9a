"""MediaPipe 0.10.14's ``.tflite`` files, from the folder ``make setup`` extracts them to, each
checked by sha256 before it is read.

The wheel is never installed (it pins protobuf < 5, jax and opencv): ``make setup`` downloads it
with ``pip download --no-deps`` and writes its networks into ``$(VENV)/mediapipe``
(scripts/mediapipe_tflite.py). ``ZOO_MEDIAPIPE_MODELS`` names another folder. Hashlib only.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import zoo
from zoo import BuildError

__all__ = ["ENV", "FILES", "LICENCE", "ORIGIN", "folder", "identity", "model_file"]

ENV = "ZOO_MEDIAPIPE_MODELS"
VERSION = "0.10.14"
ORIGIN = (f"mediapipe {VERSION}'s wheel on PyPI (pip download mediapipe=={VERSION} --no-deps; "
          "never installed), mediapipe/modules/…")
LICENCE = "Apache-2.0 (MediaPipe, Google)"
# name: (path in the wheel, sha256): scripts/mediapipe_tflite.py extracts these from the wheel (and
# benchmarks/tflite_exactness.py checks the reader on them).
FILES = {
    "face_detection_short_range": ("mediapipe/modules/face_detection/face_detection_short_range.tflite",
                                   "bbff11cebd1eb27a1e004cae0b0e63ec8c551cbf34a4451148b4908b8db3eca8"),
    "selfie_segmentation": ("mediapipe/modules/selfie_segmentation/selfie_segmentation.tflite",
                            "9ee168ec7c8f2a16c56fe8e1cfbc514974cbbb7e434051b455635f1bd1462f5c"),
    "selfie_segmentation_landscape": ("mediapipe/modules/selfie_segmentation/selfie_segmentation_landscape.tflite",
                                      "a77d03f4659b9f6b6c1f5106947bf40e99d7655094b6527f214ea7d451106edd"),
    "pose_detection": ("mediapipe/modules/pose_detection/pose_detection.tflite",
                       "9ba9dd3d42efaaba86b4ff0122b06f29c4122e756b329d89dca1e297fd8f866c"),
    "pose_landmark_full": ("mediapipe/modules/pose_landmark/pose_landmark_full.tflite",
                           "e9a5c5cb17f736fafd4c2ec1da3b3d331d6edbe8a0d32395855aeb2cdfd64b9f"),
    "palm_detection_lite": ("mediapipe/modules/palm_detection/palm_detection_lite.tflite",
                            "e9a4aaddf90dda56a87235303cf00e4c2d3fb28725f68fd88772997dac905c18"),
    "palm_detection_full": ("mediapipe/modules/palm_detection/palm_detection_full.tflite",
                            "1b14e9422c6ad006cde6581a46c8b90dd573c07ab7f3934b5589e7cea3f89a54"),
    "hand_landmark_lite": ("mediapipe/modules/hand_landmark/hand_landmark_lite.tflite",
                           "048edd3645c9bf7397d19a9f6e3a42957d6e414c9bea6598030a2e9b624156e6"),
    "hand_landmark_full": ("mediapipe/modules/hand_landmark/hand_landmark_full.tflite",
                           "11c272b891e1a99ab034208e23937a8008388cf11ed2a9d776ed3d01d0ba00e3"),
}


def folder() -> Path:
    """``$ZOO_MEDIAPIPE_MODELS``, or the running virtualenv's ``mediapipe/`` (where ``make setup`` puts them)."""
    named = os.environ.get(ENV)
    return Path(named).expanduser() if named else Path(sys.prefix) / "mediapipe"


def model_file(name: str, owner: str) -> Path:
    """The checked path of ``name``'s ``.tflite``: missing or other bytes raise `zoo.BuildError`."""
    member, sha256 = FILES[name]
    path = folder() / f"{name}.tflite"
    remedy = (f"run `make setup` (it extracts mediapipe {VERSION}'s networks into $(VENV)/mediapipe), or set "
              f"{ENV} to a folder holding {name}.tflite, the wheel's {member}")
    if not path.is_file():
        raise BuildError(f"{owner}: {path} is missing: {remedy}")
    return zoo.checked_file(path, sha256, owner=owner, remedy=remedy)


def identity(name: str) -> str:
    """The file's digest and the reader's code: both decide the module."""
    return f"mediapipe {VERSION} {FILES[name][0]} sha256:{FILES[name][1]};{zoo.tflite_reader_identity()}"
