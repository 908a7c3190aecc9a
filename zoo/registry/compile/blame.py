"""Say where a compile failed: turn any exception into a BuildError naming the
model, the target, the stage and, for lowering, the pass or operator."""

from __future__ import annotations

import contextlib
import io
import re
import sys
import traceback
from collections.abc import Iterator
from typing import Any, NamedTuple, Protocol

from zoo._errors import BuildError
from zoo.registry.compile.delegation import _BOOKKEEPING, _op_name


class _Partition(Protocol):
    """Lowering's backend recorder, read only once lowering fails: its
    partition changes while the backend compiles one after another."""

    partition: list[str] | None
    """Operators of the NPU partition being compiled, if one is."""


class _Blame(NamedTuple):
    text: str
    pass_name: str | None
    operator: str | None


@contextlib.contextmanager
def _stage(where: str, stage: str) -> Iterator[None]:
    try:
        yield
    except BuildError as e:
        if str(e).startswith(where):
            raise
        raise BuildError(
            f"{where}: {e}", stage=e.stage or stage, operator=e.operator, pass_name=e.pass_name
        ) from e
    except (Exception, SystemExit) as e:  # sys.exit() in a model's code fails the build, not zoo
        raise BuildError(
            f"{where}: {stage} failed: {type(e).__name__}: {_first_lines(e)}", stage=stage
        ) from e


@contextlib.contextmanager
def _lowering_errors(where: str, recorder: _Partition | None = None) -> Iterator[None]:
    """Turn a lowering failure into a BuildError naming the pass or operator.

    Vela prints its summary to stdout from inside the backend; that is kept
    out of the caller's output. stderr is held back and passed on afterwards
    so a failure can quote it (Vela's argparse reports a bad flag there).
    """
    out, err = io.StringIO(), io.StringIO()
    limit = sys.getrecursionlimit()  # Vela's main() resets it
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            yield
    except BuildError:
        raise
    except (Exception, SystemExit) as e:  # Vela's argparse exits on a bad flag
        root = _chain(e)[-1]
        printed = "\n".join(t for t in (out.getvalue().strip(), err.getvalue().strip()) if t)
        detail = f"\n{_last_lines(printed)}" if printed else ""
        blame = _blame(e, recorder.partition if recorder else None)
        raise BuildError(
            f"{where}: lowering failed {blame.text}: {type(root).__name__}: {_first_lines(root)}{detail}",
            stage="lower", operator=blame.operator, pass_name=blame.pass_name,
        ) from e
    finally:
        sys.setrecursionlimit(limit)
    sys.stderr.write(err.getvalue())


def _blame(exc: BaseException, partition: list[str] | None) -> _Blame:
    """Best guess at where lowering failed: the innermost pass or operator,
    or Vela, and the NPU partition being compiled."""
    import torch

    pass_name: str | None = None
    op: str | None = None
    node_name: str | None = None
    in_vela = False
    for e in _chain(exc):
        for frame, _ in reversed(list(traceback.walk_tb(e.__traceback__))):
            filename = frame.f_code.co_filename.replace("\\", "/")
            in_vela = in_vela or "/ethosu/vela/" in filename or filename.endswith("/arm_vela.py")
            local = frame.f_locals
            node = local.get("node")
            if op is None and isinstance(node, torch.fx.Node) and node.op == "call_function":
                op, node_name = _op_name(node.target), node.name
            owner = local.get("self")
            if pass_name is None and owner is not None and _is_pass(owner):
                pass_name = type(owner).__name__
    if op is None:
        op = next(filter(None, (_op_in_message(str(e)) for e in _chain(exc))), None)
    where = []
    if pass_name:
        where.append(f"in pass {pass_name}")
    elif in_vela:
        where.append("in Vela")
    if op:
        where.append(f"at operator {op}" + (f" (node {node_name!r})" if node_name else ""))
    if partition:
        where.append(f"while compiling the NPU partition of {', '.join(partition)}")
    return _Blame(" ".join(where) or "(no pass or operator could be identified)", pass_name, op)


def _op_in_message(message: str) -> str | None:
    m = re.search(r"\b(?:aten|quantized_decomposed|dim_order_ops)[.:_]+\w+(?:\.\w+)?", message)
    if m:
        return m.group(0)
    m = re.search(r"\boperation \((\w+)\)", message)  # Vela names the TOSA operator
    return f"TOSA {m.group(1)}" if m else None


def _graph_ops(gm: Any) -> list[str]:
    names = {_op_name(n.target) for n in gm.graph.nodes if n.op == "call_function"}
    return sorted(n for n in names if not _BOOKKEEPING.match(n.replace(".", "_")))


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not s for s in seen):
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _is_pass(obj: Any) -> bool:
    names = [c.__name__ for c in type(obj).__mro__]
    return any(n in ("PassBase", "ExportPass", "ArmPass") for n in names) or (
        type(obj).__name__.endswith("Pass")
    )


def _first_lines(exc: BaseException, lines: int = 6) -> str:
    return "\n".join(str(exc).strip().splitlines()[:lines])


def _last_lines(text: str, lines: int = 4) -> str:
    all_lines = text.splitlines()
    errors = [line for line in all_lines if "error:" in line.lower()]  # skips argparse's usage
    return "\n".join(errors[-lines:] or all_lines[-lines:])
