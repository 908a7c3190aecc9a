"""Lay out the read-only source snapshots in ../shared/vendor as the firmware projects want
them, in a writable folder: an ``executorch`` tree of symbolic links whose submodule folders
point at the flatbuffers, flatcc, json, gflags and FXdiv snapshots, plus the one generated
file the snapshot lacks. A user with the network clones the same commits instead (the
project's README.md). Prints the three CMake paths.

    .venv/bin/python scripts/vendor_sources.py DEST [--vendor ../shared/vendor]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
LINKS = {"third-party/flatbuffers": "flatbuffers", "third-party/flatcc": "flatcc", "third-party/json": "json",
         "third-party/gflags": "gflags", "backends/xnnpack/third-party/FXdiv": "fxdiv"}


def lay_out(dest: Path, vendor: Path) -> dict[str, str]:
    """``dest/executorch`` (made once) and the CMake paths of the three sources."""
    tree = dest / "executorch"  # ExecuTorch's CMake wants its folder named so
    if not (tree / ".zoo-vendor-done").exists():
        dest.mkdir(parents=True, exist_ok=True)
        staging = dest / ".executorch.tmp"
        subprocess.run(["rm", "-rf", str(staging)], check=True)
        subprocess.run(["cp", "-rs", str((vendor / "executorch").resolve()), str(staging)], check=True)
        for folder, _, _ in os.walk(staging):
            os.chmod(folder, 0o755)
        for inside, snapshot in LINKS.items():
            link = staging / inside
            if link.is_dir() and not link.is_symlink():
                link.rmdir()
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to((vendor / snapshot).resolve())
        subprocess.run([sys.executable, str(HERE / "executorch_build_variables.py"), str(staging)], check=True,
                       stdout=subprocess.DEVNULL)
        (staging / ".zoo-vendor-done").write_text("")
        subprocess.run(["rm", "-rf", str(tree)], check=True)
        staging.rename(tree)
    return {"EXECUTORCH_SOURCE_DIR": str(tree), "ETHOS_U_DRIVER_DIR": str((vendor / "ethos-u-core-driver").resolve()),
            "CMSIS_DIR": str((vendor / "cmsis_6").resolve())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dest", type=Path)
    parser.add_argument("--vendor", type=Path, default=HERE.parent.parent / "shared" / "vendor")
    args = parser.parse_args()
    print(json.dumps(lay_out(args.dest, args.vendor), indent=2))


if __name__ == "__main__":
    main()
