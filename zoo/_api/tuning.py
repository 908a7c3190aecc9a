"""``zoo tune``: the search (``zoo.registry.tune``), then its recipes built, checked and costed like any build,
with the weight transforms the target benefits from on top; the fastest build within the goal is the answer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zoo._errors import UsageError, VerificationError, ZooError

if TYPE_CHECKING:
    from zoo._api import Zoo
    from zoo.registry.store.manifest import Manifest
    from zoo.registry.tune import Search


@dataclass(frozen=True)
class Built:
    """One recipe through the whole pipeline: lowered, checked and costed by Vela."""

    label: str
    manifest: Manifest | None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        m = self.manifest
        total = m.vela_total if m else None
        numerics = ((m.verification or {}).get("numerics") or {}) if m else {}
        return {"label": self.label, "key": m.key if m else None, "precision": m.precision if m else None,
                "numerics_passed": numerics.get("passed"), "metrics": m.metrics if m else [],
                "output_sqnr": m.output_sqnr if m else [],
                "vela_ms": total.inference_time_ms if total else None, "sram_bytes": total.sram_bytes if total else None,
                "error": self.error}

    def within(self, max_drop: dict[str, float]) -> bool:
        """Checked and passed, each metric within ``max_drop`` where given (else its own allowed drop)."""
        if self.manifest is None or self.error is not None:
            return False
        return all(m.get("passed") is True if m.get("name") not in max_drop
                   else float(m["drop"]) <= max_drop[m["name"]] for m in self.manifest.metrics)


@dataclass(frozen=True)
class Tuning:
    search: Search
    recipe_path: Path
    built: tuple[Built, ...]
    max_drop: dict[str, float] = field(default_factory=dict)

    @property
    def fastest(self) -> Built | None:
        """The build with the least Vela time among those within the goal; None if none is."""
        timed = [(t, b) for b in self.built if b.within(self.max_drop) and (t := b.to_json()["vela_ms"]) is not None]
        return min(timed, key=lambda tb: float(tb[0]))[1] if timed else None

    def to_json(self) -> dict[str, Any]:
        fastest = self.fastest
        return {**self.search.to_json(), "recipe_path": str(self.recipe_path), "built": [b.to_json() for b in self.built],
                "fastest": fastest.to_json() if fastest else None}


def tune(zoo: Zoo, model: str, target: str | None, *, weights: str | None = None, out: Path | None = None,
         max_layers: int = 8, max_drop: dict[str, float] | None = None, build: bool = True,
         transforms: Sequence[str] | None = None, say: Any = None) -> Tuning:
    """See ``Zoo.tune``."""
    from zoo._fs import write_atomic
    from zoo._recipe import WEIGHT_TRANSFORMS
    from zoo.registry.request.precision import recipe_label
    from zoo.registry.tune import search

    spec = zoo.model(model)
    resolved = zoo.target(target)
    if resolved.is_portable or not spec.quantize:
        raise UsageError(f"zoo tune finds a quantization recipe, and {resolved.name!r} runs {spec.name!r} in float; "
                         "give an Ethos-U target, e.g. -t u85-256")
    variant = spec.weights_variant(weights).name
    benefit = [t for t, families in WEIGHT_TRANSFORMS.items() if resolved.family in families]
    wrong = [t for t in transforms or () if t not in benefit]
    if wrong:
        raise UsageError(f"--transform {', '.join(wrong)}: {resolved.name!r} does not benefit from it; it takes "
                         f"{', '.join(benefit) or 'no weight transform'}")
    transforms = benefit if transforms is None else list(dict.fromkeys(transforms))
    if out is not None:
        recipe_label(Path(out), "-o")  # the recipe is built with --recipe OUT: refuse its name before the search
    found = search(spec, resolved, variant, max_layers=max_layers, max_drop=max_drop, progress=say)
    chosen = found.chosen
    path = Path(out) if out else Path(f"tuned-{spec.name}-{resolved.slug}.json")
    promoted = ", ".join(chosen.recipe.modules) or "none"
    recipe = replace(chosen.recipe, description=(
        f"zoo tune {spec.name} -t {resolved.name} --weights {variant}: {chosen.label} ({promoted} at a16w8); "
        f"goal: {found.goal}; {'met' if chosen.meets else 'not met by any recipe tried'}"))
    write_atomic(path, recipe.dumps().encode())
    if not build:
        return Tuning(found, path, (), dict(max_drop or {}))
    wanted: list[tuple[str, dict[str, Any]]] = [("int8", {}), ("a16w8", {"precision": "a16w8"})]
    if chosen.recipe.modules:
        wanted.insert(1, (path.stem, {"recipe": path}))
    base, choice = wanted[-2]  # the recipe found, else int8, with each transform on top (sparse24 fine-tuned)
    wanted += [(f"{base}+{t}", {**choice, "weights_transform": t}) for t in transforms]
    built = []
    for label, choice in wanted:
        try:
            art = zoo.fetch(spec.name, resolved.name, weights=variant, verify=True, **choice)
            built.append(Built(label, art.manifest))
        except VerificationError as exc:  # the check's record is in the cache: hand it out to show it
            lines = str(exc).splitlines()
            failed = f"numerics FAILED: {(lines[1] if len(lines) > 1 else lines[0]).strip()[:200]}"
            try:
                built.append(Built(label, zoo.fetch(spec.name, resolved.name, weights=variant, verify=False,
                                                    build=False, **choice).manifest, failed))
            except ZooError:
                built.append(Built(label, None, failed))
        except ZooError as exc:
            built.append(Built(label, None, str(exc).splitlines()[0][:300]))
    return Tuning(found, path, tuple(built), dict(max_drop or {}))
