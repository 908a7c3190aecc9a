"""Shared fixtures: cheap artifacts built once per session, published copies, and ways to run zoo."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Probed, run_probed
from tests.hub_server import HubTestServer
from tests.remotes.helpers import S3Bucket
from tests.remotes.light_site import build_light_site, light_env
from tests.remotes.servers import MotoServer
from zoo import Artifact, Zoo
from zoo.registry.store.cache import Cache

BUILDS = [("add", "u55-128"), ("add", "portable"), ("mnist", "u55-128")]
HF_TOKEN = "hf_zooTestTokenNeverPrinted0123456789"


def run_checked(*args: str, env: dict[str, str] | None = None, light_site: Path | None = None) -> Probed:
    """The real CLI in a fresh interpreter; ``light_site`` runs it as a light install."""
    return run_probed(*args, env=env, base_env=light_env(light_site) if light_site else None,
                      no_site=light_site is not None)


@pytest.fixture(scope="session")
def source_cache(built: dict[tuple[str, str], Artifact], shared_cache: Path,
                 tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache holding the cheap built-ins: the session's shared builds of them, copied."""
    root = tmp_path_factory.mktemp("source-cache")
    for model, target in BUILDS:
        key = built[(model, target)].key
        shutil.copytree(Cache(shared_cache).entry_path(key), Cache(root).entry_path(key))
    return root


@pytest.fixture(scope="session")
def published(source_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory remote holding every artifact of ``source_cache`` (do not modify; copy it)."""
    root = tmp_path_factory.mktemp("published") / "remote"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOO_CACHE_DIR", str(source_cache))
        report = Zoo().publish(str(root), everything=True, notice=lambda msg: None)
    assert len(report.added) == len(BUILDS)
    return root


@pytest.fixture
def published_copy(published: Path, tmp_path: Path) -> Path:
    """A private copy of ``published`` that a test may tamper with."""
    dest = tmp_path / "remote-copy"
    shutil.copytree(published, dest)
    return dest


@pytest.fixture(scope="session")
def light(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site = build_light_site(tmp_path_factory.mktemp("light-site"))
    probe = subprocess.run([sys.executable, "-S", "-c", "import torch"], env=light_env(site), capture_output=True)
    assert probe.returncode != 0, "the light site must not see torch"
    return site


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubTestServer]:
    """A test Hub; HF_* variables point the client at it, with a private HF cache and a token."""
    with HubTestServer(token=HF_TOKEN) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        monkeypatch.setenv("HF_TOKEN", HF_TOKEN)
        monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
        monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
        monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
        # In this process huggingface_hub read its endpoint and cache when first imported, so the
        # variables above come too late for it; set its constants too, whatever ran before.
        from huggingface_hub import constants

        monkeypatch.setattr(constants, "ENDPOINT", server.url)
        monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", server.url + "/{repo_id}/resolve/{revision}/{filename}")
        monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf-cache"))
        yield server


@pytest.fixture(scope="session")
def moto_server() -> Iterator[MotoServer]:
    """One moto S3 server for the whole session; each test gets a bucket of its own (``s3``)."""
    with MotoServer() as server:
        yield server


@pytest.fixture
def s3(moto_server: MotoServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> S3Bucket:
    """A fresh, empty bucket on the session's moto server. The AWS_* variables point boto (in
    this process and in the CLI's) at it; no AWS config file or profile of the machine is read."""
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(name, raising=False)
    for name, value in moto_server.env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    bucket = S3Bucket(moto_server.client(), f"zoo-{uuid.uuid4().hex[:16]}", "team/zoo")
    bucket.client.create_bucket(Bucket=bucket.name)
    return bucket


def cache_is_clean(cache_root: Path) -> bool:
    """No entry was stored and no staging folder was left behind."""
    base = cache_root / "v1"
    entries = list((base / "entries").glob("*/*")) if (base / "entries").is_dir() else []
    tmp = list((base / "tmp").iterdir()) if (base / "tmp").is_dir() else []
    return not entries and not tmp


def entry_files(cache_root: Path, key: str) -> dict[str, bytes]:
    """The entry's files; its manifest without ``verification.local_build``, which only the cache
    that built it records (a download drops it: only zoo says that of an artifact, issue 20), and
    without the manifest's seal, which is of those different bytes (issue 55)."""
    folder = cache_root / "v1" / "entries" / key[:2] / key
    files = {p.name: p.read_bytes() for p in sorted(folder.iterdir())}
    assert files.pop("manifest.seal", None) is not None, f"{folder}: no manifest.seal"
    manifest = json.loads(files["manifest.json"])
    (manifest.get("verification") or {}).pop("local_build", None)
    files["manifest.json"] = json.dumps(manifest, indent=2, sort_keys=True).encode()
    return files
