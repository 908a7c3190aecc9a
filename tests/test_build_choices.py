"""The build choices are spelt once: ``BuildChoices``, which ``Zoo.request``, ``Zoo.verify``,
``FetchArgs`` and the CLI all take, and which names exactly the fields of ``Choices``."""

from __future__ import annotations

import dataclasses
import inspect
import typing
from pathlib import Path

import pytest

import zoo._options
from zoo import BuildChoices, Choices, FetchArgs, Zoo


def test_build_choices_are_the_fields_of_choices_with_their_types() -> None:
    hints = typing.get_type_hints(BuildChoices, vars(zoo._options))
    assert list(hints) == [f.name for f in dataclasses.fields(Choices)]
    assert hints == typing.get_type_hints(Choices, vars(zoo._options))
    assert BuildChoices.__required_keys__ == frozenset()


def test_fetch_args_extend_the_build_choices() -> None:
    assert BuildChoices.__annotations__.items() <= FetchArgs.__annotations__.items()


@pytest.mark.parametrize("method", [Zoo.request, Zoo.verify])
def test_request_and_verify_take_the_choices_as_one_typed_bag(method: typing.Callable[..., object]) -> None:
    params = inspect.signature(method).parameters.values()
    assert not {p.name for p in params} & set(zoo._options.CHOICE_NAMES)
    [bag] = [p for p in params if p.kind is inspect.Parameter.VAR_KEYWORD]
    assert bag.annotation == "Unpack[BuildChoices]"


@pytest.mark.parametrize("method", ["request", "verify"])
def test_an_unknown_choice_is_a_type_error_naming_the_method(method: str) -> None:
    with pytest.raises(TypeError, match=rf"^Zoo\.{method}\(\) got an unexpected keyword argument 'colour'$"):
        getattr(Zoo(), method)("add", "u55-128", colour="red")


def test_the_choices_reach_the_request() -> None:
    request = Zoo().request("mnist", "u55-128", io="int8", memory_mode="Sram_Only", weights="random")
    assert (request.boundary.mode, request.target.memory_mode, request.weights.name) == ("int8", "Sram_Only", "random")
    assert request.key() != Zoo().request("mnist", "u55-128").key()


# --- issue 55: a keyword of the wrong type is refused by name, before any work ---------------------

WRONG_TYPES = [
    ({"io": 3}, TypeError, "io=3: expected a str or None, got int"),
    ({"verify": "yes"}, TypeError, "verify='yes': expected True or False or None, got str"),
    ({"sram_budget": "1KiB"}, TypeError, "sram_budget='1KiB': expected an int or None, got str"),
    ({"sram_budget": True}, TypeError, "sram_budget=True: expected an int or None, got bool"),
    ({"qat": 2.5}, TypeError, "qat=2.5: expected an int or None, got float"),
    ({"recipe": 3}, TypeError, "recipe=3: expected a path (str or os.PathLike) or None, got int"),
    ({"out_dir": 3}, TypeError, "out_dir=3: expected a path (str or os.PathLike) or None, got int"),
    ({"jobs": "2"}, TypeError, "jobs='2': expected an int, got str"),
    ({"bundle": "no"}, TypeError, "bundle='no': expected True or False, got str"),
    ({"remotes": "a"}, TypeError, "remotes='a': expected a tuple of str or None, got str"),
    ({"remotes": ["a", 3]}, TypeError, "remotes=['a', 3]: expected a tuple of str, but item 1 is 3"),
    ({"shard": (1,)}, TypeError, "shard=(1,): expected a tuple (int, int) or None, got tuple"),
    ({"executor": "threads"}, ValueError, "executor='threads': expected one of 'inline', 'processes', 'ray' or None"),
    ({"header_style": "x"}, ValueError, "header_style='x': expected one of 'split', 'single', got str"),
]


@pytest.mark.parametrize(("kw", "error", "message"), WRONG_TYPES, ids=[str(k) for k, _, _ in WRONG_TYPES])
def test_a_fetch_keyword_of_the_wrong_type_is_named_before_any_work(fake_compile: object, tmp_path: object, kw: dict[str, object],
                                                                    error: type[Exception], message: str) -> None:
    import zoo as api

    with pytest.raises(error) as caught:
        api.fetch("add", "u55-128", **kw)  # type: ignore[arg-type]
    assert str(caught.value).startswith(message), str(caught.value)
    assert not fake_compile.calls  # type: ignore[attr-defined]
    assert not Zoo().cache_dir.exists()


@pytest.mark.parametrize("method", ["request", "verify"])
def test_a_build_choice_of_the_wrong_type_is_named_by_request_and_verify(method: str) -> None:
    with pytest.raises(TypeError, match=r"^io=3: expected a str or None, got int$"):
        getattr(Zoo(), method)("add", "u55-128", io=3)


def test_none_is_every_choice_s_default() -> None:
    """``layout=None`` (and every other choice at None) is the default, not a wrong type."""
    assert Zoo().request("add", "u55-128", layout=None, io=None, weights=None).key() == Zoo().request("add", "u55-128").key()
    assert zoo._options.FetchOptions(remotes=["a"], trusted_keys=["k.pub"]).trusted_keys == (Path("k.pub"),)
