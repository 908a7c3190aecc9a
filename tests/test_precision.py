"""``--precision``: int8 (the default, with the keys it always had) and a16w8.

The fast tests check choices, keys and the structure check's precision rule
without compiling. The compile tier builds mnist at a16w8 for u85-256 and
holds it against the int8 build of the shared ``built`` fixture.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import run_zoo
from zoo import Artifact, UsageError, Zoo
from zoo.registry.pte.pte_structure import read_pte
from zoo.registry.request.precision import Precision, check_precision
from zoo.registry.verify.structure_check import Expected, check_structure

# What every build key held before --precision existed: int8 keys must not move.
INT8_BEFORE = {"quantizer": "EthosUQuantizer", "config": "get_symmetric_quantization_config",
               "is_per_channel": True, "is_qat": False}


def test_int8_keeps_the_keys_it_had_and_a16w8_is_another_build() -> None:
    zoo = Zoo()
    default, int8, a16w8 = (zoo.request("mnist", "u55-128", precision=p) for p in (None, "int8", "a16w8"))
    assert default.key_inputs()["quantization"] == INT8_BEFORE
    assert default.key() == int8.key() != a16w8.key()
    assert a16w8.key_inputs()["quantization"] == {**INT8_BEFORE, "config": "get_symmetric_a16w8_quantization_config",
                                                   "precision": "a16w8", "float_ops": ["sqrt"]}
    assert (default.stem, a16w8.stem) == ("mnist_u55-128", "mnist_u55-128_a16w8")


@pytest.mark.parametrize(("target", "kw", "message"), [
    ("portable", {"precision": "a16w8"}, "runs 'mnist' in float on the CPU, so it takes no precision"),
    ("u55-128", {"precision": "a16w8", "io": "int8"}, "which --io int8 does not describe: build it with --io float"),
    ("u55-128", {"precision": "int4"}, "--precision 'int4' is not a precision: choose one of int8, a16w8"),
])
def test_impossible_precisions_are_refused_with_the_reason(target: str, kw: dict[str, str], message: str) -> None:
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Zoo().request("mnist", target, **kw)


@pytest.mark.slow
def test_the_cli_offers_the_precisions_and_zoo_toml_default_io_is_named(tmp_path: Path) -> None:
    assert "--precision int8|a16w8|RECIPE" in run_zoo("fetch", "--help").stdout
    (tmp_path / "zoo.toml").write_text('default_io = "int8"\n')
    result = run_zoo("fetch", "mnist", "-t", "u55-128", "--precision", "a16w8", "--no-build", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "key 'default_io' = 'int8'" in result.stderr and "--io float" in result.stderr


# --- recipes -------------------------------------------------------------------------------------


def test_a_recipe_file_is_read_and_refused_with_what_is_wrong(tmp_path: Path) -> None:
    from zoo import Recipe

    path = tmp_path / "mixed.json"
    path.write_text(Recipe("int8", {"0": "a16w8", "4": "float"}, description="first conv at 16 bits").dumps())
    zoo = Zoo()
    request = zoo.request("mnist", "u55-128", recipe=path)
    assert (request.precision.name, request.stem) == ("mixed", "mnist_u55-128_mixed")
    quantization = request.key_inputs()["quantization"]
    assert quantization["recipe"] == {"default": "int8", "modules": {"0": "a16w8", "4": "float"}}
    assert quantization["float_ops"] == ["sqrt"]  # a16w8 is used, so sqrt stays in float
    # The description is words: it does not change the key.
    path.write_text(Recipe("int8", {"0": "a16w8", "4": "float"}, description="other words").dumps())
    assert zoo.request("mnist", "u55-128", recipe=path).key() == request.key()
    for text, message in [
        ("{", "not JSON: Expecting property name"),
        ('{"default": "int4"}', "default 'int4' must be one of int8, a16w8"),
        ('{"modules": {"0": "int4"}}', "module '0': 'int4' must be one of int8, a16w8, float"),
        ('{"layers": {}}', "unknown key(s) 'layers'"),
        ("[]", "a recipe is a JSON object"),
    ]:
        path.write_text(text)
        with pytest.raises(UsageError, match=re.escape(message)):
            zoo.request("mnist", "u55-128", recipe=path)
    with pytest.raises(UsageError, match="no such file"):
        zoo.request("mnist", "u55-128", recipe=tmp_path / "missing.json")
    with pytest.raises(UsageError, match="not both"):
        zoo.request("mnist", "u55-128", precision="a16w8", recipe=path)


def test_a_recipe_that_is_no_file_or_nests_too_deeply_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "tuned.json"
    os.mkfifo(fifo)
    # Should the read block, a writer gives it "{}" after 3 s, and a recipe (not an error) comes back.
    unblock = threading.Timer(3.0, lambda: _write_if_read(fifo, b"{}"))
    unblock.start()
    started = time.monotonic()
    try:
        with pytest.raises(UsageError, match=re.escape(f"--recipe {fifo}: not a regular file (a pipe, a device or a folder)")):
            Zoo().request("mnist", "u55-128", recipe=fifo)
    finally:
        unblock.cancel()
    assert time.monotonic() - started < 3.0
    with pytest.raises(UsageError, match="not a regular file"):
        Zoo().request("mnist", "u55-128", recipe=tmp_path)
    deep = tmp_path / "deep.json"
    deep.write_text('{"modules": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(UsageError, match=re.escape(f"--recipe {deep}: nested too deeply to be a recipe")):
        Zoo().request("mnist", "u55-128", recipe=deep)


def _write_if_read(fifo: Path, data: bytes) -> None:
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:  # no reader
        return
    with os.fdopen(fd, "wb") as f:
        f.write(data)


@pytest.mark.parametrize(("stem", "suggested"), [("réglage", "reglage"), ("Mixed", "mixed"), ("two words", "two-words"),
                                                  ("first\nsecond", "first-second"), ("_hidden", "hidden")])
def test_a_recipe_file_name_that_cannot_be_a_label_is_refused_before_any_build(tmp_path: Path, stem: str,
                                                                               suggested: str) -> None:
    from zoo import Recipe

    path = tmp_path / f"{stem}.json"
    path.write_text(Recipe("int8", {"0": "a16w8"}).dumps())
    allowed = "may hold only lower-case ASCII letters, digits, '-', '_' and '.', starting with a letter or a digit"
    with pytest.raises(UsageError, match=re.escape(f"--recipe {path}: the file's name {stem!r} becomes the build's "
                                                   "precision label")) as caught:
        Zoo().request("mnist", "u55-128", recipe=path)
    assert allowed in str(caught.value) and str(caught.value).endswith(f"rename it, e.g. {suggested}.json")
    with pytest.raises(UsageError, match=re.escape(f"-o {path}: the file's name {stem!r}")):
        Zoo().tune("mnist", "u55-128", out=path, build=False)  # refused before the search


@pytest.mark.parametrize("stem", ["int8+qat5", "a16w8+qat1", "mixed+qat200", "int8+"])
def test_a_recipe_file_named_like_a_preset_with_qat_is_refused(tmp_path: Path, stem: str) -> None:
    from zoo import Recipe

    path = tmp_path / f"{stem}.json"
    path.write_text(Recipe("int8").dumps())  # a plain int8 recipe: no QAT, whatever the name says
    with pytest.raises(UsageError, match=re.escape(f"--recipe {path}: the file's name {stem!r} would read as a "
                                                   "preset's name with QAT steps")):
        Zoo().request("mnist", "u55-128", recipe=path)


def test_a_recipe_file_named_as_a_preset_is_labelled_as_a_recipe_and_built_at_its_own_precision(tmp_path: Path) -> None:
    from zoo import Recipe

    path = tmp_path / "int8.json"
    path.write_text(Recipe("a16w8").dumps())
    request = Zoo().request("mnist", "u55-128", recipe=path)
    assert (request.precision.name, request.precision.base, request.stem) == ("recipe-int8", "a16w8",
                                                                              "mnist_u55-128_recipe-int8")
    read_back = Precision.from_key(request.key_inputs()["quantization"])
    assert read_back is not None and read_back.base == "a16w8", "the structure check expects the recipe's precision"
    with pytest.raises(UsageError, match=r"the recipe name 'a16w8\+qat1' reads as a preset's"):
        Precision.of_recipe("a16w8+qat1", Recipe("int8"))


def test_a_plugin_declares_recipes_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZOO_PLUGINS", "tests.rgb_plugin")
    zoo = Zoo()
    request = zoo.request("rgb-tiny", "u85-256", precision="first-conv-16")
    assert request.precision.name == "first-conv-16" and request.stem == "rgb-tiny_u85-256_first-conv-16"
    assert request.key_inputs()["quantization"]["recipe"] == {"default": "int8", "modules": {"0": "a16w8"}}
    assert "first-conv-16" in run_zoo("info", "rgb-tiny", env={"ZOO_PLUGINS": "tests.rgb_plugin",
                                                              "PYTHONPATH": str(Path(__file__).parents[1])}).stdout
    with pytest.raises(UsageError, match="or a recipe the model declares"):
        zoo.request("rgb-tiny", "u85-256", precision="first-conv-8")


def test_a_recipe_may_not_take_a_precisions_name() -> None:
    from zoo import Recipe, SpecError
    from zoo.plugins import mnist

    spec = dataclasses.replace(mnist.spec(), recipes={"int8": Recipe("a16w8")})
    with pytest.raises(SpecError, match=r"recipe name 'int8' must be .* and not a precision"):
        spec.validate()


# --- the compile tier: mnist at a16w8 ------------------------------------------------------------


def _plugin(monkeypatch: pytest.MonkeyPatch, plugin: str, cache: Path, cwd: Path) -> None:
    """Builds with ``plugin`` loaded, into the session's shared cache, from a folder without a zoo.toml."""
    monkeypatch.setenv("ZOO_PLUGINS", plugin)
    monkeypatch.setenv("ZOO_CACHE_DIR", str(cache))
    monkeypatch.chdir(cwd)


@pytest.fixture(scope="session")
def mnist_u85(shared_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Artifact]:
    """mnist for u85-256 at each precision; int8 is the shared ``built`` fixture's when it ran first."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOO_CACHE_DIR", str(shared_cache))
        for name in ("ZOO_CONFIG", "ZOO_PLUGINS"):
            mp.delenv(name, raising=False)
        mp.chdir(tmp_path_factory.mktemp("a16w8"))
        zoo = Zoo()
        return {"int8": zoo.fetch("mnist", "u85-256"), "a16w8": zoo.fetch("mnist", "u85-256", precision="a16w8", verify=True)}


@pytest.mark.compile
def test_a16w8_is_int16_in_the_pte_header_and_manifest_and_passes_its_checks(mnist_u85: dict[str, Artifact]) -> None:
    a16w8, int8 = mnist_u85["a16w8"], mnist_u85["int8"]
    m = a16w8.manifest
    assert (m.precision, int8.manifest.precision) == ("a16w8", "int8")
    assert a16w8.pte.name == "mnist_u85-256_a16w8.pte"
    info = read_pte(a16w8.pte.read_bytes())
    assert {t.dtype for t in info.plans[0].tensors.values()} >= {"int16"}
    assert '#define MODEL_PTE_PRECISION "a16w8"' in a16w8.header.read_text()
    assert '#define MODEL_PTE_PRECISION "int8"' in int8.header.read_text()
    numerics = (m.verification or {})["numerics"]
    assert numerics["passed"], numerics["checks"]
    assert m.metric("top1").program_kind == "a16w8"
    # 16-bit activations take twice the bytes of 8-bit ones in the NPU's SRAM.
    assert m.vela_total and int8.manifest.vela_total
    assert (m.vela_total.sram_bytes or 0) > (int8.manifest.vela_total.sram_bytes or 0)
    assert a16w8.verification is not None and a16w8.verification.passed


@pytest.mark.compile
def test_the_structure_check_refuses_a_manifest_whose_precision_is_not_the_ptes(mnist_u85: dict[str, Artifact]) -> None:
    for art, wrong in ((mnist_u85["a16w8"], "int8"), (mnist_u85["int8"], "a16w8")):
        pte = art.pte.read_bytes()
        expected = dataclasses.replace(Expected.from_manifest(art.manifest), precision=Precision(wrong))
        [check] = [c for c in check_structure(pte, expected) if c.name == "precision"]
        assert not check.passed and f"records {wrong}" in check.detail
        assert check_precision(read_pte(pte), Precision.from_key(art.manifest.key_inputs["quantization"])).passed


@pytest.mark.compile
def test_report_and_cache_ls_name_the_precision(mnist_u85: dict[str, Artifact], use_shared_cache: Path) -> None:
    a16w8 = mnist_u85["a16w8"]
    rows = json.loads(run_zoo("report", "mnist", "--json").stdout)["rows"]
    assert {(r["target"], r["precision"]) for r in rows if r["key"] == a16w8.manifest.key} == {("ethos-u85-256", "a16w8")}
    listed = json.loads(run_zoo("cache", "ls", "--json").stdout)
    assert [e["precision"] for e in listed if e.get("key") == a16w8.manifest.key] == ["a16w8"]


def test_at_16_bits_a_program_passes_when_no_noisier_than_fake_quant() -> None:
    from zoo.registry.numerics.compare import Versus, as_quiet_as_fake_quant

    def sqnr(db: float) -> Versus:
        return Versus(signal=10 ** (db / 10), noise=1.0)

    # silero-vad's state h at a16w8 on u85-256: sqrt on the CPU, then ExecuTorch's int16 sqrt table.
    fake_quant = sqnr(18.5)
    assert as_quiet_as_fake_quant(sqnr(19.6), fake_quant)
    assert as_quiet_as_fake_quant(sqnr(17.6), fake_quant)  # within the 1 dB margin
    assert not as_quiet_as_fake_quant(sqnr(9.7), fake_quant)
    assert not as_quiet_as_fake_quant(Versus(), fake_quant)  # nothing measured: no pass


@pytest.mark.compile
def test_a16w8_leaves_sqrt_on_the_cpu_and_the_check_refuses_the_int16_sqrt_table(
    shared_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from zoo import VerificationError
    from zoo.registry.request import precision
    _plugin(monkeypatch, "tests.magnitude_plugin", shared_cache, tmp_path)
    art = Zoo().fetch("magnitude", "u85-256", precision="a16w8", verify=True)
    assert "aten::pow.Tensor_Scalar_out" in art.manifest.cpu_operators
    assert art.manifest.key_inputs["quantization"]["float_ops"] == ["sqrt"]
    assert art.verification is not None and art.verification.passed
    # ExecuTorch's own int16 sqrt: hundreds of steps off near 0, and 18 dB noisier than fake-quant.
    monkeypatch.setattr(precision, "_FLOAT_OPS", {})
    monkeypatch.setenv("ZOO_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(VerificationError) as failed:
        Zoo().fetch("magnitude", "u85-256", precision="a16w8", verify=True)
    message = str(failed.value)
    steps = float(re.search(r"max abs error [\d.]+, ([\d.]+) quantization steps", message).group(1))  # type: ignore[union-attr]
    got, want = (float(x) for x in re.search(r"SQNR against float ([\d.]+) dB, fake-quant's ([\d.]+) dB", message).groups())  # type: ignore[union-attr]
    assert steps > 100 and got < want - 10, message


@pytest.mark.compile
def test_the_upstream_reproduction_prints_what_docs_upstream_quotes() -> None:
    import subprocess
    import sys

    from tests.conftest import ROOT

    run = subprocess.run([sys.executable, str(ROOT / "examples" / "int16_sqrt.py")], capture_output=True, text=True,
                         timeout=600, check=True)
    lines = {line.split(":", 1)[0]: line.split(":", 1)[1].strip() for line in run.stdout.splitlines()}
    assert lines["int8"].startswith("max 0 steps")
    page = " ".join((ROOT / "docs" / "upstream.md").read_text().split())
    assert f"a16w8: {lines['a16w8']}" in page, lines["a16w8"]


@pytest.mark.compile
def test_a_recipe_quantizes_the_modules_it_names_and_refuses_one_the_model_lacks(
    shared_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from zoo import BuildError, Recipe

    _plugin(monkeypatch, "tests.rgb_plugin", shared_cache, tmp_path)
    zoo = Zoo()
    int8 = zoo.fetch("rgb-tiny", "u85-256")
    mixed = zoo.fetch("rgb-tiny", "u85-256", precision="first-conv-16", verify=True)
    assert mixed.manifest.precision == "first-conv-16" and mixed.verification and mixed.verification.passed
    assert '#define MODEL_PTE_PRECISION "first-conv-16"' in mixed.header.read_text()
    # The input stays int8 at the boundary; the first convolution's output inside the delegate is int16.
    assert {t.dtype for t in read_pte(mixed.pte.read_bytes()).plans[0].tensors.values()} >= {"int8"}
    assert (mixed.manifest.vela_total and int8.manifest.vela_total
            and mixed.manifest.vela_total.sram_bytes != int8.manifest.vela_total.sram_bytes)
    path = tmp_path / "typo.json"
    path.write_text(Recipe("int8", {"9": "a16w8"}).dumps())
    with pytest.raises(BuildError, match=r"names module\(s\) the model does not have: 9; its modules, .*: 0, 1, 2"):
        zoo.fetch("rgb-tiny", "u85-256", recipe=path)


# --- zoo tune ------------------------------------------------------------------------------------


def test_tune_refuses_what_it_cannot_search() -> None:
    zoo = Zoo()
    with pytest.raises(UsageError, match="'portable' runs 'mnist' in float"):
        zoo.tune("mnist", "portable", build=False)
    with pytest.raises(UsageError, match="--max-drop accuracy: 'mnist' declares no such metric; it declares top1"):
        zoo.tune("mnist", "u55-128", max_drop={"accuracy": 1.0}, build=False)
    with pytest.raises(UsageError, match="--max-drop top1: max_drop must be a finite number ≥ 0 in the metric's unit, got nan"):
        zoo.tune("mnist", "u55-128", max_drop={"top1": float("nan")}, build=False)
    with pytest.raises(UsageError, match=r"--transform sparse24: 'ethos-u55-128' does not benefit from it; it takes "
                                         r"palette8, palette16, palette32"):
        zoo.tune("mnist", "u55-128", transforms=("sparse24",), build=False)
    result = run_zoo("tune", "mnist", "-t", "u55-128", "--max-drop", "top1")
    assert result.returncode == 2 and "give METRIC=DROP, e.g. f1=0.01" in result.stderr


@pytest.mark.compile
def test_tune_ranks_modules_writes_a_recipe_and_builds_what_it_found(
    shared_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _plugin(monkeypatch, "tests.rgb_plugin", shared_cache, tmp_path)
    zoo = Zoo()
    first = zoo.tune("rgb-tiny", "u85-256", out=tmp_path / "a.json", build=False)
    again = zoo.tune("rgb-tiny", "u85-256", out=tmp_path / "b.json", build=False)
    assert (tmp_path / "a.json").read_text() == (tmp_path / "b.json").read_text()  # the same inputs, the same recipe
    s = first.search
    assert [t.label for t in s.layers] == [t.label for t in again.search.layers]
    assert {t.label.removesuffix(" at a16w8") for t in s.layers} == {"0", "2", "6"}  # its modules with weights; a Sequential has no ops of its own
    assert [t.worst_db for t in s.layers] == sorted((t.worst_db for t in s.layers), reverse=True)
    assert s.a16w8.worst_db > s.int8.worst_db  # 16-bit activations are less noisy, or there is nothing to find
    assert s.chosen.meets and s.goal.startswith("output SQNR ≥")
    built = zoo.tune("rgb-tiny", "u85-256", out=tmp_path / "c.json")
    rows = {b.label: b for b in built.built}
    assert {"int8", "a16w8"} <= set(rows) and all(b.manifest and b.error is None for b in rows.values()), rows
    # The recipe found (else int8) with the U85's weight transform on top, fine-tuned on the model's training data.
    [sparse] = [b for label, b in rows.items() if label.endswith("+sparse24")]
    assert sparse.manifest is not None and sparse.manifest.precision.endswith("+sparse24+qat300")
    times = {label: b.to_json()["vela_ms"] for label, b in rows.items()}
    assert built.fastest is not None and times[built.fastest.label] == min(times.values())  # every build passed
    assert built.to_json()["fastest"]["label"] == built.fastest.label
    for b in rows.values():
        assert b.manifest is not None and (b.manifest.verification or {})["numerics"]["passed"]
    if s.chosen.recipe.modules:  # the recipe file builds to the same artifact as the one tune built
        assert zoo.fetch("rgb-tiny", "u85-256", recipe=tmp_path / "c.json").manifest.key == rows["c"].manifest.key  # type: ignore[union-attr]


@pytest.mark.compile
def test_tune_promotes_the_forwards_own_operators_as_one_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZOO_PLUGINS", "tests.magnitude_plugin")
    monkeypatch.chdir(tmp_path)
    s = Zoo().tune("magnitude", "u85-256", out=tmp_path / "m.json", build=False).search
    assert [t.label for t in s.layers] == [". at a16w8"]  # sqrt(re² + im²) has no submodule
    assert s.layers[0].worst_db > s.int8.worst_db + 6
    # The input's own quantization follows the default (int8), so only a16w8 everywhere reaches its goal.
    assert not s.layers[0].meets and s.chosen.recipe == s.a16w8.recipe


@pytest.mark.compile
def test_tune_shows_a_build_that_fails_its_check_as_a_row_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from zoo.registry.request import precision
    monkeypatch.setattr(precision, "_FLOAT_OPS", {})  # ExecuTorch's int16 sqrt table: refused by the check
    _plugin(monkeypatch, "tests.magnitude_plugin", tmp_path / "cache", tmp_path)
    rows = {b.label: b for b in Zoo().tune("magnitude", "u85-256", out=tmp_path / "m.json").built}
    assert rows["int8"].error is None
    failed = rows["a16w8"]
    assert failed.manifest is not None and failed.error and failed.error.startswith("numerics FAILED: numerics vs_fake_quant")
    assert failed.to_json()["numerics_passed"] is False


@pytest.mark.compile
def test_tune_measures_a_metric_against_float_as_the_numerical_check_does(
    shared_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mtcnn-pnet's recall of the float model's boxes failed zoo tune: it called the evaluator
    without the float outputs it asks for."""
    _plugin(monkeypatch, "tests.rgb_plugin", shared_cache, tmp_path)
    s = Zoo().tune("rgb-tiny-agree", "u85-256", out=tmp_path / "agree.json", build=False).search
    assert s.goal.startswith("agreement within 10")
    assert s.int8.metrics["agreement"] <= 100.0 and s.a16w8.metrics["agreement"] <= 100.0


# --- observers -----------------------------------------------------------------------------------


def test_a_recipe_names_its_activation_observer_and_only_a_new_one_changes_the_key(tmp_path: Path) -> None:
    from zoo import Recipe

    zoo = Zoo()
    default, percentile = tmp_path / "default.json", tmp_path / "percentile.json"
    default.write_text(Recipe("int8").dumps())
    percentile.write_text(Recipe("int8", observer="percentile").dumps())
    assert "observer" not in json.loads(default.read_text())
    plain, chosen = (zoo.request("mnist", "u55-128", recipe=p) for p in (default, percentile))
    assert chosen.key_inputs()["quantization"]["observer"] == "percentile"
    assert "observer" not in plain.key_inputs()["quantization"] and plain.key() != chosen.key()
    assert Precision.from_key(chosen.key_inputs()["quantization"]) == chosen.precision
    percentile.write_text(json.dumps({"default": "int8", "observer": "kl"}))
    with pytest.raises(UsageError, match="observer 'kl' must be one of histogram, minmax, moving_average, percentile"):
        zoo.request("mnist", "u55-128", recipe=percentile)


@pytest.mark.compile
def test_each_observer_calibrates_its_own_ranges_and_passes_the_check(
    shared_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from zoo import Recipe

    _plugin(monkeypatch, "tests.rgb_plugin", shared_cache, tmp_path)
    zoo = Zoo()
    sqnr = {}
    for observer in ("histogram", "minmax", "percentile"):
        path = tmp_path / f"{observer}.json"
        path.write_text(Recipe("int8", observer=observer).dumps())
        art = zoo.fetch("rgb-tiny", "u85-256", recipe=path, verify=True)
        assert art.verification and art.verification.passed, observer
        sqnr[observer] = art.manifest.output_sqnr[0]["sqnr_db"]
    assert len(set(sqnr.values())) == 3, sqnr  # three observers, three calibrations
