"""Integer I/O, NHWC and camera pixels (``--io``, ``--layout``).

The fast tests check choices and build keys without compiling. The compile
tier builds mnist with int8 and pixels I/O for u55-128 (the float build comes
from the shared ``built`` fixture) and a tiny RGB plugin model (tests/rgb_plugin.py)
for what a one-channel model cannot show: NHWC.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, run_probed, run_zoo
from zoo import Artifact, UsageError, Zoo
from zoo.registry.firmware.c_header import DEFINE
from zoo.registry.pte.pte_structure import read_pte
from zoo.registry.pte.vela_payload import find_payloads
from zoo.registry.request.io_boundary import DIM_ORDERS, ROUNDING
from zoo.registry.verify.structure_check import Expected, check_structure

RGB = {"ZOO_PLUGINS": "tests.rgb_plugin", "PYTHONPATH": str(ROOT)}


@pytest.fixture
def rgb(monkeypatch: pytest.MonkeyPatch) -> Zoo:
    monkeypatch.setenv("ZOO_PLUGINS", "tests.rgb_plugin")
    return Zoo()


# --- choices and keys: no compile ---------------------------------------------------------------


def _key(zoo: Zoo, model: str, target: str = "u55-128", **kw: Any) -> str:
    return zoo.request(model, target, **kw).key()


def test_every_io_choice_changes_the_key_and_the_default_keeps_the_old_one(rgb: Zoo) -> None:
    choices = [{}, {"io": "int8"}, {"io": "uint8"}, {"io": "pixels"}, {"layout": "nhwc"},
               {"io": "int8", "layout": "nhwc"}, {"io": "pixels", "layout": "nchw"}]
    keys = [_key(rgb, "rgb-tiny", **c) for c in choices]
    assert len(set(keys)) == len(keys)
    # pixels defaults to NHWC where the model takes it: the same build as asking for it.
    assert _key(rgb, "rgb-tiny", io="pixels") == _key(rgb, "rgb-tiny", io="pixels", layout="nhwc")
    # ExecuTorch's default boundary adds nothing to the key, so earlier builds keep theirs.
    request = rgb.request("mnist", "u55-128", io="float", layout="nchw")
    assert "io" not in request.key_inputs()
    assert request.key() == rgb.request("mnist", "u55-128").key()
    assert rgb.request("mnist", "u55-128", io="int8").key_inputs()["io"] == {"mode": "int8", "layout": "nchw"}


def test_zoo_toml_default_io_applies_to_npu_targets_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "zoo.toml").write_text('default_io = "int8"\n')
    zoo = Zoo()
    assert zoo.request("mnist", "u55-128").boundary.mode == "int8"
    assert zoo.request("mnist", "u55-128", io="float").boundary.mode == "float"
    assert zoo.request("mnist", "portable").boundary.mode == "float"
    (tmp_path / "zoo.toml").write_text('default_io = "int4"\n')
    with pytest.raises(Exception, match=r"zoo.toml: key 'default_io' must be one of float, int8, uint8, pixels, got 'int4'"):
        Zoo().request("mnist", "u55-128")


@pytest.mark.parametrize(("model", "target", "kw", "message"), [
    ("mnist", "u55-128", {"layout": "nhwc"}, r"input 'image' \[1, 1, 28, 28\] is not a multi-channel image"),
    ("mnist", "portable", {"io": "int8"}, r"portable target runs 'mnist' in float"),
    ("add", "u55-128", {"io": "pixels"}, r"--io pixels needs a model with one image input; 'add' has 2 inputs"),
    ("softmax", "u55-128", {"io": "pixels"}, r"--io pixels needs an image input"),
    ("mnist", "u55-128", {"io": "int4"}, r"--io 'int4' is not an I/O mode"),
])
def test_impossible_boundaries_are_refused_with_the_reason(
    rgb: Zoo, model: str, target: str, kw: dict[str, str], message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        rgb.request(model, target, **kw)


def test_the_cli_names_the_io_modes() -> None:
    proc = run_zoo("fetch", "mnist", "-t", "u55-128", "--io", "int4", "--no-build")
    assert proc.returncode == 2
    assert "'int4' is not one of 'float', 'int8', 'uint8', 'pixels'" in proc.stderr


# --- real builds ----------------------------------------------------------------------------------


def _fetch(zoo: Zoo, model: str, **kw: Any) -> Artifact:
    return zoo.fetch(model, "u55-128", verify=True, **kw)


@pytest.fixture(scope="session")
def io_builds(shared_cache: Path, mnist_io_builds: dict[str, Artifact],
              tmp_path_factory: pytest.TempPathFactory) -> dict[str, Artifact]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOO_CACHE_DIR", str(shared_cache))
        mp.setenv("ZOO_PLUGINS", "tests.rgb_plugin")
        mp.delenv("ZOO_CONFIG", raising=False)
        mp.chdir(tmp_path_factory.mktemp("io-builds"))
        zoo = Zoo()
        return {
            **mnist_io_builds,
            "rgb float": _fetch(zoo, "rgb-tiny"),
            "rgb int8 nhwc": _fetch(zoo, "rgb-tiny", io="int8", layout="nhwc"),
            "rgb pixels": _fetch(zoo, "rgb-tiny", io="pixels"),
        }


def _payloads(art: Artifact) -> list[bytes]:
    pte = art.pte.read_bytes()
    return [pte[p.offset:p.offset + p.length] for p in find_payloads(pte)]


@pytest.mark.compile
def test_int8_io_leaves_the_cpu_nothing_and_the_npu_the_same_payload(
    io_builds: dict[str, Artifact], built: dict[tuple[str, str], Artifact]
) -> None:
    art, float_build = io_builds["mnist int8"], built[("mnist", "u55-128")]
    info = read_pte(art.pte.read_bytes())
    assert info.operators == [] and art.manifest.cpu_operators == []
    assert read_pte(float_build.pte.read_bytes()).operators  # the float build keeps its boundary kernels
    assert _payloads(art) == _payloads(float_build)
    io = art.manifest.io
    assert io is not None and io["mode"] == "int8"
    (given,), (out,) = io["inputs"], io["outputs"]
    assert (given["dtype"], given["shape"], given["qmin"], given["qmax"]) == ("int8", [1, 1, 28, 28], -128, 127)
    assert out["dtype"] == "int8" and out["scale"] > 0
    assert io["rounding"] == ROUNDING
    numerics = (art.manifest.verification or {})["numerics"]
    assert numerics["passed"], numerics["checks"]
    assert art.verification is not None and art.verification.passed


@pytest.mark.compile
def test_a_retargeted_build_keeps_the_integer_boundary(io_builds: dict[str, Artifact]) -> None:
    lowered, retargeted = io_builds["mnist int8"], io_builds["mnist int8 u55-64"]
    assert retargeted.manifest.build.get("built_with") == ["ethos-u55-128", "ethos-u55-64"]
    assert read_pte(retargeted.pte.read_bytes()).operators == []
    assert retargeted.manifest.io == lowered.manifest.io
    assert _payloads(retargeted) != _payloads(lowered)  # Vela ran again, for the smaller NPU
    assert retargeted.verification is not None and retargeted.verification.passed


@pytest.mark.compile
def test_the_bundle_holds_integer_inputs_and_outputs(io_builds: dict[str, Artifact]) -> None:
    from executorch.devtools.bundled_program.serialize import (
        deserialize_from_flatbuffer_to_bundled_program,
    )

    art = io_builds["mnist int8"]
    assert art.bundle is not None
    case = deserialize_from_flatbuffer_to_bundled_program(art.bundle.read_bytes()).method_test_suites[0].test_cases[0]
    (given,), (expected,) = case.inputs, case.expected_outputs
    assert given.val.scalar_type.name == "CHAR" and list(given.val.sizes) == [1, 1, 28, 28]
    assert expected.val.scalar_type.name == "CHAR"
    bundle = art.manifest.verification["bundle"]  # type: ignore[index]
    assert (bundle["atol"], bundle["rtol"]) == (1.0, 0.0)  # one integer step


@pytest.mark.compile
def test_pixels_classify_the_held_out_digits_as_well_as_float(io_builds: dict[str, Artifact]) -> None:
    art = io_builds["mnist pixels"]
    (given,) = art.manifest.io["inputs"]  # type: ignore[index]
    assert (given["dtype"], given["scale"], given["zero_point"]) == ("uint8", 1 / 255, 0)
    assert read_pte(art.pte.read_bytes()).operators == []
    (accuracy,) = art.manifest.verification["numerics"]["metrics"]  # type: ignore[index]
    assert accuracy["dataset"] == "evaluation" and accuracy["samples"] == 1000
    assert abs(accuracy["float"] - accuracy["program"]) <= 1.0, accuracy


@pytest.mark.compile
def test_nhwc_input_is_channels_last_in_the_pte_and_the_manifest(io_builds: dict[str, Artifact]) -> None:
    for name in ("rgb int8 nhwc", "rgb pixels"):
        art = io_builds[name]
        plan = read_pte(art.pte.read_bytes()).plans[0]
        tensor = plan.tensor(plan.inputs[0])
        assert tensor is not None and tensor.dim_order == DIM_ORDERS["nhwc"], name
        assert art.manifest.io["inputs"][0]["dim_order"] == [0, 2, 3, 1]  # type: ignore[index]
        assert art.manifest.cpu_operators == []
        assert art.manifest.verification["numerics"]["passed"], name  # type: ignore[index]
    assert io_builds["rgb pixels"].manifest.io["inputs"][0]["dtype"] == "uint8"  # type: ignore[index]
    float_plan = read_pte(io_builds["rgb float"].pte.read_bytes()).plans[0]
    assert float_plan.tensor(float_plan.inputs[0]).dim_order == DIM_ORDERS["nchw"]  # type: ignore[union-attr]


@pytest.mark.compile
def test_the_header_compiles_and_its_io_macros_are_the_ptes(io_builds: dict[str, Artifact], tmp_path: Path) -> None:
    art = io_builds["rgb int8 nhwc"]
    defines = dict(DEFINE.findall(art.header.read_text()))
    constants = read_pte(art.pte.read_bytes()).constant_methods()
    program = tmp_path / "io.c"
    program.write_text(
        f'#include <stdio.h>\n#include "{art.header}"\n'
        'int main(void) { printf("%.17g %d %d %d %.17g %d %s %s %d %d %d %d %d\\n", '
        "MODEL_PTE_INPUT0_SCALE, MODEL_PTE_INPUT0_ZERO_POINT, MODEL_PTE_INPUT0_QMIN, MODEL_PTE_INPUT0_QMAX, "
        "MODEL_PTE_OUTPUT0_SCALE, MODEL_PTE_OUTPUT0_ZERO_POINT, MODEL_PTE_INPUT0_DTYPE, MODEL_PTE_INPUT0_LAYOUT, "
        "MODEL_PTE_INPUT0_DIM0, MODEL_PTE_INPUT0_DIM1, MODEL_PTE_INPUT0_DIM2, MODEL_PTE_INPUT0_DIM3, "
        "MODEL_PTE_INPUT0_ELEMENTS); return 0; }\n"
    )
    subprocess.run(["gcc", "-Wall", "-Werror", "-o", str(tmp_path / "io"), str(program)], check=True)
    printed = subprocess.run([str(tmp_path / "io")], check=True, capture_output=True, text=True).stdout.split()
    assert abs(float(printed[0]) - constants["input0_scale"]) <= constants["input0_scale"] * 2**-24  # a float literal
    assert [int(v) for v in printed[1:4]] == [constants[f"input0_{k}"] for k in ("zp", "quant_min", "quant_max")]
    assert abs(float(printed[4]) - constants["output0_scale"]) <= constants["output0_scale"] * 2**-24
    assert int(printed[5]) == constants["output0_zp"]
    assert printed[6:8] == ["int8", "nhwc"]
    assert [int(v) for v in printed[8:]] == [1, 16, 16, 3, 768]  # memory order: N, H, W, C
    assert defines["MODEL_PTE_IO"] == '"int8"'
    # A float build says what it takes too, without quantization.
    float_defines = dict(DEFINE.findall(io_builds["rgb float"].header.read_text()))
    assert (float_defines["MODEL_PTE_INPUT0_DTYPE"], float_defines["MODEL_PTE_INPUT0_LAYOUT"]) == ('"float32"', '"nchw"')
    assert float_defines["MODEL_PTE_INPUT0_ELEMENTS"] == "768" and "MODEL_PTE_INPUT0_SCALE" not in float_defines


@pytest.mark.compile
def test_the_structure_check_compares_the_boundary_with_the_manifest(io_builds: dict[str, Artifact]) -> None:
    art = io_builds["mnist int8"]
    pte = art.pte.read_bytes()
    assert all(c.passed for c in check_structure(pte, Expected.from_manifest(art.manifest)))
    io = json.loads(json.dumps(art.manifest.io))
    io["inputs"][0]["zero_point"] += 1
    checks = {c.name: c for c in check_structure(pte, Expected(io=io))}
    assert not checks["io_boundary"].passed
    assert re.search(r"input 'image' zero_point is -?\d+ in the \.pte; the manifest says", checks["io_boundary"].detail)
    # A float .pte handed out as an int8 build: the CPU still has work, and the input is float.
    float_pte = io_builds["rgb float"].pte.read_bytes()
    wrong = {**io_builds["rgb float"].manifest.io, "mode": "int8"}  # type: ignore[dict-item]
    detail = {c.name: c for c in check_structure(float_pte, Expected(io=wrong))}["io_boundary"].detail
    assert "is float32 without quantization parameters" in detail and "operator table holds" in detail


@pytest.mark.compile
def test_the_summary_says_what_the_cpu_must_run(io_builds: dict[str, Artifact]) -> None:
    from zoo.cli.format import _summary

    assert "7 on the NPU in 1 partition(s); 2 on the CPU (2 quantize/dequantize at the boundary" in _summary(io_builds["rgb float"], layouts=("nchw", "nhwc"))
    text = _summary(io_builds["rgb int8 nhwc"], layouts=("nchw", "nhwc"))
    assert "; 0 on the CPU; no kernels to link" in text
    assert re.search(r"I/O \(int8\): image int8 \[1, 16, 16, 3\] NHWC, scale [\d.e-]+, zero point -?\d+", text)


@pytest.mark.compile
def test_the_summary_says_what_int8_io_and_nhwc_would_save_and_nothing_once_used(
    io_builds: dict[str, Artifact], built: dict[tuple[str, str], Artifact]
) -> None:
    from zoo.cli.format import _summary

    def saving(art: Artifact, layouts: tuple[str, ...]) -> list[str]:
        return [line for line in _summary(art, layouts=layouts).splitlines() if " would save " in line]

    rgb = io_builds["rgb float"]
    assert rgb.manifest.vela is not None
    rows = rgb.manifest.vela["partitions"][0]["input_transposes"]
    cycles = sum(r["cycles"] for r in rows)
    assert rows and cycles > 0  # its (1, 3, 16, 16) NCHW input, transposed on the NPU
    (line,) = saving(rgb, ("nchw", "nhwc"))
    assert line.startswith(f"  --io int8 --layout nhwc would save {len(rows)} transpose operator(s) on the NPU "
                           f"({cycles:,} cycles, ")
    assert line.endswith(" and 2 quantize/dequantize operator(s) on the CPU")
    best = io_builds["rgb int8 nhwc"]
    assert best.manifest.vela is not None and best.manifest.vela["partitions"][0]["input_transposes"] == []
    assert saving(best, ("nchw", "nhwc")) == []
    # mnist has one channel, so no NHWC; its two transposes are inside the network (before the flatten).
    mnist = built[("mnist", "u55-128")]
    assert mnist.manifest.vela is not None and mnist.manifest.vela["partitions"][0]["input_transposes"] == []
    assert saving(mnist, ("nchw",)) == ["  --io int8 would save 2 quantize/dequantize operator(s) on the CPU"]
    assert saving(io_builds["mnist int8"], ("nchw",)) == []


@pytest.mark.compile
def test_a_cache_hit_says_what_nhwc_would_save_without_torch(io_builds: dict[str, Artifact], shared_cache: Path) -> None:
    rgb = io_builds["rgb float"]
    assert rgb.manifest.vela is not None
    rows = rgb.manifest.vela["partitions"][0]["input_transposes"]
    cycles = sum(r["cycles"] for r in rows)
    env = {**RGB, "ZOO_CACHE_DIR": str(shared_cache)}
    proc = run_probed("fetch", "rgb-tiny", "-t", "u55-128", "--no-build", env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.loaded == []
    assert f"  --io int8 --layout nhwc would save {len(rows)} transpose operator(s) on the NPU ({cycles:,} cycles, " in proc.stderr
    proc = run_probed("fetch", "rgb-tiny", "-t", "u55-128", "--io", "int8", "--layout", "nhwc", "--no-build", env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.loaded == [] and " would save " not in proc.stderr


@pytest.mark.compile
def test_rebuilds_are_byte_identical(io_builds: dict[str, Artifact], tmp_path: Path) -> None:
    art = io_builds["rgb pixels"]
    proc = run_zoo("build", "rgb-tiny", "-t", "u55-128", "--io", "pixels", "--json",
                   env={**RGB, "ZOO_CACHE_DIR": str(tmp_path / "fresh")})
    assert proc.returncode == 0, proc.stderr
    again = json.loads(proc.stdout)
    assert again["key"] == art.key
    for path, kind in ((art.pte, "pte"), (art.header, "header")):
        assert hashlib.sha256(Path(again[kind]).read_bytes()).hexdigest() == hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.compile
def test_report_compares_the_cpu_work_of_each_boundary(io_builds: dict[str, Artifact], use_shared_cache: Path) -> None:
    proc = run_zoo("report", "rgb-tiny", "--json", env=RGB)
    assert proc.returncode == 0, proc.stderr
    rows = {(r["io"], tuple(r["cpu_kernels"])): r for r in json.loads(proc.stdout)["rows"]}
    assert rows[("float", ("quantized_decomposed::dequantize_per_tensor.out", "quantized_decomposed::quantize_per_tensor.out"))]["cpu_run"] == 2
    assert rows[("int8 nhwc", ())]["cpu_run"] == 0 and rows[("pixels nhwc", ())]["cpu_run"] == 0
    text = run_zoo("report", "rgb-tiny", env=RGB).stdout
    assert "I/O" in text and "CPU ops" in text


@pytest.mark.compile
def test_pixels_take_features_normalised_per_coefficient(shared_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An MFCC-like model declares its statistics along the last axis (tests/feature_plugin.py):
    the pixels program takes the 8-bit features, normalises them on the NPU, and names its output."""
    import torch

    from tests import feature_plugin
    from zoo.registry.compile.boundary import _pixels_model, to_unit_range

    monkeypatch.setenv("ZOO_CACHE_DIR", str(shared_cache))
    monkeypatch.setenv("ZOO_PLUGINS", "tests.feature_plugin")
    zoo = Zoo()
    spec = zoo.model("features-tiny")
    model = feature_plugin._build("seeded")
    wrapped = _pixels_model(model, feature_plugin.MEAN, feature_plugin.STD, 3, 4)
    with torch.no_grad():
        for sample in feature_plugin._features()[:4]:
            (unit,) = to_unit_range(sample, spec)
            assert torch.allclose(wrapped(unit), model(*sample), atol=1e-5)
    art = _fetch(zoo, "features-tiny", io="pixels")
    io = art.manifest.io or {}
    (given,), (out,) = io["inputs"], io["outputs"]
    assert (given["name"], given["dtype"], given["scale"], given["zero_point"]) == ("mfcc", "uint8", 1 / 255, 0)
    assert out["name"] == "scores" and read_pte(art.pte.read_bytes()).operators == []
    assert art.manifest.verification["numerics"]["passed"]  # type: ignore[index]
    macros = dict(DEFINE.findall(art.header.read_text()))
    assert (macros["MODEL_PTE_INPUT_MFCC"], macros["MODEL_PTE_OUTPUT_SCORES"]) == ("0", "0")
