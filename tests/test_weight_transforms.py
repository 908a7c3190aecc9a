"""Weight transforms (issue 59): ``paletteN`` for the U55/U65, ``sparse24`` for the U85.

The fast tests check the transforms on a tiny layer (numpy, no torch) and the choice: its name,
its key, the targets it is refused for. The compile tier builds the tests' RGB plugin once per
transform and counts, in the lowered TOSA program, what the transform promises.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from zoo import UsageError, Zoo
from zoo.registry.compile.weight_transforms import (
    QMAX,
    palette_levels,
    project_palette,
    sparse24_mask,
)


@pytest.fixture
def rgb(monkeypatch: pytest.MonkeyPatch) -> Zoo:
    monkeypatch.setenv("ZOO_PLUGINS", "tests.rgb_plugin")
    return Zoo()


def _layer(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(8, 6, 3, 3)) * rng.uniform(0.1, 2.0, size=(8, 1, 1, 1))


def _int8(weight: np.ndarray) -> np.ndarray:
    """``weight`` quantized as the per-channel symmetric observer does, in float32."""
    w = weight.astype(np.float32)
    scale = np.max(np.abs(w), axis=(1, 2, 3), keepdims=True) / np.float32(QMAX)
    return np.clip(np.rint(w / scale), -QMAX, QMAX)


@pytest.mark.parametrize("count", [8, 16, 32])
def test_a_palette_leaves_at_most_n_int8_values_in_a_layer_and_keeps_each_channels_scale(count: int) -> None:
    weight = _layer()
    assert len(np.unique(_int8(weight))) > 150  # as trained: most of the 255 int8 values
    scale = np.max(np.abs(weight), axis=(1, 2, 3), keepdims=True) / QMAX
    levels = palette_levels(weight / scale, count)
    palette = project_palette(weight, levels, per_channel=True)
    assert len(np.unique(_int8(palette))) <= count
    assert set(np.unique(_int8(palette))) <= set(levels) and {-QMAX, QMAX} <= set(levels)
    np.testing.assert_allclose(np.max(np.abs(palette), axis=(1, 2, 3)), np.max(np.abs(weight), axis=(1, 2, 3)))
    assert np.array_equal(project_palette(palette, levels, per_channel=True), palette)  # a projection
    assert np.array_equal(palette_levels(weight / scale, count), levels)  # no randomness


def test_more_levels_keep_the_weights_closer() -> None:
    weight = _layer(1)
    scale = np.max(np.abs(weight), axis=(1, 2, 3), keepdims=True) / QMAX
    errors = [np.abs(project_palette(weight, palette_levels(weight / scale, n), True) - weight).mean() for n in (8, 16, 32)]
    assert errors[0] > errors[1] > errors[2]


def test_sparse24_keeps_the_two_largest_of_every_four_input_channels() -> None:
    weight = _layer()
    mask = sparse24_mask(weight)
    groups = np.concatenate([mask, np.zeros((8, 2, 3, 3), dtype=bool)], axis=1).reshape(8, 2, 4, 3, 3)
    assert (groups.sum(axis=2) == 2).all()  # 6 channels: 4 then 2 (+ 2 of padding), 2 kept in each
    kept = np.where(mask, np.abs(weight), np.inf).min(axis=1)
    dropped = np.where(mask, -np.inf, np.abs(weight))[:, :4].max(axis=1)
    assert (np.where(mask[:, :4], np.abs(weight[:, :4]), np.inf).min(axis=1) >= dropped).all() and kept.shape == (8, 3, 3)


def test_sparse24_breaks_ties_towards_the_lower_channel() -> None:
    assert sparse24_mask(np.ones((1, 8))).tolist() == [[True, True, False, False, True, True, False, False]]
    assert sparse24_mask(np.array([[1.0, 3.0, 2.0, 3.0, 5.0]])).tolist() == [[False, True, False, True, True]]


def test_a_transform_is_its_own_build_named_and_keyed(rgb: Zoo) -> None:
    plain = rgb.request("rgb-tiny", "u55-128")
    palette = rgb.request("rgb-tiny", "u55-128", weights_transform="palette16")
    assert (palette.precision.name, palette.stem) == ("int8+palette16", "rgb-tiny_u55-128_int8-palette16")
    quantization = palette.key_inputs()["quantization"]
    assert quantization["weights_transform"]["name"] == "palette16" and "recipe" not in quantization
    assert "weights_transform" not in plain.key_inputs()["quantization"]
    keys = {plain.key(), palette.key(), rgb.request("rgb-tiny", "u55-128", weights_transform="palette8").key()}
    assert len(keys) == 3
    # sparse24 is fine-tuned where the model has training data, unless --qat 0 says not to.
    sparse = rgb.request("rgb-tiny", "u85-256", weights_transform="sparse24")
    assert sparse.precision.name == "int8+sparse24+qat300" and sparse.precision.qat == 300
    assert rgb.request("rgb-tiny", "u85-256", weights_transform="sparse24", qat=0).precision.name == "int8+sparse24"
    a16w8 = rgb.request("rgb-tiny", "u85-256", precision="a16w8", weights_transform="sparse24", qat=20)
    assert a16w8.precision.name == "a16w8+sparse24+qat20" and a16w8.precision.config == "get_symmetric_a16w8_quantization_config"


def test_a_transform_round_trips_through_the_key(rgb: Zoo) -> None:
    from zoo.registry.request.precision import Precision

    for precision, kw in (("int8", {}), ("a16w8", {"qat": 20}), ("first-conv-16", {})):
        request = rgb.request("rgb-tiny", "u85-256", precision=precision, weights_transform="sparse24", **kw)
        assert Precision.from_key(request.key_inputs()["quantization"]) == request.precision


def test_a_target_that_cannot_benefit_is_refused_naming_the_ones_that_can(rgb: Zoo) -> None:
    with pytest.raises(UsageError, match=r"sparse24 is for Ethos-U85 targets, and 'ethos-u55-128' takes palette8, "
                                         r"palette16, palette32"):
        rgb.request("rgb-tiny", "u55-128", weights_transform="sparse24")
    with pytest.raises(UsageError, match=r"palette16 is for Ethos-U55/U65 targets, and 'ethos-u85-256' takes sparse24"):
        rgb.request("rgb-tiny", "u85-256", weights_transform="palette16")
    with pytest.raises(UsageError, match="takes no precision"):
        rgb.request("rgb-tiny", "portable", weights_transform="palette16")
    with pytest.raises(UsageError, match="is not a weight transform: choose one of palette8, palette16"):
        rgb.request("rgb-tiny", "u55-128", weights_transform="palette4")


def test_the_cli_refuses_a_transform_for_a_target_that_cannot_benefit() -> None:
    from tests.conftest import run_zoo

    env = {"ZOO_PLUGINS": "tests.rgb_plugin", "PYTHONPATH": str(Path(__file__).parents[1])}
    result = run_zoo("fetch", "rgb-tiny", "-t", "u55-128", "--weights-transform", "sparse24", "--no-build", env=env)
    assert result.returncode != 0 and "sparse24 is for Ethos-U85 targets" in result.stderr, result.stderr


def test_a_recipe_file_may_hold_a_transform(rgb: Zoo, tmp_path: Path) -> None:
    path = tmp_path / "fast.json"
    path.write_text(json.dumps({"default": "int8", "weights": "palette8"}))
    request = rgb.request("rgb-tiny", "u65-256", recipe=path)
    assert (request.precision.name, request.precision.transform) == ("fast", "palette8")
    assert request.key_inputs()["quantization"]["weights_transform"]["name"] == "palette8"
    assert rgb.request("rgb-tiny", "u65-256", recipe=path, weights_transform="palette32").precision.name == "fast+palette32"
    path.write_text(json.dumps({"default": "int8", "weights": "sparse"}))
    with pytest.raises(UsageError, match="weights 'sparse' must be one of palette8, palette16, palette32, sparse24"):
        rgb.request("rgb-tiny", "u65-256", recipe=path)


def _build(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, target: str, **choices: object) -> object:
    """rgb-tiny built for ``target`` with the numerical check, through the request as the CLI makes it."""
    from zoo.registry.compile import compile_targets

    monkeypatch.setenv("ZOO_PLUGINS", "tests.rgb_plugin")
    monkeypatch.setenv("ZOO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    zoo = Zoo()
    request = zoo.request("rgb-tiny", target, **choices)  # type: ignore[arg-type]
    return compile_targets(request.spec, [request.target], verify=[True], precision=request.precision)[0]


@pytest.mark.compile
def test_palette16_leaves_at_most_16_values_per_weight_stream_in_the_lowered_program(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from zoo.registry.compile.tosa_weights import convolution_weights, distinct_values

    built = _build(monkeypatch, tmp_path, "u55-128", weights_transform="palette16")
    assert built.numerics is not None and built.numerics.passed  # type: ignore[attr-defined]
    layers = built.calibration["weights_transform"]["layers"]  # type: ignore[attr-defined]
    assert len(layers) == 3 and all(layer["levels"] <= 16 for layer in layers)
    weights = [w for g in built.tosa_graphs for w in convolution_weights(g)]  # type: ignore[attr-defined]
    assert len(weights) == 3
    assert max(distinct_values(w) for w in weights) <= 16


@pytest.mark.compile
def test_sparse24_fine_tuned_keeps_two_of_four_in_the_lowered_program(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from zoo.registry.compile.tosa_weights import convolution_weights, is_sparse24
    from zoo.registry.npu.vela_report import weight_formats

    built = _build(monkeypatch, tmp_path, "u85-256", weights_transform="sparse24", qat=20)
    built_target = Zoo().target("u85-256")
    assert built.numerics is not None and built.numerics.passed  # type: ignore[attr-defined]
    record = built.calibration  # type: ignore[attr-defined]
    assert record["qat"]["steps"] == 20 and len(record["weights_transform"]["layers"]) == 3
    assert record["qat"]["loss"]["kept"] <= record["qat"]["loss"]["ptq"]
    weights = [w for g in built.tosa_graphs for w in convolution_weights(g)]  # type: ignore[attr-defined]
    assert len(weights) == 3 and all(is_sparse24(w) for w in weights)
    assert all((w.values == 0).mean() >= 0.3 for w in weights)
    # Vela's word: every layer's weights encoded 2:4 sparse, which the U85's MACs skip.
    formats = [f for g in built.tosa_graphs for f in weight_formats(g, built_target)]  # type: ignore[attr-defined]
    assert formats == ["Default|Sparse2_4"] * 3


@pytest.mark.compile
def test_fine_tuning_keeps_the_palette() -> None:
    """--qat with a palette: the converted graph's int8 weights still take at most N values per
    layer after training (no lowering: seconds)."""
    import torch

    from tests import rgb_plugin
    from zoo.registry.compile import qat
    from zoo.registry.compile.export import _export, _quantize
    from zoo.registry.compile.retarget import ethosu_compile_spec
    from zoo.registry.request.precision import Precision
    from zoo.registry.request.reproducible import numerics

    def int8_weights(converted: torch.fx.GraphModule) -> list[torch.Tensor]:
        tensors = [getattr(converted, str(n.args[0].target)) for n in converted.graph.nodes
                   if "dequantize_per_channel" in str(n.target) and getattr(n.args[0], "op", None) == "get_attr"]
        return [t for t in tensors if t.dtype == torch.int8]  # not the int32 biases

    with numerics(torch, "test"):
        model = rgb_plugin.two_conv_classifier(3, 5, seed=7)
        samples = rgb_plugin._images()
        spec = ethosu_compile_spec(Zoo().target("u55-128"))
        plain = Precision("int8").with_transform("palette8")
        converted = []
        tuning = qat.Training(model, rgb_plugin._images(seed=4))
        for precision, training in ((plain, None), (plain.with_qat(10), tuning)):
            graph = _export(model, samples[0]).module(check_guards=False)
            converted.append(_quantize(graph, samples, spec, "test", lambda *_: None, precision=precision, training=training))
    before, after = (int8_weights(c) for c in converted)
    assert len(before) == len(after) == 3
    assert all(len(torch.unique(w)) <= 8 for w in before + after)
    assert tuning.record["steps"] == 10 and tuning.record["loss"]["kept"] <= tuning.record["loss"]["ptq"]


def test_sparse24_fine_tunes_at_its_own_learning_rate_which_its_key_holds(rgb: Zoo) -> None:
    """At QAT's 1e-3, 300 steps left ds-cnn-fsdd's 2:4-pruned program at 98.5 %
    against float's 99.67 %, its loss still falling; at 1e-2, 99.33 %. Plain --qat and a palette's
    fine-tuning keep 1e-3, and their keys stay as they were."""
    from zoo.registry.request.precision import QAT, SPARSE24_LEARNING_RATE

    sparse = rgb.request("rgb-tiny", "u85-256", weights_transform="sparse24", qat=20).precision
    plain = rgb.request("rgb-tiny", "u85-256", qat=20).precision
    palette = rgb.request("rgb-tiny", "u55-128", weights_transform="palette16", qat=20).precision
    assert sparse.learning_rate == SPARSE24_LEARNING_RATE == 1e-2
    assert plain.learning_rate == palette.learning_rate == QAT["learning_rate"] == 1e-3
    assert sparse.key_fields()["qat"]["learning_rate"] == 1e-2
    assert plain.key_fields()["qat"] == {"steps": 20, **QAT} and palette.key_fields()["qat"] == {"steps": 20, **QAT}


@pytest.mark.stack
def test_sparse24_fine_tuning_on_a_tiny_network_trains_at_its_own_rate_and_keeps_its_zeros() -> None:
    import torch

    from tests import rgb_plugin
    from zoo.registry.compile import qat
    from zoo.registry.compile.export import _export, _quantize
    from zoo.registry.compile.retarget import ethosu_compile_spec
    from zoo.registry.compile.tosa_weights import Weights, is_sparse24
    from zoo.registry.request.precision import Precision
    from zoo.registry.request.reproducible import numerics

    with numerics(torch, "test"):
        model = rgb_plugin.two_conv_classifier(3, 5, seed=7)
        samples = rgb_plugin._images()
        spec = ethosu_compile_spec(Zoo().target("u85-256"))
        records, converted = [], []
        for precision in (Precision("int8").with_qat(2), Precision("int8").with_transform("sparse24").with_qat(2)):
            tuning = qat.Training(model, rgb_plugin._images(seed=4))
            graph = _export(model, samples[0]).module(check_guards=False)
            converted.append(_quantize(graph, samples, spec, "test", lambda *_: None, precision=precision,
                                       training=tuning))
            records.append(tuning.record)
    assert [r["learning_rate"] for r in records] == [1e-3, 1e-2]
    assert records[1]["loss"]["kept"] <= records[1]["loss"]["ptq"]
    weights = [getattr(converted[1], str(n.args[0].target)) for n in converted[1].graph.nodes
               if "dequantize_per_channel" in str(n.target) and getattr(n.args[0], "op", None) == "get_attr"]
    int8 = [np.moveaxis(w.numpy(), 1, -1) for w in weights if w.dtype == torch.int8]  # input channels innermost
    assert len(int8) == 3 and all(is_sparse24(Weights("CONV2D", "w", w)) for w in int8)  # zeros stay zero


def test_the_docs_table_is_the_benchmarks_own_output() -> None:
    """docs/weight-recipes.md's measured table and its fine-tuning times are benchmarks/weight_recipes.py's
    rendering of the rows it wrote to benchmarks/results/weight_recipes.json (which benchmarks/vs_tflite.py
    joins), never typed."""
    import importlib.util

    root = Path(__file__).parents[1]
    loader = importlib.util.spec_from_file_location("weight_recipes", root / "benchmarks" / "weight_recipes.py")
    assert loader is not None and loader.loader is not None
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    rows = json.loads(module.RESULTS.read_text())
    docs = (root / "docs" / "weight-recipes.md").read_text(encoding="utf-8")
    assert module.markdown(rows) in docs
    assert module.fine_tuning(rows) in docs  # the fine-tuning times too
