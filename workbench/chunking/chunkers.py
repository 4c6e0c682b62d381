"""The :class:`Chunker` protocol, :func:`chunk_corpus`, the shared chunker base and the
plain chunkers: fixed windows, sentences, recursive (sections, paragraphs, sentences,
words)."""

from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol, runtime_checkable

from workbench.chunking.packing import (
    Splitter,
    _descend,
    _fallback,
    _pack,
    _Piece,
    _Ruler,
    _settle,
    _to_chunks,
)
from workbench.chunking.units import (
    _blank,
    _Heading,
    _heading_at,
    _paragraphs,
    _sentences,
    _words,
    markdown_headings,
    sentence_spans,
)
from workbench.corpus import Chunk, Document

UNITS = ("chars", "tokens")
DEFAULT_COUNTER = "minilm"

Docs = Iterable[Document] | Mapping[str, Document]


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


class _ChunkerBase(ABC):
    kind: ClassVar[str] = ""

    @abstractmethod
    def chunk(self, document: Document) -> list[Chunk]:
        """Chunks of one document, in document order."""

    def chunk_corpus(self, docs: Docs) -> list[Chunk]:
        """Chunks of every document, documents in order."""
        return chunk_corpus(self, docs)

    @property
    @abstractmethod
    def label(self) -> str:
        """The spec string that ``parse_chunker`` turns back into this chunker."""

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
