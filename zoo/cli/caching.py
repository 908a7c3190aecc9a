"""``zoo cache``: inspect and tidy the local artifact cache (path, ls, verify, prune)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import click

from zoo._errors import ZooError
from zoo._units import human_bytes
from zoo.cli.context import _dump, _zoo, echo
from zoo.cli.table import render

if TYPE_CHECKING:
    from zoo.registry.store.cache import Cache, Entry


@click.group()
def cache() -> None:
    """Inspect and tidy the local artifact cache."""


@cache.command("path")
@click.pass_context
def cache_path(ctx: click.Context) -> None:
    """Print the cache directory."""
    click.echo(str(_zoo(ctx).cache_dir))


@cache.command("ls")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def cache_ls(ctx: click.Context, as_json: bool) -> None:
    """List cached artifacts, and the builds recorded as failed."""
    rows: list[tuple[str, ...]] = []
    data: list[dict[str, Any]] = []
    store = _zoo(ctx).cache
    for key, entry, problem in store.scan():
        if entry is None:
            rows.append((key[:12], "?", "?", "-", "-", "-", "-", "-", f"corrupt: {problem}"))
            data.append({"key": key, "problem": problem})
            continue
        m = entry.manifest
        pte = m.file("pte")
        budget = m.sram_budget_bytes
        memory = ((m.key_inputs.get("target") or {}).get("memory_mode") or "-") + (
            f", budget {human_bytes(budget)}" if budget is not None else "")
        rows.append((key[:12], m.model, m.target, m.weights or "-", m.precision, m.io_text, memory,
                     human_bytes(pte.size if pte else None), m.built_at or ""))
        data.append({"key": key, "model": m.model, "target": m.target, "weights": m.weights, "precision": m.precision, "io": m.io_text,
                     "memory_mode": (m.key_inputs.get("target") or {}).get("memory_mode"), "sram_budget_bytes": budget,
                     "path": str(entry.path), "built_at": m.built_at})
    for key, failure, problem in store.failures():
        if failure is None:
            rows.append((key[:12], "?", "?", "-", "-", "-", "-", "-", f"unreadable failure record: {problem}"))
            data.append({"key": key, "problem": problem})
            continue
        rows.append((key[:12], failure.model, failure.target, "-", "-", "-", "-", "-", f"FAILED at {failure.where}"))
        data.append({"key": key, "model": failure.model, "target": failure.target, "failure": failure.to_json()})
    if as_json:
        _dump(data)
    elif rows:
        echo(render(("key", "model", "target", "weights", "precision", "io", "memory", ".pte", "built"), rows))
    else:
        echo("the cache is empty")


def _checked(store: Cache, *, verify: bool) -> Iterator[tuple[str, Entry | None, str | None]]:
    """``store.scan``, where with ``verify`` an entry whose files match their hashes
    must also pass the structural checks every hand-out runs (its .pte against its
    manifest, its header against both): hashes alone pass another program re-hashed. A
    manifest changed since zoo sealed it (``store/seal.py``) is corrupt: its record of the
    checks is no longer the one zoo wrote."""
    from zoo.registry.store.seal import SealState
    from zoo.registry.verify.verification import verify_entry

    for key, entry, problem in store.scan(verify=verify):
        if verify and entry is not None:
            try:
                failed = [f"{c.name}: {c.detail}" for c in verify_entry(entry).checks if not c.passed]
            except (ZooError, ValueError) as exc:  # e.g. an accelerator this zoo does not know
                failed = [f"cannot be checked ({exc})"]
            name = f"{entry.manifest.model} for {entry.manifest.target}"
            problems = [f"{name} fails its structural check: {'; '.join(failed)}"] if failed else []
            if entry.seal is SealState.EDITED:
                problems.append(f"{name}: {entry.seal.why()}")
            if problems:
                yield key, None, "; ".join(problems)
                continue
        yield key, entry, problem


@cache.command("verify")
@click.pass_context
def cache_verify(ctx: click.Context) -> None:
    """Re-check every cached entry: its manifest and its seal, each file's sha256, and the
    structure of its .pte and header."""
    bad = 0
    total = 0
    unsealed = 0
    for key, entry, problem in _checked(_zoo(ctx).cache, verify=True):
        total += 1
        if problem:
            bad += 1
            echo(f"{key[:12]}  CORRUPT  {problem}")
        elif entry is not None and not entry.sealed and entry.manifest.verification:
            unsealed += 1
            echo(f"{key[:12]}  UNSEALED  {entry.seal.why()}: its recorded checks are not believed (the structure is "
                 "checked on every hand-out; --verify runs the numerical check again)")
    echo(f"{total - bad} of {total} entries verified" + (f", {bad} corrupt (run 'zoo cache prune --corrupt')" if bad else "")
         + (f"; {unsealed} unsealed" if unsealed else ""))
    if bad:
        sys.exit(1)


@cache.command("prune")
@click.option("--all", "prune_all", is_flag=True, help="Remove every entry.")
@click.option("--corrupt", is_flag=True, help="Remove entries that fail verification.")
@click.option("--older-than", type=int, metavar="DAYS", help="Remove entries built more than DAYS ago.")
@click.option("--failures", is_flag=True, help="Forget the builds recorded as failed, so 'fetch' tries them again.")
@click.pass_context
def cache_prune(ctx: click.Context, prune_all: bool, corrupt: bool, older_than: int | None, failures: bool) -> None:
    """Remove cache entries, failure records and leftovers of interrupted writes."""
    from datetime import datetime, timedelta, timezone

    if not (prune_all or corrupt or failures or older_than is not None):
        raise click.UsageError("say what to prune: --all, --corrupt, --failures or --older-than DAYS")
    store = _zoo(ctx).cache
    cutoff = datetime.now(timezone.utc) - timedelta(days=older_than) if older_than is not None else None
    removed = 0
    for key, entry, problem in _checked(store, verify=corrupt):
        old = False
        if cutoff is not None and entry is not None:
            built = entry.manifest.built_at
            if built:
                old = datetime.fromisoformat(built) < cutoff
        if prune_all or (corrupt and problem) or old:
            store.evict(key)
            removed += 1
    forgotten = 0
    for key, _failure, problem in store.failures():
        if prune_all or failures or (corrupt and problem):
            store.forget_failure(key)
            forgotten += 1
    leftovers, freed = store.clean_tmp()
    echo(f"removed {removed} entries" + (f" and {forgotten} failure records" if forgotten else "")
               + (f"; cleaned up {leftovers} leftover(s) of interrupted writes ({human_bytes(freed)})" if leftovers else ""))
