"""The MediaPipe 0.10.14 networks zoo reads, taken out of the wheel and checked by sha256.

The wheel is downloaded with ``pip download --no-deps`` and never installed (it pins protobuf < 5,
jax and opencv): ``make setup`` runs

    python scripts/mediapipe_tflite.py WHEEL DEST

which writes each listed ``.tflite`` of WHEEL into DEST, checked against the digest below, and
stops at the first mismatch with nothing of it left in DEST. ``benchmarks/tflite_exactness.py``
reads the files from DEST and checks them again.
"""

from __future__ import annotations

import hashlib
import sys
import zipfile
from pathlib import Path

VERSION = "0.10.14"
# name: (path in the wheel, sha256)
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


def checked(folder: Path, name: str) -> Path:
    """``folder/name.tflite``, its sha256 checked."""
    path = folder / f"{name}.tflite"
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != FILES[name][1]:
        raise SystemExit(f"{path}: sha256 {digest}, expected {FILES[name][1]} (mediapipe {VERSION}'s file)")
    return path


def extract(wheel: Path, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as z:
        for name, (member, sha256) in FILES.items():
            data = z.read(member)
            digest = hashlib.sha256(data).hexdigest()
            if digest != sha256:
                raise SystemExit(f"{wheel}: {member} has sha256 {digest}, expected {sha256}")
            part = dest / f".{name}.tflite.part"
            part.write_bytes(data)
            part.replace(dest / f"{name}.tflite")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    extract(Path(sys.argv[1]), Path(sys.argv[2]))
