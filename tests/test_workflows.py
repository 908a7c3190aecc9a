"""The GitHub workflows agree with zoo: every ``zoo`` line in a ``run:`` block parses against the real
CLI (with the values its environment variables stand for), the release publishes to the repository
that installs read, and CI's make test fetches the sources zoo's firmware projects name. ``make lint``
checks the workflows themselves (actionlint, zizmor)."""

from __future__ import annotations

import re
import shlex
from typing import Any

import click
import pytest
import yaml

from tests.conftest import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"
VALUES = {"SHARD": "1", "SHARDS": "8", "CATALOGUE_TARGETS": "all"}
"""What a variable stands for where ``x`` would not parse; any other stands for ``x``."""
ZOO = re.compile(r"(?:^|[\s;&|(])(?:\.venv/bin/)?zoo\s")
VARIABLE = re.compile(r"\$\{?(\w+)\}?")


def _load(name: str) -> dict[str, Any]:
    workflow: dict[str, Any] = yaml.safe_load((WORKFLOWS / name).read_text())
    return workflow


def zoo_lines() -> list[tuple[str, str, dict[str, Any]]]:
    """(where, line, the step's environment) for each line of a ``run:`` block that calls zoo."""
    found = []
    for path in sorted(WORKFLOWS.glob("*.yml")):
        workflow = _load(path.name)
        for job_id, job in workflow["jobs"].items():
            for step in job.get("steps", []):
                env = {**workflow.get("env", {}), **job.get("env", {}), **step.get("env", {})}
                found += [(f"{path.name}:{job_id}", line.strip(), env)
                          for line in step.get("run", "").splitlines() if ZOO.search(line)]
    return found


def _command(line: str, env: dict[str, Any]) -> list[str]:
    """The zoo arguments of ``line``, its variables replaced, up to a redirection, pipe or ``;``."""
    undefined = {name for name in VARIABLE.findall(line) if name not in env}
    assert not undefined, f"{line}: {sorted(undefined)} not in the step's env"
    lexer = shlex.shlex(VARIABLE.sub(lambda m: VALUES.get(m[1], "x"), line), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    words = list(lexer)
    start = next(i for i, word in enumerate(words) if word in ("zoo", ".venv/bin/zoo")) + 1
    end = next((i for i in range(start, len(words)) if set(words[i]) <= set("();<>|&")), len(words))
    return words[start:end]


LINES = zoo_lines()


@pytest.mark.parametrize("where,line,env", LINES, ids=[f"{where}:{line}" for where, line, _ in LINES])
def test_a_workflows_zoo_line_parses_against_the_cli(where: str, line: str, env: dict[str, Any]) -> None:
    """Its command and options exist and take what it gives them: an unknown option (say ``--release``
    before ``zoo publish`` has it) or a missing argument fails here, not in a release."""
    from zoo.cli import main

    assert not line.endswith("\\"), f"{where}: one zoo command a line: {line}"
    args = _command(line, env)
    try:
        ctx = main.make_context("zoo", list(args))  # the global options
        name, cmd, rest = main.resolve_command(ctx, [*ctx._protected_args, *ctx.args])
        assert cmd is not None and name is not None, f"{where}: {line}: no such command"
        cmd.make_context(name, list(rest), parent=ctx)
    except click.exceptions.Exit as exc:  # --version: printed, and exits 0
        assert exc.exit_code == 0, f"{where}: {line}"
    except click.UsageError as exc:
        pytest.fail(f"{where}: {line}: {exc.format_message()}")


def test_the_release_runs_every_step_of_a_catalogue() -> None:
    commands = {_command(line, env)[0] for where, line, env in LINES if where.startswith("release.yml:")}
    assert {"build", "publish", "fetch", "site"} <= commands


def test_the_release_publishes_the_catalogue_that_installs_read() -> None:
    from zoo.registry.remotes import default

    assert _load("release.yml")["jobs"]["catalogue"]["env"]["CATALOGUE"] == f"hf://{default.REPO}"


def test_the_changelog_has_a_section_for_this_version() -> None:
    from zoo._version import __version__

    headings = re.findall(r"^## (\S+)", (ROOT / "CHANGELOG.md").read_text(), flags=re.MULTILINE)
    assert headings and headings[0] == __version__, "the newest section is the version being released"


def test_the_readme_job_fetches_the_commits_zoos_projects_name() -> None:
    """CI's make test runs the firmware tests too, on the sources a user's project names."""
    from zoo.registry.firmware.boards import CMSIS_COMMIT, DRIVER_COMMIT, EXECUTORCH_COMMIT

    steps = _load("ci.yml")["jobs"]["readme"]["steps"]
    runs = [step.get("run", "") for step in steps]
    assert runs.index("make test") > max(i for i, run in enumerate(runs) if "../shared/vendor" in run)
    words = " ".join(runs).split()
    for commit in (EXECUTORCH_COMMIT, DRIVER_COMMIT, CMSIS_COMMIT):
        assert any(word.startswith(commit) for word in words), commit
