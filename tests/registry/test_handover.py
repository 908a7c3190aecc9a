"""Ray's results through a shared remote (``--ray-results``): the worker's half
(``hand_over``) and the driver's (``take_over``) run here in one process, on
``add``'s artifacts from the fake compile, against a real directory remote.
tests/remotes/test_object_store.py runs the same against S3 on moto, and
tests/registry/test_ray_executor.py runs it on a real Ray cluster.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fake_compile import FakeCompile
from zoo import ConfigError, FetchOptions, UsageError, Zoo
from zoo._api.fetching import executor_options
from zoo._config import load_config
from zoo.registry.build_units.handover import hand_over, handed_over, results_remote, take_over
from zoo.registry.build_units.run import run_unit
from zoo.registry.build_units.unit import (
    BuildUnit,
    BuiltArtifact,
    UnitFailure,
    UnitResult,
    UnitTarget,
)
from zoo.registry.store.cache import sha256_bytes

NODE = "ray node 10.0.0.2 (ffffffff)"


def unit_for(zoo: Zoo, model: str, *targets: str) -> BuildUnit:
    requests = [zoo.request(model, t) for t in targets]
    return BuildUnit(model=model, weights=requests[0].weights.name,
                     targets=tuple(UnitTarget(r.target, r.key_inputs()) for r in requests), plugins=zoo.load_options)


@pytest.fixture
def built(fake_compile: FakeCompile) -> UnitResult:
    result = run_unit(unit_for(Zoo(), "add", "u55-128"))
    assert all(isinstance(o, BuiltArtifact) and o.files for o in result.outcomes), result
    return result


def _only(result: UnitResult) -> BuiltArtifact:
    [outcome] = result.outcomes
    assert isinstance(outcome, BuiltArtifact), outcome
    return outcome


def test_the_worker_sends_manifests_and_the_driver_gets_the_same_bytes_back(built: UnitResult, tmp_path: Path) -> None:
    url = results_remote(str(tmp_path / "results"))
    handed = hand_over(built, url, node=NODE)
    sent = _only(handed)
    assert sent.files == {} and handed_over(sent)
    assert sent.manifest == _only(built).manifest
    index = json.loads((tmp_path / "results" / "index.json").read_text())
    assert list(index["models"]["add"]["u55-128"]) == [sent.manifest.key]

    back = _only(take_over(handed, url))
    assert back.files == _only(built).files
    assert back.manifest.key == sent.manifest.key and back.manifest.files == sent.manifest.files


def test_an_artifact_the_remote_already_had_comes_back_whole(built: UnitResult, tmp_path: Path) -> None:
    url = results_remote(str(tmp_path / "results"))
    hand_over(built, url, node=NODE)
    again = hand_over(built, url, node=NODE)  # publishing never replaces: that record may lack what this build added
    assert _only(again).files == _only(built).files and not handed_over(_only(again))
    assert take_over(again, url) == again


@pytest.mark.slow
def test_a_file_altered_at_the_remote_fails_its_target_and_caches_nothing(
    built: UnitResult, tmp_path: Path, isolated: Path
) -> None:
    url = results_remote(str(tmp_path / "results"))
    handed = hand_over(built, url, node=NODE)
    [pte] = (tmp_path / "results").rglob("*.pte")
    data = bytearray(pte.read_bytes())
    data[-1] ^= 0xFF
    pte.write_bytes(bytes(data))
    [refused] = take_over(handed, url).outcomes
    assert isinstance(refused, UnitFailure) and refused.error == "IntegrityError"
    assert refused.message.startswith(f"add → ethos-u55-128: ethos-u55-128's artifact at --ray-results is refused: {url}: ")
    assert "altered or corrupt" in refused.message and "nothing of it was cached" in refused.message
    assert list(Zoo().cache.keys()) == []


def test_a_manifest_edited_at_the_remote_and_re_hashed_into_the_index_is_refused(
    built: UnitResult, tmp_path: Path, isolated: Path
) -> None:
    # What an attacker with write access to the results folder does: forge the verification record
    # and the estimate, then re-hash index.json so that every digest the remote holds agrees.
    url = results_remote(str(tmp_path / "results"))
    other = _only(hand_over(run_unit(unit_for(Zoo(), "add", "portable")), url, node=NODE))
    handed = hand_over(built, url, node=NODE)
    [path] = [p for p in (tmp_path / "results").rglob("manifest.json") if _only(built).manifest.key in str(p.parent)]
    before = path.read_bytes()
    manifest = json.loads(before)
    manifest["verification"] = {"numerics": {"passed": True}}
    manifest["estimate"] = {**(manifest.get("estimate") or {}), "inference_ms": 1e-06}
    path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    index = tmp_path / "results" / "index.json"
    index.write_text(index.read_text().replace(sha256_bytes(before), sha256_bytes(path.read_bytes())))

    [refused] = take_over(handed, url).outcomes
    assert isinstance(refused, UnitFailure) and refused.error == "IntegrityError"
    assert refused.message == (f"add → ethos-u55-128: ethos-u55-128's manifest.json at --ray-results {url} is not the "
                               "one its worker built (other sha256); it was altered there and nothing of it was "
                               "cached: build it again, and check who else writes there")
    assert list(Zoo().cache.keys()) == []
    # The other target, untouched at the same remote, still comes back.
    other_unit = UnitResult(unit_for(Zoo(), "add", "portable"), (other,))
    assert isinstance(_only(take_over(other_unit, url)), BuiltArtifact)


def test_an_artifact_missing_from_the_index_fails_its_target(built: UnitResult, tmp_path: Path) -> None:
    url = results_remote(str(tmp_path / "results"))
    handed = hand_over(built, url, node=NODE)
    (tmp_path / "results" / "index.json").write_text('{"schema": 1, "models": {}}')
    [missing] = take_over(handed, url).outcomes
    assert isinstance(missing, UnitFailure)
    assert missing.message == (f"add → ethos-u55-128: the worker published ethos-u55-128's artifact to --ray-results {url}, "
                               "but its index.json does not list it; build it again")


def test_a_worker_that_cannot_publish_fails_its_targets_and_says_where(built: UnitResult, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    url = results_remote(str(blocker / "results"))
    [failed] = hand_over(built, url, node=NODE).outcomes
    assert isinstance(failed, UnitFailure)
    assert failed.message.startswith(f"add → ethos-u55-128: {NODE} could not publish its artifacts to --ray-results {url} (")
    assert failed.message.endswith("let every node write there, or leave --ray-results out to bring results back through Ray")


def test_failures_pass_through_untouched(tmp_path: Path) -> None:
    unit = unit_for(Zoo(), "add", "u55-128")
    result = UnitResult(unit, (UnitFailure("BuildError", "lowering failed"),))
    url = results_remote(str(tmp_path / "results"))
    assert hand_over(result, url, node=NODE) == result
    assert take_over(result, url) == result
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize(("url", "why"), [
    ("memory://zoo", "a memory remote lives in one process, and Ray's workers are other processes"),
    ("https://example.com/zoo", "a http remote is read-only"),
])
def test_remotes_a_cluster_cannot_share_are_refused(url: str, why: str) -> None:
    with pytest.raises(UsageError, match=rf"^--ray-results {url}: {why}; give a directory every node mounts, "
                                         r"s3://BUCKET/PREFIX or hf://ORG/REPO$"):
        results_remote(url)


def test_a_relative_directory_is_made_absolute_for_the_nodes(isolated: Path) -> None:
    assert results_remote("shared/results") == str(isolated / "shared" / "results")
    config = isolated / "project" / "zoo.toml"
    config.parent.mkdir()
    config.write_text('[executor]\nray_results = "results"\n')
    assert load_config(config).ray_results == str(config.parent / "results")
    config.write_text('[executor]\nray_results = ""\n')
    with pytest.raises(ConfigError, match=r"executor\.ray_results"):
        load_config(config)


def test_ray_results_implies_ray_and_belongs_to_it(isolated: Path) -> None:
    with pytest.raises(UsageError, match=r"^--ray-results /x is for --executor ray, not --executor processes$"):
        FetchOptions(executor="processes", ray_results="/x")
    opts = executor_options(Zoo(), FetchOptions(ray_results="/x"))
    assert (opts.executor, opts.ray_results) == ("ray", "/x")


@pytest.mark.parametrize(("option", "says"), [
    ("--ray-results", "--ray-results '' is empty: give a remote every node can write"),
    ("--ray-address", "--ray-address '' is empty: give the cluster's address"),
])
def test_an_empty_ray_option_is_a_usage_error_not_the_default(isolated: Path, option: str, says: str) -> None:
    from tests.conftest import run_probed

    probed = run_probed("fetch", "add", "-t", "u55-128", option, "", "--no-build", watch=("ray", "torch"))
    assert probed.returncode == 2, probed.stderr
    assert says in probed.stderr and "or leave the option out" in probed.stderr
    assert probed.loaded == []
    with pytest.raises(UsageError, match=r"^--ray-results ' ' is empty"):
        FetchOptions(ray_results=" ")
