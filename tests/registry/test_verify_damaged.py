"""Issue 55, defect 7: ``zoo verify FILE.pte`` says which checks it ran on those bytes, never
repeats a recorded result for other bytes, and never says ``verified`` for checks it did not run.

Fast tier: damaged copies of the stored real ``add`` program for u55-128 (tests/data/fake_compile);
mnist's, with its convolution and fully connected weights, in the compile tier (the session's build).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.fake_compile import DATA
from tests.registry.test_sealed_records import verified_add, verified_template  # noqa: F401 (fixtures)
from zoo import Artifact, Zoo
from zoo.cli import main
from zoo.registry.store.cache import Entry


def _cli(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def _ofm_scale(pte: bytes) -> bytes:
    """The ADD's OFM_SCALE (cmd1 0x4024) with its lowest bit flipped: the program computes another sum."""
    at = pte.index(b"\x24\x40\x31\x00") + 4
    return pte[:at] + bytes([pte[at] ^ 1]) + pte[at + 1:]


def _input_scale(pte: bytes) -> bytes:
    """The first input's quantize scale (a double in the program's values), one bit changed."""
    at = pte.index(b"T\n\x8d?")
    return pte[:at] + bytes([pte[at] ^ 0x10]) + pte[at + 1:]


DAMAGES: dict[str, Callable[[bytes], bytes]] = {"OFM scale": _ofm_scale, "input scale": _input_scale}


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_pte_with_no_manifest_is_reported_as_structure_only(tmp_path: Path, damage: str) -> None:
    pte = tmp_path / "add_u55-128.pte"
    original = (DATA / "add_u55-128.pte").read_bytes()
    pte.write_bytes(DAMAGES[damage](original))
    assert pte.read_bytes() != original
    r = _cli("verify", str(pte), "-t", "u55-128")
    first, *rest = r.output.splitlines()
    assert "verified" not in r.output, r.output
    assert first.startswith(f"{pte}: structure ok (") and first.endswith("checks); numerics not checked"), first
    assert any(line.split()[1:5] == ["numerics", "not", "checked:", "no"] and "structure only" in line for line in rest), rest
    assert r.exit_code == 0  # no check that ran failed


def test_a_damaged_copy_beside_its_manifest_gets_no_recorded_result(verified_add: Entry, tmp_path: Path) -> None:  # noqa: F811
    out = tmp_path / "out"
    Zoo().fetch("add", "u55-128", out_dir=out)
    pte = out / "add_u55-128.pte"
    honest = _cli("verify", str(pte))
    assert honest.exit_code == 0, honest.output
    assert honest.output.startswith(f"add for ethos-u55-128 ({pte}): verified (structure, and numerics"), honest.output
    assert "bit-exact on 8 samples, 8 delegate calls" in honest.output

    for damage in DAMAGES.values():
        pte.write_bytes(damage((DATA / "add_u55-128.pte").read_bytes()))
        r = _cli("verify", str(pte))
        assert r.exit_code == 1 and r.output.startswith(f"add for ethos-u55-128 ({pte}): FAILED"), r.output
        assert "FAIL  manifest" in r.output
        assert "bit-exact" not in r.output and "npu_program" not in r.output, r.output
        assert "is not the .pte its manifest describes, so no result recorded for that .pte is shown" in r.output


def test_a_manifest_beside_the_file_is_not_believed_over_the_cache(verified_add: Entry, tmp_path: Path) -> None:  # noqa: F811
    out = tmp_path / "out"
    Zoo().fetch("add", "u55-128", out_dir=out)
    manifest = out / "manifest.json"
    data = json.loads(manifest.read_text())
    data["verification"]["numerics"]["npu_program"].update(samples=999, delegate_calls=999)
    manifest.write_text(json.dumps(data))
    r = _cli("verify", str(out / "add_u55-128.pte"))
    assert "999" not in r.output and "bit-exact on 8 samples, 8 delegate calls" in r.output, r.output
    # Without the sealed entry, the manifest's own record is not shown at all.
    shutil.rmtree(Zoo().cache_dir)
    r = _cli("verify", str(out / "add_u55-128.pte"))
    assert "999" not in r.output and "verified" not in r.output, r.output
    assert "manifest.json records a numerical check, but this cache has no sealed entry" in " ".join(r.output.split())


def _flip(pte: bytes, at: int) -> bytes:
    return pte[:at] + bytes([pte[at] ^ 0x40]) + pte[at + 1:]


@pytest.mark.compile
def test_damaged_mnist_is_never_verified(built: dict[tuple[str, str], Artifact], tmp_path: Path) -> None:
    """Issue 55's three damaged copies of mnist: an OFM scale, a weight byte of a convolution and of
    the fully connected layer. Without a manifest: structure only; beside it: the mismatch alone."""
    from zoo.registry.pte.program import read_program

    art = built[("mnist", "u55-128")]
    original = art.pte.read_bytes()
    (payload,) = read_program(original).payloads()
    weights = payload.data["weight_data"]
    start = original.index(weights)
    ofm_scale = original.index(b"\x24\x40", payload.offset) + 4  # the first OFM_SCALE's value
    damaged = {"OFM scale": _flip(original, ofm_scale), "convolution weight": _flip(original, start + 40),
               "fully connected weight": _flip(original, start + len(weights) - 40)}
    alone = tmp_path / "alone"
    alone.mkdir()
    out = tmp_path / "out"
    shutil.copytree(art.pte.parent, out)
    for name, data in damaged.items():
        (alone / art.pte.name).write_bytes(data)
        r = _cli("verify", str(alone / art.pte.name))
        assert "verified" not in r.output and "numerics not checked" in r.output, (name, r.output)
        (out / art.pte.name).write_bytes(data)
        r = _cli("verify", str(out / art.pte.name))
        assert r.exit_code == 1 and "FAIL  manifest" in r.output, (name, r.output)
        assert "bit-exact" not in r.output and "npu_program" not in r.output, (name, r.output)
