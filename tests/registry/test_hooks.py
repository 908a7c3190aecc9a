"""The register_boards and register_remotes hooks, board names, and the environment flags."""

from __future__ import annotations

import io
import json
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.registry.test_plugin_loader import _spec
from zoo import Board, ConfigError, PluginError, Remote, UsageError, hookimpl
from zoo._api import Zoo, ZooOptions
from zoo._config import Config, load_config
from zoo.registry.catalog.plugin_loader import LoadOptions, Registry
from zoo.registry.events import ByteProgress
from zoo.registry.npu.targets import TargetTable
from zoo.registry.remotes import RemoteFactory, parse_remote
from zoo.registry.remotes.index import Index

LAB = Board("lab-u85", "u85-256", memory_mode="Shared_Sram", sram_bytes=2 << 20, description="a lab board")


class MemoryRemote(Remote):
    kind = "mem"
    network = False

    def __init__(self, url: str, base: Path | None = None) -> None:
        super().__init__(url)
        self.base = base

    def read_index(self) -> Index:
        return Index()

    def download(self, path: str, dest: Path, *, size: int | None, progress: ByteProgress | None = None,
                 fresh: bool = False) -> None:
        raise AssertionError("not used")


class LabPlugin:
    @hookimpl
    def register_boards(self, register: Callable[[Board], None]) -> None:
        register(LAB)

    @hookimpl
    def register_remotes(self, register: Callable[[str, RemoteFactory], None]) -> None:
        register("mem", MemoryRemote)


class _Registers:
    """A plugin registering one model, then ``boards`` and ``remotes``: all or nothing goes in."""

    def __init__(self, boards: tuple[object, ...] = (), remotes: tuple[tuple[object, object], ...] = ()) -> None:
        self.boards = boards
        self.remotes = remotes

    @hookimpl
    def register_models(self, register: Callable[[object], None]) -> None:
        register(_spec("bystander"))

    @hookimpl
    def register_boards(self, register: Callable[[object], None]) -> None:
        for b in self.boards:
            register(b)

    @hookimpl
    def register_remotes(self, register: Callable[[object, object], None]) -> None:
        for scheme, factory in self.remotes:
            register(scheme, factory)


class _RaisesInBoards:
    @hookimpl
    def register_boards(self, register: Callable[[Board], None]) -> None:
        raise RuntimeError("no boards today")


@pytest.fixture
def registry() -> Registry:
    reg = Registry(stderr=io.StringIO())
    reg.add_plugin(LabPlugin(), "lab")
    return reg


def _stderr(reg: Registry) -> str:
    stream = reg._stderr
    assert isinstance(stream, io.StringIO)
    return stream.getvalue()


# -- boards ------------------------------------------------------------------------------


def test_a_plugin_board_resolves_as_a_target(registry: Registry) -> None:
    assert registry.plugins[0].status == "ok" and registry.plugins[0].boards == ["lab-u85"]
    assert registry.boards == [LAB]
    t = TargetTable.from_config(Config(), registry.boards).resolve("lab-u85")
    assert (t.name, t.board, t.accelerator, t.memory_mode) == ("lab-u85", "lab-u85", "ethos-u85-256", "Shared_Sram")
    assert t.system_config == "Ethos_U85_SYS_DRAM_Mid"  # the family default, as the board gives none
    assert t.sram_budget == t.sram_bytes == 2 << 20
    assert Zoo(registry=registry).target("lab-u85") == t


def test_a_plugin_board_shows_in_zoo_targets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from zoo.cli import main

    (tmp_path / "lab_boards_plugin.py").write_text(textwrap.dedent("""
        from zoo import Board, hookimpl

        @hookimpl
        def register_boards(register):
            register(Board("lab-u85", "u85-256", description="a lab board"))
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    result = CliRunner().invoke(main, ["-p", "lab_boards_plugin", "targets", "--json"])
    assert result.exit_code == 0, result.output
    by_name = {t["name"]: t for t in json.loads(result.stdout)["targets"]}
    assert by_name["lab-u85"]["board"] == "lab-u85" and by_name["lab-u85"]["accelerator"] == "ethos-u85-256"
    assert "corstone-300" in by_name  # the built-ins stay


@pytest.mark.parametrize(
    ("board", "message"),
    [
        (Board("u55-128", "ethos-u85-256"), "'u55-128' is an alias of the accelerator ethos-u55-128"),
        (Board("ethos-u65-256", "u65-256"), "'ethos-u65-256' is an accelerator"),
        (Board("portable", "u55-128"), "'portable' is the portable CPU target"),
        (Board("corstone-300", "u55-256"), "board name 'corstone-300' is a built-in board"),
        (Board("lab-u85", "u55-128"), "board name 'lab-u85' is already registered by plugin 'lab'"),
        (Board("lab2", "u99-1"), "target 'u99-1' is not an Ethos-U accelerator"),
        (Board("lab2", "u55-128", memory_mode="Dedicated_Sram"), "board 'lab2': memory mode 'Dedicated_Sram' is not valid"),
        (Board("Lab 2", "u55-128"), "invalid Board 'Lab 2'"),
        ("lab2", "register() takes a zoo.Board, got str"),
    ],
)
def test_a_bad_plugin_board_skips_the_plugin_naming_plugin_and_hook(registry: Registry, board: object, message: str) -> None:
    status = registry.add_plugin(_Registers(boards=(board,)), "thief")
    assert status.status == "error"
    line = _stderr(registry).strip()
    assert len(line.splitlines()) == 1
    assert line.startswith("zoo: skipped plugin 'thief'") and "hook register_boards: " in line and message in line
    # Nothing of it goes in: not its board, not its model, not its hooks.
    assert registry.boards == [LAB] and "bystander" not in registry.catalog
    assert registry.pm.get_plugin("thief") is None
    assert TargetTable.from_config(Config(), registry.boards).resolve("u55-128").accelerator == "ethos-u55-128"


def test_a_board_hook_that_raises_is_named(registry: Registry) -> None:
    status = registry.add_plugin(_RaisesInBoards(), "bad")
    assert status.error == "hook register_boards raised RuntimeError: no boards today"


def test_strict_makes_a_bad_board_fatal() -> None:
    reg = Registry(strict=True, stderr=io.StringIO())
    with pytest.raises(PluginError) as err:
        reg.add_plugin(_Registers(boards=(Board("u55-128", "u85-256"),)), "thief")
    assert err.value.plugin == "thief" and "hook register_boards" in str(err.value)


@pytest.mark.parametrize(
    ("name", "why"),
    [("u55-128", "is an alias of the accelerator ethos-u55-128"), ("ethos-u55-128", "is an accelerator"),
     ("U85256", "is an alias of the accelerator ethos-u85-256"), ("portable", "is the portable CPU target")],
)
def test_a_zoo_toml_board_named_like_a_target_names_file_and_key(tmp_path: Path, name: str, why: str) -> None:
    path = tmp_path / "zoo.toml"
    path.write_text(f'[boards.{name}]\ntarget = "ethos-u85-256"\n')
    with pytest.raises(ConfigError) as err:
        Zoo(ZooOptions(config_path=path), registry=Registry()).target("u55-128")
    text = str(err.value)
    assert text.startswith(f"{path}: key 'boards.{name}': ") and why in text and "rename the board" in text


def test_zoo_toml_boards_replace_plugin_and_builtin_boards(registry: Registry, tmp_path: Path) -> None:
    path = tmp_path / "zoo.toml"
    path.write_text('[boards.lab-u85]\ntarget = "u55-256"\n\n[boards.imx93]\ntarget = "u55-128"\n')
    table = TargetTable.from_config(load_config(path), registry.boards)
    assert table.resolve("lab-u85").accelerator == "ethos-u55-256"
    assert table.resolve("imx93").accelerator == "ethos-u55-128"
    assert [t.name for t in table.all_targets()].count("lab-u85") == 1


# -- remotes -----------------------------------------------------------------------------


def test_a_plugin_scheme_parses_to_the_plugins_remote(registry: Registry, tmp_path: Path) -> None:
    assert registry.plugins[0].remotes == ["mem"]
    remote = parse_remote("mem://x", base=tmp_path, schemes=registry.remote_schemes)
    assert isinstance(remote, MemoryRemote) and remote.url == "mem://x" and remote.base == tmp_path
    [via_zoo] = Zoo(registry=registry).remotes(["mem://y"])
    assert isinstance(via_zoo, MemoryRemote) and via_zoo.url == "mem://y"
    # The built-ins still parse next to it, and without the plugin the scheme is unknown.
    assert parse_remote("hf://arm/zoo", schemes=registry.remote_schemes).kind == "hf"
    with pytest.raises(UsageError, match=r"unknown scheme 'mem'; known schemes: abfs://, az://, file://, gcs://, gs://, hf://, http://, https://, memory://, s3://"):
        parse_remote("mem://x")


def test_an_unknown_scheme_lists_the_plugins_too(registry: Registry) -> None:
    with pytest.raises(UsageError) as err:
        parse_remote("ftp://bucket", schemes=registry.remote_schemes)
    assert "unknown scheme 'ftp'" in str(err.value) and "mem://" in str(err.value) and "hf://" in str(err.value)


@pytest.mark.parametrize(
    ("scheme", "factory", "message"),
    [
        ("hf", MemoryRemote, "remote scheme 'hf' is built in"),
        ("file", MemoryRemote, "remote scheme 'file' is built in"),
        ("mem", MemoryRemote, "remote scheme 'mem' is already registered by plugin 'lab'"),
        ("mem://", MemoryRemote, "remote scheme 'mem://' must be lower-case letters"),
        ("lab\n", MemoryRemote, "remote scheme 'lab\\n' must be lower-case letters"),  # $ matched before the newline
        ("other", "not callable", "the factory for remote scheme 'other' is not callable"),
    ],
)
def test_a_bad_plugin_scheme_is_refused(registry: Registry, scheme: str, factory: object, message: str) -> None:
    status = registry.add_plugin(_Registers(remotes=((scheme, factory),)), "thief")
    assert status.status == "error" and status.remotes == []
    line = _stderr(registry).strip()
    assert line.startswith("zoo: skipped plugin 'thief'") and "hook register_remotes: " in line and message in line
    assert set(registry.remote_schemes) == {"mem"} and "bystander" not in registry.catalog
    assert parse_remote("hf://arm/zoo", schemes=registry.remote_schemes).kind == "hf"


def test_a_factory_that_fails_is_named_after_its_plugin() -> None:
    class Returns:
        @hookimpl
        def register_remotes(self, register: Callable[[str, RemoteFactory], None]) -> None:
            register("odd", lambda url, base: "not a remote")  # type: ignore[arg-type, return-value]
            register("boom", lambda url, base: 1 // 0)  # type: ignore[arg-type, return-value]

    reg = Registry(stderr=io.StringIO())
    reg.add_plugin(Returns(), "odd-plugin")
    with pytest.raises(PluginError, match=r"plugin 'odd-plugin': the odd:// factory of hook register_remotes returned str"):
        parse_remote("odd://x", schemes=reg.remote_schemes)
    with pytest.raises(PluginError, match=r"plugin 'odd-plugin': the boom:// factory of hook register_remotes raised ZeroDivisionError"):
        parse_remote("boom://x", schemes=reg.remote_schemes)


# -- one rule for environment flags and numbers ------------------------------------------


def test_zoo_offline_takes_only_yes_or_no(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZOO_OFFLINE", "off")
    assert load_config().offline is False
    monkeypatch.setenv("ZOO_OFFLINE", "2")
    with pytest.raises(ConfigError, match=r"ZOO_OFFLINE='2' is not a yes/no value"):
        load_config()


def test_zoo_strict_plugins_takes_only_yes_or_no(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZOO_STRICT_PLUGINS", "yes")
    assert LoadOptions.from_env().strict is True
    monkeypatch.setenv("ZOO_STRICT_PLUGINS", "maybe")
    with pytest.raises(ConfigError, match=r"ZOO_STRICT_PLUGINS='maybe' is not a yes/no value"):
        LoadOptions.from_env()


@pytest.mark.parametrize("value", ["-1", "nan", "inf"])
@pytest.mark.parametrize("name", ["ZOO_HTTP_TIMEOUT", "ZOO_HTTP_RETRIES"])
def test_http_numbers_follow_the_same_rule(monkeypatch: pytest.MonkeyPatch, name: str, value: str) -> None:
    from zoo.registry.remotes.base import retries, timeout_s

    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=rf"{name}='{value}' is not a non-negative number"):
        timeout_s() if name == "ZOO_HTTP_TIMEOUT" else retries()


# -- one set of statuses worth retrying --------------------------------------------------


@pytest.mark.parametrize("status", [408, 425, 429, 500, 502, 503, 504, 404, 403, 412])
def test_http_and_hub_retry_the_same_statuses(status: int) -> None:
    import httpx2
    from huggingface_hub.errors import HfHubHTTPError

    from zoo.registry.remotes.base import RETRY_STATUS
    from zoo.registry.remotes.http import HttpRemote, _Status
    from zoo.registry.remotes.hub import HubRemote

    url = "https://example.com/zoo/index.json"
    response = httpx2.Response(status, request=httpx2.Request("GET", url))
    http_retries = HttpRemote("https://example.com/zoo")._transient(_Status(status, url)) is not None
    hub_retries = HubRemote("arm/zoo", None, "hf://arm/zoo")._transient(HfHubHTTPError("x", response=response)) is not None
    assert http_retries == hub_retries == (status in RETRY_STATUS)
    assert (status == 425) <= hub_retries  # the hub used to give up on 425
