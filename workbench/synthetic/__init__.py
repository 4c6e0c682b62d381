"""Synthetic questions: golden items a model writes, filtered for realism and kept apart.

The model-written half of the golden set's life cycle (the hand-labelled half, candidates to
saved items, is :mod:`workbench.golden`). Owns question writing from a target chunk with its
distractors and rejections (:mod:`~workbench.synthetic.questions`), the realism filter and
its judge's agreement with a person (:mod:`~workbench.synthetic.realism`), and what sets
synthetic items apart from real ones, measured: the question/chunk overlap, slices of any
evaluation by source and kind, the distractors a run fell for
(:mod:`~workbench.synthetic.measures`). Its items are :class:`~workbench.golden.GoldenItem`
with ``source="synthetic"``, saved and validated like any other.

Layer: above :mod:`workbench.generation` (the writer and the realism judge are chat models
behind its cache, graded by its rules, the judge measured by its rating agreement), so it may
import generation and everything below it (in practice generation, evaluation, retrieval,
golden, corpus, stats and io). Only the CLI (``workbench synth``) imports it.
"""

from __future__ import annotations

from workbench.synthetic.measures import fooled_by, item_slices, lexical_overlap, overlap_table
from workbench.synthetic.questions import (
    SYNTHETIC_PROMPT_VERSION,
    CopyingQuestionWriter,
    Rejected,
    SyntheticRun,
    find_distractors,
    generate_synthetic,
    sample_chunks,
)
from workbench.synthetic.realism import (
    REALISM_PROMPT_VERSION,
    RealismJudge,
    SyntheticFilter,
    UnmeasuredJudgeWarning,
    UntrustedJudgeError,
    filter_synthetic,
    realism_agreement,
)

__all__ = ["REALISM_PROMPT_VERSION", "SYNTHETIC_PROMPT_VERSION", "CopyingQuestionWriter",
           "RealismJudge", "Rejected", "SyntheticFilter", "SyntheticRun",
           "UnmeasuredJudgeWarning", "UntrustedJudgeError", "filter_synthetic",
           "find_distractors", "fooled_by", "generate_synthetic", "item_slices",
           "lexical_overlap", "overlap_table", "realism_agreement", "sample_chunks"]
