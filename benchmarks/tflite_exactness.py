"""The TFLite reader against TFLite's interpreter on MediaPipe's networks, and its read time.

For each network of ``scripts/mediapipe_tflite.py`` (taken out of the mediapipe 0.10.14 wheel by
``make setup``, checked by sha256 again here), ``zoo.read_tflite`` builds the module and both run
on the same inputs: three photos of scikit-image (astronaut, coffee, chelsea), resized to the
network's input and scaled as MediaPipe's graphs scale them, and one seeded uniform input. The
error is the largest absolute difference of an output divided by that output's range on that
input, the worst over outputs and inputs, against two interpreters: TFLite's builtin kernels
(no delegate) and XNNPACK (the default delegate, which MediaPipe runs; the only one here that
implements the custom Convolution2DTransposeBias, so the selfie networks have no builtin column).
Two yardsticks beside them: how far TFLite's two interpreters are from each other, and how far
zoo's module computed in float64 is from the builtin kernels (XNNPACK for the selfie networks):
the mapping's own error, without float32 rounding.

The read time is measured in a fresh process after ``import torch``: the first read and the median
of three more; the one-off import of torch's fake-tensor machinery, which the first read needs (and
any ``torch.export`` loads anyway), is measured apart.

    python benchmarks/tflite_exactness.py                     # reads .venv/mediapipe
    python benchmarks/tflite_exactness.py --files DIR --markdown out/tflite_exactness.md
    python benchmarks/tflite_exactness.py pose_landmark_full        # one network

Needs ai-edge-litert (a dev dependency) and scikit-image. Run under ``nice -n 19`` on a shared machine.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from mediapipe_tflite import FILES, checked  # noqa: E402

# The input range each network's MediaPipe graph feeds it (its ImageToTensorCalculator's output range).
SCALE = {"face_detection_short_range": (-1.0, 1.0), "pose_detection": (-1.0, 1.0)}
PHOTOS = ("astronaut", "coffee", "chelsea")

_TIMER = """
import sys, time, statistics
import torch
from zoo import read_tflite
t = time.perf_counter()
from torch._subclasses.fake_tensor import FakeTensorMode
FakeTensorMode()
fake = time.perf_counter() - t
t = time.perf_counter(); read_tflite(sys.argv[1]); first = time.perf_counter() - t
runs = []
for _ in range(3):
    t = time.perf_counter(); read_tflite(sys.argv[1]); runs.append(time.perf_counter() - t)
print(fake, first, statistics.median(runs))
"""


def _inputs(shape: tuple[int, ...], name: str) -> list[tuple[str, np.ndarray]]:
    import skimage.data
    from PIL import Image

    lo, hi = SCALE.get(name, (0.0, 1.0))
    _, h, w, _ = shape
    out = []
    for photo in PHOTOS:
        png = Path(skimage.data.__file__).parent / f"{photo}.png"  # read by PIL: skimage.io needs tifffile
        image = Image.open(png).convert("RGB").resize((w, h), Image.BILINEAR)
        out.append((photo, (np.asarray(image, np.float32)[None] / 255.0 * (hi - lo) + lo).astype(np.float32)))
    out.append(("uniform", np.random.default_rng(0).uniform(lo, hi, shape).astype(np.float32)))
    return out


def _interpreter(path: Path, delegate: bool) -> Any:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    kind = OpResolverType.AUTO if delegate else OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    try:
        it = Interpreter(model_path=str(path), experimental_op_resolver_type=kind)
        it.allocate_tensors()
    except RuntimeError:
        return None
    return it


def _run(it: Any, x: np.ndarray) -> list[np.ndarray]:
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    return [it.get_tensor(d["index"]).copy() for d in it.get_output_details()]


def _error(got: tuple[Any, ...], expected: list[np.ndarray]) -> float:
    worst = 0.0
    for g, e in zip(got, expected, strict=True):
        g = g.numpy() if hasattr(g, "numpy") else g
        span = float(e.max() - e.min())
        worst = max(worst, float(np.abs(g - e).max()) / (span if span > 0 else 1.0))
    return worst


def _outputs(module: Any, x: np.ndarray, dtype: Any) -> tuple[Any, ...]:
    import torch

    with torch.no_grad():
        got = module(torch.from_numpy(x).to(dtype))
    return got if isinstance(got, tuple) else (got,)


def measure(path: Path, name: str) -> dict[str, Any]:
    import copy

    import torch

    import zoo

    module = zoo.read_tflite(path)
    module64 = copy.deepcopy(module).double()
    builtin, xnnpack = _interpreter(path, False), _interpreter(path, True)
    shape = tuple(xnnpack.get_input_details()[0]["shape"])
    row: dict[str, Any] = {"network": name, "bytes": path.stat().st_size, "inputs": shape,
                           "builtin": None, "xnnpack": 0.0, "own": None, "f64": 0.0, "worst": ""}
    for label, x in _inputs(shape, name):
        ours, ours64 = _outputs(module, x, torch.float32), _outputs(module64, x, torch.float64)
        on_xnnpack = _run(xnnpack, x)
        reference = on_xnnpack
        if builtin is not None:
            reference = _run(builtin, x)
            row["builtin"] = max(row["builtin"] or 0.0, _error(ours, reference))
            row["own"] = max(row["own"] or 0.0, _error(tuple(on_xnnpack), reference))
        err = _error(ours, on_xnnpack)
        if err >= row["xnnpack"]:
            row["xnnpack"], row["worst"] = err, label
        row["f64"] = max(row["f64"], _error(ours64, reference))
    timed = subprocess.run([sys.executable, "-c", _TIMER, str(path)], capture_output=True, text=True, check=True)
    row["fake_s"], row["first_read_s"], row["read_s"] = (float(v) for v in timed.stdout.split())
    return row


def cell(v: float | None) -> str:
    return "—" if v is None else f"{v:.1e}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=Path, default=ROOT / ".venv" / "mediapipe")
    parser.add_argument("--markdown", type=Path)
    parser.add_argument("names", nargs="*", help=f"these networks only (default: all of {', '.join(FILES)})")
    args = parser.parse_args()
    unknown = [n for n in args.names if n not in FILES]
    if unknown:
        parser.error(f"unknown network(s) {', '.join(unknown)}; choose from {', '.join(FILES)}")
    lines = ["| network | size | input | zoo vs builtin kernels | zoo vs XNNPACK (worst input) | "
             "XNNPACK vs builtin | zoo in float64 vs builtin | first read | read |",
             "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    print("\n".join(lines), flush=True)
    for name in args.names or FILES:
        r = measure(checked(args.files, name), name)
        lines.append(f"| {r['network']} | {r['bytes']:,} B | {'×'.join(map(str, r['inputs'][1:]))} | "
                     f"{cell(r['builtin'])} | {cell(r['xnnpack'])} ({r['worst']}) | {cell(r['own'])} | "
                     f"{cell(r['f64'])} | {r['first_read_s']:.2f} s (+{r['fake_s']:.2f} s) | {r['read_s']:.2f} s |")
        print(lines[-1], flush=True)
    text = "\n".join(lines)
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(text + "\n")


if __name__ == "__main__":
    main()
