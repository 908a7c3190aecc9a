"""Variants of one model and target in the open (issue 23): ``-o`` never replaces another
variant's files without ``--force``, and ``zoo cache ls`` and ``zoo report`` show what tells
them apart. On the shared mnist int8 and pixels builds (cache hits, no compile)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_zoo
from zoo import Artifact

pytestmark = pytest.mark.compile


def test_another_variant_is_refused_in_one_output_folder_until_forced(
    mnist_io_builds: dict[str, Artifact], shared_cache: Path, tmp_path: Path
) -> None:
    env = {"ZOO_CACHE_DIR": str(shared_cache)}
    out = tmp_path / "fw"
    first = run_zoo("fetch", "mnist", "-t", "u55-128", "--io", "int8", "--no-build", "-o", str(out), env=env)
    assert first.returncode == 0, first.stderr
    header = (out / "mnist_u55-128.h").read_bytes()
    again = run_zoo("fetch", "mnist", "-t", "u55-128", "--io", "int8", "--no-build", "-o", str(out),
                    "--header-name", "mnist_int8", env=env)
    assert again.returncode == 0, again.stderr  # the same artifact, other names: replaced
    other = run_zoo("fetch", "mnist", "-t", "u55-128", "--io", "pixels", "--no-build", "-o", str(out), env=env)
    assert other.returncode != 0
    assert (f"-o {out}: mnist_u55-128.pte there belongs to another artifact (mnist for ethos-u55-128: "
            "weights mnist, io int8, memory mode Shared_Sram; key") in other.stderr
    assert "this is mnist for ethos-u55-128 (weights mnist, io pixels" in other.stderr
    assert "Pass --force to replace it, or choose another -o folder" in other.stderr
    assert "#ifndef MNIST_INT8_H_" in (out / "mnist_u55-128.h").read_text()  # untouched
    forced = run_zoo("fetch", "mnist", "-t", "u55-128", "--io", "pixels", "--no-build", "-o", str(out), "--force",
                     env=env)
    assert forced.returncode == 0, forced.stderr
    assert (out / "mnist_u55-128.h").read_bytes() == mnist_io_builds["mnist pixels"].header.read_bytes() != header


def test_cache_ls_and_report_show_the_io_of_each_variant(mnist_io_builds: dict[str, Artifact],
                                                         shared_cache: Path) -> None:
    env = {"ZOO_CACHE_DIR": str(shared_cache)}
    listed = run_zoo("cache", "ls", env=env)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines()[0].split() == ["key", "model", "target", "weights", "precision", "io", "memory",
                                                     ".pte", "built"]
    rows = [line.split() for line in listed.stdout.splitlines()[1:]]
    for art, io in ((mnist_io_builds["mnist int8"], "int8"), (mnist_io_builds["mnist pixels"], "pixels")):
        row = next(r for r in rows if r[0] == art.key[:12])
        assert row[1:7] == ["mnist", art.manifest.target, "mnist", "int8", io, "Shared_Sram"]
    report = run_zoo("report", "mnist", env=env)
    assert report.returncode == 0, report.stderr
    head = report.stdout.splitlines()[0]
    assert "SRAM budget" in head and "I/O" in head and "memory mode" in head
