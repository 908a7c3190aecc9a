"""Remote URLs, the index format, the matching rule and the model card, without compiling."""

from __future__ import annotations

import hashlib
import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from zoo._errors import IntegrityError, RemoteError, UsageError
from zoo._version import __version__
from zoo.registry.remotes import parse_remote
from zoo.registry.remotes.card import fetch_command, model_card
from zoo.registry.remotes.directory import DirectoryRemote
from zoo.registry.remotes.download import Wanted, wanted
from zoo.registry.remotes.http import HttpRemote
from zoo.registry.remotes.hub import HubRemote
from zoo.registry.remotes.index import Index, check_file_name, check_relative_path
from zoo.registry.remotes.index_version import SCHEMA_SINCE
from zoo.registry.request.keys import canonical_json


def test_parse_remote_kinds(tmp_path: Path) -> None:
    hf = parse_remote("hf://arm/ethos-zoo@v1.0")
    assert isinstance(hf, HubRemote) and (hf.repo_id, hf.revision) == ("arm/ethos-zoo", "v1.0")
    plain = parse_remote("hf://arm/ethos-zoo")
    assert isinstance(plain, HubRemote) and plain.revision is None
    web = parse_remote("https://example.com/zoo/")
    assert isinstance(web, HttpRemote) and web.url == "https://example.com/zoo"
    file = parse_remote(f"file://{tmp_path}/share")
    assert isinstance(file, DirectoryRemote) and file.root == tmp_path / "share"
    rel = parse_remote("shared/zoo", base=tmp_path)
    assert isinstance(rel, DirectoryRemote) and rel.root == tmp_path / "shared" / "zoo"
    assert not any(r.network for r in (file, rel)) and hf.network and web.network


@pytest.mark.parametrize("bad", ["hf://just-a-name", "hf://a/b/c", "hf://a/b@", "s3:///zoo", "ftp://host/zoo", "https://", "file://host/x", " "])
def test_parse_remote_rejects(bad: str) -> None:
    with pytest.raises(UsageError, match=r"remote|empty"):
        parse_remote(bad)


@pytest.mark.parametrize("name", ["../x.pte", "/abs.pte", "a/b.pte", "a\\b.pte", "..", ".", ".hidden", "", "manifest.json", "C:x.pte", 3])
def test_unsafe_file_names(name: Any) -> None:
    with pytest.raises(IntegrityError, match="plain name inside its folder"):
        check_file_name(name, where="test")


# ``$`` matches before a final newline as well as at the end: each of these took "x\n" for "x".
def test_a_hub_repo_with_a_trailing_newline_is_refused() -> None:
    with pytest.raises(UsageError, match="expected hf://ORG/REPO"):
        parse_remote("hf://arm/ethos-zoo\n@v1.0")  # the URL is stripped; the repo before the @ is not


def test_index_names_files_and_digests_with_a_trailing_newline_are_refused() -> None:
    with pytest.raises(IntegrityError, match="plain name inside its folder"):
        check_file_name("add_u55-128.pte\n", where="test")
    data = _index()
    [(key, record)] = data["models"]["add"]["u55-128"].items()
    data["models"]["add\n"] = {"u55-128": {key: record}}
    data["models"]["other"] = {"u55-128\n": {key: record}}
    data["models"]["third"] = {"u55-128": {key + "\n": record}}
    data["models"]["manifest"] = {"u55-128": {key: {**record, "manifest_sha256": "a" * 64 + "\n"}}}
    files = [{"name": "x.pte", "kind": "pte", "size": 4, "sha256": "b" * 64 + "\n"}]
    data["models"]["files"] = {"u55-128": {key: {**record, "files": files}}}
    index = Index.loads(json.dumps(data), source="t")
    assert [r.model for r in index] == ["add"]
    assert sorted(r.path[:2] for r in index.rejected) == [
        ("add\n",), ("files", "u55-128"), ("manifest", "u55-128"), ("other", "u55-128\n"), ("third", "u55-128")]


def test_a_revision_with_a_trailing_newline_is_no_commit() -> None:
    from zoo.registry.remotes.hub import _COMMIT

    assert _COMMIT.match("0" * 40) and not _COMMIT.match("0" * 40 + "\n")


@pytest.mark.parametrize("path", ["../up/manifest.json", "/abs/manifest.json", "a//b", "a/./b", "a\\b", "C:/x", "a/../../b"])
def test_unsafe_relative_paths(path: str) -> None:
    with pytest.raises(IntegrityError):
        check_relative_path(path, where="test")


def _index(**changes: Any) -> dict[str, Any]:
    inputs = {"model": {"name": "add", "version": "1"}, "tools": {"torch": "2"}}
    key = hashlib.sha256(canonical_json(inputs)).hexdigest()
    rec = {
        "manifest": f"add/u55-128/{key}/manifest.json", "manifest_sha256": "a" * 64, "key_inputs": inputs,
        "built_at": "2026-01-01T00:00:00+00:00", "target": "ethos-u55-128", "weights": "none",
        "files": [{"name": "add_u55-128.pte", "kind": "pte", "size": 4, "sha256": "b" * 64}],
        "target_options": {"accelerator": "ethos-u55-128", "system_config": "Ethos_U55_High_End_Embedded", "memory_mode": "Shared_Sram"},
    }
    rec.update(changes)
    return {"schema": 1, "models": {"add": {"u55-128": {key: rec}}}}


def test_index_round_trip() -> None:
    index = Index.loads(json.dumps(_index()), source="t")
    [rec] = index.candidates("add", "u55-128")
    assert rec.tools == {"torch": "2"} and rec.folder == f"add/u55-128/{rec.key}"
    assert Index.loads(index.dumps(), source="t").to_json() == index.to_json()


def test_index_errors() -> None:
    with pytest.raises(RemoteError, match="not valid JSON"):
        Index.loads("<html>", source="t")
    with pytest.raises(RemoteError, match=r"schema 2, written by zoo 9.0.0; this zoo \(.+\) reads schema 1 at most; "
                       r"upgrade it: pip install -U ethosu-zoo"):
        Index.loads(json.dumps({"schema": 2, "written_by": "9.0.0", "models": {}}), source="t")
    with pytest.raises(RemoteError, match="nested too deeply"):
        Index.loads("[" * 100_000 + "]" * 100_000, source="t")


@pytest.mark.parametrize(("changes", "kind", "message"), [
    ({"manifest": "../../etc/manifest.json"}, IntegrityError, "stay inside the remote"),
    ({"files": [{"name": "../x", "kind": "pte", "size": 1, "sha256": "b" * 64}]}, IntegrityError, "plain name"),
    ({"key_inputs": {"model": "other"}}, IntegrityError, "do not hash to its key"),
    ({"manifest_sha256": "short"}, RemoteError, "malformed"),
    ({"files": [{"name": "x.pte", "kind": "pte", "size": "4", "sha256": "b" * 64}]}, RemoteError, "whole number of bytes"),
    ({"files": {"name": "x.pte"}}, RemoteError, "files must be a list"),
    ({"built_at": 2026}, RemoteError, "built_at must be a string"),
    ({"target_options": {"accelerator": 5}}, RemoteError, "target_options must map"),
    ({"delegation": ["npu_ops"]}, RemoteError, "delegation must be an object"),
])
def test_an_unreadable_record_is_rejected_alone(changes: dict[str, Any], kind: type[Exception], message: str) -> None:
    data = _index(**changes)
    data["models"]["other"] = _index()["models"]["add"]
    index = Index.loads(json.dumps(data), source="t")
    assert [r.model for r in index] == ["other"]
    [rejected] = index.rejected
    assert rejected.path[:2] == ("add", "u55-128") and rejected.concerns("add", "u55-128")
    assert not rejected.concerns("other", "u55-128")
    assert type(rejected.error) is kind and message in str(rejected.error)
    assert str(rejected.error).startswith("t: index.json entry add/u55-128/")


def test_matching_ignores_tools_and_what_cannot_be_named() -> None:
    mine = {"model": {"name": "m"}, "calibration": {"size": 3, "identity": None}, "tools": {"torch": None}}
    theirs = {"model": {"name": "m"}, "calibration": {"size": 3, "identity": "sha256:x"}, "tools": {"torch": "2"}}
    assert not Wanted(None, mine).accepts(theirs)
    assert Wanted(None, mine, ("calibration.identity",)).accepts(theirs)
    assert not Wanted(None, mine, ("calibration.identity",)).accepts({**theirs, "calibration": {"size": 4, "identity": "x"}})


def test_wanted_names_the_full_key_when_it_can() -> None:
    from zoo import Zoo

    req = Zoo().request("add", "u55-128")
    w = wanted(req)
    assert w.key == req.key() and w.unknown == ()


def test_fetch_command_spells_out_non_default_options() -> None:
    rec = Index.loads(json.dumps(_index(target_options={
        "accelerator": "ethos-u65-256", "system_config": "Ethos_U65_High_End", "memory_mode": "Shared_Sram"})), source="t")
    [r] = list(rec)
    assert fetch_command(r, "hf://a/b") == (
        "zoo fetch add --target ethos-u65-256 --system-config Ethos_U65_High_End --memory-mode Shared_Sram "
        "--weights none --remote hf://a/b"
    )
    card = model_card(rec, "hf://a/b")
    assert card.startswith("---\nlibrary_name: executorch\ntags:\n- executorch\n- ethos-u\n- ethos-u65-256\n---\n")
    assert "`" + "b" * 64 + "`" in card


def test_the_model_card_carries_the_catalogue_table() -> None:
    index = Index.loads(json.dumps(_index(
        vela={"inference_time_ms": 0.27, "sram_bytes": 1024, "flash_bytes": 2048},
        delegation={"npu_ops": 9, "cpu_ops": 1, "partitions": 2, "cpu_op_names": ["aten.hardswish.default"]},
    )), source="t")
    card = model_card(index, "hf://a/b")
    table = card.split("## What runs on each NPU", 1)[1]
    assert "| model | weights | ethos-u55-128 |" in table
    assert "| add | none | 270.0 µs, 90% NPU |" in table


def test_the_model_card_escapes_what_plugins_and_remotes_supply() -> None:
    weights = 'w"><img src=x onerror=alert("w")>'
    index = Index.loads(json.dumps(_index(
        weights=weights, target_options={"accelerator": "ethos-u55-128", "system_config": "[x](javascript:alert(1))|b",
                                         "memory_mode": "m; rm -rf ~"},
    )), source="t")
    card = model_card(index, "hf://a/b")
    text = card.split("```sh")[0]  # the fetch lines are a code block: quoted for the shell, not escaped
    assert "<img" not in text and "&lt;img src=x onerror=alert\\(&quot;w&quot;\\)&gt;" in text
    assert "[x](javascript" not in text and "\\[x\\]\\(javascript:alert\\(1\\)\\)\\|b" in card
    [command] = [line for line in card.splitlines() if line.startswith("zoo fetch")]
    import shlex

    assert shlex.split(command) == ["zoo", "fetch", "add", "--target", "ethos-u55-128", "--system-config",
                                    "[x](javascript:alert(1))|b",
                                    "--memory-mode", "m; rm -rf ~", "--weights", weights, "--remote", "hf://a/b"]


def test_a_fetch_line_that_would_leave_its_code_block_is_left_out() -> None:
    index = Index.loads(json.dumps(_index(weights="w\n```\n<img src=x>")), source="t")
    card = model_card(index, "hf://a/b")
    assert "<img" not in card and card.count("```") == 2


def test_the_model_card_shows_metrics_beside_the_declared_figure_and_the_weights_licence_escaped() -> None:
    metrics = {"metrics": [{"name": "top1", "unit": "%", "float": 97.5, "program": 97.3, "program_kind": "int8",
                            "passed": True, "reference": 97.6},
                           {"name": "<b>x</b>", "unit": "|", "float": "9e9<script>", "program": 1.0}]}
    info = {"name": "none", "licence": "CC-BY-4.0 <img src=x>", "origin": "https://example.com/w|x"}
    index = Index.loads(json.dumps(_index(accuracy=metrics, weights_info=info)), source="t")
    [record] = list(index)
    assert record.weights_info == info and json.loads(index.dumps())["models"]["add"]
    card = model_card(index, "hf://a/b")
    assert "| licence | .pte |" in card and "metrics: float → program" in card
    assert "top1 97.5 → 97.3% (declared 97.6)" in card
    assert "&lt;b&gt;x&lt;/b&gt; – → 1\\|" in card  # a remote's non-number shows as unknown, its text escaped
    assert "<img" not in card and "<script" not in card and "CC-BY-4.0 &lt;img src=x&gt;" in card
    assert "Weights none: licence CC-BY-4.0 &lt;img src=x&gt;; origin https://example.com/w\\|x." in card


def test_an_index_record_without_weights_info_reads_and_writes_as_before() -> None:
    index = Index.loads(json.dumps(_index()), source="t")
    [record] = list(index)
    assert record.weights_info is None and "weights_info" not in record.to_json()


def test_an_index_records_which_zoo_wrote_it_and_which_can_read_it() -> None:
    written = json.loads(Index().dumps())
    assert written["written_by"] == __version__ and written["readable_by"] == f">={SCHEMA_SINCE}"
    assert Version(__version__) in SpecifierSet(written["readable_by"])
    older = Index.loads(json.dumps({"schema": 1, "models": {}}), source="t")  # before the fields existed
    assert older.readable_by == f">={SCHEMA_SINCE}"
    narrowed = Index.loads(json.dumps({"schema": 1, "readable_by": f">={SCHEMA_SINCE},<99", "models": {}}), source="t")
    assert json.loads(narrowed.dumps())["readable_by"] == f">={SCHEMA_SINCE},<99", "a writer's limit is kept"


@pytest.mark.parametrize(("fields", "message"), [
    ({"readable_by": ">=99.0"}, r"says only zoo >=99.0 can read it, and this is zoo .+; install one that can: "
                                r"pip install 'ethosu-zoo>=99.0'"),
    ({"readable_by": "<0.0.1", "written_by": "0.0.1"}, r"index.json, written by zoo 0.0.1, says only zoo <0.0.1 can"),
    ({"readable_by": "newest"}, r"readable_by is 'newest', not a version specifier"),
    ({"schema": 0, "written_by": "0.0.1"}, r"schema 0, written by zoo 0.0.1, which this zoo \(.+\) no longer reads"),
    ({"schema": "1"}, r"schema '1'; this zoo reads schemas 1; is this a zoo remote"),
])
def test_an_index_this_zoo_cannot_read_says_which_zoo_can(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(RemoteError, match=message):
        Index.loads(json.dumps({"schema": 1, "models": {}, **fields}), source="t")


# PEP 440's arbitrary equality takes any text without a space, ';' or ')'.
@pytest.mark.parametrize("readable", ["===0'`id>pwned`'", "==='&&id>pwned&&'", "===0'|sh'"])
def test_a_readable_by_that_would_run_a_command_is_a_malformed_index_and_no_command_is_suggested(readable: str) -> None:
    with pytest.raises(RemoteError) as caught:
        Index.loads(json.dumps({"schema": 1, "models": {}, "readable_by": readable}), source="t")
    assert "not a version specifier such as '>=0.1.0'; the index is malformed" in str(caught.value)
    assert "pip install" not in str(caught.value)


def test_the_suggested_install_is_one_argument_built_from_the_parsed_specifier() -> None:
    with pytest.raises(RemoteError) as caught:
        Index.loads(json.dumps({"schema": 1, "models": {}, "readable_by": " >= 99.0 , < 100"}), source="t")
    command = str(caught.value).split("install one that can: ")[1]
    assert shlex.split(command) == ["pip", "install", "ethosu-zoo<100,>=99.0"]
