"""Evaluation: scoring a retriever on a golden set, and telling a real difference from noise.

Owns :class:`Run` (qid -> ranked hits, :mod:`~workbench.evaluation.run`), the tidy
:class:`Evaluation` table with :func:`evaluate` and :func:`span_evaluate`
(:mod:`~workbench.evaluation.evaluation`) and the paired statistics for small golden sets
(:mod:`workbench.evaluation.stats`: bootstrap intervals, McNemar, permutation test, Holm,
minimal detectable difference). Every number a person reads carries its n and an interval;
verdicts come only from paired tests.

Layer: may import :mod:`workbench.metrics`, :mod:`workbench.retrieval`,
:mod:`workbench.chunking`, :mod:`workbench.golden`, :mod:`workbench.corpus`,
:mod:`workbench.text` and :mod:`workbench.io`.
"""

from __future__ import annotations

from workbench.evaluation.evaluation import (
    DEFAULT_METRICS,
    Evaluation,
    default_metrics,
    evaluate,
    span_evaluate,
)
from workbench.evaluation.run import Run
from workbench.evaluation.stats import (
    EXACT_MAX,
    Flip,
    McNemarResult,
    PairedComparison,
    bootstrap_ci,
    compare_many,
    compare_paired,
    comparison_table,
    holm,
    mcnemar_exact,
    minimal_detectable_difference,
    one_question,
    paired_bootstrap_ci,
    paired_permutation_test,
    questions_needed,
)

__all__ = ["DEFAULT_METRICS", "EXACT_MAX", "Evaluation", "Flip", "McNemarResult",
           "PairedComparison", "Run", "bootstrap_ci", "compare_many", "compare_paired",
           "comparison_table", "default_metrics", "evaluate", "holm", "mcnemar_exact",
           "minimal_detectable_difference", "one_question", "paired_bootstrap_ci",
           "paired_permutation_test", "questions_needed", "span_evaluate"]
