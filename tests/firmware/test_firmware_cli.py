"""``zoo firmware`` takes the build choices ``zoo fetch`` takes, from the same declarations (issue 58): the
project holds the artifact ``zoo fetch`` would hand out, --layout nhwc included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from zoo._options import CHOICE_NAMES


def _params(command: click.Command) -> dict[str, click.Parameter]:
    return {p.name: p for p in command.params if p.name}


def test_every_build_choice_of_zoo_fetch_is_an_option_of_zoo_firmware_declared_once() -> None:
    from zoo.cli.fetching import fetch
    from zoo.cli.firmware import firmware

    fetched, written = _params(fetch), _params(firmware)
    for name in CHOICE_NAMES:
        assert name in written, f"zoo firmware lacks zoo fetch's --{name.replace('_', '-')}"
        mine, theirs = written[name], fetched[name]
        assert (mine.opts, mine.type.to_info_dict(), mine.default) == (theirs.opts, theirs.type.to_info_dict(),
                                                                       theirs.default), name
        assert isinstance(mine, click.Option) and isinstance(theirs, click.Option) and mine.help == theirs.help, name


def test_zoo_firmware_hands_each_choice_to_the_fetch(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """--layout nhwc with --io int8 (the form zoo recommends) reaches the fetch; before, click refused it
    ("No such option '--layout'")."""
    import zoo._api.firmware as api
    from zoo.cli import main

    seen: dict[str, Any] = {}

    def write_firmware(zoo: Any, model: str, target: str | None, out_dir: Path, options: Any, **kw: Any) -> Any:
        seen.update(model=model, target=target, options=options)
        raise click.ClickException("stopped after the options")

    monkeypatch.setattr(api, "write_firmware", write_firmware)
    run = CliRunner().invoke(main, ["firmware", "mv2", "-t", "u55-128", "--weights", "random", "--io", "int8",
                                    "--layout", "nhwc", "--precision", "int8", "--sram-budget", "1MiB",
                                    "-o", str(tmp_path / "fw"), "--offline"])
    assert "stopped after the options" in run.output, run.output
    options = seen["options"]
    assert (seen["model"], seen["target"]) == ("mv2", "u55-128")
    assert (options.weights, options.io, options.layout, options.precision, options.sram_budget) == (
        "random", "int8", "nhwc", "int8", 1 << 20)
