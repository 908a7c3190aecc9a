"""Resolve each request to a cache entry: the cache first, then the remotes
in order, then a local build (``lookup``, then ``schedule``).

With ``keep_going`` the other builds go on and every failure is returned as
data; without it the first one is raised.
"""

from __future__ import annotations

from collections.abc import Sequence

from zoo._errors import PluginError
from zoo.registry.offline import no_network
from zoo.registry.request.keys import BuildRequest
from zoo.registry.resolve.lookup import Found, Outcome, Source
from zoo.registry.resolve.schedule import Scheduling, _Pending
from zoo.registry.skipped import Skipped
from zoo.registry.store.failures import Failure, first_error

__all__ = ["Found", "Outcome", "Resolver", "Source"]


class Resolver(Scheduling):
    """Finds or builds the entries for a batch of requests, as ``options`` allow."""

    def resolve(self, requests: Sequence[BuildRequest]) -> list[Found]:
        """An entry for each request, in order; raises the first failure. ``verify=True``
        needs numerical results and ``bundle`` a .bpte: a cached entry without them is
        lowered again (same key, same .pte bytes) and replaced by one that has them."""
        found: list[Found] = []
        failures: list[Failure] = []
        for outcome in self.outcomes(requests):
            if isinstance(outcome, Failure):
                failures.append(outcome)
            elif not isinstance(outcome, Skipped):
                found.append(outcome)
        if failures:
            raise first_error(failures)
        return found

    def outcomes(self, requests: Sequence[BuildRequest]) -> list[Outcome]:
        """An entry or a failure for each request, in order. Without ``keep_going``
        the first failure is raised and the builds not yet started are not.

        Offline, no thread of this process opens a connection meanwhile: keys ask the
        plugins' ``identity()``, and inline builds run their code. Except with Ray, whose
        driver must reach its cluster; its tasks build offline where they run."""
        with no_network(self.offline and self.options.executor != "ray"):
            return self._outcomes(requests)

    def _outcomes(self, requests: Sequence[BuildRequest]) -> list[Outcome]:
        done: dict[int, Outcome] = {}
        pending: dict[str, _Pending] = {}
        shard = self.options.shard
        if shard is not None:
            # Before any lookup, so that jobs with different caches agree on the partition.
            from zoo.registry.build_units.shard import in_shard

            for i, (request, mine) in enumerate(zip(requests, in_shard(requests, *shard), strict=True)):
                if not mine:
                    done[i] = Skipped(request.spec.name, request.target.name, shard)
        for group in _by_model(requests):
            group = [(i, r) for i, r in group if i not in done]
            if not group:
                continue
            report = self._progress(f"{group[0][1].spec.name} → {', '.join(r.target.name for _, r in group)}")
            for i, request in group:
                try:
                    key, data, hit = self._lookup(request, report)
                except PluginError as exc:  # e.g. identity() of its weights: this request alone fails
                    if not self.options.keep_going:
                        raise
                    done[i] = Failure(request.spec.name, request.target.name, request.weights.name, "",
                                      "PluginError", str(exc), stage="identity")
                    continue
                if hit is not None:
                    done[i] = hit
                elif key in pending:
                    pending[key].indexes.append(i)
                else:
                    pending[key] = _Pending(request, key, data, [i])
        if pending:
            self._build(list(pending.values()), done)
        return [done[i] for i in range(len(requests))]


def _by_model(requests: Sequence[BuildRequest]) -> list[list[tuple[int, BuildRequest]]]:
    """The requests with their positions, grouped by model, keeping their order."""
    groups: dict[str, list[tuple[int, BuildRequest]]] = {}
    for i, r in enumerate(requests):
        groups.setdefault(r.spec.name, []).append((i, r))
    return list(groups.values())


