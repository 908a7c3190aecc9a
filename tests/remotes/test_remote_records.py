"""Issue 55, also-review: an artifact fetched from a remote with ``--verify``, bytes zoo did not build.

What runs: the remote's index and every file's digest, the structural checks, the header's full
check; not the numerics, which need the lowered program. So a remote's numerics record is shown as
the publisher's, never as zoo's own, and what only zoo may say (``local_build``) is dropped however
the manifest spells it. Fast tier: the fake compile builds ``add``; the remote is a directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from tests.registry.test_sealed_records import verified_add, verified_template  # noqa: F401 (fixtures)
from tests.remotes.helpers import rewrite_manifest
from zoo import Zoo
from zoo.cli import main
from zoo.registry.store.cache import Cache, Entry


def _cli(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


@pytest.fixture
def remote(verified_add: Entry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:  # noqa: F811
    """add with its --verify record, published to a directory; then a fresh cache to fetch into."""
    root = tmp_path / "remote"
    Zoo().publish(str(root), everything=True, notice=lambda msg: None)
    monkeypatch.setenv("ZOO_CACHE_DIR", str(tmp_path / "fresh-cache"))
    return root


def _said(result: Result) -> str:
    return " ".join(result.output.split())


def test_a_remote_s_numerics_are_shown_as_the_publisher_s(remote: Path) -> None:
    fetched = _cli("fetch", "add", "-t", "u55-128", "--remote", str(remote), "--verify", "--no-build")
    assert fetched.exit_code == 0, fetched.output
    said = _said(fetched)
    assert "downloaded add for ethos-u55-128 from" in said
    assert ("numerics as recorded by the publisher, not run here, passed on 8 calibration samples "
            "(tosa_reference_model)") in said, said
    verified = _said(_cli("verify", "add", "-t", "u55-128", "--no-build"))
    assert "add for ethos-u55-128 (add_u55-128.pte): structure ok (" in verified, verified
    assert "numerics passed as the publisher recorded them, not run here" in verified
    assert "recorded by the publisher of this prebuilt artifact and not run here" in verified
    assert "verified (" not in verified


@pytest.mark.parametrize("claim", [{"local_build": True}, {"local_build": "yes"}, {"signature": {"key": "x"}}])
def test_a_remote_manifest_cannot_smuggle_zoo_s_own_word(remote: Path, claim: dict[str, Any]) -> None:
    """A publisher that writes ``local_build`` (or a signer) into its manifest, and re-records the
    manifest's digest in its index as it may: the claim is dropped, its record stays the publisher's."""
    def forge(data: dict[str, Any]) -> None:
        data["verification"].update(claim)
        data["verification"]["numerics"]["npu_program"].update(samples=999, delegate_calls=999)

    rewrite_manifest(remote, "add", "u55-128", forge)
    fetched = _cli("fetch", "add", "-t", "u55-128", "--remote", str(remote), "--verify", "--no-build")
    assert fetched.exit_code == 0, fetched.output
    said = _said(fetched)
    assert "numerics as recorded by the publisher, not run here, passed" in said, said
    assert "NPU program bit-exact on 999 samples, 999 delegate calls" in said  # the publisher's claim, shown as one
    (entry,) = [e for _k, e, _p in Cache(Zoo().cache_dir).scan() if e is not None]
    assert entry.sealed and set(entry.record) & {"local_build", "signature"} == set()
