"""Evaluation: scoring a retriever on a golden set, and telling a real difference from noise.

Owns :class:`Run` (qid -> ranked hits, :mod:`~workbench.evaluation.run`), run files
(logged production results read and our runs written, :mod:`~workbench.evaluation.run_files`),
the tidy
:class:`Evaluation` table and its views (:mod:`~workbench.evaluation.evaluation`) with
:func:`evaluate`, which scores a retriever or a Run (:mod:`~workbench.evaluation.scoring`),
compared with the paired statistics of :mod:`workbench.stats`, and the pipeline a config
describes, run the same way everywhere (:func:`evaluate_pipeline`,
:mod:`~workbench.evaluation.pipeline`). Every number a person reads
carries its n and an interval; verdicts come only from paired tests.

Layer: may import :mod:`workbench.metrics`, :mod:`workbench.retrieval`,
:mod:`workbench.chunking`, :mod:`workbench.golden`, :mod:`workbench.corpus`,
:mod:`workbench.stats`, :mod:`workbench.text` and :mod:`workbench.io`.
"""

from __future__ import annotations

from workbench.evaluation.evaluation import (
    INTERVAL_NOTE,
    SMALL_MARK,
    Evaluation,
    FrameField,
    describe_relevance,
    evaluation_from_scores,
)
from workbench.evaluation.pipeline import evaluate_pipeline
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
from workbench.evaluation.scoring import evaluate

__all__ = ["INTERVAL_NOTE", "RUN_FORMATS", "SMALL_MARK", "Evaluation", "FrameField", "Run",
           "describe_relevance", "evaluate", "evaluate_pipeline", "evaluation_from_scores",
           "read_run", "write_run"]
__all__ += ["RouterEvaluation", "RoutingRequest", "compare_routers", "evaluate_router",
            "load_costs", "load_requests", "load_routes"]
