"""Reports over cached artifacts: Vela's estimates per target for one model
(``rows.collect``), and the catalogue of every model × target with its failures
(``catalogue.collect_catalogue``), as rows and JSON.

Turning a report into text or HTML is the CLI's job (zoo/cli/report_render.py).
"""

from zoo.registry.report.catalogue import UNREGISTERED, Catalogue, Cell, collect_catalogue
from zoo.registry.report.rows import (
    GENERATED,
    INTERPRETER_NOTE,
    NOTE,
    Report,
    ReportRow,
    Skipped,
    collect,
    cpu_work,
    metric_text,
    sqnr_text,
)

__all__ = ["GENERATED", "INTERPRETER_NOTE", "NOTE", "UNREGISTERED", "Catalogue", "Cell", "Report", "ReportRow", "Skipped", "collect",
           "collect_catalogue", "cpu_work", "metric_text", "sqnr_text"]
