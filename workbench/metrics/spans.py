"""Character-span retrieval metrics, as in Chroma's "Evaluating Chunking Strategies for
Retrieval" (Smith & Troynikov, 2024).

Chunk-id metrics (recall@k, ...) ask *whether* the chunk holding an answer was retrieved.
Span metrics ask *how much of the answer text* came back and *how much else* came with it,
so chunkings of different sizes are compared on the same footing. The report calls them
"token-level"; its code (``chunking_evaluation/evaluation_framework/base_evaluation.py``)
works on half-open **character** ranges ``[start, end)``, and so do we (code points).

For one question with retrieved ranges ``R`` (the top k chunks, in order) and reference
ranges ``G`` (the evidence spans), writing ``|x|`` for a length:

* ``I`` = the union of ``r ∩ g`` over every retrieved ``r`` and reference ``g`` in the same
  document. Text that several overlapping chunks cover counts **once**.
* recall ``|I| / Σ|g|`` is the evidence metric ``coverage@k``
  (:mod:`~workbench.metrics.evidence`), counted there in non-whitespace characters so that
  the Chroma reproduction and the headline evidence recall share one definition.
* ``span_precision = |I| / Σ|r|`` over **all** retrieved chunks, summed **without** a union
  and including chunks from other documents: overlap redundancy and off-target chunks both
  lower precision.
* ``span_iou       = |I| / (Σ|r| + Σ_g |g minus the retrieved chunks|)``: the precision
  denominator plus the reference text no retrieved chunk covers.
* ``span_precision_omega`` (the report's "PrecisionΩ") is the same ratio when *every* chunk
  of the chunking that meets a reference is retrieved: ``|I| / |union(those chunks, the
  uncovered reference text)|``. It is the ceiling of IoU at perfect recall, a property of
  the chunking alone. As in the report's code, a chunk that only *touches* a reference
  (``max(start) <= min(end)``, a zero-length intersection) counts as meeting it: it adds
  nothing to ``I`` but its length enters the denominator.

Ask for them by name like any metric (``evaluate(..., metrics=["coverage@5",
"span_precision@5", "span_iou@5", "span_precision_omega"])``); they are defined for items
with evidence spans.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from workbench.corpus import Chunk, Span
from workbench.io import WorkbenchError

__all__ = [
    "RangeIndex",
    "intersect",
    "range_length",
    "span_iou",
    "span_precision",
    "span_precision_omega",
    "span_value",
    "subtract",
    "union_ranges",
]

Range = tuple[int, int]
Located = tuple[str, int, int]  # (doc_id, start, end)
RangeLike = Chunk | Span | Sequence[Any]


# --------------------------------------------------------------------------- range algebra


def union_ranges(ranges: Iterable[Range]) -> list[Range]:
    """Merge ranges that overlap or touch (``start <= previous end``), sorted by start."""
    merged: list[Range] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def range_length(ranges: Iterable[Range]) -> int:
    """Summed lengths, without a union (overlaps count twice)."""
    return sum(end - start for start, end in ranges)


def intersect(a: Range, b: Range) -> Range | None:
    """``a ∩ b``; ``None`` when they are disjoint. Touching ranges give an empty range
    ``(x, x)`` (the report's test is ``max(start) <= min(end)``)."""
    start, end = max(a[0], b[0]), min(a[1], b[1])
    return (start, end) if start <= end else None


def subtract(a: Range, cover: Iterable[Range]) -> list[Range]:
    """The parts of ``a`` that no range in ``cover`` overlaps."""
    out: list[Range] = []
    pos = a[0]
    for start, end in union_ranges(c for c in cover if c[0] < a[1] and c[1] > a[0]):
        if start > pos:
            out.append((pos, start))
        pos = max(pos, end)
    if pos < a[1]:
        out.append((pos, a[1]))
    return out


def _located(item: RangeLike, what: str) -> Located:
    """``(doc_id, start, end)`` from a Chunk, a Span / Evidence or a 3-tuple."""
    if isinstance(item, Chunk | Span):
        return item.doc_id, int(item.start), int(item.end)
    if isinstance(item, Sequence) and not isinstance(item, str) and len(item) == 3:
        doc_id, start, end = item
        if not isinstance(doc_id, str):
            raise WorkbenchError(f"{what} {item!r}: the first field must be a document id string")
        start, end = int(start), int(end)
        if not 0 <= start <= end:
            raise WorkbenchError(f"{what} {item!r}: need 0 <= start <= end (half-open range)")
        return doc_id, start, end
    raise WorkbenchError(
        f"{what} {item!r}: give a Chunk, a Span, or a (doc_id, start, end) tuple"
    )


def _prepare(
    retrieved: Iterable[RangeLike], references: Iterable[RangeLike]
) -> tuple[list[Located], list[Located]]:
    ret = [_located(r, "retrieved range") for r in retrieved]
    refs = [_located(g, "reference span") for g in references]
    if not refs or range_length((s, e) for _, s, e in refs) == 0:
        raise WorkbenchError(
            "span metrics need at least one non-empty reference span: questions without "
            "evidence have no span recall (exclude them, as chunk metrics do)"
        )
    return ret, refs


def _numerator(ret: Sequence[Located], refs: Sequence[Located]) -> int:
    """|I|: the union of every retrieved-range ∩ reference in the same document."""
    parts: dict[str, list[Range]] = {}
    for doc, rs, re_ in ret:
        for gdoc, gs, ge in refs:
            if doc == gdoc:
                hit = intersect((rs, re_), (gs, ge))
                if hit is not None and hit[1] > hit[0]:
                    parts.setdefault(doc, []).append(hit)
    return sum(range_length(union_ranges(p)) for p in parts.values())


def _uncovered(ret: Sequence[Located], refs: Sequence[Located]) -> list[Located]:
    """Each reference minus the retrieved ranges of its document (per reference)."""
    out: list[Located] = []
    for gdoc, gs, ge in refs:
        cover = [(s, e) for d, s, e in ret if d == gdoc]
        out.extend((gdoc, s, e) for s, e in subtract((gs, ge), cover))
    return out


# --------------------------------------------------------------------------- per question


def span_precision(retrieved: Iterable[RangeLike], references: Iterable[RangeLike]) -> float:
    """Share of the retrieved characters that are reference text: ``|I| / Σ|r|`` with
    every retrieved range counted in full (no union). 0.0 when nothing was retrieved."""
    ret, refs = _prepare(retrieved, references)
    total = range_length((s, e) for _, s, e in ret)
    return _numerator(ret, refs) / total if total else 0.0


def span_iou(retrieved: Iterable[RangeLike], references: Iterable[RangeLike]) -> float:
    """``|I| / (Σ|r| + uncovered reference characters)`` (the report's IoU: the retrieved
    lengths are summed without a union, so overlapping chunks lower it)."""
    ret, refs = _prepare(retrieved, references)
    denominator = range_length((s, e) for _, s, e in ret) + range_length(
        (s, e) for _, s, e in _uncovered(ret, refs)
    )
    return _numerator(ret, refs) / denominator if denominator else 0.0


def span_precision_omega(chunks: Iterable[RangeLike], references: Iterable[RangeLike]) -> float:
    """PrecisionΩ: IoU with every chunk that meets (overlaps or touches) a reference
    retrieved, the chunks *unioned* with the uncovered reference text in the denominator.
    ``chunks`` is the whole chunking (or at least every chunk of the references'
    documents)."""
    all_chunks, refs = _prepare(chunks, references)
    meeting = [
        (d, s, e)
        for d, s, e in all_chunks
        if any(d == gd and intersect((s, e), (gs, ge)) is not None for gd, gs, ge in refs)
    ]
    return _omega(meeting, refs)


def _omega(meeting: Sequence[Located], refs: Sequence[Located]) -> float:
    numerator = _numerator(meeting, refs)
    if not numerator:
        return 0.0
    by_doc: dict[str, list[Range]] = {}
    for d, s, e in [*meeting, *_uncovered(meeting, refs)]:
        by_doc.setdefault(d, []).append((s, e))
    return numerator / sum(range_length(union_ranges(r)) for r in by_doc.values())


# --------------------------------------------------------------------------- the chunking


class RangeIndex:
    """The chunks of each document as sorted arrays, to find those meeting a range."""

    def __init__(self, chunks: Iterable[RangeLike]):
        by_doc: dict[str, list[Range]] = {}
        for d, s, e in (_located(c, "chunk") for c in chunks):
            by_doc.setdefault(d, []).append((s, e))
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray, int]] = {}
        for d, ranges in by_doc.items():
            arr = np.array(sorted(ranges), dtype=np.int64).reshape(-1, 2)
            longest = int((arr[:, 1] - arr[:, 0]).max()) if len(arr) else 0
            self._arrays[d] = (arr[:, 0].copy(), arr[:, 1].copy(), longest)

    def meeting(self, doc: str, start: int, end: int) -> list[Located]:
        """Chunks of ``doc`` with ``max(starts) <= min(ends)`` against ``[start, end)``."""
        if doc not in self._arrays:
            return []
        starts, ends, longest = self._arrays[doc]
        lo = int(np.searchsorted(starts, start - longest, side="left"))
        hi = int(np.searchsorted(starts, end, side="right"))
        sel = np.flatnonzero(ends[lo:hi] >= start) + lo
        return [(doc, int(starts[i]), int(ends[i])) for i in sel]


def span_value(kind: str, retrieved: Sequence[RangeLike], references: Sequence[RangeLike],
               index: RangeIndex | None = None) -> float:
    """One span metric of one question: ``span_precision``, ``span_iou`` (of the retrieved
    ranges, best first, already cut at k) or ``span_precision_omega`` (of the chunking in
    ``index``)."""
    ret, refs = _prepare(retrieved, references)
    if kind == "span_precision_omega":
        if index is None:
            raise WorkbenchError("span_precision_omega needs the whole chunking")
        meeting = list(dict.fromkeys(m for d, s, e in refs for m in index.meeting(d, s, e)))
        return _omega(meeting, refs)
    numerator = _numerator(ret, refs)
    total = range_length((s, e) for _, s, e in ret)
    if kind == "span_precision":
        return numerator / total if total else 0.0
    if kind == "span_iou":
        denominator = total + range_length((s, e) for _, s, e in _uncovered(ret, refs))
        return numerator / denominator if denominator else 0.0
    raise WorkbenchError(f"{kind!r} is not a span metric (span_precision, span_iou, "
                     "span_precision_omega)")
