"""What a plugin author declares beyond the shapes (issue 21 §1b): normalisation along any
axis, so ``--io pixels`` takes an MFCC model, and the outputs' names, which the manifest
and the C header carry. Checked when the spec registers, not after a lowering."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from tests.fake_compile import FakeCompile
from tests.registry.test_plugin_loader import _spec
from zoo import Board, BuildError, InputSpec, Metric, ModelSpec, Recipe, SpecError, Zoo, top1
from zoo.registry.firmware.c_header import DEFINE


@pytest.fixture
def features(monkeypatch: pytest.MonkeyPatch) -> Zoo:
    monkeypatch.setenv("ZOO_PLUGINS", "tests.feature_plugin")
    return Zoo()


def test_per_coefficient_normalisation_lets_pixels_take_features(features: Zoo) -> None:
    request = features.request("features-tiny", "u55-128", io="pixels")
    assert (request.boundary.mode, request.boundary.layout) == ("pixels", "nchw")
    spec = features.model("features-tiny")
    # Declared along the channels (one value, as before) the same statistics do not fit.
    per_channel = dataclasses.replace(spec.inputs[0], normalise_axis=1)
    with pytest.raises(SpecError, match=r"mean and std need one value per index of axis 1 \(1\), got 8 and 8"):
        dataclasses.replace(spec, inputs=(per_channel,)).validate()


@pytest.mark.parametrize(("given", "problem"), [
    (InputSpec("m", (1, 1, 4, 3), mean=(0.5, 0.5), std=(0.1, 0.1), normalise_axis=3),
     "input 'm': mean and std need one value per index of axis 3 (3), got 2 and 2"),
    (InputSpec("m", (1, 1, 4, 3), mean=(0.5,) * 3, std=(0.1,) * 3, normalise_axis=4),
     "input 'm': normalise_axis 4 is not an axis of its shape [1, 1, 4, 3]"),
    (InputSpec("m", (1, 1, 4, 3), mean=(0.5,) * 3, normalise_axis=-1), "input 'm' declares mean without std"),
    (InputSpec("m", (1, 1, 4, 3), mean=(0.5,) * 3, std=(0.1, 0.0, 0.1), normalise_axis=-1),
     "input 'm': std must be positive, got [0.1, 0.0, 0.1]"),
    (InputSpec("m", (1, 3, 2, 2), mean=(0.5,) * 3, std=(0.1, float("inf"), 0.1)),
     "input 'm': std must hold finite numbers, got [0.1, inf, 0.1]"),
    (InputSpec("m", (1, 3, 2, 2), mean=(0.5, float("nan"), 0.5), std=(0.1,) * 3),
     "input 'm': mean must hold finite numbers, got [0.5, nan, 0.5]"),
    (InputSpec("m", (1, 3, 2, 2), range=(0.0, float("inf"))),
     "input 'm': range must hold finite numbers, got [0.0, inf]"),
])
def test_a_normalisation_that_does_not_fit_is_refused_at_registration(given: InputSpec, problem: str) -> None:
    with pytest.raises(SpecError, match=r"invalid ModelSpec 'toy': .*" + problem.replace("[", r"\[").replace("(", r"\(")
                       .replace(")", r"\)").replace("]", r"\]")):
        _spec(inputs=(given,)).validate()


@pytest.mark.parametrize(("outputs", "problem"), [
    (("Scores",), "must be a tuple of names of lower-case letters"),
    (("boxes", "boxes"), "output names repeat: ['boxes', 'boxes']"),
    (["scores"], "must be a tuple of names"),
    (("scores\n",), "must be a tuple of names"),  # $ matched before the newline: it reached the C macros
])
def test_bad_output_names_are_refused_at_registration(outputs: object, problem: str) -> None:
    with pytest.raises(SpecError) as caught:
        _spec(outputs=outputs).validate()
    assert problem in str(caught.value)


def test_output_names_are_in_the_key(features: Zoo) -> None:
    assert features.request("features-tiny", "u55-128").key_inputs()["outputs"] == ["scores"]
    assert "outputs" not in features.request("add", "u55-128").key_inputs()  # none declared


@pytest.fixture
def named(monkeypatch: pytest.MonkeyPatch, fake_compile: FakeCompile) -> Zoo:
    monkeypatch.setenv("ZOO_PLUGINS", "tests.authoring_plugin")
    fake_compile.stand_ins = ("add", "add-named", "add-misnamed")
    return Zoo()


def test_the_manifest_and_header_name_the_inputs_and_outputs(named: Zoo) -> None:
    art = named.fetch("add-named", "u55-128")
    io = art.manifest.io or {}
    assert [t["name"] for t in io["inputs"]] == ["x", "y"] and [t["name"] for t in io["outputs"]] == ["total"]
    macros = dict(DEFINE.findall(art.header.read_text()))
    assert (macros["MODEL_PTE_OUTPUT0_NAME"], macros["MODEL_PTE_OUTPUT_TOTAL"]) == ('"total"', "0")
    assert (macros["MODEL_PTE_INPUT1_NAME"], macros["MODEL_PTE_INPUT_Y"]) == ('"y"', "1")
    undeclared = dict(DEFINE.findall(named.fetch("add", "u55-128").header.read_text()))
    assert undeclared["MODEL_PTE_OUTPUT0_NAME"] == '"output0"'


def test_a_name_for_each_output_or_the_build_says_which(named: Zoo) -> None:
    with pytest.raises(BuildError, match=r"declares 2 output name\(s\) \(total, carry\), but its program has 1 "
                                         r"output\(s\): declare one name per output"):
        named.fetch("add-misnamed", "u55-128")


def test_repeated_input_names_are_refused_at_registration() -> None:
    """The header indexes inputs by name (``MODEL_PTE_INPUT_X``): two inputs named x would give one index."""
    with pytest.raises(SpecError, match=r"input names repeat: \['x', 'x'\]"):
        _spec(inputs=(InputSpec("x", (1, 4)), InputSpec("x", (1, 4)))).validate()


@pytest.mark.parametrize("declared", [
    lambda: _spec("toy\n"), lambda: _spec(aliases=("toy-alias\n",)), lambda: _spec(recipes={"fast\n": Recipe()}),
    lambda: _spec(metrics=(Metric("top1\n", top1, True, 1.0),)), lambda: Board("board\n", "ethos-u55-128"),
])
def test_a_name_with_a_trailing_newline_is_refused(declared: Callable[[], ModelSpec | Board]) -> None:
    """``$`` matches before a final newline: the name would reach paths, keys and the C header with it."""
    with pytest.raises(SpecError, match=r"name '[a-z0-9-]+\\n' must be lower-case letters"):
        declared().validate()
