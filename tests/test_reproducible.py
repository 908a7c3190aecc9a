"""The same bytes whatever the host CPU (issue 19): builds run in a numerics mode whose
kernels have no runtime dispatch (``zoo/registry/request/reproducible.py``).

A host's CPU is emulated by what picks the kernels: ``ATEN_CPU_CAPABILITY`` for
ATen, ``MKL_ENABLE_INSTRUCTIONS`` for MKL, ``ONEDNN_MAX_CPU_ISA`` for oneDNN.
``benchmarks/cross_cpu.py`` runs the long comparison (mv2, training, four profiles).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from zoo.registry.request import reproducible

if TYPE_CHECKING:
    from zoo import Artifact

ANOTHER_HOST = {"MKL_ENABLE_INSTRUCTIONS": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"}


def _unpinned_env(**extra: str) -> dict[str, str]:
    """This process pinned the mode for its own builds (tests/conftest.py); a child starts
    as a user's shell would, at the host's best kernels."""
    env = {k: v for k, v in os.environ.items() if k not in ("ATEN_CPU_CAPABILITY", "MKL_CBWR")}
    return {**env, **extra}


def _python(code: str, env: dict[str, str]) -> dict[str, object]:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                          timeout=120, check=True)
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.stack
def test_a_build_process_computes_with_the_kernels_that_have_no_runtime_dispatch() -> None:
    seen = _python("""
        import json, warnings
        from zoo.registry.request import reproducible
        reproducible.pin()
        import torch
        torch.ones(3).sum()
        problem = reproducible.established()
        before = (torch.get_num_threads(), torch.backends.mkldnn.enabled, torch._C._get_nnpack_enabled())
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            with reproducible.numerics(torch, "test"):
                inside = (torch.get_num_threads(), torch.backends.mkldnn.enabled, torch._C._get_nnpack_enabled())
        after = (torch.get_num_threads(), torch.backends.mkldnn.enabled, torch._C._get_nnpack_enabled())
        print(json.dumps({"capability": torch.backends.cpu.get_cpu_capability(), "problem": problem,
                          "mkl": reproducible._mkl_branch(torch), "inside": inside, "same": before == after,
                          "warned": [str(w.message) for w in warned]}))
    """, _unpinned_env(ATEN_CPU_CAPABILITY="avx2", **ANOTHER_HOST))
    assert seen["capability"] == "DEFAULT" and seen["problem"] is None
    assert seen["mkl"] == 3  # MKL_CBWR_COMPATIBLE, whatever MKL_ENABLE_INSTRUCTIONS asked for
    assert seen["inside"] == [1, False, False] and seen["same"]
    assert seen["warned"] == []  # torch's TF32-on-oneDNN UserWarning is not the user's business


@pytest.mark.stack
def test_a_process_where_torch_already_chose_its_kernels_refuses_to_build() -> None:
    seen = _python("""
        import json
        import torch
        torch.ones(3).sum()  # the capability is fixed now
        from zoo import BuildError
        from zoo.registry.request import reproducible
        try:
            with reproducible.numerics(torch, "model 'mnist'"):
                message = None
        except BuildError as exc:
            message = str(exc)
        print(json.dumps({"message": message, "capability": torch.backends.cpu.get_cpu_capability()}))
    """, _unpinned_env())
    if seen["capability"] == "DEFAULT":
        pytest.skip("this host's best kernels are the baseline ones")
    message = str(seen["message"])
    assert f"torch already runs its {seen['capability']} kernels in this process" in message
    assert "model 'mnist'" in message and "ATEN_CPU_CAPABILITY=default" in message


def test_the_mode_is_in_every_build_key() -> None:
    from zoo import Zoo

    inputs = Zoo().request("add", "u55-128").key_inputs()
    assert inputs["float_numerics"] == reproducible.MODE
    assert inputs["float_numerics"]["aten_cpu_capability"] == "default" and inputs["float_numerics"]["mkldnn"] is False


@pytest.mark.compile
def test_mnist_builds_the_same_bytes_on_another_cpu(built: dict[tuple[str, str], Artifact], tmp_path: Path) -> None:
    """The session's build (pinned in-process) against a fresh CLI process that starts at
    the host's best ATen kernels and AVX2 MKL and oneDNN."""
    env = _unpinned_env(ZOO_CACHE_DIR=str(tmp_path / "cache"), **ANOTHER_HOST)
    subprocess.run([sys.executable, "-m", "zoo", "build", "mnist", "-t", "u55-128", "-o", str(tmp_path / "out"),
                    "--quiet"], env=env, check=True, capture_output=True, timeout=600)
    there = hashlib.sha256((tmp_path / "out" / "mnist_u55-128.pte").read_bytes()).hexdigest()
    assert there == hashlib.sha256(built["mnist", "u55-128"].pte.read_bytes()).hexdigest()
    # zoo verify on this host lowers the other host's artifact again to run the numerics:
    # it needs the same bytes, and records them for that very artifact.
    proc = subprocess.run([sys.executable, "-m", "zoo", "verify", "mnist", "-t", "u55-128", "--json"],
                          env=_unpinned_env(ZOO_CACHE_DIR=str(tmp_path / "cache")), capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["passed"] and report["numerics"]["passed"]
    [manifest] = (tmp_path / "cache").rglob("entries/*/*/manifest.json")
    assert next(f["sha256"] for f in json.loads(manifest.read_text())["files"] if f["kind"] == "pte") == there


GOLDEN = Path(__file__).resolve().parent / "data" / "golden_pte.json"


@pytest.mark.compile
@pytest.mark.parametrize("target", ["u55-128", "u85-256"])
def test_mnist_builds_the_bytes_recorded_on_another_host(built: dict[tuple[str, str], Artifact], target: str) -> None:
    """Emulating CPUs on one host is not proof: these digests were built on another machine
    (``recorded_on``), and CI's runners are Intel and AMD. Remake them with
    scripts/record_golden_pte.py after a toolchain upgrade, not after a mismatch."""
    from zoo.registry.request.keys import tool_versions

    golden = json.loads(GOLDEN.read_text())
    if golden["tools"] != tool_versions():
        pytest.fail(f"{GOLDEN} was recorded with {golden['tools']}, this install has {tool_versions()}: "
                    "run scripts/record_golden_pte.py after a toolchain upgrade")
    here = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                 if line.startswith("model name")), "an unknown CPU")
    got = hashlib.sha256(built["mnist", target].pte.read_bytes()).hexdigest()
    assert got == golden["pte_sha256"][f"mnist/{target}"], (
        f"mnist for {target}: {here} built other bytes than {golden['recorded_on']} did; "
        "something in the build depends on the host CPU")
