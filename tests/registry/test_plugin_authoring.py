"""What a plugin author hit (issue 21 §1b): each slip is named, with the plugin, the model
and what to do, and never a raw traceback unless asked for (--debug / ZOO_DEBUG=1)."""

from __future__ import annotations

import io

import pytest
from click.testing import CliRunner

from tests.conftest import ROOT, run_zoo
from tests.fake_compile import FakeCompile
from tests.registry.test_plugin_loader import GoodPlugin, RaisesPlugin, _spec
from zoo import Artifact, Failure, PluginError, Zoo, hookimpl
from zoo.registry.catalog.plugin_loader import Registry


class Unmarked:
    def register_models(self, register):  # type: ignore[no-untyped-def]  # @hookimpl forgotten
        register(_spec("lost"))


class Misspelt:
    @hookimpl
    def register_model(self, register):  # type: ignore[no-untyped-def]  # register_models, misspelt
        register(_spec("lost"))


class Quiet:
    @hookimpl
    def register_models(self, register):  # type: ignore[no-untyped-def]
        pass


@pytest.mark.parametrize(("plugin", "why"), [
    (Unmarked(), "register_models is not marked @zoo.hookimpl"),
    (Misspelt(), "it defines register_model, not one of the hooks register_models, register_boards, register_remotes"),
    (Quiet(), "its hooks ran but called register() for nothing"),
])
def test_a_plugin_that_registers_nothing_is_reported_not_ok(plugin: object, why: str) -> None:
    stderr = io.StringIO()
    status = Registry(stderr=stderr).add_plugin(plugin, "kws")
    assert status.status == "empty" and why in (status.error or "")
    assert f"zoo: warning: plugin 'kws' registered nothing: {why}" in stderr.getvalue()
    with pytest.raises(PluginError, match="registered nothing"):
        Registry(strict=True, stderr=io.StringIO()).add_plugin(plugin, "kws")


def test_a_taken_alias_names_the_spec_and_its_owner() -> None:
    class TakesAlias:
        @hookimpl
        def register_models(self, register):  # type: ignore[no-untyped-def]
            register(_spec("kws", aliases=("toy-alias",)))

    reg = Registry(stderr=io.StringIO())
    reg.add_plugin(GoodPlugin(), "good")
    status = reg.add_plugin(TakesAlias(), "mine")
    assert status.status == "error"
    assert ("model 'kws': its alias 'toy-alias' is already registered by plugin 'good' (model 'toy'); "
            "rename it or drop the alias") in (status.error or "")


def test_a_module_loaded_twice_says_so_instead_of_pluggys_message() -> None:
    stderr = io.StringIO()
    reg = Registry(stderr=stderr)
    plugin = GoodPlugin()
    reg.add_plugin(plugin, "installed")
    again = reg.add_plugin(plugin, "from-p")
    assert again.status == "disabled" and "already loaded as plugin 'installed'" in (again.error or "")
    assert "different name" not in stderr.getvalue() and "drop it from -p/ZOO_PLUGINS" in stderr.getvalue()
    assert reg.catalog.get("toy").source == "installed"


def test_debug_shows_a_hooks_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    quiet = io.StringIO()
    Registry(stderr=quiet).add_plugin(RaisesPlugin(), "bad")
    assert "Traceback" not in quiet.getvalue()
    monkeypatch.setenv("ZOO_DEBUG", "1")
    loud = io.StringIO()
    Registry(stderr=loud).add_plugin(RaisesPlugin(), "bad")
    text = loud.getvalue()
    assert "zoo: debug: traceback of plugin 'bad'" in text and "Traceback" in text
    assert 'raise RuntimeError("boom")' in text


@pytest.fixture
def authoring(monkeypatch: pytest.MonkeyPatch, fake_compile: FakeCompile) -> FakeCompile:
    monkeypatch.setenv("ZOO_PLUGINS", "tests.authoring_plugin")
    fake_compile.stand_ins = ("add", "add-ok", "add-missing", "add-zero")
    return fake_compile


def test_identity_errors_are_plugin_errors_naming_model_and_weights(authoring: FakeCompile) -> None:
    with pytest.raises(PluginError) as caught:
        Zoo().fetch("add-missing", "u55-128")
    text = str(caught.value)
    assert text.startswith("plugin 'tests.authoring_plugin': model 'add-missing' (weights 'trained')")
    assert "identity() raised FileNotFoundError" in text and "kws.safetensors" in text
    with pytest.raises(PluginError, match=r"model 'add-zero' \(weights 'trained'\): the weights's identity\(\) raised ZeroDivisionError"):
        Zoo().fetch("add-zero", "u55-128")


def test_identity_errors_honour_keep_going(authoring: FakeCompile) -> None:
    ok, missing, zero = Zoo().fetch_outcomes(["add-ok", "add-missing", "add-zero"], ["u55-128"], keep_going=True)
    assert isinstance(ok, Artifact)
    for failed, name in ((missing, "add-missing"), (zero, "add-zero")):
        assert isinstance(failed, Failure) and failed.model == name and failed.stage == "identity"
        assert failed.error == "PluginError" and f"model {name!r}" in failed.message


def test_the_cli_gives_one_line_and_the_traceback_only_with_debug(authoring: FakeCompile, monkeypatch: pytest.MonkeyPatch) -> None:
    from zoo.cli import main

    monkeypatch.setenv("ZOO_DEBUG", "0")  # restored after --debug sets it
    plain = CliRunner().invoke(main, ["fetch", "add-zero", "-t", "u55-128"])
    assert plain.exit_code != 0 and "Traceback" not in plain.stderr
    assert "zoo: error: plugin 'tests.authoring_plugin': model 'add-zero'" in plain.stderr
    loud = CliRunner().invoke(main, ["--debug", "fetch", "add-zero", "-t", "u55-128"])
    assert "Traceback" in loud.stderr and "ZeroDivisionError" in loud.stderr


@pytest.mark.slow
def test_zoo_plugins_shows_an_empty_plugin(tmp_path: object) -> None:
    proc = run_zoo("plugins", env={"ZOO_PLUGINS": "tests.registry.test_plugin_authoring"}, pythonpath=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "empty" in proc.stdout and "registered nothing" in proc.stderr
