"""What every chunker shares: the :class:`Chunker` protocol, :func:`chunk_corpus`, the
:class:`ChunkerBase` that the built-in chunkers extend (``label`` is the spec string that
:func:`~workbench.chunking.parse_chunker` turns back into the chunker), and the checks of the
options they share (:func:`check_budget`, :func:`check_overlap`, :func:`unit_spec`).

Budgets are counted in ``unit="chars"`` (code points) or ``unit="tokens"`` of a token
counter (``counter``, default :data:`DEFAULT_COUNTER`).
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Protocol, runtime_checkable

from workbench.corpus import Chunk, ChunkList, Document
from workbench.io import WorkbenchError

__all__ = ["DEFAULT_COUNTER", "UNITS", "Chunker", "ChunkerBase", "Docs", "check_budget",
           "check_overlap", "chunk_corpus", "unit_spec"]

UNITS = ("chars", "tokens")
DEFAULT_COUNTER = "minilm"

Docs = Iterable[Document] | Mapping[str, Document]


@runtime_checkable
class Chunker(Protocol):
    """Anything that cuts a document into chunks (see the module invariants): ``chunk``
    returns one document's chunks in document order; ``label`` names the chunker and its
    options (for the built-in ones, the spec string that
    :func:`~workbench.chunking.parse_chunker` reads back). :func:`chunk_corpus` chunks many
    documents with any chunker."""

    @property
    def label(self) -> str: ...

    def chunk(self, document: Document) -> list[Chunk]: ...


def chunk_corpus(chunker: Chunker, docs: Docs) -> ChunkList:
    """Chunks of every document, documents in order (a Corpus or any iterable of them), as a
    list that keeps its index for scoring (:class:`~workbench.corpus.ChunkList`)."""
    documents = docs.values() if isinstance(docs, Mapping) else docs
    return ChunkList(c for doc in documents for c in chunker.chunk(doc))


def check_budget(kind: str, size: int, unit: str, counter: str) -> None:
    """Refuse a budget that is not a positive integer, an unknown unit or an empty counter
    name (``kind`` names the chunker in the message)."""
    if not isinstance(size, int) or size < 1:
        raise WorkbenchError(f"{kind}: size must be a positive integer, got {size!r}")
    if unit not in UNITS:
        raise WorkbenchError(f"{kind}: unit must be one of {', '.join(UNITS)}, got {unit!r}")
    if not isinstance(counter, str) or not counter:
        raise WorkbenchError(f"{kind}: counter must be a counter name such as 'minilm'")


def check_overlap(kind: str, overlap: Any, size: int, default: Any = None) -> None:
    """Refuse an overlap outside ``0 <= overlap < size`` (``kind`` names the chunker); an
    overlap left at its ``default`` is named as such, with the fix."""
    if isinstance(overlap, int) and overlap == default and not 0 <= overlap < size:
        raise WorkbenchError(
            f"{kind}: size={size} is not above the default overlap of {default} (the overlap "
            f"must be below the size): give an overlap too, e.g. {kind}:size={size},"
            f"overlap={size // 4}, or overlap=0")
    if not isinstance(overlap, int) or not 0 <= overlap < size:
        raise WorkbenchError(
            f"{kind}: overlap must satisfy 0 <= overlap < size ({size}), got {overlap!r}"
        )


def unit_spec(unit: str, counter: str) -> str:
    """The ``unit=...[,counter=...]`` part of a chunker's spec string (the counter only when
    it is not the default)."""
    return f"unit={unit}" + (f",counter={counter}" if counter != DEFAULT_COUNTER else "")


class ChunkerBase(ABC):
    """The base of the built-in chunkers: ``chunk_corpus``, and ``repr`` / ``str`` are the
    ``label`` (the spec string)."""

    kind: ClassVar[str] = ""

    @abstractmethod
    def chunk(self, document: Document) -> list[Chunk]:
        """Chunks of one document, in document order."""

    def chunk_corpus(self, docs: Docs) -> ChunkList:
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


class BudgetedChunker(ChunkerBase):
    """The base of the chunkers that cut to a budget of ``size`` units (``unit`` counted by
    ``counter``): the budget, and ``overlap`` where the chunker has one, are checked when it
    is made, and its ``label`` is ``kind:`` then ``spec_params`` as ``name=value``, then the
    unit (:func:`unit_spec`)."""

    size: int
    unit: str
    counter: str
    spec_params: ClassVar[tuple[str, ...]] = ("size",)

    def __post_init__(self) -> None:
        check_budget(self.kind, self.size, self.unit, self.counter)
        if "overlap" in self.spec_params:
            default = next((f.default for f in dataclasses.fields(self)  # type: ignore[arg-type]
                            if f.name == "overlap"), None)
            check_overlap(self.kind, getattr(self, "overlap"), self.size, default)  # noqa: B009

    @property
    def label(self) -> str:
        params = ",".join(f"{name}={getattr(self, name)}" for name in self.spec_params)
        return f"{self.kind}:{params},{unit_spec(self.unit, self.counter)}"
