"""The labels header beside a .pte (``--labels-header``): it must be exactly what
zoo renders from the manifest's labels, which keep the grammar of ``macros.py``.
A header is code, so one with anything else in it (a function appended, and the
hashes redone) is never handed out. Pure Python, no torch."""

from __future__ import annotations

from zoo.registry.checks import Check
from zoo.registry.store.manifest import Manifest


def check_labels_header(header: bytes, header_name: str, manifest: Manifest) -> Check:
    from zoo.registry.firmware.c_header import labels_array, labels_header

    if manifest.labels is None:
        return Check("labels header", False, f"{header_name}: the manifest records no labels to render it from")
    try:
        expected = labels_header(manifest.labels, file_name=header_name, array=labels_array(manifest.model))
    except ValueError as exc:
        return Check("labels header", False, f"the manifest's labels cannot be rendered ({exc})")
    if header != expected.encode("utf-8"):
        return Check("labels header", False, f"{header_name} is not what zoo renders from the manifest's "
                     f"{len(manifest.labels)} labels: changed after it was written")
    return Check("labels header", True, f"{header_name}: the manifest's {len(manifest.labels)} labels")
