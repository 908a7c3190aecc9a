"""The build choices are spelt once: ``BuildChoices``, which ``Zoo.request``, ``Zoo.verify``,
``FetchArgs`` and the CLI all take, and which names exactly the fields of ``Choices``."""

from __future__ import annotations

import dataclasses
import inspect
import typing

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
