"""The three PP-OCR files RapidOCR ships, read and compared with onnxruntime.

Measured max abs error on this machine (seeded standard-normal input): det 1.3e-7 (outputs up
to 4.8e-3), rec 4.1e-6 (6625-way softmax probabilities), cls 1.8e-7. The differences are float32
summation order over some 60 convolutions (and rec's attention and 1/sqrt normalisations); the
tolerances leave about 10x headroom for other CPUs' kernels, far below a wrong mapping's error.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.heavy


def _models() -> Path | None:
    # find_spec does not run the package (its __init__ needs cv2).
    spec = importlib.util.find_spec("rapidocr_onnxruntime")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "models"
    return folder if folder.is_dir() else None


MODELS = _models()
CASES = [("ch_PP-OCRv4_det_infer.onnx", (1, 3, 256, 256), 2e-6),
         ("ch_PP-OCRv4_rec_infer.onnx", (1, 3, 48, 320), 5e-5),
         ("ch_ppocr_mobile_v2.0_cls_infer.onnx", (1, 3, 48, 192), 2e-6)]


@pytest.mark.skipif(MODELS is None, reason="rapidocr-onnxruntime (which ships the PP-OCR files) is not installed")
@pytest.mark.parametrize(("name", "shape", "atol"), CASES, ids=["det", "rec", "cls"])
def test_ppocr_file_matches_onnxruntime_and_exports(name: str, shape: tuple[int, ...], atol: float) -> None:
    import onnxruntime as ort
    import torch

    import zoo

    assert MODELS is not None
    path = MODELS / name
    module = zoo.read_onnx(path, {"x": shape})
    torch.manual_seed(0)
    x = torch.randn(shape)
    with torch.no_grad():
        got = module(x).numpy()
    expected = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x.numpy()})[0]
    assert got.shape == expected.shape
    error = float(np.abs(got - expected).max())
    assert error <= atol, f"{name}: max abs error {error:.3g} against onnxruntime (tolerance {atol:g})"

    ep = torch.export.export(module, (x,), strict=False)
    ops = {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    assert not {o for o in ops if "sym_size" in o or "_assert" in o}, ops
    assert "aten.conv2d.default" in ops
    with torch.no_grad():
        exported = ep.module()(x).numpy()
    np.testing.assert_array_equal(exported, got)
