"""One standalone HTML report (see :mod:`workbench.report.html`)."""

from __future__ import annotations

from workbench.report.html import (
    generation_evaluation,
    render_report,
    run_report_command,
    source_slices,
    write_report,
)

__all__ = ["generation_evaluation", "render_report", "run_report_command", "source_slices",
           "write_report"]
