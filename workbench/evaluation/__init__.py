"""Evaluation: scoring a retriever on a golden set, and telling a real difference from noise.

Owns :class:`Run` (qid -> ranked hits, :mod:`~workbench.evaluation.run`), run files
(logged production results read and our runs written, :mod:`~workbench.evaluation.run_files`),
the tidy
:class:`Evaluation` table with :func:`evaluate` (:mod:`~workbench.evaluation.evaluation`)
and the paired statistics for small golden sets (:mod:`workbench.evaluation.stats`:
Clopper-Pearson and bootstrap intervals, McNemar, permutation test, Holm, minimal
detectable difference). Every number a person reads carries its n and an interval;
verdicts come only from paired tests.

Layer: may import :mod:`workbench.metrics`, :mod:`workbench.retrieval`,
:mod:`workbench.chunking`, :mod:`workbench.golden`, :mod:`workbench.corpus`,
:mod:`workbench.text` and :mod:`workbench.io`.
"""

from __future__ import annotations

from workbench.evaluation.evaluation import (
    INTERVAL_NOTE,
    SMALL_MARK,
    Evaluation,
    FrameField,
    describe_relevance,
    evaluate,
)
from workbench.evaluation.routing import (
    RouterEvaluation,
    RoutingRequest,
    compare_routers,
    evaluate_router,
    load_costs,
    load_requests,
    load_routes,
)
from workbench.evaluation.run import Run
from workbench.evaluation.run_files import RUN_FORMATS, read_run, write_run
from workbench.evaluation.stats import (
    EXACT_MAX,
    SMALL_N,
    Flip,
    McNemarResult,
    PairedComparison,
    bootstrap_ci,
    clopper_pearson,
    compare_many,
    compare_paired,
    comparison_table,
    format_p,
    holm,
    is_small_sample,
    mcnemar_exact,
    mean_interval,
    minimal_detectable_difference,
    one_question,
    paired_bootstrap_ci,
    paired_permutation_test,
    questions_needed,
    sign_test,
)

__all__ = ["EXACT_MAX", "INTERVAL_NOTE", "RUN_FORMATS", "SMALL_MARK",
           "SMALL_N", "Evaluation", "Flip", "FrameField", "McNemarResult", "PairedComparison",
           "Run", "bootstrap_ci", "clopper_pearson", "compare_many", "compare_paired",
           "comparison_table", "describe_relevance", "evaluate", "format_p", "holm",
           "is_small_sample",
           "mcnemar_exact", "mean_interval", "minimal_detectable_difference", "one_question",
           "paired_bootstrap_ci", "paired_permutation_test", "questions_needed", "read_run",
           "sign_test", "write_run"]
__all__ += ["RouterEvaluation", "RoutingRequest", "compare_routers", "evaluate_router",
            "load_costs", "load_requests", "load_routes"]
