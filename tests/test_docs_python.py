"""The docs' code runs as written: the README's and getting-started's Python against the
builds the compile tier shares, every `zoo` line that compiles nothing in the fast tier, and
every model file a command names exists. The metric the Python reads is typed."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.docs_blocks import PAGES, PYTHON, SHELL, blocks, light
from tests.fake_compile import FakeCompile
from zoo import Artifact, Zoo


def python_blocks(page: Path) -> list[str]:
    return [b.text for b in blocks(page) if b.lang in PYTHON]


def shell_lines() -> list[tuple[str, str]]:
    """(page, command) for every ``zoo`` line of a shell block in the README and docs/."""
    return [(page.name, command) for page in PAGES for b in blocks(page) if b.lang in SHELL
            for command in b.lines() if command.startswith("zoo ")]


@pytest.mark.parametrize("page,command", [(p, c) for p, c in shell_lines() if light(c)])
def test_a_docs_zoo_line_that_compiles_nothing_runs_as_written(page: str, command: str) -> None:
    import shlex

    from click.testing import CliRunner

    from zoo.cli import main

    result = CliRunner().invoke(main, shlex.split(command)[1:])
    assert result.exit_code == 0, f"{page}: {command}: {result.output}"


def _placeholder(command: str) -> bool:
    """A synopsis, not a command: ``zoo firmware MODEL -t TARGET [--board ...]``, ``ls | verify``."""
    return " | " in command or "[" in command or command.rstrip().endswith("\\") or bool(
        re.search(r"(?<![-\w])(MODEL|TARGET|DIR|FILE|REMOTE)(?![-\w])", command))


@pytest.mark.parametrize("page,command", [(p, c) for p, c in shell_lines() if not light(c) and not _placeholder(c)])
def test_a_docs_zoo_line_that_compiles_parses_as_written(page: str, command: str) -> None:
    """Its command and every option exist and take what the line gives them (it is not run: it compiles,
    or reaches a remote; the compile tier runs the same flows)."""
    import shlex

    import click

    from zoo.cli import main

    args = shlex.split(command)[1:]
    try:
        ctx: click.Context = main.make_context("zoo", list(args))  # the global options, then the command
        rest = [*ctx._protected_args, *ctx.args]
        cmd: click.Command | None = main
        while isinstance(cmd, click.Group):  # zoo cache ls, ...
            name, cmd, rest = cmd.resolve_command(ctx, rest)
            assert cmd is not None and name is not None, f"{page}: {command}: no such command"
            ctx = cmd.make_context(name, list(rest), parent=ctx)
            rest = [*getattr(ctx, "_protected_args", []), *ctx.args]
    except click.UsageError as exc:
        pytest.fail(f"{page}: {command}: {exc.format_message()}")


def test_every_model_file_a_command_in_the_docs_names_is_shipped() -> None:
    """Issue 31: the README's two_heads.py command could not be run as written."""
    named = {(page.name, m) for page in PAGES
             for m in re.findall(r"^\s*(?:\$ )?zoo[^\n`]*--model-file (\S+)", page.read_text(encoding="utf-8"), re.M)}
    named |= {(page.name, m) for page in PAGES
              for m in re.findall(r"`zoo --model-file (\S+)", page.read_text(encoding="utf-8"))}
    assert named, "the docs name no model file: the pattern no longer matches them"
    missing = sorted((page, m) for page, m in named if not (ROOT / m).is_file())
    assert not missing, missing


@pytest.mark.compile
def test_getting_starteds_python_runs_as_written(built: dict[tuple[str, str], Artifact], shared_cache: Path,
                                                 tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """mv2 and mnist on u55-128 and u85-256 are the shared builds; the SRAM budget one is new, so it
    goes into a copy of the shared cache, which other tests list."""
    import shutil

    (block,) = python_blocks(ROOT / "docs" / "getting-started.md")
    shutil.copytree(shared_cache, tmp_path / "cache")
    monkeypatch.setenv("ZOO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    exec(block, namespace)
    # fetch_many wrote the four artifacts, each in a folder of its own
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "mnist_u55-128", "mnist_u85-256", "mv2_u55-128", "mv2_u85-256"]


@pytest.mark.compile
def test_the_readmes_python_runs_as_written(built: dict[tuple[str, str], Artifact], use_shared_cache: Path) -> None:
    (block,) = python_blocks(ROOT / "README.md")
    namespace: dict[str, object] = {}
    lines = block.strip().splitlines()
    exec("\n".join(lines[:-1]), namespace)
    top1 = eval(lines[-1].split("#")[0], namespace)
    assert top1 == built[("mnist", "u55-128")].manifest.metric("top1").program and 0 < top1 <= 100


def test_a_metric_reads_typed_and_an_unmeasured_one_names_what_was(fake_compile: FakeCompile) -> None:
    manifest = Zoo().fetch("add", "u55-128").manifest
    with pytest.raises(KeyError, match=r"add for ethos-u55-128 has no measured metric 'top1'; measured: none \(fetch"):
        manifest.metric("top1")
    record = {"name": "top1", "unit": "%", "float": 98.5, "program": 98.0, "drop": 0.5, "max_drop": 1.0,
              "passed": True, "dataset": "MNIST test", "samples": 200, "program_kind": "TOSA reference model"}
    measured = dataclasses.replace(manifest, verification={"numerics": {"metrics": [record]}})
    top1 = measured.metric("top1")
    assert (top1.float, top1.program, top1.drop, top1.passed, top1.samples) == (98.5, 98.0, 0.5, True, 200)
    with pytest.raises(KeyError, match="measured: top1"):
        measured.metric("accuracy")
