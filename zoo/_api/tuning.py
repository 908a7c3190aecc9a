"""``zoo tune``: the search (``zoo.registry.tune``), then its recipes built, checked and costed like any build."""

from __future__ import annotations

from dataclasses import dataclass, replace
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


@dataclass(frozen=True)
class Tuning:
    search: Search
    recipe_path: Path
    built: tuple[Built, ...]

    def to_json(self) -> dict[str, Any]:
        return {**self.search.to_json(), "recipe_path": str(self.recipe_path), "built": [b.to_json() for b in self.built]}


def tune(zoo: Zoo, model: str, target: str | None, *, weights: str | None = None, out: Path | None = None,
         max_layers: int = 8, max_drop: dict[str, float] | None = None, build: bool = True,
         say: Any = None) -> Tuning:
    """See ``Zoo.tune``."""
    from zoo._fs import write_atomic
    from zoo.registry.request.precision import recipe_label
    from zoo.registry.tune import search

    spec = zoo.model(model)
    resolved = zoo.target(target)
    if resolved.is_portable or not spec.quantize:
        raise UsageError(f"zoo tune finds a quantization recipe, and {resolved.name!r} runs {spec.name!r} in float; "
                         "give an Ethos-U target, e.g. -t u85-256")
    variant = spec.weights_variant(weights).name
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
        return Tuning(found, path, ())
    wanted: list[tuple[str, dict[str, Any]]] = [("int8", {}), ("a16w8", {"precision": "a16w8"})]
    if chosen.recipe.modules:
        wanted.insert(1, (path.stem, {"recipe": path}))
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
    return Tuning(found, path, tuple(built))
