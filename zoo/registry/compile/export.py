"""Export a model with ``torch.export`` and quantize it PT2E-style with Arm's
``EthosUQuantizer``, calibrated on a dataset's samples."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from zoo._spec import Sample
from zoo.registry.compile.blame import _stage
from zoo.registry.events import Progress


def digest_samples(samples: Sequence[Sample]) -> str:
    """sha256 over every calibration tensor's dtype, shape and bytes, in order."""
    import torch

    h = hashlib.sha256()
    for i, sample in enumerate(samples):
        for j, t in enumerate(sample):
            if isinstance(t, torch.Tensor):
                flat = t.detach().cpu().contiguous().reshape(-1)
                h.update(f"{i}/{j} {t.dtype} {list(t.shape)}\n".encode())
                h.update(flat.view(torch.uint8).numpy().tobytes())
            else:
                h.update(f"{i}/{j} {type(t).__name__} {t!r}\n".encode())
    return h.hexdigest()


def _export(model: Any, example: Sample) -> Any:
    import torch

    return torch.export.export(model, example)


def _quantize(
    graph: Any, samples: list[Sample], compile_spec: Any, where: str, report: Progress
) -> Any:
    from executorch.backends.arm.quantizer import (
        EthosUQuantizer,
        get_symmetric_quantization_config,
    )
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    with _stage(where, "quantizer preparation"):
        quantizer = EthosUQuantizer(compile_spec)
        quantizer.set_global(get_symmetric_quantization_config())
        prepared = prepare_pt2e(graph, quantizer)
    for i, sample in enumerate(samples):
        with _stage(where, f"calibration sample {i}"):
            prepared(*sample)
        report("calibrate", i + 1, len(samples))
    report("quantize", None, None)
    with _stage(where, "quantize"):
        return convert_pt2e(prepared)


def _as_sample(value: Any) -> Sample:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)
