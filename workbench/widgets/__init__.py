"""Widgets: thin views over results objects (Evaluation, Run, SweepResult, traces, chunks).

Python computes, the view only paints: every widget takes results and exposes its current
selection as a readable attribute, and has a static form (an HTML string or a plotly figure)
so it renders in reports and tests without a browser. Plots are pure functions returning
figures. Views never compute metrics of their own.

:mod:`~workbench.widgets.metric_table`, :mod:`~workbench.widgets.chunk_preview`,
:mod:`~workbench.widgets.plots`, :mod:`~workbench.widgets.sweep_explorer`,
:mod:`~workbench.widgets.trace_viewer`, :mod:`~workbench.widgets.labeller`,
:mod:`~workbench.widgets.realism_scorer` and
:mod:`~workbench.widgets.position_plot`. Names load lazily (ipywidgets and plotly are
imported only when a view is used). Every view refuses a keyword it does not take, by name
(:mod:`~workbench.widgets.keywords`).

Layer: may import :mod:`workbench.gate` and everything below it (in practice evaluation,
sweep, generation, diagnose, chunking and corpus).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "workbench.widgets.chunk_preview": ["ChunkPreview", "ChunkPreviewPair", "chunk_preview_html"],
    "workbench.widgets.keywords": ["UnknownKeyword", "refuse_unknown_keywords"],
    "workbench.widgets.labeller": ["Labeller", "labeller_html"],
    "workbench.widgets.metric_table": ["MetricTable", "available_ks", "metric_table_html",
                                       "table_frame"],
    "workbench.widgets.plots": ["BUCKET_COLOURS", "category_heatmap", "cost_quality",
                                "metric_vs_param", "pareto_front", "rank_position", "topk_view"],
    "workbench.widgets.position_plot": ["PositionPlot", "position_figure", "reference_curves"],
    "workbench.widgets.realism_scorer": ["RealismScorer", "realism_scorer_html"],
    "workbench.widgets.sweep_explorer": ["SweepExplorer"],
    "workbench.widgets.trace_viewer": ["TraceViewer", "trace_viewer_html", "worst_traces_html"],
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'workbench.widgets' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return __all__
