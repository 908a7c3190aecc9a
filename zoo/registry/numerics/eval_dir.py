"""``--eval-dir DIR``: a user's labelled images, in ImageFolder layout, as an evaluation set.

One subfolder per class, named by the class's label (as the model's labels
spell it, e.g. ``tench`` or ``7``) or by its index (``0`` … ``N-1``). The
model's plugin turns each class folder into samples (``calibration_from_dir``),
so the engine never preprocesses an image itself.

Torch-free: the identity is the plugin's identity of each class folder with
its label index, hashed.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zoo._errors import UsageError
from zoo._spec import Dataset, ModelSpec
from zoo.registry.numerics.data import MAX_SAMPLES

_SHOWN_LABELS = 20


@dataclass(frozen=True)
class ClassFolder:
    index: int
    """The label index the folder's images are scored against."""
    path: Path


def class_folders(spec: ModelSpec, directory: Path) -> list[ClassFolder]:
    """The class folders of ``directory``, mapped to label indices: by label name
    first, then by integer index. Raises UsageError for anything that does not map."""
    where = f"--eval-dir {directory}"
    if spec.calibration_from_dir is None:
        raise UsageError(
            f"{where}: model {spec.name!r} cannot read an image folder (its plugin gives no "
            "calibration_from_dir), so it cannot be evaluated on your images; --verify uses its own data"
        )
    labels = spec.load_labels()
    if not labels:
        raise UsageError(
            f"{where}: model {spec.name!r} declares no labels, so class folders cannot be matched "
            "to its outputs; --verify uses its own data"
        )
    if not directory.is_dir():
        raise UsageError(f"{where}: not a directory")
    by_name = {label: i for i, label in reversed(list(enumerate(labels)))}
    accepted = _accepted(labels)
    folders: dict[int, ClassFolder] = {}
    for path in sorted(p for p in directory.iterdir() if p.is_dir() and not p.name.startswith(".")):
        index = _index_of(path.name, by_name, len(labels))
        if index is None:
            raise UsageError(f"{where}: folder {path.name!r} is neither a label of {spec.name} nor a class index; {accepted}")
        if index in folders:
            raise UsageError(
                f"{where}: folders {folders[index].path.name!r} and {path.name!r} both name class {index} "
                f"({labels[index]!r}); merge them into one"
            )
        folders[index] = ClassFolder(index, path)
    if not folders:
        raise UsageError(f"{where}: no class folders; put each class's images in a subfolder. {accepted[0].upper()}{accepted[1:]}")
    return [folders[i] for i in sorted(folders)]


def _index_of(name: str, by_name: dict[str, int], count: int) -> int | None:
    if name in by_name:
        return by_name[name]
    if name.isascii() and name.isdigit() and int(name) < count:
        return int(name)
    return None


def _accepted(labels: tuple[str, ...]) -> str:
    shown = ", ".join(repr(x) for x in labels[:_SHOWN_LABELS])
    more = f", … ({len(labels)} in all; see 'zoo info')" if len(labels) > _SHOWN_LABELS else ""
    return f"name each folder by a label ({shown}{more}) or by an index 0–{len(labels) - 1}"


def evaluation_from_dir(spec: ModelSpec, directory: Path) -> Dataset:
    """``directory``'s class folders as a labelled evaluation set: ``load()`` gives
    ``(sample, label index)`` pairs. With more than MAX_SAMPLES images, every class
    gets an equal share (as far as its folder allows), in order of file name."""
    directory = Path(directory).expanduser()
    folders = class_folders(spec, directory)
    read = spec.calibration_from_dir
    assert read is not None  # class_folders checked it
    parts: list[tuple[int, Dataset]] = []
    for folder in folders:
        try:
            parts.append((folder.index, read(folder.path)))
        except UsageError as exc:
            raise UsageError(f"--eval-dir {directory}: class folder {folder.path.name!r}: {exc}") from None
    digest = hashlib.sha256()
    for index, dataset in parts:
        digest.update(f"{index}\0{dataset.identity()}\n".encode())
    identity = f"class-folders:sha256:{digest.hexdigest()};classes={len(parts)}"
    quotas = _quotas([d.size for _, d in parts], MAX_SAMPLES)

    def load() -> list[tuple[Any, int]]:
        items: list[tuple[Any, int]] = []
        for (index, dataset), quota in zip(parts, quotas, strict=True):
            if quota:
                items += [(sample, index) for sample in dataset.load()[:quota]]
        return items

    return Dataset(
        size=sum(quotas),
        description=f"{sum(d.size for _, d in parts)} images in {len(parts)} class folders of {directory}",
        load=load,
        identity=lambda: identity,
    )


def _quotas(sizes: list[int], limit: int) -> list[int]:
    """How many samples to take from each class: round-robin up to ``limit`` in all."""
    quotas = [0] * len(sizes)
    left = min(limit, sum(sizes))
    while left:
        for i, size in enumerate(sizes):
            if left and quotas[i] < size:
                quotas[i] += 1
                left -= 1
    return quotas
