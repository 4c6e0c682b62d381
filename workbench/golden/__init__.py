"""Golden sets: the hand-labelled questions and where their answers live.

Owns :class:`GoldenItem`, :class:`Evidence` and validation problems
(:mod:`~workbench.golden.items`), :class:`GoldenSet` with load / validate / save / qrels /
anchor and :func:`add_case` (:mod:`~workbench.golden.golden_set`), and public datasets that
carry their own questions, BEIR and SQuAD-style JSON (:mod:`~workbench.golden.datasets`).
Labelling from real sources: candidate questions from logs, run logs and trace exports
(:mod:`~workbench.golden.candidates`, :mod:`~workbench.golden.otel`), drift repair
(:mod:`~workbench.golden.reanchor`), agreement of two labellers
(:mod:`~workbench.golden.agreement`), Label Studio and Argilla files both ways
(:mod:`~workbench.golden.exchange` out, :mod:`~workbench.golden.label_import` back).
This is the hand-labelled half of the golden set's life cycle; model-written items are
:mod:`workbench.synthetic`, above generation (docs/architecture.md, section 1).

Layer: may import :mod:`workbench.corpus`, :mod:`workbench.stats`, :mod:`workbench.text` and
:mod:`workbench.io`.
"""

from __future__ import annotations

from workbench.golden.agreement import Agreement, agreement
from workbench.golden.candidates import (
    Candidate,
    Candidates,
    dedupe,
    import_questions,
    read_questions,
    sample_candidates,
    save_candidates,
)
from workbench.golden.datasets import load_beir, load_dataset, load_squad
from workbench.golden.exchange import to_argilla, to_label_studio
from workbench.golden.golden_set import GoldenSet, add_case
from workbench.golden.items import (
    SOURCES,
    Evidence,
    GoldenItem,
    GoldenSetError,
    Problem,
    can_read_item,
    parse_item,
)
from workbench.golden.label_import import LabelImport, from_argilla, from_label_studio
from workbench.golden.reanchor import Reanchored, ReanchorReport, apply_confirmed, reanchor

__all__ = ["SOURCES", "Agreement", "Candidate", "Candidates", "Evidence", "GoldenItem",
           "GoldenSet", "GoldenSetError", "LabelImport", "Problem", "ReanchorReport",
           "Reanchored", "add_case", "agreement", "apply_confirmed", "can_read_item",
           "dedupe", "from_argilla", "from_label_studio", "import_questions",
           "load_beir", "load_dataset", "load_squad", "parse_item", "read_questions",
           "reanchor", "sample_candidates", "save_candidates", "to_argilla", "to_label_studio"]
