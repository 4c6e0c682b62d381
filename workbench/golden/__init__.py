"""Golden sets: questions -> where the answer lives (see :mod:`workbench.golden.golden_set`)."""

from __future__ import annotations

from workbench.golden.golden_set import (
    SOURCES,
    Evidence,
    GoldenItem,
    GoldenSet,
    GoldenSetError,
    Problem,
    add_case,
    atomic_write_text,
    parse_item,
    span_grades,
)

__all__ = ["SOURCES", "Evidence", "GoldenItem", "GoldenSet", "GoldenSetError", "Problem",
           "add_case", "atomic_write_text", "parse_item", "span_grades"]
