"""Wall time of `zoo fetch --no-build` from each kind of remote on loopback, into
an empty cache, on the full install and on a light one (no torch on the path);
and of the cache hit that follows.

Run: .venv/bin/python benchmarks/remote_fetch.py [--model mnist] [--target u55-128] [--runs N]
Compiles the model once into a private cache, publishes it to a directory, an
http.server over that directory, the loopback test Hub (tests/hub_server.py) and
a bucket on moto's S3 server (`python -m moto.server`, the `s3` extra's s3fs);
the light install for S3 is the light one plus the s3 extra.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.hub_server import HubTestServer  # noqa: E402
from tests.remotes.helpers import build_s3_site  # noqa: E402
from tests.remotes.light_site import build_light_site, light_env  # noqa: E402
from tests.remotes.servers import MotoServer  # noqa: E402


def run(args: list[str], env: dict[str, str], light: bool) -> float:
    cmd = [sys.executable, *(["-S"] if light else []), "-m", "zoo", *args]
    start = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="mnist")
    parser.add_argument("--target", default="u55-128")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="zoo-bench-remote-"))
    base = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_DISABLE_TELEMETRY": "1"}
    source = {**base, "ZOO_CACHE_DIR": str(work / "source")}
    fetch = ["fetch", args.model, "--target", args.target, "--no-build", "--quiet"]
    run(["fetch", args.model, "--target", args.target, "--quiet"], source, light=False)
    site = build_light_site(work / "light-site")
    s3_site = build_s3_site(work / "s3-site")

    (work / "share").mkdir()
    http = subprocess.Popen(
        [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", str(work / "share")],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    assert http.stdout is not None
    port = re.search(r"port (\d+)", http.stdout.readline())
    assert port
    try:
        with HubTestServer() as hub, MotoServer() as moto:
            moto.client().create_bucket(Bucket="bench-zoo")
            hf = {"HF_ENDPOINT": hub.url, "HF_HOME": str(work / "hf-home"), **moto.env}
            start = time.perf_counter()
            run(["publish", "--all", "--to", str(work / "share")], source, light=False)
            publish_dir = time.perf_counter() - start
            start = time.perf_counter()
            run(["publish", "--all", "--to", "hf://bench/zoo"], {**source, **hf}, light=False)
            publish_hf = time.perf_counter() - start
            publish_s3 = []
            for i in range(args.runs):  # each into an empty prefix
                start = time.perf_counter()
                run(["publish", "--all", "--to", f"s3://bench-zoo/p{i}"], {**source, **hf}, light=False)
                publish_s3.append(time.perf_counter() - start)
            remotes = {"directory": str(work / "share"), "http": f"http://127.0.0.1:{port.group(1)}", "hf": "hf://bench/zoo",
                       "s3": "s3://bench-zoo/p0"}
            print(f"zoo {' '.join(fetch)} --remote R, median of {args.runs} (empty cache each time)")
            print(f"  publish --all to a directory: {publish_dir:6.2f} s; to the test Hub: {publish_hf:6.2f} s; "
                  f"to moto's S3 (median of {args.runs}, empty prefix each): {statistics.median(publish_s3):6.2f} s")
            for kind, remote in remotes.items():
                for install in ("full", "light"):
                    light = install == "light"
                    times, hits = [], []
                    for i in range(args.runs):
                        cache = work / f"cache-{kind}-{install}-{i}"
                        light_site = s3_site if kind == "s3" else site
                        env = {**(light_env(light_site) if light else base), **hf, "ZOO_CACHE_DIR": str(cache),
                               "HF_HUB_CACHE": str(work / f"hf-cache-{kind}-{install}-{i}")}
                        times.append(run([*fetch, "--remote", remote], env, light))
                        hits.append(run([*fetch, "--remote", remote], env, light))
                        shutil.rmtree(cache)
                    print(f"  {kind:9} {install:5}: download {statistics.median(times):6.3f} s, "
                          f"then cache hit {statistics.median(hits):6.3f} s")
    finally:
        http.terminate()
        http.wait()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
