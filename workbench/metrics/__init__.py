"""Metrics: one registry for every retrieval metric and its conventions.

What a metric means (name, cutoff, which relevance it is defined for, whether it is 0/1,
its trec_eval name) is declared once in :mod:`~workbench.metrics.registry`; how it is
computed lives in :mod:`~workbench.metrics.trec` (chunk-id and document relevance, trec_eval
semantics, vectorised), :mod:`~workbench.metrics.evidence` (evidence spans, independent of
the chunking) and :mod:`~workbench.metrics.spans` (Chroma's character-span measures).
:class:`~workbench.metrics.relevance.Relevance` judges each golden item by its own labels and
is what evaluation, generation and diagnosis ask. TREC qrels / run files are read and written
in :mod:`~workbench.metrics.trec_files`. The per-question Evaluation table is built one layer
up.

Layer: may import :mod:`workbench.retrieval` and everything below it (in practice it needs
only :mod:`workbench.golden`, :mod:`workbench.corpus` and :mod:`workbench.io`).
"""

from __future__ import annotations

from workbench.metrics.registry import (
    DEFAULT_EVIDENCE_THRESHOLD,
    DEFAULT_GRADE_THRESHOLD,
    DEFAULT_METRICS,
    KINDS,
    RELEVANCE_KINDS,
    Metric,
    MetricKind,
    MetricNameError,
    at_k,
    canonical_name,
    default_metrics,
    parse_metric,
    parse_relevance_label,
    relevance_label,
    trec_name,
)
from workbench.metrics.relevance import Relevance, Scores
from workbench.metrics.spans import (
    RangeIndex,
    intersect,
    range_length,
    span_iou,
    span_precision,
    span_precision_omega,
    span_value,
    subtract,
    union_ranges,
)
from workbench.metrics.trec import PerQueryScores, mean_scores, score_queries
from workbench.metrics.trec_files import (
    ranked_lists,
    read_trec_qrels,
    read_trec_run,
    trec_sorted,
    write_trec_qrels,
    write_trec_run,
)

__all__ = ["DEFAULT_EVIDENCE_THRESHOLD", "DEFAULT_GRADE_THRESHOLD", "DEFAULT_METRICS", "KINDS",
           "RELEVANCE_KINDS", "Metric", "MetricKind", "MetricNameError", "PerQueryScores",
           "RangeIndex", "Relevance", "Scores", "at_k", "canonical_name", "default_metrics",
           "intersect", "mean_scores", "parse_metric", "parse_relevance_label", "range_length",
           "ranked_lists", "read_trec_qrels", "read_trec_run", "relevance_label", "score_queries",
           "span_iou", "span_precision", "span_precision_omega", "span_value", "subtract",
           "trec_name", "trec_sorted", "union_ranges", "write_trec_qrels", "write_trec_run"]
