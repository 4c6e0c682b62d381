"""Metrics: one place for every retrieval metric and its conventions.

Owns the chunk-id metrics with trec_eval semantics and their names (:class:`Metric`,
:func:`parse_metric`, :func:`score_queries`, :func:`mean_scores`; conventions in
:mod:`~workbench.metrics.trec`), the character-span metrics of Smith & Troynikov (2024)
(:mod:`~workbench.metrics.spans`) and TREC qrels / run files
(:mod:`~workbench.metrics.trec_files`). Metrics are plain functions of ids and ranges; the
per-question :class:`~workbench.evaluation.Evaluation` table is built one layer up.

Layer: may import :mod:`workbench.retrieval` and everything below it (in practice it needs
only :mod:`workbench.corpus` and :mod:`workbench.io`).
"""

from __future__ import annotations

from workbench.metrics.spans import (
    SPAN_METRICS,
    SpanScores,
    intersect,
    range_length,
    score_spans,
    span_iou,
    span_precision,
    span_precision_omega,
    span_recall,
    subtract,
    union_ranges,
)
from workbench.metrics.trec import (
    Metric,
    PerQueryScores,
    mean_scores,
    parse_metric,
    score_queries,
    trec_name,
)
from workbench.metrics.trec_files import (
    ranked_lists,
    read_trec_qrels,
    read_trec_run,
    trec_sorted,
    write_trec_qrels,
    write_trec_run,
)

__all__ = ["SPAN_METRICS", "Metric", "PerQueryScores", "SpanScores", "intersect", "mean_scores",
           "parse_metric", "range_length", "ranked_lists", "read_trec_qrels", "read_trec_run",
           "score_queries", "score_spans", "span_iou", "span_precision", "span_precision_omega",
           "span_recall", "subtract", "trec_name", "trec_sorted", "union_ranges",
           "write_trec_qrels", "write_trec_run"]
