"""`zoo fetch` / `zoo build` end to end: real compiles, the cache, headers, determinism.

Compiles are shared through session fixtures; mv2 (random weights) compiles
only where the issue's flows ask for it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import BUILDS, run_probed, run_zoo
from tests.firmware.test_c_header import array_bytes
from tests.split_model import SPLIT_MODEL
from zoo import Artifact, Zoo

pytestmark = pytest.mark.compile

@pytest.mark.parametrize(("model", "target"), BUILDS)
def test_every_builtin_builds(built: dict[tuple[str, str], Artifact], model: str, target: str) -> None:
    art = built[(model, target)]
    pte = art.pte.read_bytes()
    assert pte[4:8] == b"ET12"
    m = art.manifest
    assert m.file("pte").size == len(pte)  # type: ignore[union-attr]
    assert array_bytes(art.header) == pte
    assert art.model_asm is not None and art.model_asm.parent == art.pte.parent
    if target == "portable":
        assert m.vela is None and b"vela_bin_stream" not in pte
        return
    assert m.key_inputs["target"]["accelerator"].startswith("ethos-u")
    total = m.vela["total"]  # type: ignore[index]
    assert total["npu_cycles"] > 0 and total["inference_time_ms"] > 0
    assert m.calibration["samples"] >= 1  # type: ignore[index]
    assert m.delegation["partitions"] >= 1
    assert f'#define MODEL_PTE_SYSTEM_CONFIG "{m.key_inputs["target"]["system_config"]}"' in art.header.read_text()


def test_imx93_flow_uses_the_nxp_configuration(built: dict[tuple[str, str], Artifact]) -> None:
    pte = built[("mv2", "imx93")].pte.read_bytes()
    assert b"--accelerator-config=ethos-u65-256" in pte
    assert b"--system-config=Ethos_U65_High_End" in pte and b"--memory-mode=Shared_Sram" in pte


def test_mnist_labels_and_cpu_operators(built: dict[tuple[str, str], Artifact]) -> None:
    m = built[("mnist", "u55-128")].manifest
    assert m.labels == [str(d) for d in range(10)]
    assert "quantized_decomposed::quantize_per_tensor.out" in m.cpu_operators
    labels = built[("mnist", "u55-128")].manifest.file("labels_header")
    assert labels is not None


def test_portable_runs_on_host_and_matches_float(built: dict[tuple[str, str], Artifact]) -> None:
    import torch
    from executorch.runtime import Runtime

    from zoo.plugins import mnist

    art = built[("mnist", "portable")]
    spec = mnist.spec()
    model = spec.build("mnist")
    sample = spec.example_inputs()
    program = Runtime.get().load_program(art.pte.read_bytes())
    out = program.load_method("forward").execute(list(sample))[0]
    torch.testing.assert_close(out, model(*sample), rtol=1e-4, atol=1e-4)


def test_cache_hit_is_light_and_returns_the_same_bytes(built: dict[tuple[str, str], Artifact], use_shared_cache: Path) -> None:
    proc = run_probed("fetch", "mnist", "--target", "u55-128", "--json")
    assert proc.returncode == 0, proc.stderr
    assert proc.loaded == []
    data = json.loads(proc.stdout)
    assert data["source"] == "cache"
    assert Path(data["pte"]).read_bytes() == built[("mnist", "u55-128")].pte.read_bytes()


def test_output_dir_gets_pte_header_manifest_and_labels(built: dict[tuple[str, str], Artifact], use_shared_cache: Path, tmp_path: Path) -> None:
    out = tmp_path / "fw"
    proc = run_zoo("fetch", "mnist", "-t", "u55-128", "-o", str(out), "--labels-header", "--header-name", "mnist_model", "--header-section", ".rodata.model")
    assert proc.returncode == 0, proc.stderr
    names = sorted(p.name for p in out.iterdir())
    assert names == ["manifest.json", "mnist_labels.h", "mnist_u55-128.h", "mnist_u55-128.pte", "mnist_u55-128.s",
                     "mnist_u55-128_io.c", "mnist_u55-128_io.h"]
    header = (out / "mnist_u55-128.h").read_text()
    assert '.section ".rodata.model"' in (out / "mnist_u55-128.s").read_text()
    assert "mnist_model[MNIST_MODEL_LEN]" in header and "#ifndef MNIST_MODEL_H_" in header
    assert array_bytes(out / "mnist_u55-128.h", "mnist_model") == (out / "mnist_u55-128.pte").read_bytes()
    assert '"7",' in (out / "mnist_labels.h").read_text()
    assert proc.stdout.split() == [str(out / "mnist_u55-128.pte"), str(out / "mnist_u55-128.h"),
                                   str(out / "mnist_u55-128.s"), str(out / "mnist_u55-128_io.h"),
                                   str(out / "mnist_u55-128_io.c"), str(out / "mnist_labels.h")]


def test_rebuild_from_scratch_is_byte_identical(built: dict[tuple[str, str], Artifact], tmp_path: Path) -> None:
    """A fresh process with an empty cache gives the same .pte and header bytes."""
    fresh = tmp_path / "fresh-cache"
    proc = run_zoo("build", "mnist", "-t", "u55-128", "--json", env={"ZOO_CACHE_DIR": str(fresh)})
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    original = built[("mnist", "u55-128")]
    assert data["key"] == original.key
    assert Path(data["pte"]).read_bytes() == original.pte.read_bytes()
    assert Path(data["header"]).read_bytes() == original.header.read_bytes()


def test_corrupt_cache_entry_is_detected_and_rebuilt(built: dict[tuple[str, str], Artifact], shared_cache: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache-copy"
    shutil.copytree(shared_cache, cache)
    env = {"ZOO_CACHE_DIR": str(cache)}
    first = json.loads(run_zoo("fetch", "add", "-t", "u55-128", "--json", env=env).stdout)
    pte = Path(first["pte"])
    good = pte.read_bytes()
    pte.write_bytes(good[:100] + bytes([good[100] ^ 0xFF]) + good[101:])
    proc = run_zoo("fetch", "add", "-t", "u55-128", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "is corrupt: add_u55-128.pte has sha256" in proc.stderr and "building again" in proc.stderr
    data = json.loads(proc.stdout)
    assert data["source"] == "build"
    assert Path(data["pte"]).read_bytes() == good


def test_two_concurrent_fetches_build_once(tmp_path: Path) -> None:
    env = {**os.environ, "ZOO_CACHE_DIR": str(tmp_path / "race")}
    procs = [
        subprocess.Popen([sys.executable, "-m", "zoo", "fetch", "softmax", "-t", "u55-64", "--json"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    results = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), [r[1] for r in results]
    sources = sorted(json.loads(out)["source"] for out, _ in results)
    assert sources == ["build", "cache"]
    assert len({Path(json.loads(out)["pte"]).read_bytes() for out, _ in results}) == 1


def test_key_changes_with_what_changes_the_bytes() -> None:
    zoo = Zoo()
    base = zoo.request("mnist", "u55-128").key()
    assert zoo.request("mnist", "u55-128", weights="random").key() != base
    assert zoo.request("mnist", "u55-128", memory_mode="Sram_Only").key() != base
    assert zoo.request("mnist", "u55-64").key() != base
    assert zoo.request("mnist", "corstone-300").key() == base  # same accelerator and options: same bytes


def test_no_build_fails_clearly_when_nothing_is_cached() -> None:
    proc = run_zoo("fetch", "add", "-t", "u55-32", "--no-build")
    assert proc.returncode == 1
    assert "not in the cache" in proc.stderr and "--no-build" in proc.stderr


def test_mv2_imagenet_weights_offline_error_says_what_to_do(tmp_path: Path) -> None:
    proc = run_zoo("fetch", "mv2", "-t", "u55-128", env={"TORCH_HOME": str(tmp_path / "torch-home")})
    assert proc.returncode == 1
    assert "--weights random" in proc.stderr
    assert not list((tmp_path / "cache").rglob("*.pte"))
    # --offline: refused before any download starts (torch would first print "Downloading:"), and the error says so.
    offline = run_zoo("fetch", "mv2", "-t", "u55-128", "--offline", env={"TORCH_HOME": str(tmp_path / "torch-home")})
    said = " ".join(offline.stderr.split())
    assert offline.returncode == 1 and "--weights random" in said
    assert "zoo is offline (--offline, offline in zoo.toml or ZOO_OFFLINE) and " in said
    assert "mobilenet_v2-b0353104.pth is not in torch's hub cache, so nothing was downloaded" in said
    assert "Downloading" not in offline.stdout + offline.stderr




def test_model_file_that_splits_builds_with_a_cpu_fallback_warning(tmp_path: Path) -> None:
    path = tmp_path / "split_net.py"
    path.write_text(SPLIT_MODEL)
    proc = run_zoo("--model-file", str(path), "fetch", "-t", "u55-128", "--json", "-o", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    assert "zoo: warning: partial CPU fallback" in proc.stderr and "aten.avg_pool2d.default" in proc.stderr
    manifest = json.loads(proc.stdout)["manifest"]
    assert manifest["delegation"]["partitions"] == 2
    assert manifest["delegation"]["cpu_op_names"] == ["aten.avg_pool2d.default"]
    assert len(manifest["vela"]["partitions"]) == 2
    assert "not included" in manifest["vela"]["note"]
    assert len(manifest["build"]["payloads"]) == 2
    assert manifest["calibration"]["samples"] == 4
    assert (tmp_path / "out" / "split_net_u55-128.pte").is_file()


def test_failed_build_leaves_no_output_or_cache_entry(tmp_path: Path) -> None:
    path = tmp_path / "wide.py"
    path.write_text("import torch\nModelUnderTest = torch.nn.Linear(70000, 4)\nModelInputs = (torch.rand(1, 70000),)\n")
    out = tmp_path / "out"
    proc = run_zoo("--model-file", str(path), "fetch", "-t", "u55-128", "-o", str(out))
    assert proc.returncode == 1
    assert "model 'wide'" in proc.stderr and "ethos-u55-128" in proc.stderr and "lowering failed" in proc.stderr
    assert not out.exists() or not list(out.iterdir())
    assert not list((tmp_path / "cache").rglob("*.pte"))
    # What is left is the failure's record (it fails the same way every time), never an entry.
    files = [p for p in (tmp_path / "cache").rglob("*") if p.is_file() and p.suffix not in (".lock",)]
    assert [p.parent.parent.name for p in files] == ["failures"]
    assert json.loads(files[0].read_text())["stage"] == "lower"
    again = run_zoo("--model-file", str(path), "fetch", "-t", "u55-128")
    assert again.returncode == 1 and "an earlier build failed and was recorded" in again.stderr
