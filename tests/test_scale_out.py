"""Scale-out wiring, without a cluster: --shard through the real resolver (with
the fake compile), the [executor] table, and the option checks. Ray itself is
tested in tests/registry/test_ray_executor.py; the partition in tests/registry/test_shard.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_zoo
from tests.fake_compile import FakeCompile
from zoo import Artifact, ConfigError, FetchOptions, Skipped, UsageError, Zoo
from zoo._api.fetching import executor_options


def test_shards_build_disjoint_units_that_together_cover_the_request(fake_compile: FakeCompile) -> None:
    zoo = Zoo()
    built: dict[str, set[str]] = {}
    for k in (1, 2):
        outcomes = zoo.fetch_outcomes(["add"], ["u55-128", "portable"], shard=(k, 2))
        assert len(outcomes) == 2
        built[f"{k}/2"] = {o.manifest.target for o in outcomes if isinstance(o, Artifact)}
        skipped = [o for o in outcomes if isinstance(o, Skipped)]
        assert len(skipped) == 1 and skipped[0].shard == (k, 2)
    assert built["1/2"] | built["2/2"] == {"ethos-u55-128", "portable"}
    assert not built["1/2"] & built["2/2"]
    # Each unit compiled exactly once, by its own shard, although both shards saw both requests.
    assert sorted(fake_compile.calls) == [("add", ["ethos-u55-128"]), ("add", ["portable"])]


def test_a_skipped_request_is_not_a_failure(fake_compile: FakeCompile) -> None:
    arts = Zoo().fetch_many(["add"], ["u55-128", "portable"], shard=(1, 2))
    assert len(arts) == 1 and isinstance(arts[0], Artifact)


@pytest.mark.slow
def test_the_cli_refuses_a_shard_that_does_not_exist() -> None:
    proc = run_zoo("fetch", "add", "-t", "u55-128,portable", "--shard", "9/2", "--no-build")
    assert proc.returncode == 2
    assert "--shard 9/2: shards are numbered 1 to 2, so K must be one of those" in proc.stderr
    proc = run_zoo("fetch", "add", "-t", "u55-128", "--shard", "half")
    assert proc.returncode == 2 and "is not K/N" in proc.stderr


def test_executor_table_in_zoo_toml(tmp_path: Path) -> None:
    (tmp_path / "zoo.toml").write_text('[executor]\nname = "ray"\nray_address = "ray://head:10001"\n')
    zoo = Zoo()
    opts = executor_options(zoo, FetchOptions())
    assert (opts.executor, opts.ray_address) == ("ray", "ray://head:10001")
    # A command's own choice wins; the address is only for Ray.
    assert executor_options(zoo, FetchOptions(executor="processes", jobs=2)).ray_address is None
    (tmp_path / "zoo.toml").write_text('[executor]\nname = "slurm"\n')
    with pytest.raises(ConfigError, match=r"key 'executor.name' must be one of inline, processes, ray, got 'slurm'"):
        Zoo().config  # noqa: B018
    (tmp_path / "zoo.toml").write_text('[executor]\nnodes = 4\n')
    with pytest.raises(ConfigError, match=r"unknown key 'executor.nodes'; expected one of: name, ray_address, ray_results"):
        Zoo().config  # noqa: B018


def test_a_ray_address_alone_means_ray_and_is_refused_for_processes() -> None:
    opts = executor_options(Zoo(), FetchOptions(ray_address="auto"))
    assert opts.executor == "ray"
    with pytest.raises(UsageError, match=r"--ray-address auto is for --executor ray, not --executor processes"):
        FetchOptions(executor="processes", ray_address="auto")
    with pytest.raises(UsageError, match=r"--shard 3/2: shards are numbered 1 to N"):
        FetchOptions(shard=(3, 2))


def test_the_cli_says_what_the_other_shards_build(fake_compile: FakeCompile) -> None:
    from click.testing import CliRunner

    from zoo.cli import main

    result = CliRunner().invoke(main, ["fetch", "add", "-t", "u55-128,portable", "--shard", "2/2", "--json"])
    assert result.exit_code == 0, result.output
    assert "shard 2/2: skipped 1 of 2 request(s); the other shards build them" in result.stderr
    items = json.loads(result.stdout)
    assert [list(i) for i in items if "skipped" in i] == [["skipped"]] and len(items) == 2
    assert len(fake_compile.calls) == 1


def test_the_example_ci_matrix_builds_every_shard_once() -> None:
    yaml = pytest.importorskip("yaml")
    from tests.conftest import ROOT

    workflow = yaml.safe_load((ROOT / "examples" / "ci-matrix.yml").read_text())
    job = workflow["jobs"]["build"]
    shards = job["strategy"]["matrix"]["shard"]
    build = next(step["run"] for step in job["steps"] if "zoo build" in step.get("run", ""))
    assert shards == list(range(1, len(shards) + 1))
    assert f"--shard ${{{{ matrix.shard }}}}/{len(shards)}" in build
    publish = next(step["run"] for step in job["steps"] if "zoo publish" in step.get("run", ""))
    assert "--to s3://" in publish
