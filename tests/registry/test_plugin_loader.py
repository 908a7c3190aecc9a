"""Plugin discovery and isolation."""

from __future__ import annotations

import io
import json
import textwrap
from pathlib import Path

import pytest

from tests.conftest import run_zoo
from zoo import Dataset, InputSpec, ModelSpec, PluginError, WeightsVariant, hookimpl
from zoo.registry.catalog.plugin_loader import LoadOptions, Registry


def _spec(name: str = "toy", **overrides: object) -> ModelSpec:
    fields: dict[str, object] = dict(
        name=name,
        version="1",
        description="a toy",
        task="test",
        inputs=(InputSpec("x", (1, 4)),),
        build=lambda w: None,
        example_inputs=lambda: (),
        calibration=Dataset(1, "one", lambda: [], lambda: "id"),
        weights=(WeightsVariant("none", "none", "none", "MIT", lambda: "none"),),
    )
    fields.update(overrides)
    return ModelSpec(**fields)  # type: ignore[arg-type]


class GoodPlugin:
    @hookimpl
    def register_models(self, register):  # type: ignore[no-untyped-def]
        register(_spec("toy", aliases=("toy-alias",)))


class RaisesPlugin:
    @hookimpl
    def register_models(self, register):  # type: ignore[no-untyped-def]
        register(_spec("half-registered"))
        raise RuntimeError("boom")


class DuplicatePlugin:
    @hookimpl
    def register_models(self, register):  # type: ignore[no-untyped-def]
        register(_spec("other"))
        register(_spec("toy-alias"))


class InvalidSpecPlugin:
    @hookimpl
    def register_models(self, register):  # type: ignore[no-untyped-def]
        register(_spec("Bad Name", inputs=()))


class WrongArgPlugin:
    @hookimpl
    def register_models(self, registrar):  # type: ignore[no-untyped-def]
        pass


@pytest.fixture
def registry() -> Registry:
    reg = Registry(stderr=io.StringIO())
    reg.add_plugin(GoodPlugin(), "good")
    return reg


def _stderr(reg: Registry) -> str:
    stream = reg._stderr
    assert isinstance(stream, io.StringIO)
    return stream.getvalue()


def test_good_plugin_registers_with_aliases(registry: Registry) -> None:
    assert registry.catalog.get("toy-alias").name == "toy"
    assert registry.catalog.get("toy").source == "good"
    assert registry.plugins[0].status == "ok"
    assert registry.plugins[0].models == ["toy"]


@pytest.mark.parametrize(
    ("plugin", "message"),
    [
        (RaisesPlugin(), "hook register_models raised RuntimeError: boom"),
        (DuplicatePlugin(), "model 'toy-alias': its name 'toy-alias' is already registered by plugin 'good' (model 'toy')"),
        (InvalidSpecPlugin(), "invalid ModelSpec 'Bad Name'"),
        (WrongArgPlugin(), "invalid hook implementation"),
    ],
)
def test_bad_plugin_is_skipped_whole_and_named(registry: Registry, plugin: object, message: str) -> None:
    status = registry.add_plugin(plugin, "bad")
    assert status.status == "error"
    assert message in (status.error or "")
    line = _stderr(registry).strip()
    assert line.startswith("zoo: skipped plugin 'bad'") and message in line
    assert len(line.splitlines()) == 1
    # Nothing of the bad plugin leaks into the catalog; the good one still works.
    assert [s.name for s in registry.catalog] == ["toy"]
    assert registry.pm.get_plugin("bad") is None


def test_strict_mode_makes_errors_fatal() -> None:
    reg = Registry(strict=True, stderr=io.StringIO())
    with pytest.raises(PluginError) as err:
        reg.add_plugin(RaisesPlugin(), "bad")
    assert err.value.plugin == "bad"
    assert "boom" in str(err.value)


def test_unknown_model_suggests_close_names(registry: Registry) -> None:
    from zoo import UnknownModelError

    with pytest.raises(UnknownModelError, match="Did you mean: toy"):
        registry.catalog.get("tyo")


def test_module_plugin_loads_by_import_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_local_plugin.py").write_text(textwrap.dedent("""
        from zoo import hookimpl
        from tests.registry.test_plugin_loader import _spec

        @hookimpl
        def register_models(register):
            register(_spec("local-model"))
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = Registry(stderr=io.StringIO()).load(LoadOptions(modules=("my_local_plugin",), entry_points=False))
    assert "local-model" in reg.catalog
    assert reg.plugins[0].kind == "module"


def test_builtins_register_through_entry_points() -> None:
    reg = Registry(stderr=io.StringIO()).load(LoadOptions())
    builtins = {p.name: p for p in reg.plugins if p.dist == "ethosu-zoo"}
    assert set(builtins) == {"add", "softmax", "mnist", "torchvision"}
    assert all(p.kind == "entry point" and p.status == "ok" for p in builtins.values()), _stderr(reg)
    assert {"add", "softmax", "mnist", "mv2", "mobilenet-v3-small"} <= {s.name for s in reg.catalog}


# -- real entry points from an installed distribution ---------------------------

@pytest.mark.slow
def test_installed_plugins_are_discovered_and_isolated(plugin_site: Path) -> None:
    proc = run_zoo("plugins", "--json", pythonpath=plugin_site)
    assert proc.returncode == 0, proc.stderr
    by_name = {p["name"]: p for p in json.loads(proc.stdout)}
    assert by_name["tiny"]["status"] == "ok" and by_name["tiny"]["models"] == ["tiny-linear"]
    assert by_name["tiny"]["dist"] == "zoo-test-plugins" and by_name["tiny"]["version"] == "0.3.0"
    assert by_name["broken-import"]["status"] == "error"
    assert "zoo_test_plugins_this_module_does_not_exist" in by_name["broken-import"]["error"]
    assert "data file is missing" in by_name["raises-in-hook"]["error"]
    assert "'mnist' is already registered by plugin 'mnist'" in by_name["steals-name"]["error"]
    # One line on stderr per bad plugin, naming plugin, distribution and version.
    lines = [line for line in proc.stderr.splitlines() if line.startswith("zoo: skipped")]
    assert len(lines) == 3
    assert all("(zoo-test-plugins 0.3.0)" in line for line in lines)

    listed = run_zoo("list", "--json", pythonpath=plugin_site)
    names = {m["name"] for m in json.loads(listed.stdout)}
    assert {"tiny-linear", "mnist", "mv2", "add", "softmax"} <= names
    mnist = next(m for m in json.loads(listed.stdout) if m["name"] == "mnist")
    assert mnist["plugin"] == "mnist"


def test_strict_env_makes_a_broken_plugin_fatal(plugin_site: Path) -> None:
    proc = run_zoo("list", pythonpath=plugin_site, env={"ZOO_STRICT_PLUGINS": "1"})
    assert proc.returncode == 1
    assert "plugin 'broken-import' (zoo-test-plugins 0.3.0)" in proc.stderr


@pytest.mark.slow
def test_load_plugins_env_chooses_external_plugins(plugin_site: Path) -> None:
    none = run_zoo("plugins", "--json", pythonpath=plugin_site, env={"ZOO_LOAD_PLUGINS": ""})
    statuses = {p["name"]: p["status"] for p in json.loads(none.stdout)}
    assert statuses["tiny"] == statuses["broken-import"] == "disabled"
    assert statuses["mnist"] == "ok"  # built-ins always load
    assert "skipped" not in none.stderr

    only = run_zoo("plugins", "--json", pythonpath=plugin_site, env={"ZOO_LOAD_PLUGINS": "tiny"})
    statuses = {p["name"]: p["status"] for p in json.loads(only.stdout)}
    assert statuses["tiny"] == "ok" and statuses["raises-in-hook"] == "disabled"


# -- plugins that print or exit ------------------------------------------------

NOISY_PLUGIN = textwrap.dedent('''
    import sys
    from zoo import Dataset, InputSpec, ModelSpec, WeightsVariant, hookimpl

    print("noisy: imported")

    @hookimpl
    def register_models(register):
        print("noisy: registering")
        register(ModelSpec(
            name="noisy", version="1", description="prints", task="test", inputs=(InputSpec("x", (1, 4)),),
            build=lambda w: None, example_inputs=lambda: (),
            calibration=Dataset(1, "one", lambda: [], lambda: "id"),
            weights=(WeightsVariant("none", "none", "none", "MIT", lambda: "none"),),
        ))
''')

EXITING_PLUGIN = textwrap.dedent('''
    import sys
    from zoo import hookimpl

    @hookimpl
    def register_models(register):
        sys.exit(0)
''')


def test_what_a_plugin_prints_goes_to_stderr_not_into_the_json(tmp_path: Path) -> None:
    (tmp_path / "noisy_plugin.py").write_text(NOISY_PLUGIN)
    proc = run_zoo("-p", "noisy_plugin", "list", "--json", pythonpath=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "noisy" in [m["name"] for m in json.loads(proc.stdout)]  # stdout is JSON, nothing else
    assert "noisy: imported" in proc.stderr and "noisy: registering" in proc.stderr


@pytest.mark.slow
def test_sys_exit_in_a_plugin_is_its_failure_not_zoos_exit(tmp_path: Path) -> None:
    (tmp_path / "exiting_plugin.py").write_text(EXITING_PLUGIN)
    proc = run_zoo("-p", "exiting_plugin", "list", "--json", pythonpath=tmp_path)
    assert proc.returncode == 0 and "mnist" in [m["name"] for m in json.loads(proc.stdout)]
    assert "skipped plugin 'exiting_plugin': hook register_models raised SystemExit: 0" in proc.stderr
    strict = run_zoo("--strict", "-p", "exiting_plugin", "list", pythonpath=tmp_path)
    assert strict.returncode != 0 and "SystemExit" in strict.stderr


@pytest.mark.slow
def test_a_plugin_that_imports_a_heavy_library_at_registration_is_named(tmp_path: Path) -> None:
    (tmp_path / "heavy_plugin.py").write_text("import numpy\n" + NOISY_PLUGIN.replace('"noisy"', '"heavy"'))
    (tmp_path / "light_plugin.py").write_text(NOISY_PLUGIN)
    proc = run_zoo("-p", "heavy_plugin", "list", "--json", pythonpath=tmp_path)
    assert proc.returncode == 0, proc.stderr
    said = " ".join(proc.stderr.split())
    assert "zoo: warning: plugin 'heavy_plugin' imported numpy while registering (" in said
    assert "import them inside the functions that build or load data" in said
    light = run_zoo("-p", "light_plugin", "plugins", "--json", pythonpath=tmp_path)
    assert "warning" not in light.stderr
    (status,) = [p for p in json.loads(light.stdout) if p["name"] == "light_plugin"]
    assert status["heavy"] == [] and 0 <= status["seconds"] < 1.0


def test_a_dist_info_folder_with_a_trailing_newline_is_read_from_its_metadata(tmp_path: Path) -> None:
    """``$`` matched before the final newline, so the folder's name gave ``toy 1.0`` whatever METADATA said."""
    from importlib.metadata import PathDistribution

    from zoo.registry.dists import name_version

    folder = tmp_path / "toy-1.0.dist-info\n"
    folder.mkdir()
    (folder / "METADATA").write_text("Metadata-Version: 2.1\nName: other\nVersion: 2.0\n\n")
    assert name_version(PathDistribution(folder)) == ("other", "2.0")
    plain = tmp_path / "toy-1.0.dist-info"
    plain.mkdir()
    assert name_version(PathDistribution(plain)) == ("toy", "1.0")
