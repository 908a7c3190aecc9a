"""The MediaPipe 0.10.14 networks zoo reads, taken out of the wheel and checked by sha256.

The wheel is downloaded with ``pip download --no-deps`` and never installed (it pins protobuf < 5,
jax and opencv): ``make setup`` runs

    python scripts/mediapipe_tflite.py WHEEL DEST

which writes each ``.tflite`` of WHEEL the MediaPipe pack lists into DEST, checked against its digest, and
stops at the first mismatch with nothing of it left in DEST. ``benchmarks/tflite_exactness.py``
reads the files from DEST and checks them again.
"""

from __future__ import annotations

import hashlib
import sys
import zipfile
from pathlib import Path

# The table of the wheel's files (name: (path in the wheel, sha256)) is the MediaPipe pack's, read from
# its source: the pack need not be installed yet when ``make setup`` runs this.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "plugins" / "zoo-mediapipe" / "src"))
from zoo_mediapipe.files import FILES, VERSION

__all__ = ["FILES", "VERSION", "checked", "extract"]


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
