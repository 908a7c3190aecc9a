"""``Zoo.fetch_outcomes``: requests resolved through the cache, the remotes and
builds, then handed out (checked, and copied into ``-o``)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from zoo._errors import UsageError
from zoo._options import FetchOptions
from zoo.registry.events import stderr_notice

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from zoo._api import Zoo
    from zoo.registry.events import Notice, Progress
    from zoo.registry.handout import Artifact
    from zoo.registry.request.keys import BuildRequest
    from zoo.registry.skipped import Skipped
    from zoo.registry.store.failures import Failure


def fetch_outcomes(
    zoo: Zoo,
    models: Sequence[str],
    targets: Sequence[str | None],
    given: FetchOptions,
    *,
    progress: Progress | None = None,
    progress_for: Callable[[str], Progress] | None = None,
    notice: Notice | None = None,
) -> list[Artifact | Failure | Skipped]:
    """See ``Zoo.fetch_outcomes``."""

    from zoo._fs import not_a_folder
    from zoo.registry.firmware.c_header import HeaderOptions
    from zoo.registry.handout import HandOut, hand_out
    from zoo.registry.offline import no_network
    from zoo.registry.resolve import Resolver
    from zoo.registry.skipped import Skipped
    from zoo.registry.store.failures import Failure
    from zoo.registry.verify.verification import Verification, gate

    opts = executor_options(zoo, given)
    blocker = not_a_folder(opts.out_dir) if opts.out_dir is not None else None
    if blocker is not None:  # said before anything compiles, not after
        raise UsageError(f"-o {opts.out_dir}: {blocker} is not a folder, so nothing can be written under it; "
                         "choose another output folder")
    try:
        header = HeaderOptions(opts.header_array, opts.header_section, opts.header_style)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    offline = zoo.offline if opts.offline is None else opts.offline
    with no_network(offline):  # plugins load here, and a plugin's import may try to download
        requests = _requests(zoo, models, targets, opts, notice or stderr_notice)
    cache = zoo.cache
    resolver = Resolver(
        cache, opts,
        remotes=[] if opts.force_build else zoo.remotes(opts.remotes, trusted_keys=opts.trusted_keys),
        offline=offline,
        plugins=zoo.load_options, catalog=zoo.registry.catalog,
        progress=progress, progress_for=progress_for, notice=notice or stderr_notice,
        ray_address_from=("--ray-address" if given.ray_address or opts.ray_address is None
                          else f"{zoo.config.path or 'zoo.toml'}'s [executor] ray_address"),
    )
    several = len(requests) > 1
    out: list[Artifact | Failure | Skipped] = []
    for r, outcome in zip(requests, resolver.outcomes(requests), strict=True):
        if isinstance(outcome, (Failure, Skipped)):
            out.append(outcome)
            continue
        entry, source = outcome
        measured = resolver.evaluated.get(entry.key) if opts.eval_dir is not None else None
        if measured is not None:  # asked for: this fetch is gated on the user's data too, no other
            gate(Verification(f"{entry.manifest.model} for {entry.manifest.target} on {opts.eval_dir}", [],
                              measured), opts.verify)
        artifact = hand_out(entry, source, HandOut(
            out_dir=opts.out_dir / r.stem if several and opts.out_dir else opts.out_dir,
            header=header, labels=opts.labels_header, bundle=opts.bundle, verify=opts.verify,
            overwrite=opts.overwrite,
        ), derived_root=cache.base / "derived")
        if measured is not None and artifact.verification is not None:
            artifact.verification.numerics, artifact.verification.numerics_by = measured, "here"
        out.append(artifact)
    return out


def executor_options(zoo: Zoo, opts: FetchOptions) -> FetchOptions:
    """zoo.toml's ``[executor]`` where the caller left it open; a Ray address or results remote alone means Ray."""
    executor = opts.executor or ("ray" if opts.ray_address or opts.ray_results else None) or zoo.config.executor
    address = opts.ray_address or (zoo.config.ray_address if executor == "ray" else None)
    results = opts.ray_results or (zoo.config.ray_results if executor == "ray" else None)
    if (executor, address, results) == (opts.executor, opts.ray_address, opts.ray_results):
        return opts
    return dataclasses.replace(opts, executor=executor, ray_address=address,  # type: ignore[arg-type]
                               ray_results=results)

def _requests(zoo: Zoo, models: Sequence[str], targets: Sequence[str | None], opts: FetchOptions,
              notice: Notice) -> list[BuildRequest]:
    """Every model for every target. Across several models, ``weights`` names a
    variant some lack (``random`` for the catalogue; ``add`` has no weights at
    all): those build with their own default, and the notice says so."""
    choices = vars(opts.choices)
    lacking = [m for m in models if opts.weights not in zoo.model(m).weights_names] if opts.weights else []
    if len(models) > 1 and 0 < len(lacking) < len(models):
        notice(f"{', '.join(lacking)} ha{'s' if len(lacking) == 1 else 've'} no {opts.weights!r} weights: "
               "building with the model's default")
        return [
            zoo.request(m, t, **{**choices, "weights": None if m in lacking else opts.weights})
            for m in models for t in targets
        ]
    return [zoo.request(m, t, **choices) for m in models for t in targets]
