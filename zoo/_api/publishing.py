"""``Zoo.publish``: cached artifacts, signed if asked, put on a remote."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from zoo._errors import UsageError
from zoo._options import choice_args
from zoo.registry.events import stderr_notice

if TYPE_CHECKING:
    from zoo._api import Zoo
    from zoo._options import Choices
    from zoo.registry.events import Notice
    from zoo.registry.remotes.base import PublishReport
    from zoo.registry.store.cache import Entry


def publish(zoo: Zoo, to: str | None, model: str | None, target: str | None, choices: Choices, *, everything: bool,
            sign_key: Path | None, release: str | None, notice: Notice | None) -> PublishReport:
    """See ``Zoo.publish``. With ``release`` (a version tag, e.g. ``v0.1.0``) the remote must be a
    Hugging Face Hub repository: the publish is one commit on its branch, then the Hub tag
    ``release`` on that commit; refused, before anything is uploaded, if the tag exists."""

    from zoo.registry.remotes import parse_remote
    from zoo.registry.remotes.hub import HubRemote, release_tag
    from zoo.registry.store.cache import CorruptEntry

    say = notice or stderr_notice
    if to:
        remote = parse_remote(to, schemes=zoo.registry.remote_schemes)
    elif zoo.config.remotes:
        remote = zoo.remotes()[0]
    else:
        raise UsageError("say where to publish: --to REMOTE (hf://ORG/REPO, s3://BUCKET/PREFIX, a directory), or set remotes in zoo.toml")
    if not remote.writable:
        instead = "; publish to the directory it serves instead" if remote.kind == "http" else ""
        raise UsageError(f"{remote} is a read-only {remote.kind} remote{instead}")
    if remote.network and zoo.config.offline:
        raise UsageError(f"offline mode is on (offline in zoo.toml or ZOO_OFFLINE): cannot publish to {remote}")
    if release is not None:
        if not isinstance(remote, HubRemote):
            raise UsageError(f"releases are tags of a Hugging Face Hub repository; {remote} is a {remote.kind} remote: "
                             f"publish with --release to hf://ORG/REPO, or without --release to {remote}")
        release_tag(release)
    cache = zoo.cache
    if everything:
        if model:
            raise UsageError("give a MODEL or --all, not both")
        entries = []
        for key, entry, problem in cache.scan(verify=True):
            if entry is None:
                say(f"skipping cache entry {key[:12]}: {problem} (run 'zoo cache prune --corrupt')")
            else:
                entries.append(entry)
        if not entries:
            raise UsageError("the cache is empty: nothing to publish")
    elif not model:
        raise UsageError("give a MODEL to publish (see 'zoo cache ls'), or --all")
    elif target is None and zoo.config.default_target is None:
        entries = _cached_of(zoo, model, choices, say=say)
    else:
        req = zoo.request(model, target, **choice_args(choices))
        try:
            found = cache.get(req.key())
        except CorruptEntry as exc:
            raise UsageError(f"{exc}: run 'zoo build {req.spec.name} -t {req.target.name}' and publish again") from None
        if found is None:
            raise UsageError(
                f"{req.spec.name} for {req.target.name} is not in the cache (with this install's tool versions); "
                f"run 'zoo build {req.spec.name} -t {req.target.name}' first"
            )
        entries = [found]

    def put(batch: list[Entry]) -> PublishReport:
        if isinstance(remote, HubRemote):
            return remote.publish(batch, say=say, release=release)
        return remote.publish(batch, say=say)

    if sign_key is None:
        return put(entries)
    from zoo.registry.remotes.signing import signed_entries

    with signed_entries(entries, sign_key) as signed:
        return put(signed)


def _cached_of(zoo: Zoo, model: str, choices: Choices, *, say: Notice) -> list[Entry]:
    """Without a target: every verified cached artifact of ``model`` that matches the options given."""

    name = zoo.model(model).name
    entries = []
    for key, entry, problem in zoo.cache.scan(verify=True):
        if entry is None:
            say(f"skipping cache entry {key[:12]}: {problem} (run 'zoo cache prune --corrupt')")
            continue
        m = entry.manifest
        wanted = {"weights": choices.weights, "system_config": choices.system_config,
                  "memory_mode": choices.memory_mode, "sram_budget": choices.sram_budget}
        has = {"weights": m.weights, "system_config": m.target_options.system_config,
               "memory_mode": m.target_options.memory_mode,
               "sram_budget": (m.memory_fit or {}).get("sram_budget_bytes")}
        if m.model == name and all(v is None or has[k] == v for k, v in wanted.items()):
            entries.append(entry)
    if not entries:
        raise UsageError(f"no cached artifact of {name} matches: fetch one first ('zoo fetch {name} -t TARGET'), "
                         "or see 'zoo cache ls'")
    return entries
