"""Runs and Evaluations (see :mod:`workbench.evaluation.evaluation`) and the paired
statistics (:mod:`workbench.evaluation.stats`)."""

from __future__ import annotations

from workbench.evaluation.evaluation import (
    DEFAULT_METRICS,
    Evaluation,
    Run,
    default_metrics,
    evaluate,
)
from workbench.evaluation.stats import bootstrap_ci

__all__ = ["DEFAULT_METRICS", "Evaluation", "Run", "bootstrap_ci", "default_metrics", "evaluate"]
