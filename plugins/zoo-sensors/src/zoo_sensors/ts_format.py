"""A small, bounded reader of sktime's ``.ts`` time-series files (numpy inside).

The format: ``#`` comment lines, ``@`` header lines (``@dimensions``, ``@classLabel true A B …``,
``@data``), then one series a line: each dimension's comma-separated values, dimensions separated
by ``:``, the class label last. Only what the pack's files use is read: no time stamps, no missing
values. Every limit below is checked, so a wrong file fails with a clear error, never a huge allocation.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zoo import BuildError

MAX_BYTES = 8 << 20
MAX_SERIES = 10_000
MAX_LENGTH = 10_000
MAX_DIMENSIONS = 64


@dataclass(frozen=True)
class TsData:
    """``series[i]``: a float64 array (dimensions, length_i); ``labels[i]``: its class index
    in ``classes`` (the header's ``@classLabel`` order)."""

    series: list[Any]
    labels: Any
    classes: tuple[str, ...]


def read_ts(path: Path, *, owner: str) -> TsData:
    """The series and labels of the ``.ts`` file at ``path`` (already checked by its digest)."""
    import numpy as np

    data = path.read_bytes()
    if len(data) > MAX_BYTES:
        raise BuildError(f"{owner}: {path} is {len(data):,} bytes, more than a .ts file here may be ({MAX_BYTES:,})")
    lines = data.decode("utf-8-sig").splitlines()
    header: dict[str, str] = {}
    start = None
    for number, line in enumerate(lines):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if not text.startswith("@"):
            raise BuildError(f"{owner}: {path} line {number + 1}: data before @data")
        key, _, value = text[1:].partition(" ")
        if key.lower() == "data":
            start = number + 1
            break
        header[key.lower()] = value.strip()
    if start is None:
        raise BuildError(f"{owner}: {path} has no @data line: not a .ts file")
    if header.get("timestamps", "false") != "false" or header.get("missing", "false") != "false":
        raise BuildError(f"{owner}: {path} has time stamps or missing values, which this reader does not read")
    label_words = header.get("classlabel", "").split()
    if not label_words or label_words[0] != "true" or len(label_words) < 3:
        raise BuildError(f"{owner}: {path} declares no class labels (@classLabel true …)")
    classes = tuple(label_words[1:])
    index = {c: i for i, c in enumerate(classes)}
    series: list[Any] = []
    labels: list[int] = []
    for number, line in enumerate(lines[start:], start=start + 1):
        if not line.strip():
            continue
        *dims, label = line.strip().split(":")
        if label not in index or not 1 <= len(dims) <= MAX_DIMENSIONS:
            raise BuildError(f"{owner}: {path} line {number}: label {label[:20]!r} or {len(dims)} dimensions "
                             f"not as declared ({', '.join(classes)}; at most {MAX_DIMENSIONS})")
        try:
            values = [np.array([float(v) for v in d.split(",")], dtype=np.float64) for d in dims]
        except ValueError:
            raise BuildError(f"{owner}: {path} line {number}: a value is not a number") from None
        length = len(values[0])
        if any(len(v) != length for v in values) or length > MAX_LENGTH:
            raise BuildError(f"{owner}: {path} line {number}: dimensions of unequal length, or longer than "
                             f"{MAX_LENGTH}")
        series.append(np.stack(values))
        labels.append(index[label])
        if len(series) > MAX_SERIES:
            raise BuildError(f"{owner}: {path} holds more than {MAX_SERIES:,} series")
    if not series or len({s.shape[0] for s in series}) != 1:
        raise BuildError(f"{owner}: {path} holds no series, or series of different dimensions")
    return TsData(series, np.asarray(labels, dtype=np.int64), classes)
