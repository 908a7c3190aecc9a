"""The catalog: every model the loaded plugins registered, by name and alias."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator

from zoo._errors import UnknownModelError
from zoo._spec import ModelSpec


class Catalog:
    def __init__(self) -> None:
        self._specs: dict[str, ModelSpec] = {}
        self._names: dict[str, str] = {}  # name or alias -> canonical name

    def add(self, spec: ModelSpec) -> None:
        """Add ``spec``, whose names must be free: the plugin loader checks
        ``claims`` for all of a plugin's specs before it adds any."""
        assert not self.claims(spec), f"model names already taken: {self.claims(spec)}"
        self._specs[spec.name] = spec
        for n in (spec.name, *spec.aliases):
            self._names[n] = spec.name

    def claims(self, spec: ModelSpec) -> list[str]:
        """Names of ``spec`` that are already taken."""
        return [n for n in (spec.name, *spec.aliases) if n in self._names]

    def get(self, name: str) -> ModelSpec:
        canonical = self._names.get(name) or self._names.get(name.lower())
        if canonical is None:
            from zoo.registry.suggest import suggest

            close = suggest(name, self._names)
            hint = f" Did you mean: {', '.join(close)}?" if close else ""
            raise UnknownModelError(f"unknown model {name!r}.{hint} Run 'zoo list' to see them all.")
        return self._specs[canonical]

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __iter__(self) -> Iterator[ModelSpec]:
        return iter(sorted(self._specs.values(), key=lambda s: s.name))

    def __len__(self) -> int:
        return len(self._specs)

    def search(self, pattern: str | None = None) -> list[ModelSpec]:
        """Glob filter over names and aliases, like timm's ``list_models('mobilenet*')``."""
        if not pattern:
            return list(self)
        pat = pattern.lower()
        return [
            s for s in self
            if any(fnmatch.fnmatchcase(n.lower(), pat) for n in (s.name, *s.aliases))
        ]
