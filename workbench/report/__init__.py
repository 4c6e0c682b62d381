"""Report: one standalone HTML page of everything a run produced (metric tables, sweep plots,
answers and the retrieval tax, the 2x2 triage, failing traces), HTML-escaped and
script-locked by a Content-Security-Policy (:mod:`~workbench.report.html`). A view: it only
reads results, it computes no metric of its own.

Layer: may import :mod:`workbench.widgets` and everything below it.
"""

from __future__ import annotations

from workbench.report.html import (
    generation_evaluation,
    render_report,
    restricted_ids,
    source_slices,
    write_report,
)

__all__ = ["generation_evaluation", "render_report", "restricted_ids", "source_slices",
           "write_report"]
