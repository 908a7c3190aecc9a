"""The ``vision`` entry point: registers the pack's models, torch-free."""

from __future__ import annotations

from collections.abc import Callable

from zoo import ModelSpec, hookimpl
from zoo_vision import (
    mtcnn,
    ppocr,
    resnet8,
    seg_tiny,
    segmentation,
    ssdlite,
    transformers,
    vww,
    yolo_tiny,
)


@hookimpl
def register_models(register: Callable[[ModelSpec], None]) -> None:
    register(vww.spec())
    register(resnet8.spec())
    register(ssdlite.spec())
    register(yolo_tiny.spec())
    register(seg_tiny.spec())
    for key in mtcnn.NETS:
        register(mtcnn.spec(key))
    for key in ppocr.NETS:
        register(ppocr.spec(key))
    for spec in (*segmentation.specs(), *transformers.specs()):
        register(spec)
