"""Measuring slices in chars or tokens (:class:`Ruler`) and turning units into chunks:
candidate pieces (:class:`Piece`), greedy packing with overlap (:func:`pack`), recursive
descent (:func:`descend`), the fixed-window fallback for an over-budget unit
(:func:`fallback_windows`), the exact budget check (:func:`settle`) and ids
(:func:`to_chunks`). These are the building blocks every built-in chunker is made of; a new
chunker cuts units (:mod:`~workbench.chunking.units`) and packs them with these.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Callable, Iterable, Sequence
from types import MappingProxyType
from typing import Any

from workbench.chunking.units import is_blank, trim_span, window_spans
from workbench.corpus import Chunk, Document, provenance
from workbench.text import TokenCounter, get_counter

__all__ = ["Piece", "Ruler", "Splitter", "descend", "fallback_windows", "pack", "settle",
           "to_chunks"]


@functools.lru_cache(maxsize=8)
def _token_starts(counter: str, text: str) -> tuple[int, ...]:
    """Start offsets of the tokens of a whole document (cached: chunkers that wrap others,
    and diagnostics, tokenize the same document more than once)."""
    return tuple(s for s, _ in get_counter(counter).offsets(text))


class Ruler:
    """Measures slices of one document's text in the chunker's unit."""

    def __init__(self, text: str, unit: str, counter: str):
        self.text = text
        self.chars = unit == "chars"
        self.counter: TokenCounter | None = None if self.chars else get_counter(counter)
        self.counter_name = counter
        self._memo: dict[tuple[int, int], int] = {}

    def size(self, start: int, end: int) -> int:
        """Exact size of ``text[start:end]`` (tokens: the slice tokenized on its own)."""
        if self.chars:
            return max(0, end - start)
        key = (start, end)
        if key not in self._memo:
            assert self.counter is not None
            self._memo[key] = self.counter.count(self.text[start:end])
        return self._memo[key]

    def estimate(self, start: int, end: int) -> int:
        """Cheap size estimate: the document's own tokens that start inside the slice (exact
        for characters, and for tokens whenever the slice begins and ends between words)."""
        if self.chars:
            return max(0, end - start)
        starts = _token_starts(self.counter_name, self.text)
        return bisect.bisect_left(starts, end) - bisect.bisect_left(starts, start)

    def likely_fits(self, start: int, end: int, budget: int) -> bool:
        """Whether the slice fits by the estimate (exact for characters); chunkers confirm
        every chunk with :meth:`fits` before emitting it (see :func:`settle`)."""
        return self.estimate(start, end) <= budget

    def fits(self, start: int, end: int, budget: int) -> bool:
        """Whether ``text[start:end]`` fits ``budget`` exactly; slices estimated at over
        twice the budget are refused without tokenizing them."""
        if self.chars:
            return end - start <= budget
        if self.estimate(start, end) > 2 * budget + 8:
            return False
        return self.size(start, end) <= budget

    def size_of(self, text: str) -> int:
        if self.counter is None:
            return len(text)
        return self.counter.count(text)

    def token_units(self, start: int, end: int) -> list[tuple[int, int]]:
        """Token spans over the trimmed ``[start, end)``, each widened over the non-space
        characters the tokenizer dropped (lone combining marks...), so together the spans
        cover every non-whitespace character."""
        lo, hi = trim_span(self.text, start, end)
        if lo >= hi:
            return []
        assert self.counter is not None
        offs = [(lo + a, lo + b) for a, b in self.counter.offsets(self.text[lo:hi])]
        if not offs:
            return [(lo, hi)]
        units = []
        for i, (a, b) in enumerate(offs):
            nxt = offs[i + 1][0] if i + 1 < len(offs) else hi
            if nxt > b:  # non-space characters in the gap join the token before the gap
                b += len(self.text[b:nxt].rstrip())
            units.append((lo if i == 0 else a, b))
        return units

    def windows(self, start: int, end: int, size: int, overlap: int) -> list[tuple[int, int]]:
        """Fixed windows of ``size`` units stepping ``size - overlap`` over the trimmed
        ``[start, end)``; whitespace-only windows are dropped."""
        lo, hi = trim_span(self.text, start, end)
        if self.chars:
            spans = [(lo + a, lo + b) for a, b in window_spans(hi - lo, size, overlap)]
        else:
            units = self.token_units(lo, hi)
            spans = [
                (units[a][0], units[b - 1][1]) for a, b in window_spans(len(units), size, overlap)
            ]
        return [(a, b) for a, b in spans if not is_blank(self.text, a, b)]


class Piece:
    """A candidate chunk: a span plus metadata, an embed prefix, and whether it may merge."""

    __slots__ = ("end", "meta", "prefix", "solo", "start")

    def __init__(
        self,
        start: int,
        end: int,
        meta: dict[str, Any] | None = None,
        *,
        prefix: str = "",
        solo: bool = False,
    ):
        self.start = start
        self.end = end
        self.meta = meta or {}
        self.prefix = prefix
        self.solo = solo


def fallback_windows(
    r: Ruler, start: int, end: int, size: int, *, meta: dict[str, Any] | None = None
) -> list[Piece]:
    """Fixed windows inside one over-budget unit, flagged ``fallback="fixed"``."""
    flag = {**(meta or {}), "fallback": "fixed"}
    return [Piece(a, b, dict(flag), solo=True) for a, b in r.windows(start, end, size, 0)]


def pack(
    pieces: Sequence[Piece], r: Ruler, size: int, *, overlap_units: int = 0, overlap_pieces: int = 0
) -> list[Piece]:
    """Greedily merge runs of adjacent pieces while the merged slice fits ``size``.

    With overlap, each new chunk starts with the trailing pieces of the previous one, as
    many as fit in ``overlap_units`` units (or ``overlap_pieces`` pieces) while leaving room
    for the next piece. Solo pieces are never merged or repeated.
    """
    out: list[Piece] = []
    n = len(pieces)
    i = 0
    while i < n:
        first = pieces[i]
        if first.solo:
            out.append(first)
            i += 1
            continue
        # extend on the cheap estimate, then back off until the exact count fits
        j = i + 1
        while j < n and not pieces[j].solo and r.estimate(first.start, pieces[j].end) <= size:
            j += 1
        while j > i + 1 and not r.fits(first.start, pieces[j - 1].end, size):
            j -= 1
        meta: dict[str, Any] = {}
        for p in pieces[i:j]:
            meta.update(p.meta)
        out.append(Piece(first.start, pieces[j - 1].end, meta, prefix=first.prefix))
        if j >= n:
            break
        k = j
        if (overlap_units or overlap_pieces) and not pieces[j].solo:
            while k - 1 > i:
                cand = k - 1
                if overlap_pieces and j - cand > overlap_pieces:
                    break
                if overlap_units and not r.fits(
                    pieces[cand].start, pieces[j - 1].end, overlap_units
                ):
                    break
                if not r.fits(pieces[cand].start, pieces[j].end, size):
                    break
                k = cand
        i = k
    return out


#: ``(text, start, end) -> [(start, end), ...]``: cuts ``[start, end)`` of ``text`` into units.
Splitter = Callable[[str, int, int], list[tuple[int, int]]]


def descend(
    r: Ruler,
    start: int,
    end: int,
    size: int,
    *,
    overlap: int,
    splitters: Sequence[Splitter],
    level: int = 0,
) -> list[Piece]:
    """Keep ``[start, end)`` whole if it fits; else split it with the first splitter that
    cuts it, recurse into the parts, and merge small neighbours back up to ``size``."""
    start, end = trim_span(r.text, start, end)
    if start >= end:
        return []
    if r.likely_fits(start, end, size):
        return [Piece(start, end)]
    for depth in range(level, len(splitters)):
        units = splitters[depth](r.text, start, end)
        if len(units) > 1:
            pieces = [
                p for a, b in units for p in descend(r, a, b, size, overlap=overlap,
                                                     splitters=splitters, level=depth + 1)
            ]
            return pack(pieces, r, size, overlap_units=overlap)
    return fallback_windows(r, start, end, size)


def settle(pieces: Iterable[Piece], r: Ruler, size: int) -> list[Piece]:
    """Confirm each mergeable piece fits exactly; one that does not (its estimate was off)
    is cut into flagged fixed windows instead."""
    out: list[Piece] = []
    for p in pieces:
        if p.solo or r.fits(p.start, p.end, size):
            out.append(p)
        else:
            out.extend(fallback_windows(r, p.start, p.end, size, meta=p.meta))
    return out


def to_chunks(doc: Document, pieces: Iterable[Piece]) -> list[Chunk]:
    """The chunks of ``doc`` for ``pieces`` in order: ids ``{doc_id}#{i}``, ``text`` the exact
    slice, ``embed_text`` the piece's prefix plus the text, ``metadata`` the piece's plus
    where the slice came from (:func:`~workbench.corpus.provenance`: pages, heading path)."""
    chunks = []
    for i, p in enumerate(pieces):
        text = doc.text[p.start : p.end]
        chunks.append(
            Chunk(
                id=f"{doc.id}#{i}",
                doc_id=doc.id,
                start=p.start,
                end=p.end,
                text=text,
                embed_text=p.prefix + text if p.prefix else "",
                metadata=MappingProxyType({**p.meta, **provenance(doc, p.start, p.end)}),
            )
        )
    return chunks
