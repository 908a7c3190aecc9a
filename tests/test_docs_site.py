"""The documentation site builds under --strict, its generated references are complete
(every command and option of the CLI, every name zoo exports), and the README stays a
short front page whose links all resolve."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

import zoo
from tests.conftest import ROOT
from tests.docs_blocks import MARKER
from zoo.cli.app import main


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    # This tree's zoo, not whichever one the venv installed, is what mkdocs-click and mkdocstrings read.
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def commands(group: click.Group, ctx: click.Context, path: tuple[str, ...]) -> list[tuple[tuple[str, ...], click.Command]]:
    """Every command under ``group``, found as `zoo --help` finds them (the group loads them lazily)."""
    found = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        found.append(((*path, name), command))
        if isinstance(command, click.Group):
            found += commands(command, click.Context(command, parent=ctx, info_name=name), (*path, name))
    return found


def sections(page: str) -> dict[str, str]:
    """The CLI page cut at its headings, by heading id (``zoo-cache-prune``)."""
    parts = re.split(r'<h[1-6] id="([^"]+)"', page)
    return {parts[i]: html.unescape(parts[i + 1]) for i in range(1, len(parts) - 1, 2)}


@pytest.mark.slow
def test_the_cli_reference_lists_every_command_and_option(site: Path) -> None:
    page = sections((site / "cli" / "index.html").read_text())
    root = click.Context(main, info_name="zoo")
    every = [(("zoo",), main), *commands(main, root, ("zoo",))]
    assert len(every) > 10  # the walk itself found the lazily loaded commands
    for path, command in every:
        section = page.get("-".join(path))
        assert section is not None, f"{' '.join(path)} has no section in docs/cli.md"
        assert f"{' '.join(path)} [OPTIONS]" in section, f"{' '.join(path)}: no usage line"
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                for flag in (*param.opts, *param.secondary_opts):
                    assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", section), \
                        f"{' '.join(path)}: {flag} is not in the CLI reference"


@pytest.mark.slow
def test_the_api_reference_documents_everything_zoo_exports(site: Path) -> None:
    page = (site / "api" / "index.html").read_text()
    missing = [name for name in zoo.__all__ if f'id="zoo.{name}"' not in page]
    assert not missing, f"docs/api.md does not document: {missing}"


def test_the_readme_opens_with_the_two_commands_and_stays_short() -> None:
    readme = (ROOT / "README.md").read_text()
    first = re.search(r"```sh\n(.*?)```", readme, re.S)
    assert first is not None and readme.index(first.group(0)) < readme.index("\n## ")
    lines = [line.split("#")[0].strip() for line in first.group(1).splitlines()]
    assert lines == ["make demo", "make test"]
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^demo:", makefile, re.M) and re.search(r"^test:", makefile, re.M)
    # Issue 24: a front page of about 150 lines; everything else lives in docs/. A not-run marker shows nowhere.
    assert len([line for line in readme.splitlines() if not MARKER.match(line)]) <= 150


def test_every_link_in_the_readme_resolves() -> None:
    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\(([^)]+)\)", readme)
    assert links
    local = [link.split("#")[0] for link in links if "://" not in link]
    broken = [link for link in local if not (ROOT / link).exists()]
    assert not broken, f"README.md links to files that do not exist: {broken}"
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = [link.removeprefix("docs/") for link in local if link.startswith("docs/")]
    assert pages and all(f": {page}\n" in nav for page in pages), "a README link points to a page outside the site's nav"
