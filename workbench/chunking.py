"""Chunking: cut documents into retrievable chunks, offset-exact, and diagnose the result.

Every chunker here obeys the invariants of :mod:`workbench.corpus`:

* ``document.text[c.start:c.end] == c.text`` (offsets are code points);
* chunk ids are ``{doc_id}#{ordinal}``, ordinals from 0 in document order;
* ``c.text`` is the clean slice the generator reads; ``c.embed_text`` is what gets
  embedded and may carry extra context (a repeated table header, a contextual header);
* no chunk is empty or whitespace only, and every non-whitespace character of a document
  lies in at least one chunk;
* chunking is deterministic, and structure-based chunkers (recursive, markdown) never let a
  chunk cross a heading, so editing one section leaves the other sections' chunks (text and
  ``content_hash``) unchanged.

Budgets (``size``) are counted in ``unit="chars"`` (code points) or ``unit="tokens"`` of a
token counter (``counter="minilm"`` by default; see :mod:`workbench.tokens`). A chunk may
exceed its budget only when a single unit (a sentence, a word, a table row) is larger than
the budget by itself: it is then cut into fixed windows and those chunks carry
``metadata["fallback"] == "fixed"``.

Every chunker is a frozen dataclass whose ``repr`` / ``label`` is a spec string that
:func:`parse_chunker` turns back into an equal chunker, e.g.
``fixed:size=800,overlap=100,unit=chars`` or
``recursive:size=300,overlap=0,unit=tokens,header=true``.

Parent/child ids: :class:`ParentChildChunker` returns the *child* chunks (the ones to
index); they are numbered ``{doc_id}#{i}`` like any chunks and carry ``parent_id``. Its
``parents(document)`` returns the enclosing parent chunks with ids
``{doc_id}#parent#{j}``: document ids may not contain ``#``, so a parent id (two ``#``)
never equals a child or ordinary chunk id (one ``#``), ``Chunk.ordinal`` still gives ``j``
and ``Chunk.doc_id`` is the real document.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import itertools
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar, Protocol, runtime_checkable

from workbench.corpus import Chunk, Document, Span
from workbench.tokens import TokenCounter, get_counter

__all__ = [
    "Chunker",
    "ChunkingDiagnostics",
    "ContextualHeader",
    "FixedChunker",
    "MarkdownChunker",
    "ParentChildChunker",
    "RecursiveChunker",
    "SentenceChunker",
    "chunk_corpus",
    "diagnose_chunking",
    "markdown_headings",
    "near_duplicate_pairs",
    "parse_chunker",
    "section_path_at",
    "sentence_spans",
    "split_rate",
    "split_spans",
    "window_spans",
]

UNITS = ("chars", "tokens")
DEFAULT_COUNTER = "minilm"
HEADER_FIELDS = ("title", "section", "date")

Docs = Iterable[Document] | Mapping[str, Document]


# --------------------------------------------------------------------------- windows


def window_spans(n_tokens: int, size: int, overlap: int = 0) -> list[tuple[int, int]]:
    """Fixed windows over ``n_tokens`` units: ``[(start, end), ...]``, end exclusive.

    Windows are ``size`` long and step by ``size - overlap``; the last one is clipped to
    ``n_tokens`` and no window starts once one has reached the end. ``n_tokens == 0`` gives
    no windows.
    """
    if size < 1:
        raise ValueError(f"window size must be >= 1, got {size}")
    if not 0 <= overlap < size:
        raise ValueError(f"overlap must satisfy 0 <= overlap < size ({size}), got {overlap}")
    if n_tokens < 0:
        raise ValueError(f"n_tokens must be >= 0, got {n_tokens}")
    spans: list[tuple[int, int]] = []
    start = 0
    while start < n_tokens:
        spans.append((start, min(start + size, n_tokens)))
        if start + size >= n_tokens:
            break
        start += size - overlap
    return spans


# --------------------------------------------------------------------------- text units


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink ``[start, end)`` past leading and trailing whitespace."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _blank(text: str, start: int, end: int) -> bool:
    s, e = _trim(text, start, end)
    return s >= e


def _lines(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """``(start, end)`` of each line in ``text[start:end]``, without its newline."""
    end = len(text) if end is None else end
    out = []
    pos = start
    while pos < end:
        nl = text.find("\n", pos, end)
        stop = end if nl < 0 else nl
        out.append((pos, stop))
        pos = stop + 1
    return out


def _trimmed_between(text: str, cuts: Sequence[int], start: int, end: int) -> list[tuple[int, int]]:
    """The non-blank pieces of ``[start, end)`` cut at ``cuts`` (sorted positions)."""
    bounds = [start, *[c for c in cuts if start < c < end], end]
    out = []
    for a, b in itertools.pairwise(bounds):
        s, e = _trim(text, a, b)
        if s < e:
            out.append((s, e))
    return out


_PARA_BREAK = re.compile(r"\n\s*\n")
_WORD = re.compile(r"\S+")
# Sentence ends: . ! ? … (Latin, Vietnamese) before whitespace, possibly closed by quotes or
# brackets; CJK full-width 。！？； with no space needed; and every line break.
_SENT_END = re.compile(
    r"[.!?…]+[\"'”’»)\]]*(?=\s)"
    r"|[。！？；]+[\"'”’」』）)]*"
    r"|\n"
)


def _paragraphs(text: str, start: int, end: int) -> list[tuple[int, int]]:
    cuts: list[int] = []
    for m in _PARA_BREAK.finditer(text, start, end):
        cuts.extend((m.start(), m.end()))
    return _trimmed_between(text, cuts, start, end)


def _sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    cuts = [m.end() for m in _SENT_END.finditer(text, start, end)]
    return _trimmed_between(text, cuts, start, end)


def _words(text: str, start: int, end: int) -> list[tuple[int, int]]:
    return [m.span() for m in _WORD.finditer(text, start, end)]


def _line_units(text: str, start: int, end: int) -> list[tuple[int, int]]:
    return [(s, e) for s, e in (_trim(text, a, b) for a, b in _lines(text, start, end)) if s < e]


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Sentence ``(start, end)`` spans of ``text``, trimmed of surrounding whitespace.

    A sentence ends at ``. ! ? …`` followed by whitespace (closing quotes and brackets stay
    with it), right after a CJK ``。！？；``, and at every line break.
    """
    return _sentences(text, 0, len(text))


# --------------------------------------------------------------------------- markdown


@dataclass(frozen=True)
class _Heading:
    start: int
    end: int
    level: int
    title: str


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_ATX_CLOSE = re.compile(r"(?:^|[ \t]+)#+$")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")


def _fence_close(text: str, lines: list[tuple[int, int]], i: int) -> int:
    """Index of the line closing the fence opened at line ``i`` (last line if unclosed)."""
    opening = _FENCE.match(text[lines[i][0] : lines[i][1]])
    assert opening is not None
    marker = opening.group(1)
    for j in range(i + 1, len(lines)):
        m = _FENCE.match(text[lines[j][0] : lines[j][1]])
        if (
            m
            and m.group(1)[0] == marker[0]
            and len(m.group(1)) >= len(marker)
            and not text[lines[j][0] + m.end() : lines[j][1]].strip()
        ):
            return j
    return len(lines) - 1


def _heading_at(text: str, start: int, end: int) -> _Heading | None:
    m = _ATX.match(text[start:end])
    if not m:
        return None
    title = _ATX_CLOSE.sub("", (m.group(2) or "").strip()).strip()
    return _Heading(start, end, len(m.group(1)), title)


def markdown_headings(text: str) -> list[_Heading]:
    """ATX headings (``#`` to ``######`` lines) of ``text``, skipping fenced code blocks."""
    lines = _lines(text)
    out = []
    i = 0
    while i < len(lines):
        s, e = lines[i]
        if _FENCE.match(text[s:e]):
            i = _fence_close(text, lines, i) + 1
            continue
        heading = _heading_at(text, s, e)
        if heading:
            out.append(heading)
        i += 1
    return out


def _paths(headings: Sequence[_Heading]) -> list[list[str]]:
    """The section path (h1 down) in force right after each heading."""
    stack: list[_Heading] = []
    out = []
    for h in headings:
        while stack and stack[-1].level >= h.level:
            stack.pop()
        stack.append(h)
        out.append([x.title for x in stack])
    return out


def section_path_at(text: str, pos: int) -> list[str]:
    """Heading titles (h1 down) of the section holding position ``pos`` of ``text``."""
    headings = markdown_headings(text)
    i = bisect.bisect_right([h.start for h in headings], pos)
    return _paths(headings)[i - 1] if i else []


@dataclass(frozen=True)
class _Block:
    kind: str  # heading | code | table | para
    start: int
    end: int
    level: int = 0
    title: str = ""


def _table_starts(text: str, lines: list[tuple[int, int]], i: int) -> bool:
    if i + 1 >= len(lines):
        return False
    s, e = lines[i]
    s2, e2 = lines[i + 1]
    return "|" in text[s:e] and "|" in text[s2:e2] and bool(_TABLE_SEP.match(text[s2:e2]))


def _markdown_blocks(text: str) -> list[_Block]:
    """Headings, fenced code blocks, pipe tables and paragraphs, in order."""
    lines = _lines(text)
    blocks: list[_Block] = []
    i = 0
    while i < len(lines):
        s, e = lines[i]
        if _blank(text, s, e):
            i += 1
            continue
        if _FENCE.match(text[s:e]):
            j = _fence_close(text, lines, i)
            blocks.append(_Block("code", s, lines[j][1]))
            i = j + 1
            continue
        heading = _heading_at(text, s, e)
        if heading:
            blocks.append(_Block("heading", s, e, heading.level, heading.title))
            i += 1
            continue
        if _table_starts(text, lines, i):
            j = i + 2
            while j < len(lines) and "|" in text[lines[j][0] : lines[j][1]]:
                if _blank(text, *lines[j]):
                    break
                j += 1
            blocks.append(_Block("table", s, lines[j - 1][1]))
            i = j
            continue
        j = i + 1
        while j < len(lines):
            ls, le = lines[j]
            if (
                _blank(text, ls, le)
                or _FENCE.match(text[ls:le])
                or _heading_at(text, ls, le)
                or _table_starts(text, lines, j)
            ):
                break
            j += 1
        blocks.append(_Block("para", s, lines[j - 1][1]))
        i = j
    return blocks


# --------------------------------------------------------------------------- measuring


@functools.lru_cache(maxsize=8)
def _token_starts(counter: str, text: str) -> tuple[int, ...]:
    """Start offsets of the tokens of a whole document (cached: chunkers that wrap others,
    and diagnostics, tokenize the same document more than once)."""
    return tuple(s for s, _ in get_counter(counter).offsets(text))


class _Ruler:
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
        every chunk with :meth:`fits` before emitting it (see :func:`_settle`)."""
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
        lo, hi = _trim(self.text, start, end)
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
        lo, hi = _trim(self.text, start, end)
        if self.chars:
            spans = [(lo + a, lo + b) for a, b in window_spans(hi - lo, size, overlap)]
        else:
            units = self.token_units(lo, hi)
            spans = [
                (units[a][0], units[b - 1][1]) for a, b in window_spans(len(units), size, overlap)
            ]
        return [(a, b) for a, b in spans if not _blank(self.text, a, b)]


class _Piece:
    """A candidate chunk: a span plus metadata, an embed prefix, and whether it may merge."""

    __slots__ = ("end", "meta", "prefix", "solo", "start")

    def __init__(
        self,
        start: int,
        end: int,
        meta: dict[str, Any] | None = None,
        prefix: str = "",
        solo: bool = False,
    ):
        self.start = start
        self.end = end
        self.meta = meta or {}
        self.prefix = prefix
        self.solo = solo


def _fallback(
    r: _Ruler, start: int, end: int, size: int, meta: dict[str, Any] | None = None
) -> list[_Piece]:
    """Fixed windows inside one over-budget unit, flagged ``fallback="fixed"``."""
    flag = {**(meta or {}), "fallback": "fixed"}
    return [_Piece(a, b, dict(flag), solo=True) for a, b in r.windows(start, end, size, 0)]


def _pack(
    pieces: Sequence[_Piece], r: _Ruler, size: int, overlap_units: int = 0, overlap_pieces: int = 0
) -> list[_Piece]:
    """Greedily merge runs of adjacent pieces while the merged slice fits ``size``.

    With overlap, each new chunk starts with the trailing pieces of the previous one, as
    many as fit in ``overlap_units`` units (or ``overlap_pieces`` pieces) while leaving room
    for the next piece. Solo pieces are never merged or repeated.
    """
    out: list[_Piece] = []
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
        out.append(_Piece(first.start, pieces[j - 1].end, meta, first.prefix))
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


Splitter = Callable[[str, int, int], list[tuple[int, int]]]


def _descend(
    r: _Ruler,
    start: int,
    end: int,
    size: int,
    overlap: int,
    splitters: Sequence[Splitter],
    level: int = 0,
) -> list[_Piece]:
    """Keep ``[start, end)`` whole if it fits; else split it with the first splitter that
    cuts it, recurse into the parts, and merge small neighbours back up to ``size``."""
    start, end = _trim(r.text, start, end)
    if start >= end:
        return []
    if r.likely_fits(start, end, size):
        return [_Piece(start, end)]
    for depth in range(level, len(splitters)):
        units = splitters[depth](r.text, start, end)
        if len(units) > 1:
            pieces = [
                p for a, b in units for p in _descend(r, a, b, size, overlap, splitters, depth + 1)
            ]
            return _pack(pieces, r, size, overlap_units=overlap)
    return _fallback(r, start, end, size)


def _settle(pieces: Iterable[_Piece], r: _Ruler, size: int) -> list[_Piece]:
    """Confirm each mergeable piece fits exactly; one that does not (its estimate was off)
    is cut into flagged fixed windows instead."""
    out: list[_Piece] = []
    for p in pieces:
        if p.solo or r.fits(p.start, p.end, size):
            out.append(p)
        else:
            out.extend(_fallback(r, p.start, p.end, size, p.meta))
    return out


def _to_chunks(doc: Document, pieces: Iterable[_Piece]) -> list[Chunk]:
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
                metadata=MappingProxyType(dict(p.meta)) if p.meta else MappingProxyType({}),
            )
        )
    return chunks


# --------------------------------------------------------------------------- chunkers


@runtime_checkable
class Chunker(Protocol):
    """Anything that cuts a document into chunks (see the module invariants)."""

    @property
    def label(self) -> str: ...

    def chunk(self, document: Document) -> list[Chunk]: ...

    def chunk_corpus(self, docs: Docs) -> list[Chunk]: ...


def chunk_corpus(chunker: Chunker, docs: Docs) -> list[Chunk]:
    """Chunks of every document, documents in order (a Corpus or any iterable of them)."""
    documents = docs.values() if isinstance(docs, Mapping) else docs
    return [c for doc in documents for c in chunker.chunk(doc)]


def _check_budget(kind: str, size: int, unit: str, counter: str) -> None:
    if not isinstance(size, int) or size < 1:
        raise ValueError(f"{kind}: size must be a positive integer, got {size!r}")
    if unit not in UNITS:
        raise ValueError(f"{kind}: unit must be one of {', '.join(UNITS)}, got {unit!r}")
    if not isinstance(counter, str) or not counter:
        raise ValueError(f"{kind}: counter must be a counter name such as 'minilm'")


def _unit_spec(unit: str, counter: str) -> str:
    return f"unit={unit}" + (f",counter={counter}" if counter != DEFAULT_COUNTER else "")


class _ChunkerBase:
    kind: ClassVar[str] = ""

    def chunk(self, document: Document) -> list[Chunk]:  # pragma: no cover - abstract
        raise NotImplementedError

    def chunk_corpus(self, docs: Docs) -> list[Chunk]:
        """Chunks of every document, documents in order."""
        return chunk_corpus(self, docs)

    @property
    def label(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.label

    def __str__(self) -> str:
        return self.label


@dataclass(frozen=True, repr=False)
class FixedChunker(_ChunkerBase):
    """Windows of ``size`` units stepping ``size - overlap`` (the baseline to beat).

    Windows run over the document with its leading and trailing whitespace trimmed. In
    ``unit="tokens"`` they run over the document's token offsets: a chunk spans from its
    first token's start to its last token's end, spaces in between included. Windows are
    computed by :func:`window_spans`; whitespace-only windows are dropped.
    """

    size: int = 800
    overlap: int = 100
    unit: str = "chars"
    counter: str = DEFAULT_COUNTER
    kind: ClassVar[str] = "fixed"

    def __post_init__(self) -> None:
        _check_budget("fixed", self.size, self.unit, self.counter)
        if not isinstance(self.overlap, int) or not 0 <= self.overlap < self.size:
            raise ValueError(
                f"fixed: overlap must satisfy 0 <= overlap < size ({self.size}), "
                f"got {self.overlap!r}"
            )

    @property
    def label(self) -> str:
        return (
            f"fixed:size={self.size},overlap={self.overlap},{_unit_spec(self.unit, self.counter)}"
        )

    def chunk(self, document: Document) -> list[Chunk]:
        r = _Ruler(document.text, self.unit, self.counter)
        spans = r.windows(0, len(document.text), self.size, self.overlap)
        return _to_chunks(document, (_Piece(a, b) for a, b in spans))


@dataclass(frozen=True, repr=False)
class SentenceChunker(_ChunkerBase):
    """Packs whole sentences (see :func:`sentence_spans`) up to ``size`` units.

    A sentence is never cut unless it alone exceeds the budget; it is then cut into fixed
    windows flagged ``metadata["fallback"] == "fixed"``. ``overlap_sentences`` repeats the
    last sentences of a chunk at the start of the next (fewer when the budget needs it).
    """

    size: int = 800
    overlap_sentences: int = 0
    unit: str = "chars"
    counter: str = DEFAULT_COUNTER
    kind: ClassVar[str] = "sentence"

    def __post_init__(self) -> None:
        _check_budget("sentence", self.size, self.unit, self.counter)
        if not isinstance(self.overlap_sentences, int) or self.overlap_sentences < 0:
            raise ValueError(
                "sentence: overlap_sentences must be an integer >= 0, "
                f"got {self.overlap_sentences!r}"
            )

    @property
    def label(self) -> str:
        return (
            f"sentence:size={self.size},overlap_sentences={self.overlap_sentences},"
            f"{_unit_spec(self.unit, self.counter)}"
        )

    def chunk(self, document: Document) -> list[Chunk]:
        r = _Ruler(document.text, self.unit, self.counter)
        pieces: list[_Piece] = []
        for a, b in sentence_spans(document.text):
            if r.likely_fits(a, b, self.size):
                pieces.append(_Piece(a, b))
            else:
                pieces.extend(_fallback(r, a, b, self.size))
        packed = _pack(pieces, r, self.size, overlap_pieces=self.overlap_sentences)
        return _to_chunks(document, _settle(packed, r, self.size))


def _sections(
    text: str, headings: Sequence[_Heading], start: int, end: int
) -> list[tuple[int, int]]:
    """``[start, end)`` cut before each heading; a section holding only its heading line
    is joined to the next section, so a heading never ends up alone."""
    cuts = [h.start for h in headings if start < h.start < end]
    bounds = [start, *cuts, end]
    sections = list(itertools.pairwise(bounds))
    by_start = {h.start: h for h in headings}
    out: list[tuple[int, int]] = []
    carry: int | None = None
    for k, (a, b) in enumerate(sections):
        a0 = a if carry is None else carry
        h = by_start.get(a)
        if h is not None and k + 1 < len(sections) and _blank(text, h.end, b):
            carry = a0
            continue
        carry = None
        out.append((a0, b))
    return out


def _paragraphs_keeping_headings(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Blank-line paragraphs, a heading paragraph joined to the one after it (so that a
    heading is never cut off from the text it introduces)."""
    out: list[tuple[int, int]] = []
    glue = False
    for s, e in _paragraphs(text, start, end):
        if glue:
            out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
        glue = "\n" not in text[s:e] and _heading_at(text, s, e) is not None
    return out


_RECURSIVE_SPLITTERS: tuple[Splitter, ...] = (_paragraphs_keeping_headings, _sentences, _words)


@dataclass(frozen=True, repr=False)
class RecursiveChunker(_ChunkerBase):
    """Structure first, size second: sections (markdown ``#`` headings), then blank-line
    paragraphs, then sentences, then words, then fixed windows, descending only into units
    that exceed ``size`` and merging adjacent small units back up to ``size``.

    Headings are hard boundaries: chunks never cross one (a heading with no body is kept
    with the next section). ``overlap`` (units) repeats trailing pieces of a chunk at the
    start of the next one within a section, never more than ``overlap`` units of them.
    """

    size: int = 800
    overlap: int = 0
    unit: str = "chars"
    counter: str = DEFAULT_COUNTER
    kind: ClassVar[str] = "recursive"

    def __post_init__(self) -> None:
        _check_budget("recursive", self.size, self.unit, self.counter)
        if not isinstance(self.overlap, int) or not 0 <= self.overlap < self.size:
            raise ValueError(
                f"recursive: overlap must satisfy 0 <= overlap < size ({self.size}), "
                f"got {self.overlap!r}"
            )

    @property
    def label(self) -> str:
        return (
            f"recursive:size={self.size},overlap={self.overlap},"
            f"{_unit_spec(self.unit, self.counter)}"
        )

    def _pieces(
        self, r: _Ruler, headings: Sequence[_Heading], start: int, end: int
    ) -> list[_Piece]:
        pieces = [
            p
            for a, b in _sections(r.text, headings, start, end)
            for p in _descend(r, a, b, self.size, self.overlap, _RECURSIVE_SPLITTERS)
        ]
        return _settle(pieces, r, self.size)

    def chunk(self, document: Document) -> list[Chunk]:
        text = document.text
        r = _Ruler(text, self.unit, self.counter)
        return _to_chunks(document, self._pieces(r, markdown_headings(text), 0, len(text)))


_CODE_DEF = re.compile(
    r"^\s*(?:async\s+def|def|class|(?:export\s+(?:default\s+)?)?(?:async\s+)?(?:function|class))\b"
)
_DECORATOR = re.compile(r"^\s*@")


@dataclass(frozen=True, repr=False)
class MarkdownChunker(_ChunkerBase):
    """Heading-aware chunks of markdown: every chunk records ``metadata["section_path"]``
    (heading titles from h1 down) and never crosses a heading.

    Within a section, blocks (paragraphs, tables, fenced code) are packed up to ``size``.
    A table is kept whole when it fits; otherwise it is split by rows, and every piece after
    the first gets the header row and separator repeated in ``embed_text`` (``text`` stays
    the exact slice) and in ``metadata["table_header"]``. A fenced code block is kept whole
    when it fits, otherwise split at blank lines and ``def`` / ``class`` / ``function``
    lines, then lines. Paragraphs too big are split by sentences, then words. A heading
    with no body of its own is kept with its first subsection.
    """

    size: int = 800
    unit: str = "chars"
    counter: str = DEFAULT_COUNTER
    kind: ClassVar[str] = "markdown"

    def __post_init__(self) -> None:
        _check_budget("markdown", self.size, self.unit, self.counter)

    @property
    def label(self) -> str:
        return f"markdown:size={self.size},{_unit_spec(self.unit, self.counter)}"

    def chunk(self, document: Document) -> list[Chunk]:
        text = document.text
        r = _Ruler(text, self.unit, self.counter)
        sections: list[tuple[list[str], list[_Block]]] = []
        stack: list[_Block] = []
        for block in _markdown_blocks(text):
            if block.kind == "heading":
                while stack and stack[-1].level >= block.level:
                    stack.pop()
                stack.append(block)
                sections.append(([h.title for h in stack], [block]))
            elif sections:
                sections[-1][1].append(block)
            else:
                sections.append(([], [block]))
        out: list[_Piece] = []
        carry: list[_Piece] = []
        for k, (path, blocks) in enumerate(sections):
            head = blocks[0]
            nxt = sections[k + 1][1][0] if k + 1 < len(sections) else None
            if (
                len(blocks) == 1
                and head.kind == "heading"
                and nxt is not None
                and nxt.kind == "heading"
                and nxt.level > head.level
            ):
                carry.extend(self._block_pieces(r, head))
                continue
            pieces = carry + self._section_pieces(r, blocks)
            carry = []
            for p in _settle(_pack(pieces, r, self.size), r, self.size):
                p.meta = {"section_path": list(path), **p.meta}
                out.append(p)
        return _to_chunks(document, out)

    def _section_pieces(self, r: _Ruler, blocks: list[_Block]) -> list[_Piece]:
        pieces: list[_Piece] = []
        i = 0
        while i < len(blocks):
            block = blocks[i]
            nxt = blocks[i + 1] if i + 1 < len(blocks) else None
            if (
                block.kind == "heading"
                and nxt is not None
                and nxt.kind == "para"
                and not r.likely_fits(nxt.start, nxt.end, self.size)
            ):
                # a long paragraph is split by sentences with the heading line as the first
                # "sentence", so the heading stays with the start of its text
                pieces += _descend(r, block.start, nxt.end, self.size, 0, (_sentences, _words))
                i += 2
                continue
            pieces += self._block_pieces(r, block)
            i += 1
        return pieces

    def _block_pieces(self, r: _Ruler, block: _Block) -> list[_Piece]:
        if r.likely_fits(block.start, block.end, self.size):
            return [_Piece(block.start, block.end)]
        if block.kind == "table":
            return self._table_pieces(r, block)
        if block.kind == "code":
            return self._code_pieces(r, block)
        return _descend(r, block.start, block.end, self.size, 0, (_sentences, _words))

    def _table_pieces(self, r: _Ruler, block: _Block) -> list[_Piece]:
        text = r.text
        lines = _lines(text, block.start, block.end)
        header_end = lines[1][1]
        header = text[block.start : header_end]
        prefix = header + "\n"
        meta = {"block": "table", "table_header": header}
        rows = lines[2:]
        pieces: list[_Piece] = []
        # the first piece holds the header and as many rows as fit
        j = 0
        while j < len(rows) and r.estimate(block.start, rows[j][1]) <= self.size:
            j += 1
        while j > 0 and not r.fits(block.start, rows[j - 1][1], self.size):
            j -= 1
        if r.fits(block.start, header_end, self.size):
            pieces.append(_Piece(block.start, rows[j - 1][1] if j else header_end, dict(meta)))
        else:
            pieces.extend(_fallback(r, block.start, header_end, self.size, meta))
        # later pieces: rows only in text, the header repeated in embed_text
        header_size = r.size_of(prefix)
        while j < len(rows):
            row_start, row_end = rows[j]
            if not r.fits(row_start, row_end, self.size):
                pieces.extend(_fallback(r, row_start, row_end, self.size, meta))
                j += 1
                continue
            k = j + 1
            while k < len(rows) and header_size + r.estimate(row_start, rows[k][1]) <= self.size:
                k += 1
            while k > j + 1 and (
                r.size_of(prefix + text[row_start : rows[k - 1][1]]) > self.size
                or not r.fits(row_start, rows[k - 1][1], self.size)
            ):
                k -= 1
            pieces.append(_Piece(row_start, rows[k - 1][1], dict(meta), prefix, solo=True))
            j = k
        return pieces

    def _code_pieces(self, r: _Ruler, block: _Block) -> list[_Piece]:
        text = r.text
        lines = _lines(text, block.start, block.end)
        body = [text[s:e] for s, e in lines[1:-1] if text[s:e].strip()]
        # definitions start a unit only at the outermost indentation of the block, so a
        # class keeps its methods unless a blank line separates them
        outer = min((len(line) - len(line.lstrip()) for line in body), default=0)
        starts = [0]
        for k in range(1, len(lines)):
            cur = text[lines[k][0] : lines[k][1]]
            prev = text[lines[k - 1][0] : lines[k - 1][1]]
            if not cur.strip():
                continue
            top = len(cur) - len(cur.lstrip()) <= outer
            if (
                not prev.strip()
                or (top and _CODE_DEF.match(cur) and not _DECORATOR.match(prev))
                or (top and _DECORATOR.match(cur) and not _DECORATOR.match(prev))
            ):
                starts.append(k)
        bounds = [*starts, len(lines)]
        pieces = [
            p
            for a, b in itertools.pairwise(bounds)
            for p in _descend(r, lines[a][0], lines[b - 1][1], self.size, 0, (_line_units, _words))
        ]
        packed = _pack(pieces, r, self.size)
        for p in packed:
            p.meta = {"block": "code", **p.meta}
        return packed


@dataclass(frozen=True, repr=False)
class ContextualHeader(_ChunkerBase):
    """Wraps any chunker and prefixes each chunk's ``embed_text`` with where it comes from::

        Document: {title}
        Section: {h1 > h2 > ...}
        Updated: {effective_date}

    followed by a blank line; ``text`` is unchanged. Lines whose value is missing are left
    out; the title falls back to the document id. The section path comes from the base
    chunk's ``metadata["section_path"]`` when present, else from the markdown headings at
    or before the chunk's first non-space character (it is then stored in the metadata).
    """

    base: Chunker = field(default_factory=lambda: RecursiveChunker())
    fields: tuple[str, ...] = HEADER_FIELDS

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))
        bad = [f for f in self.fields if f not in HEADER_FIELDS]
        if bad or not self.fields:
            raise ValueError(
                f"header fields must be some of {', '.join(HEADER_FIELDS)}, got {self.fields!r}"
            )

    @property
    def label(self) -> str:
        value = "true" if self.fields == HEADER_FIELDS else "+".join(self.fields)
        return f"{self.base.label},header={value}"

    def header(self, document: Document, section_path: Sequence[str]) -> str:
        """The header block put in front of a chunk of ``document`` in ``section_path``."""
        lines = []
        for name in self.fields:
            if name == "title":
                lines.append(f"Document: {document.title or document.id}")
            elif name == "section" and section_path:
                lines.append(f"Section: {' > '.join(section_path)}")
            elif name == "date" and document.metadata.get("effective_date"):
                lines.append(f"Updated: {document.metadata['effective_date']}")
        return "\n".join(lines) + "\n\n" if lines else ""

    def chunk(self, document: Document) -> list[Chunk]:
        return self._wrap(document, self.base.chunk(document))

    def __getattr__(self, name: str) -> Any:
        # ``parents`` exists exactly when the base chunker has it (a parent/child base), so
        # ``hasattr(chunker, "parents")`` tells whether a chunker has parent chunks.
        if name == "parents":
            base = self.__dict__.get("base")
            if base is not None and hasattr(base, "parents"):
                return base.parents
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _wrap(self, document: Document, chunks: list[Chunk]) -> list[Chunk]:
        headings = markdown_headings(document.text)
        starts = [h.start for h in headings]
        paths = _paths(headings)
        out = []
        for c in chunks:
            meta = dict(c.metadata)
            path = meta.get("section_path")
            if path is None:
                first = c.start + len(c.text) - len(c.text.lstrip())  # first non-space
                i = bisect.bisect_right(starts, first)
                path = list(paths[i - 1]) if i else []
                if path:
                    meta["section_path"] = path
            embed = self.header(document, path) + c.embed_text
            out.append(dataclasses.replace(c, embed_text=embed, metadata=MappingProxyType(meta)))
        return out


@dataclass(frozen=True, repr=False)
class ParentChildChunker(_ChunkerBase):
    """Small chunks to match, big chunks to answer.

    ``chunk(document)`` returns the child chunks (cut by a :class:`RecursiveChunker` of
    ``child_size`` / ``child_overlap`` inside each parent), ids ``{doc_id}#{i}`` in
    document order, each with ``parent_id`` set to its enclosing parent's id.
    ``parents(document)`` returns the parent chunks (cut by ``parent``), ids
    ``{doc_id}#parent#{j}`` -- never equal to a child id. Children inherit the parent's
    ``section_path`` metadata when it has one.
    """

    parent: Chunker = field(default_factory=lambda: RecursiveChunker(size=1000))
    child_size: int = 200
    child_overlap: int = 0
    unit: str = "chars"
    counter: str = DEFAULT_COUNTER
    kind: ClassVar[str] = "parent"

    def __post_init__(self) -> None:
        try:  # validates child_size, child_overlap, unit and counter
            self._children_chunker()
        except ValueError as exc:
            msg = (
                str(exc)
                .replace("recursive: size", "child_size")
                .replace("overlap", "child_overlap")
                .replace("< size (", "< child_size (")
            )
            raise ValueError(f"parent: {msg.removeprefix('recursive: ')}") from None

    def _children_chunker(self) -> RecursiveChunker:
        return RecursiveChunker(self.child_size, self.child_overlap, self.unit, self.counter)

    @property
    def label(self) -> str:
        head = f"parent:child={self.child_size},child_overlap={self.child_overlap}"
        unit = _unit_spec(self.unit, self.counter)
        short = RecursiveChunker(getattr(self.parent, "size", 1000), 0, self.unit, self.counter)
        if self.parent == short:
            return f"{head},size={short.size},{unit}"
        return f"{head},{unit},parent=({self.parent.label})"

    def parents(self, document: Document) -> list[Chunk]:
        return [
            dataclasses.replace(c, id=f"{document.id}#parent#{j}", parent_id=None)
            for j, c in enumerate(self.parent.chunk(document))
        ]

    def chunk(self, document: Document) -> list[Chunk]:
        text = document.text
        r = _Ruler(text, self.unit, self.counter)
        headings = markdown_headings(text)
        child = self._children_chunker()
        rows: list[tuple[int, int, int, _Piece, Chunk]] = []
        for j, parent in enumerate(self.parents(document)):
            for p in child._pieces(r, headings, parent.start, parent.end):
                rows.append((p.start, p.end, j, p, parent))
        rows.sort(key=lambda row: row[:3])
        chunks = _to_chunks(document, (row[3] for row in rows))
        out = []
        for c, (_, _, _, _, parent) in zip(chunks, rows, strict=True):
            meta = {}
            if "section_path" in parent.metadata:
                meta["section_path"] = list(parent.metadata["section_path"])
            out.append(dataclasses.replace(c, parent_id=parent.id, metadata=MappingProxyType(meta)))
        return out


# --------------------------------------------------------------------------- specs

SPEC_HELP = (
    "valid chunker specs: "
    "'fixed:size=800,overlap=100,unit=chars' | "
    "'sentence:size=300,overlap_sentences=0,unit=chars' | "
    "'recursive:size=300,overlap=0,unit=tokens' | "
    "'markdown:size=400,unit=chars' | "
    "'parent:child=200,child_overlap=0,size=1000' (parent=recursive|sentence|markdown|fixed "
    "or parent=(full spec)); any spec may add counter=minilm|cl100k|chars (for unit=tokens) "
    "and header=true (contextual header; or header=title+section+date)"
)


def _split_params(spec: str, body: str) -> dict[str, str]:
    parts: list[str] = []
    depth = 0
    cur = ""
    for ch in body:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise ValueError(f"chunker spec {spec!r}: unbalanced ')'; {SPEC_HELP}")
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if depth:
        raise ValueError(f"chunker spec {spec!r}: unbalanced '('; {SPEC_HELP}")
    parts.append(cur)
    params: dict[str, str] = {}
    for part in parts:
        if not part.strip():
            continue
        key, eq, value = part.partition("=")
        key = key.strip().lower()
        if not eq or not key or not value.strip():
            raise ValueError(
                f"chunker spec {spec!r}: {part.strip()!r} is not key=value; {SPEC_HELP}"
            )
        if key in params:
            raise ValueError(f"chunker spec {spec!r}: {key!r} given twice")
        params[key] = value.strip()
    return params


class _Params:
    def __init__(self, spec: str, kind: str, params: dict[str, str]):
        self.spec = spec
        self.kind = kind
        self.params = params

    def integer(self, key: str, default: int, *aliases: str) -> int:
        for name in (key, *aliases):
            if name in self.params:
                raw = self.params.pop(name)
                try:
                    return int(raw)
                except ValueError:
                    raise ValueError(
                        f"chunker spec {self.spec!r}: {name} must be an integer, got {raw!r}"
                    ) from None
        return default

    def text(self, key: str, default: str) -> str:
        return self.params.pop(key, default)

    def done(self, allowed: str) -> None:
        if self.params:
            raise ValueError(
                f"chunker spec {self.spec!r}: unknown parameter(s) "
                f"{', '.join(sorted(self.params))} for '{self.kind}' (it takes {allowed}); "
                f"{SPEC_HELP}"
            )


def _build(kind: str, p: _Params) -> Chunker:
    unit = p.text("unit", "chars").lower()
    counter = p.text("counter", DEFAULT_COUNTER)
    if unit not in UNITS:
        raise ValueError(f"chunker spec {p.spec!r}: unit must be chars or tokens, got {unit!r}")
    chunker: Chunker
    if kind == "fixed":
        size = p.integer("size", 800)
        default_overlap = 100 if size > 100 else size // 8
        overlap = p.integer("overlap", default_overlap)
        p.done("size, overlap, unit, counter, header")
        chunker = FixedChunker(size, overlap, unit, counter)
    elif kind == "sentence":
        size = p.integer("size", 800)
        overlap = p.integer("overlap_sentences", 0, "overlap")
        p.done("size, overlap_sentences, unit, counter, header")
        chunker = SentenceChunker(size, overlap, unit, counter)
    elif kind == "recursive":
        size = p.integer("size", 800)
        overlap = p.integer("overlap", 0)
        p.done("size, overlap, unit, counter, header")
        chunker = RecursiveChunker(size, overlap, unit, counter)
    elif kind == "markdown":
        size = p.integer("size", 800)
        p.done("size, unit, counter, header")
        chunker = MarkdownChunker(size, unit, counter)
    elif kind == "parent":
        child = p.integer("child", 200, "child_size")
        child_overlap = p.integer("child_overlap", 0)
        size = p.integer("size", 1000)
        parent_spec = p.text("parent", "recursive")
        p.done("child, child_overlap, size, parent, unit, counter, header")
        parent: Chunker
        if parent_spec.startswith("(") and parent_spec.endswith(")"):
            parent = parse_chunker(parent_spec[1:-1])
        elif parent_spec == "recursive":
            parent = RecursiveChunker(size, 0, unit, counter)
        elif parent_spec == "sentence":
            parent = SentenceChunker(size, 0, unit, counter)
        elif parent_spec == "markdown":
            parent = MarkdownChunker(size, unit, counter)
        elif parent_spec == "fixed":
            parent = FixedChunker(size, 0, unit, counter)
        else:
            raise ValueError(
                f"chunker spec {p.spec!r}: parent must be recursive, sentence, markdown, fixed "
                f"or a parenthesised spec, got {parent_spec!r}"
            )
        chunker = ParentChildChunker(parent, child, child_overlap, unit, counter)
    else:
        raise ValueError(f"chunker spec {p.spec!r}: unknown kind {kind!r}; {SPEC_HELP}")
    return chunker


def parse_chunker(spec: str | Chunker) -> Chunker:
    """A chunker from its spec string (the inverse of ``chunker.label``); see ``SPEC_HELP``.

    ``fixed:size=800,overlap=100``, ``fixed:size=200,unit=tokens``, ``sentence:size=300``,
    ``recursive:size=300,unit=tokens,overlap=0,header=true``, ``markdown:size=400``,
    ``parent:child=200,size=1000``. Defaults: size 800 (parent: 1000), unit chars,
    counter minilm; fixed overlap 100 (size // 8 when size <= 100), other overlaps 0.
    """
    if not isinstance(spec, str):
        if isinstance(spec, Chunker):
            return spec
        raise ValueError(f"expected a chunker spec string, got {type(spec).__name__}; {SPEC_HELP}")
    text = spec.strip()
    kind, _, body = text.partition(":")
    kind = kind.strip().lower()
    if not kind:
        raise ValueError(f"chunker spec {spec!r} is empty; {SPEC_HELP}")
    params = _Params(spec, kind, _split_params(spec, body))
    header = params.params.pop("header", "false").lower()
    try:
        chunker = _build(kind, params)
    except ValueError as exc:
        msg = str(exc)
        if not msg.startswith("chunker spec"):
            msg = f"chunker spec {spec!r}: {msg}"
        raise ValueError(msg) from None
    if header in ("false", "no", "0", "off"):
        return chunker
    if header in ("true", "yes", "1", "on"):
        return ContextualHeader(chunker)
    fields = tuple(f.strip() for f in header.split("+"))
    if any(f not in HEADER_FIELDS for f in fields):
        raise ValueError(
            f"chunker spec {spec!r}: header must be true, false or fields joined by '+' from "
            f"{', '.join(HEADER_FIELDS)}, got {header!r}"
        )
    return ContextualHeader(chunker, fields)


# --------------------------------------------------------------------------- diagnostics


def split_spans(chunks: Iterable[Chunk], spans: Iterable[Span]) -> list[Span]:
    """The spans not contained whole in any single chunk of their document."""
    by_doc: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for c in chunks:
        by_doc[c.doc_id].append((c.start, c.end))
    return [
        s
        for s in spans
        if not any(a <= s.start and s.end <= b for a, b in by_doc.get(s.doc_id, ()))
    ]


def split_rate(chunks: Iterable[Chunk], spans: Sequence[Span]) -> float:
    """Share of answer spans that no single chunk contains whole (0.0 when no spans):
    a cheap ceiling on retrieval before running any retriever."""
    if not spans:
        return 0.0
    return len(split_spans(chunks, spans)) / len(spans)


_WORDS = re.compile(r"\w+")


def _shingles(text: str, n: int) -> frozenset[tuple[str, ...]]:
    words = _WORDS.findall(text.lower())
    if len(words) < n:
        return frozenset([tuple(words)]) if words else frozenset()
    return frozenset(tuple(words[i : i + n]) for i in range(len(words) - n + 1))


def near_duplicate_pairs(
    chunks: Sequence[Chunk], threshold: float = 0.9, shingle: int = 5
) -> list[tuple[str, str]]:
    """Pairs of chunk ids whose texts have Jaccard similarity >= ``threshold`` over word
    ``shingle``-grams (a text shorter than that is one shingle of all its words).
    Exact, using prefix filtering to avoid comparing every pair."""
    sets = [_shingles(c.text, shingle) for c in chunks]
    freq: Counter[tuple[str, ...]] = Counter(s for sh in sets for s in sh)
    index: dict[tuple[str, ...], list[int]] = defaultdict(list)
    pairs = []
    for i, sh in enumerate(sets):
        if not sh:
            continue
        ordered = sorted(sh, key=lambda s: (freq[s], s))
        prefix = len(sh) - math.ceil(threshold * len(sh) - 1e-9) + 1
        candidates: set[int] = set()
        for s in ordered[: max(prefix, 1)]:
            candidates.update(index[s])
            index[s].append(i)
        for j in sorted(candidates):
            other = sets[j]
            if len(sh & other) / len(sh | other) >= threshold - 1e-12:
                pairs.append((chunks[j].id, chunks[i].id))
    return pairs


def _zero_overlap(chunker: Chunker) -> Chunker | None:
    """The same chunker with every overlap set to 0 (None when it has no overlap)."""
    if isinstance(chunker, FixedChunker | RecursiveChunker):
        return dataclasses.replace(chunker, overlap=0) if chunker.overlap else None
    if isinstance(chunker, SentenceChunker):
        return (
            dataclasses.replace(chunker, overlap_sentences=0) if chunker.overlap_sentences else None
        )
    if isinstance(chunker, ParentChildChunker):
        parent = _zero_overlap(chunker.parent)
        if not chunker.child_overlap and parent is None:
            return None
        return dataclasses.replace(chunker, child_overlap=0, parent=parent or chunker.parent)
    if isinstance(chunker, ContextualHeader):
        base = _zero_overlap(chunker.base)
        return None if base is None else dataclasses.replace(chunker, base=base)
    return None


def _count_all(counter: TokenCounter, texts: list[str]) -> list[int]:
    batch = getattr(counter, "count_batch", None)
    if batch is not None and texts:
        counts: list[int] = batch(texts)
        return counts
    return [counter.count(t) for t in texts]


@dataclass
class ChunkingDiagnostics:
    """What a chunking costs and what it breaks, before any retriever runs.

    Token figures use ``counter`` on each chunk's ``embed_text`` (what gets embedded).
    ``cost_multiplier`` is ``index_tokens`` over the index tokens of the same chunker with
    overlap 0 (1.0 for chunkers without overlap). ``split_rate`` is the share of answer
    spans no single chunk holds whole (``split_spans`` lists them). ``near_duplicates``
    counts chunk pairs with word-5-shingle Jaccard >= 0.9 (``near_duplicate_pairs``).
    """

    chunker: str
    counter: str
    n_docs: int
    n_chunks: int
    mean_tokens: float
    max_tokens: int
    index_tokens: int
    cost_multiplier: float
    n_spans: int
    split_rate: float
    split_spans: list[Span] = field(default_factory=list)
    near_duplicates: int = 0
    near_duplicate_pairs: list[tuple[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The scalar figures, for a results table."""
        return {k: v for k, v in dataclasses.asdict(self).items() if not isinstance(v, list)}


def diagnose_chunking(
    chunker: Chunker | str,
    docs: Docs,
    spans: Sequence[Span] = (),
    counter: TokenCounter | str | None = None,
) -> ChunkingDiagnostics:
    """Chunk ``docs`` and report size, index cost, split answers and near duplicates."""
    chunker = parse_chunker(chunker)
    documents = list(docs.values() if isinstance(docs, Mapping) else docs)
    known = {d.id for d in documents}
    missing = sorted({s.doc_id for s in spans} - known)
    if missing:
        raise ValueError(
            f"answer spans refer to documents not given: {', '.join(missing[:5])}"
            + (" ..." if len(missing) > 5 else "")
        )
    tc = (
        get_counter(counter or DEFAULT_COUNTER)
        if counter is None or isinstance(counter, str)
        else counter
    )
    chunks = chunker.chunk_corpus(documents)
    counts = _count_all(tc, [c.embed_text for c in chunks])
    index_tokens = sum(counts)
    cost = 1.0
    zero = _zero_overlap(chunker)
    if zero is not None:
        base = sum(_count_all(tc, [c.embed_text for c in zero.chunk_corpus(documents)]))
        cost = index_tokens / base if base else 1.0
    broken = split_spans(chunks, spans)
    pairs = near_duplicate_pairs(chunks)
    return ChunkingDiagnostics(
        chunker=chunker.label,
        counter=str(getattr(tc, "name", tc)),
        n_docs=len(documents),
        n_chunks=len(chunks),
        mean_tokens=index_tokens / len(chunks) if chunks else 0.0,
        max_tokens=max(counts, default=0),
        index_tokens=index_tokens,
        cost_multiplier=cost,
        n_spans=len(spans),
        split_rate=len(broken) / len(spans) if spans else 0.0,
        split_spans=broken,
        near_duplicates=len(pairs),
        near_duplicate_pairs=pairs,
    )
