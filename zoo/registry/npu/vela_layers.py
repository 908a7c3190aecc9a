"""The operators Vela runs to transpose a partition's input, with their cycles, read from Regor's
optimisation database (``--enable-debug-db``): the tables behind Vela's per-layer report
(``--verbose-performance``), plus what feeds each operator.

- ``perf``: one row per operator Vela scheduled, with its cycles (the per-layer report's
  ``Op Cycles``) and the TOSA operator it came from (``source_id``);
- ``source``: the TOSA operators by id (the per-layer report's ``Original Operator``);
- ``perf_debug_conn``: what feeds each scheduled operator, ``-1`` standing for the graph's input.

Regor may run one TOSA TRANSPOSE as several operators (two for MobileNetV2's 3×224×224 input on
a U55), of its own kind or as a 1×1 pool: every one counts, found by its source. A transpose
inside the network (before a flatten) is not fed by the graph's input and is left out.
Torch-free; nothing here runs Vela.
"""

from __future__ import annotations

import csv
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

__all__ = ["DEBUG_DB_FLAG", "GRAPH_INPUT", "input_transposes", "read_tables", "weight_formats"]

DEBUG_DB_FLAG = "--enable-debug-db"
"""Vela writes ``<network>_debug.xml``; it changes no figure and no byte of the command stream."""
GRAPH_INPUT = "-1"
"""``perf_debug_conn``'s ``input_op_id`` for an operator that reads the graph's input."""
TRANSPOSE = "Transpose"
_TABLES = ("perf", "source", "perf_debug_conn")


def read_tables(path: Path) -> dict[str, list[dict[str, str]]]:
    """The tables this module reads from Vela's ``_debug.xml``, each as its CSV rows;
    ValueError naming what is missing."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise ValueError(f"cannot read Vela's optimisation database {path.name}: {exc}") from None
    tables: dict[str, list[dict[str, str]]] = {}
    for table in root.iter("table"):
        name = table.get("name", "")
        if name in _TABLES:
            tables[name] = list(csv.DictReader((table.text or "").strip().splitlines()))
    missing = [t for t in _TABLES if t not in tables]
    if missing:
        raise ValueError(f"Vela's optimisation database {path.name} has no {', '.join(missing)} table")
    return tables


def input_transposes(tables: dict[str, list[dict[str, str]]]) -> list[dict[str, Any]]:
    """Each operator Vela scheduled for a TOSA TRANSPOSE that reads the graph's input, in
    Vela's order: its ``operator`` (the per-layer report's ``NNG Operator``) and ``cycles``. Not its
    name: Regor names the operators it adds from a counter that runs on across Vela runs in a process."""
    try:
        source = {row["id"]: row["operator"] for row in tables["source"]}
        fed_by_input = {row["id"] for row in tables["perf_debug_conn"] if row["input_op_id"] == GRAPH_INPUT}
        perf = tables["perf"]
        boundary = {row["source_id"] for row in perf
                    if source.get(row["source_id"]) == TRANSPOSE and row["id"] in fed_by_input}
        return [{"operator": row["operator"], "cycles": round(float(row["op_cycles"]))}
                for row in perf if row["source_id"] in boundary]
    except (KeyError, ValueError) as exc:
        raise ValueError(f"Vela's optimisation database is not as zoo reads it: {type(exc).__name__} {exc}") from None


def weight_formats(path: Path) -> list[str]:
    """How Vela encoded each weighted operator's weights, in its order, from ``perf_debug``'s
    ``weight_format`` column of the database at ``path``: ``Default``, ``Default|Sparse2_4`` (the U85's
    2:4 sparse weights), … ValueError naming what is missing."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise ValueError(f"cannot read Vela's optimisation database {path.name}: {exc}") from None
    for table in root.iter("table"):
        if table.get("name") == "perf_debug":
            rows = list(csv.DictReader((table.text or "").strip().splitlines()))
            return [row["weight_format"] for row in rows if row.get("weight_format")]
    raise ValueError(f"Vela's optimisation database {path.name} has no perf_debug table")
