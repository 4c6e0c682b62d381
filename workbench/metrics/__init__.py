"""Retrieval metrics (see :mod:`workbench.metrics.trec`)."""

from __future__ import annotations

from workbench.metrics.trec import (
    Metric,
    PerQueryScores,
    mean_scores,
    parse_metric,
    score_queries,
    trec_name,
)

__all__ = ["Metric", "PerQueryScores", "mean_scores", "parse_metric", "score_queries",
           "trec_name"]
