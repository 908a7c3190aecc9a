"""Every Python and shell block in the README and docs/ runs in a test, or says on the line above
its fence why it does not: ``<!-- not run: REASON -->`` (tests/docs_blocks.py)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import ROOT
from tests.docs_blocks import PAGES, PYTHON, SHELL, Block, blocks, light, stray_markers


def python_run() -> dict[str, str]:
    """Each Python block a test executes as written, by its text: the test that does. The two
    tests in tests/test_docs_python.py take their page's only Python block; a page with a second
    one has neither counted here."""
    from tests.test_docs_plugin import example
    from tests.test_docs_python import python_blocks

    run = {example(): "tests/test_docs_plugin.py"}
    for page, test in ((ROOT / "README.md", "test_the_readmes_python_runs_as_written"),
                       (ROOT / "docs" / "getting-started.md", "test_getting_starteds_python_runs_as_written")):
        found = python_blocks(page)
        if len(found) == 1:
            run[found[0]] = f"tests/test_docs_python.py::{test}"
    return run


def runner(block: Block, python: dict[str, str]) -> str | None:
    """The test that runs the whole block as written, or None."""
    if block.lang in PYTHON:
        return python.get(block.text)
    lines = block.lines()
    if block.lang in SHELL and lines and all(light(c) for c in lines):
        return "tests/test_docs_python.py::test_a_docs_zoo_line_that_compiles_nothing_runs_as_written"
    return None


def problems(pages: list[Path], python: dict[str, str]) -> list[str]:
    out = [f"{where}: a not-run marker must sit on the line directly above a fence" for p in pages
           for where in stray_markers(p)]
    for block in (b for p in pages for b in blocks(p)):
        if not block.lang:
            out.append(f"{block.where}: a fence with no language: name it (sh, python, text for output, ...)")
            continue
        if block.lang not in (*PYTHON, *SHELL):
            continue
        ran = runner(block, python)
        if ran and block.marker is not None:
            out.append(f"{block.where}: marked not run, but {ran} runs it: drop the marker")
        elif not ran and block.marker is not None and not block.reason:
            out.append(f"{block.where}: the marker gives no reason: <!-- not run: REASON -->")
        elif not ran and block.marker is None:
            out.append(f"{block.where}: no test runs this {block.lang} block: run it in one, or say why not "
                       "on the line above its fence: <!-- not run: REASON -->")
    return out


def test_every_python_and_shell_block_in_the_docs_runs_or_says_why_not() -> None:
    python = python_run()
    assert len(python) == 3, f"a docs test no longer finds its Python block: {sorted(python.values())}"
    found = problems(PAGES, python)
    assert not found, "\n".join(found)
    every = [b for p in PAGES for b in blocks(p) if b.lang in (*PYTHON, *SHELL)]
    assert len(every) > 20 and sum(b.marker is not None for b in every) > 10, "the walk no longer finds the blocks"


PAGE = """\
# A page

```sh
zoo list
zoo targets   # light: run
```

<!-- not run: needs an Arm Corstone FVP, which this machine does not have -->
```sh
FVP_Corstone_SSE-300_Ethos-U55 -a build/firmware.elf
```

```bash
make lint
```

<!-- not run: -->
```python
import zoo
```

<!-- not run: it is light -->
```console
$ zoo info mv2
mv2 (version 1)
```

<!-- not run: a marker that marks nothing -->

```
zoo fetch mnist -t u55-128
```

- in a list:

  ```python
  print("run")
  ```

```toml
[boards.x]
```
"""


def test_the_check_names_each_block_that_neither_runs_nor_says_why(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(PAGE)
    found = problems([page], {'  print("run")\n': "a test"})
    assert [re.sub(r"^.*?page\.md", "page.md", p) for p in found] == [
        "page.md:28: a not-run marker must sit on the line directly above a fence",
        "page.md:13: no test runs this bash block: run it in one, or say why not on the line above its fence: "
        "<!-- not run: REASON -->",
        "page.md:18: the marker gives no reason: <!-- not run: REASON -->",
        "page.md:23: marked not run, but tests/test_docs_python.py::"
        "test_a_docs_zoo_line_that_compiles_nothing_runs_as_written runs it: drop the marker",
        "page.md:30: a fence with no language: name it (sh, python, text for output, ...)",
    ]


def test_the_firmware_pages_clone_lines_check_out_the_commits_zoo_builds_against() -> None:
    """The clone block cannot run here (no network); its commits are the ones the generated projects name."""
    from zoo.registry.firmware.boards import CMSIS_COMMIT, DRIVER_COMMIT, EXECUTORCH_COMMIT

    (clone,) = [b for b in blocks(ROOT / "docs" / "firmware-run.md") if "git clone" in b.text]
    assert re.findall(r"git -C (\S+) checkout (\S+)", clone.text) == [
        ("executorch", EXECUTORCH_COMMIT), ("ethos-u-core-driver", DRIVER_COMMIT), ("CMSIS_6", CMSIS_COMMIT)]
