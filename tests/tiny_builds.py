"""What the compile tests of tiny test plugins share: a real build of one plugin's model with
the numerical check, and the operators of the TOSA graphs it lowered to."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


def compile_verified(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, plugin: str, model: str,
                     targets: list[str]) -> list[Any]:
    """``model`` of the test plugin module ``plugin`` (``tests.mean_plugin``) compiled for ``targets``
    in a fresh cache with ``--verify``: one ``CompileResult`` per target."""
    from zoo import Zoo
    from zoo.registry.compile import compile_targets

    monkeypatch.setenv("ZOO_PLUGINS", plugin)
    monkeypatch.setenv("ZOO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    zoo = Zoo()
    return list(compile_targets(zoo.model(model), [zoo.target(t) for t in targets], verify=[True] * len(targets)))


def tosa_operators(graph: bytes) -> list[tuple[str, Any]]:
    """Each operator of a TOSA flatbuffer, in order: its name (``CONV2D``) and the operator itself."""
    from tosa.Op import Op
    from tosa.TosaGraph import TosaGraph

    names = {v: k for k, v in vars(Op).items() if not k.startswith("_")}
    block = TosaGraph.GetRootAs(graph, 0).Regions(0).Blocks(0)
    return [(names[block.Operators(i).Op()], block.Operators(i)) for i in range(block.OperatorsLength())]


def tosa_ops(graph: bytes) -> list[str]:
    """The names of ``graph``'s operators, in order."""
    return [name for name, _ in tosa_operators(graph)]
