"""The NPU-program level of ``--verify`` across the catalogue (issues 46 and 58): for each model and
Ethos-U target (U55 and U65 by default; ``--u85`` takes the U85 catalogue on u85-256), whether Vela's program, run on zoo's command-stream interpreter (a
stand-in for the NPU), is bit-exact with the TOSA reference model, differs (where first), or
was skipped (what the interpreter does not model).

    .venv/bin/python benchmarks/npu_program_table.py [--models mnist,mv2] [--targets u55-128,u65-256]
        [--u85] [--precision a16w8] [--io int8] [--cache DIR] [--markdown FILE]

Each model is fetched with ``zoo fetch MODEL -t TARGETS --verify --json`` in a cache of its own
(``--cache``, default a new temporary folder): a build whose verification is already recorded
there is read back, not rebuilt, so a run can be continued. The trained models use their own
weights (MTCNN's facenet files from ``ZOO_MTCNN_WEIGHTS``, as ``make test`` sets it); mv2, MobileNetV3-Small, ResNet-8, LRASPP and SSDLite are built at random weights
(issue 46's list), and LRASPP's nearest-neighbour rewrite, a segmentation network whose
Vela program keeps its output. Where another check fails (a metric, at random weights), the row
still gives the NPU-program level the build recorded, and says which check failed. Models with I/O boundary options get zoo's defaults.
On the U85 (``--u85``) the list adds the transformers (deit-tiny, mobilevit-xs, at random weights), the MediaPipe
and sensors packs' trained networks and the catalogue's other networks at random weights (``U85_CATALOGUE``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

TRAINED = ("mnist", "ds-cnn-fsdd", "vww-mobilenetv1-025", "silero-vad", "crepe-tiny", "ppocr-cls", "ppocr-rec",
           "ppocr-det", "mtcnn-pnet", "mtcnn-rnet", "mtcnn-onet")
RANDOM = ("mv2", "mobilenet-v3-small", "resnet8-cifar", "lraspp-mobilenetv3-large", "lraspp-mobilenetv3-large-nearest",
          "ssdlite320-mobilenetv3-large", "deit-tiny", "mobilevit-xs")
TORCHVISION_U85 = ("squeezenet1-0", "shufflenet-v2-x1-0", "mnasnet0-75", "mnasnet1-0", "mobilenet-v3-large", "regnet-x-400mf",
                   "regnet-y-400mf", "mnasnet1-3", "shufflenet-v2-x1-5", "googlenet", "regnet-x-800mf", "regnet-y-800mf",
                   "efficientnet-b1", "resnet18", "shufflenet-v2-x2-0", "efficientnet-b2", "regnet-x-1-6gf", "regnet-y-1-6gf")
"""The torchvision classifiers added to the U85 table (issue 58), cheapest first: built at random weights."""
U85_CATALOGUE = ("mnist", "deit-tiny", "mobilevit-xs", "resnet8-cifar", "mv2", "lraspp-mobilenetv3-large",
                 "lraspp-mobilenetv3-large-nearest", "yolo-tiny-mcu", "blazeface-short-range", "selfie-segmentation",
                 "palm-detection-lite", "pose-detection", "hand-landmark-lite", "ds-cnn-fsdd", "vww-mobilenetv1-025",
                 "har-cnn-spar", "speaker-id-vowels", "appliance-id-plaid", "ad-autoencoder-spar", "fc-autoencoder-640",
                 "silero-vad", "crepe-tiny", "wav2letter", "mobilenet-v3-small", "ssdlite320-mobilenetv3-large",
                 "deeplabv3-mobilenetv3-large", "shufflenet-v2-x0-5", "squeezenet1-1", "mnasnet0-5", "efficientnet-b0",
                 "ppocr-cls", "ppocr-rec", "ppocr-det", "mtcnn-pnet", "mtcnn-rnet", "mtcnn-onet",
                 "seg-tiny-mcu", "deeplabv3-mobilenetv3-large-convt", "lraspp-mobilenetv3-large-convt",
                 "palm-detection-full", "hand-landmark-full", "pose-landmark-full", *TORCHVISION_U85)
"""The U85 table's models, most telling first (the transformers' MATMULs, the segmentation networks' RESIZEs)."""
RANDOM_U85 = ("deeplabv3-mobilenetv3-large", "shufflenet-v2-x0-5", "squeezenet1-1", "mnasnet0-5", "efficientnet-b0",
              "deeplabv3-mobilenetv3-large-convt", "lraspp-mobilenetv3-large-convt", *TORCHVISION_U85)
"""torchvision networks of the U85 list whose default weights are downloaded: built at random weights."""
TRAINED_VARIANT = {"mtcnn-pnet": "facenet", "mtcnn-rnet": "facenet", "mtcnn-onet": "facenet"}
"""Trained models whose default variant is ``random``: their weights (MTCNN's need ``ZOO_MTCNN_WEIGHTS``)."""
TARGETS = ("u55-128", "u65-256")


def fetch(model: str, targets: Sequence[str], env: dict[str, str], verify: str = "--verify",
          precision: str = "int8", io: str | None = None) -> tuple[list[dict[str, Any]], str, float]:
    """Each target's outcome (``zoo fetch --json``), what zoo printed on failure, and the seconds it took."""
    command = [sys.executable, "-m", "zoo", "fetch", model, "-t", ",".join(targets), verify, "--json", "--keep-going",
               "--precision", precision, *(["--io", io] if io else [])]
    if model in RANDOM or model in RANDOM_U85 or model in TRAINED_VARIANT:
        command += ["--weights", TRAINED_VARIANT.get(model, "random")]
    started = time.perf_counter()
    proc = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    try:
        outcomes = json.loads(proc.stdout) if proc.stdout.strip() else []
    except json.JSONDecodeError:
        outcomes = []
    said = " ".join(proc.stderr.split()[-400:]) if proc.returncode else ""
    return outcomes if isinstance(outcomes, list) else [outcomes], said, seconds


_LEVEL_FAILED = "does not compute what its TOSA graph does"
"""What zoo says when the NPU-program level fails a build: the row reads the level's record back (--no-verify)."""


def row(model: str, outcome: dict[str, Any]) -> dict[str, Any]:
    """One table row from a ``zoo fetch --json`` outcome (an artifact or a recorded failure)."""
    if "failure" in outcome:
        failure = outcome["failure"]
        return {"model": model, "target": failure.get("target", "?"), "weights": failure.get("weights", ""), "outcome": "build failed",
                "detail": f"{failure.get('stage', '?')}: {str(failure.get('message', ''))[:200]}"}
    manifest = outcome["manifest"]
    numerics = (manifest.get("verification") or {}).get("numerics") or {}
    level = numerics.get("npu_program")
    base = {"model": model, "target": manifest["target"], "weights": manifest["weights_info"]["name"]}
    if level is None:
        return {**base, "outcome": "no level", "detail": "the record has no NPU-program level"}
    detail = {
        "passed": f"{level['samples']} samples, {level['delegate_calls']} delegate calls, {level['seconds']:.2f} s",
        "skipped": str(level.get("skipped")),
        "failed": json.dumps(level.get("first_difference")) if level.get("first_difference") else str(level.get("error")),
    }[level["outcome"]]
    if outcome.get("also_failed"):
        detail += f" (another check {outcome['also_failed']})"
    return {**base, "outcome": "bit-exact" if level["outcome"] == "passed" else level["outcome"], "detail": detail}


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    lines = ["| model | weights | target | NPU program | detail |", "| --- | --- | --- | --- | --- |"]
    for r in rows:
        target = str(r["target"]).removeprefix("ethos-")
        lines.append(f"| {r['model']} | {r.get('weights', '')} | {target} | {r['outcome']} | {r['detail']} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", help=f"comma-separated (default: {', '.join(TRAINED + RANDOM)})")
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument("--u85", action="store_true", help="the U85 catalogue (U85_CATALOGUE) on u85-256, unless "
                        "--models or --targets say otherwise")
    parser.add_argument("--cache", type=Path, help="the zoo cache to build in and read from (default: a new one)")
    parser.add_argument("--markdown", type=Path, help="also write the table here, after each model")
    parser.add_argument("--precision", default="int8", help="int8 (the default) or a16w8: 16-bit activations")
    parser.add_argument("--io", choices=("float", "int8"), help="the programs' I/O (default: zoo's)")
    args = parser.parse_args(argv)
    models = args.models.split(",") if args.models else list(U85_CATALOGUE if args.u85 else TRAINED + RANDOM)
    targets = ["u85-256"] if args.u85 and args.targets == ",".join(TARGETS) else args.targets.split(",")
    cache = args.cache or Path(tempfile.mkdtemp(prefix="zoo-npu-table-"))
    env = {**os.environ, "ZOO_CACHE_DIR": str(cache)}
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    for model in models:
        outcomes, said, seconds = fetch(model, targets, env, precision=args.precision, io=args.io)
        if not outcomes and ("failed verification" in said or _LEVEL_FAILED in said):
            # Another check failed (a metric at random weights, say): the builds and their records are in the
            # cache, and --no-verify hands them out as recorded, the NPU-program level included.
            outcomes, _, more = fetch(model, targets, env, "--no-verify", args.precision, args.io)
            seconds += more
            for o in outcomes:
                if "failed verification" in said:
                    o["also_failed"] = said[said.index("failed verification"):].split(" It is not handed out")[0][:300]
        got = [row(model if args.precision == "int8" else f"{model} ({args.precision})", o) for o in outcomes]
        if not got:
            got = [{"model": model, "target": ",".join(targets), "outcome": "zoo failed", "detail": said[-300:]}]
        rows += got
        print(f"{model}: {seconds:.0f} s; " + ", ".join(f"{str(r['target']).removeprefix('ethos-')} {r['outcome']}" for r in got),
              flush=True)
        if args.markdown:
            args.markdown.write_text(markdown(rows) + f"\n{len(rows)} rows in {(time.perf_counter() - started) / 60:.1f} min "
                                     f"on {os.cpu_count()} cores; cache {cache}.\n")
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
