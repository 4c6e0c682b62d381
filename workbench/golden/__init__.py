"""Golden sets: the hand-labelled questions and where their answers live.

Owns :class:`GoldenItem`, :class:`Evidence` and validation problems
(:mod:`~workbench.golden.items`), :class:`GoldenSet` with load / validate / save / qrels /
anchor and :func:`add_case` (:mod:`~workbench.golden.golden_set`), and public datasets that
carry their own questions, BEIR and SQuAD-style JSON (:mod:`~workbench.golden.datasets`).

Layer: may import :mod:`workbench.corpus`, :mod:`workbench.text` and :mod:`workbench.io`.
"""

from __future__ import annotations

from workbench.golden.datasets import load_beir, load_dataset, load_squad
from workbench.golden.golden_set import GoldenSet, add_case
from workbench.golden.items import (
    SOURCES,
    Evidence,
    GoldenItem,
    GoldenSetError,
    Problem,
    parse_item,
)

__all__ = ["SOURCES", "Evidence", "GoldenItem", "GoldenSet", "GoldenSetError", "Problem",
           "add_case", "load_beir", "load_dataset", "load_squad", "parse_item"]
