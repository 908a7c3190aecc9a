"""The release, rehearsed here without the network: the zoo commands of
``.github/workflows/release.yml``, read from it and run in order, against the
loopback Hub and moto's S3; then a light install in a fresh venv fetches from it.

What differs from a real release, and only that: the catalogue is 3 models × 2
targets (``CATALOGUE_TARGETS`` and a zoo.toml that leaves out the torchvision
classifiers), in 2 shards; the signing key is made for the test, and the wheel
the fresh venv installs pins its public half where the real one pins the
project's; ``HF_ENDPOINT`` and the ``AWS_*`` variables point at the local servers.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from string import Template

import pytest

from tests.hub_server import HubTestServer
from tests.remotes.conftest import cache_is_clean
from tests.remotes.helpers import S3Bucket, make_key_pair
from tests.remotes.light_site import build_light_site
from tests.test_workflows import zoo_lines
from zoo._version import __version__
from zoo.registry.remotes.default import REPO
from zoo.registry.remotes.signing import fingerprint, load_public_key

pytestmark = [pytest.mark.compile, pytest.mark.server, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
MODELS = ("add", "mnist", "softmax")
TARGETS = ("u55-128", "u85-256")
SHARDS = 2
REHEARSAL_TOML = """\
default_target = "u55-128"
remotes = []

[plugins]
enabled = []                # no model packs
disabled = ["torchvision"]  # nor the built-in classifiers: add, softmax and mnist remain
"""


def job_lines(job: str) -> tuple[dict[str, str], list[str]]:
    """The env and the zoo commands of ``release.yml``'s ``job``, in order (``tests/test_workflows.py`` reads them)."""
    found = [(line, env) for where, line, env in zoo_lines() if where == f"release.yml:{job}"]
    return {k: str(v) for _, env in found for k, v in env.items()}, [line for line, _ in found]


def run_line(line: str, values: dict[str, str], cwd: Path, env: dict[str, str], *,
             check: bool = True) -> subprocess.CompletedProcess[str]:
    """``line`` as the runner's shell would run it, with ``values`` for its variables."""
    full = {**env, **values}
    try:
        words = [Template(w).substitute(full) for w in shlex.split(line)]
    except KeyError as exc:
        raise AssertionError(f"{line}: the rehearsal gives no value for {exc}") from None
    words[0:1] = [sys.executable, "-m", "zoo"]
    done = subprocess.run(words, cwd=cwd, env=full, capture_output=True, text=True, timeout=1800)
    assert not check or done.returncode == 0, f"{line}\n{done.stderr}"
    return done


def test_the_release_publishes_a_signed_catalogue_a_fresh_light_install_fetches(
        tmp_path: Path, s3: S3Bucket, hub: HubTestServer) -> None:
    # The fixtures pointed the AWS_* and HF_* variables at their servers: the workflow's secrets, here.
    release_env = {k: v for k, v in os.environ.items() if k != "ZOO_CACHE_DIR"}
    keys = make_key_pair(tmp_path / "keys", "release")
    other = make_key_pair(tmp_path / "keys", "other")
    tag = f"v{__version__}"
    _, shard_lines = job_lines("shard")
    catalogue_env, catalogue_lines = job_lines("catalogue")
    assert [w.split()[1] for w in shard_lines] == ["build", "publish"]
    assert [w.split()[1] for w in catalogue_lines] == ["fetch", "publish", "site"]
    assert catalogue_env["CATALOGUE"] == f"hf://{REPO}", "the release publishes where installs look"
    assert "--release" in catalogue_lines[1] and "--sign-key" in catalogue_lines[1]
    staging = f"s3://{s3.name}/runs/1"
    values = {"CATALOGUE_TARGETS": ",".join(TARGETS), "SHARDS": str(SHARDS), "STAGING": staging,
              "CATALOGUE": catalogue_env["CATALOGUE"], "TAG": tag, "SIGN_KEY": str(keys.private)}

    # The shard jobs, each on a machine (a cache) of its own, publish unsigned to the staging bucket.
    for shard in range(1, SHARDS + 1):
        job = tmp_path / f"shard-{shard}"
        job.mkdir()
        (job / "zoo.toml").write_text(REHEARSAL_TOML)
        for line in shard_lines:
            run_line(line, {**values, "SHARD": str(shard), "ZOO_CACHE_DIR": str(job / "cache")}, job, release_env)
    staged = json.loads(s3.client.get_object(Bucket=s3.name, Key="runs/1/index.json")["Body"].read())
    assert {(m, t) for m, slugs in staged["models"].items() for t in slugs} == {(m, t) for m in MODELS for t in TARGETS}

    # The catalogue job gathers the shards, signs and publishes the release, and writes the site.
    job = tmp_path / "catalogue"
    job.mkdir()
    (job / "zoo.toml").write_text(REHEARSAL_TOML)
    for line in catalogue_lines:
        run_line(line, {**values, "ZOO_CACHE_DIR": str(job / "cache")}, job, release_env)
    released = hub.files(REPO, tag)
    index = json.loads(released["index.json"])
    assert index["written_by"] == __version__ and index["readable_by"].startswith(">=")
    records = [r for slugs in index["models"].values() for keys_ in slugs.values() for r in keys_.values()]
    assert len(records) == len(MODELS) * len(TARGETS)
    assert {r["signature"]["key"] for r in records} == {fingerprint(load_public_key(keys.public))}
    assert (job / "site" / "index.json").read_bytes() == released["index.json"], "the release attaches what it published"
    assert (job / "site" / "index.html").is_file()

    # Published releases are immutable: the same release again is refused, and the tag serves the same bytes.
    again = run_line(catalogue_lines[1], {**values, "ZOO_CACHE_DIR": str(job / "cache")}, job, release_env, check=False)
    assert again.returncode != 0 and "immutable" in again.stderr, again.stderr
    assert hub.files(REPO, tag) == released

    # A light install: the wheel, built with the test's public key pinned, in a fresh venv without torch.
    venv = fresh_light_venv(tmp_path, keys.public)
    user = tmp_path / "user"
    user.mkdir()  # no zoo.toml: the default remote, hf://ethosu-zoo/ethos-u-zoo@v<version>, at the loopback Hub
    env = user_env(release_env, hub, cache=user / "cache")
    got = subprocess.run([str(venv / "bin" / "zoo"), "fetch", "mnist", "-t", "u55-128", "--json"],
                         cwd=user, env=env, capture_output=True, text=True, timeout=600)
    assert got.returncode == 0, got.stderr
    out = json.loads(got.stdout)
    assert out["source"] == "remote" and out["manifest"]["verification"]["signature"]["key_file"].endswith(
        "release-signing.pub")
    pte = Path(out["pte"]).read_bytes()
    [record] = index["models"]["mnist"]["u55-128"].values()
    listed = next(f for f in record["files"] if f["kind"] == "pte")
    assert hashlib.sha256(pte).hexdigest() == listed["sha256"]
    shard_built = [p for p in tmp_path.glob("shard-*/cache/**/*.pte") if p.read_bytes() == pte]
    assert shard_built, "the bytes a user fetches are the bytes a shard built"

    # The same install pinning another key refuses every artifact of the release, and caches nothing.
    pinned = next(venv.glob("lib/python*/site-packages/zoo/registry/data/release-signing.pub"))
    pinned.write_bytes(other.public.read_bytes())
    refused_cache = user / "cache-refused"
    refused = subprocess.run([str(venv / "bin" / "zoo"), "fetch", "mnist", "-t", "u55-128", "--no-build"],
                             cwd=user, env=user_env(release_env, hub, cache=refused_cache),
                             capture_output=True, text=True, timeout=600)
    assert refused.returncode == 1
    signer = fingerprint(load_public_key(keys.public))
    assert f"it is signed by key {signer[:16]}…, which is not its trusted key ({pinned})" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr and cache_is_clean(refused_cache)


def user_env(base: dict[str, str], hub: HubTestServer, *, cache: Path) -> dict[str, str]:
    env = {k: v for k, v in base.items() if not k.startswith(("ZOO_", "PYTHON", "VIRTUAL_ENV"))}
    env.pop("HF_TOKEN", None)  # a user reads the public catalogue without one
    env.update({"ZOO_CACHE_DIR": str(cache), "HF_ENDPOINT": hub.url, "HF_HUB_CACHE": str(cache.parent / f"hf-{cache.name}")})
    return env


def fresh_light_venv(tmp_path: Path, pinned_key: Path) -> Path:
    """``pip install ethosu-zoo`` as a user gets it, offline: the wheel built from this tree with
    ``pinned_key`` as its release key, installed into a new venv; its dependencies (no torch
    among them) come from this venv's copies, through a .pth file."""
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "zoo", source / "zoo", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(pinned_key, source / "zoo" / "registry" / "data" / "release-signing.pub")
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist),
                    str(source)], check=True, capture_output=True)
    [wheel] = dist.glob("ethosu_zoo-*.whl")
    venv = tmp_path / "fresh-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index",
                    str(wheel)], check=True, capture_output=True)
    deps = build_light_site(tmp_path / "deps", zoo_metadata=False)
    [site] = venv.glob("lib/python*/site-packages")
    (site / "light-dependencies.pth").write_text(f"{deps}\n")
    assert subprocess.run([str(python), "-c", "import torch"], capture_output=True).returncode != 0
    return venv
