"""``zoo firmware -o DIR`` beside the user's files: a folder zoo did not generate is refused
without --force, nothing is written through a symlink, and a regenerated project loses the
previous model's files and keeps the user's."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import pytest

from tests.fake_compile import FakeCompile
from zoo import Zoo
from zoo._errors import UsageError
from zoo._options import FetchOptions

ABOUT = {"model": "m", "target": "t", "board": "b", "key": "k"}
RECORD = "zoo-firmware.json"


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_a_folder_zoo_did_not_generate_is_refused_unless_forced(fake_compile: FakeCompile, tmp_path: Path) -> None:
    from zoo._api.firmware import write_firmware

    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "README.md").write_text("my notes\n")
    (folder / "CMakeLists.txt").write_text("project(mine)\n")
    (folder / "driver.c").write_text("int x;\n")
    before = _tree(folder)
    with pytest.raises(UsageError, match=r"is not empty \(CMakeLists.txt, README.md, driver.c\) and no "
                                         r"zoo-firmware.json there says zoo generated it. Nothing was written"):
        write_firmware(Zoo(), "add", "u55-128", folder, FetchOptions())
    assert _tree(folder) == before

    write_firmware(Zoo(), "add", "u55-128", folder, FetchOptions(), force=True)
    after = _tree(folder)
    assert after["driver.c"] == b"int x;\n" and after["README.md"] != b"my notes\n"
    record = json.loads(after[RECORD])
    assert record["model"] == "add" and "model/add_u55-128.pte" in record["files"] and "driver.c" not in record["files"]
    write_firmware(Zoo(), "add", "u55-128", folder, FetchOptions())  # now zoo's: no --force needed


@pytest.mark.slow
def test_a_bad_request_is_refused_before_anything_is_written(fake_compile: FakeCompile, tmp_path: Path) -> None:
    """A file where the folder goes, no samples, a board that does not carry the target's NPU: each is a
    UsageError saying what to give instead, and no project file appears."""
    from zoo._api.firmware import write_firmware

    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine\n")
    with pytest.raises(UsageError, match=r"-o .*notes.txt: .*notes.txt is not a folder; give a folder for the project"):
        write_firmware(Zoo(), "add", "u55-128", a_file, FetchOptions())
    assert a_file.read_text() == "mine\n"
    folder = tmp_path / "project"
    with pytest.raises(UsageError, match="--samples must be at least 1"):
        write_firmware(Zoo(), "add", "u55-128", folder, FetchOptions(), samples=0)
    with pytest.raises(UsageError, match="ethos-u55-128 does not sit on corstone-320: use corstone-300"):
        write_firmware(Zoo(), "add", "u55-128", folder, FetchOptions(), board="corstone-320")
    with pytest.raises(UsageError, match="zoo has no memory map for board 'my-board'; it has "):
        write_firmware(Zoo(), "add", "u55-128", folder, FetchOptions(), board="my-board")
    assert not folder.exists()


def test_a_regenerated_project_loses_the_previous_models_files_and_keeps_the_users(tmp_path: Path) -> None:
    from zoo.registry.firmware.folder import write_project

    folder = tmp_path / "fw"
    write_project(folder, {"main.cpp": b"1", "model/a.pte": b"a", "model/a.h": b"a", "npu_standin.c": b"s"},
                  force=False, about=ABOUT)
    (folder / "notes.txt").write_text("mine")
    (folder / "model" / "calib.bin").write_bytes(b"mine too")
    (folder / "build").mkdir()
    (folder / "build" / "firmware.elf").write_bytes(b"elf")
    write_project(folder, {"main.cpp": b"2", "model/b.pte": b"b", "model/b.h": b"b"}, force=False, about=ABOUT)
    assert _tree(folder) == {"main.cpp": b"2", "model/b.pte": b"b", "model/b.h": b"b", "notes.txt": b"mine",
                             "model/calib.bin": b"mine too", "build/firmware.elf": b"elf", RECORD: _tree(folder)[RECORD]}
    assert json.loads(_tree(folder)[RECORD])["files"] == ["main.cpp", "model/b.h", "model/b.pte"]
    assert not [p for p in folder.rglob("*") if "zoo-tmp" in p.name]

    (folder / "npu_standin.c").write_text("the user's, made after zoo's was removed")
    with pytest.raises(UsageError, match=r"npu_standin\.c there is not one of the files zoo-firmware\.json says zoo"):
        write_project(folder, {"main.cpp": b"3", "npu_standin.c": b"s"}, force=False, about=ABOUT)
    assert (folder / "main.cpp").read_bytes() == b"2"


def test_nothing_is_written_through_a_symlink(tmp_path: Path) -> None:
    from zoo.registry.firmware.folder import write_project

    folder, elsewhere = tmp_path / "fw", tmp_path / "elsewhere"
    elsewhere.mkdir()
    write_project(folder, {"main.cpp": b"1", "model/a.pte": b"a"}, force=False, about=ABOUT)
    (folder / "model" / "a.pte").unlink()
    (folder / "model").rmdir()
    (folder / "model").symlink_to(elsewhere)
    for force in (False, True):
        with pytest.raises(UsageError, match=r"fw/model is a symlink, and zoo never writes through one"):
            write_project(folder, {"main.cpp": b"2", "model/b.pte": b"b"}, force=force, about=ABOUT)
    assert list(elsewhere.iterdir()) == [] and (folder / "main.cpp").read_bytes() == b"1"
    link = tmp_path / "link"
    link.symlink_to(folder)
    with pytest.raises(UsageError, match="link is a symlink"):
        write_project(link, {"main.cpp": b"2"}, force=True, about=ABOUT)


@pytest.mark.parametrize("swapped", ["model", "model/sub", ""])
def test_a_symlink_swapped_in_after_the_check_is_not_written_through(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     swapped: str) -> None:
    """The check looks at the names once; the writes then open each folder without following a symlink,
    so one put in its place in between (by another process) is refused, not written through."""
    from zoo.registry.firmware import folder as module

    project, elsewhere = tmp_path / "fw", tmp_path / "elsewhere"
    elsewhere.mkdir()
    files = {"main.cpp": b"2", "model/b.pte": b"b", "model/sub/c.h": b"c"}
    module.write_project(project, {"main.cpp": b"1", "model/a.pte": b"a", "model/sub/a.h": b"a"}, force=False,
                         about=ABOUT)
    checked = module._refuse_symlinks

    def check_then_swap(folder: Path, names: Iterable[str]) -> None:
        checked(folder, names)
        target = folder / swapped if swapped else folder
        target.rename(tmp_path / "moved")
        target.symlink_to(elsewhere)

    monkeypatch.setattr(module, "_refuse_symlinks", check_then_swap)
    with pytest.raises(UsageError, match=f"{project / swapped if swapped else project} is a symlink, and zoo never "
                                         "writes through one. Nothing was written through it"):
        module.write_project(project, files, force=False, about=ABOUT)
    assert list(elsewhere.iterdir()) == []
    assert not [p for p in tmp_path.rglob("*") if "zoo-tmp" in p.name]
    assert not [p for p in (tmp_path / "moved").rglob("*") if p.name in ("b.pte", "c.h")]


def test_a_record_naming_paths_outside_the_folder_is_not_zoos(tmp_path: Path) -> None:
    from zoo.registry.firmware.folder import write_project

    folder, outside = tmp_path / "fw", tmp_path / "precious.txt"
    outside.write_text("keep")
    folder.mkdir()
    (folder / RECORD).write_text(json.dumps({"generator": "zoo firmware", "files": ["../precious.txt"]}))
    with pytest.raises(UsageError, match=r"no zoo-firmware\.json there says zoo generated it"):
        write_project(folder, {"main.cpp": b"1"}, force=False, about=ABOUT)
    write_project(folder, {"main.cpp": b"1"}, force=True, about=ABOUT)
    assert outside.read_text() == "keep"
