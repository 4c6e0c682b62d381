"""The corpus nouns: :class:`Document`, :class:`Span`, :class:`Chunk` and :class:`Corpus`.

Conventions: text gets the one normal form at load (:func:`~workbench.text.normalize_text`);
offsets are code points into ``Document.text``; spans are half-open ``[start, end)``; chunk
ids are ``{doc_id}#{ordinal}`` with ordinals from 0. A chunk carries its document
(``Chunk.doc_id``): code that needs a chunk's document reads it there (or from what a trace
recorded), never out of the chunk id.
Who may read a document and whether it is current are decided in :mod:`workbench.corpus.access`
(``Document.acl`` and ``Document.is_current`` read the metadata through it).

Access by construction: a :class:`Document` whose metadata names readers (a key that
:func:`~workbench.corpus.access.access_like` says may: ``acl``, ``groups``,
``restricted_to``, ...) can only be built with :class:`Admitted` metadata, and only the one
door in, :func:`workbench.corpus.admission.admit`, can make that: it holds the key
(:func:`admission_key`, handed out once). Any other construction with such a key raises.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Protocol

from workbench.corpus.access import FILTERS_KEY, access_like, acl_of, is_superseded
from workbench.corpus.offsets import find_spans
from workbench.io import WorkbenchError
from workbench.text import normalize_text

__all__ = ["Admitted", "Chunk", "Corpus", "Document", "Located", "Span", "admission_key"]

_KEY = object()
_HANDED: list[bool] = []


def admission_key() -> object:
    """The key that makes :class:`Admitted` metadata, handed out once: the door
    (:mod:`workbench.corpus.admission`) takes it when it is imported, so a second caller
    (anything else) is refused."""
    if _HANDED:
        raise WorkbenchError("the admission key is held by workbench.corpus.admission: build "
                             "a Document with access through workbench.corpus.admit")
    _HANDED.append(True)
    return _KEY


class Admitted(Mapping[str, Any]):
    """Read-only metadata that the door checked (access read, or the document refused)."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any], key: object) -> None:
        if key is not _KEY:
            raise WorkbenchError("Admitted metadata is made only by workbench.corpus.admit")
        self._data = dict(data)

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"Admitted({self._data!r})"


class Located(Protocol):
    """Anything with a document id and half-open document offsets (a Chunk, a Span, an
    Evidence)."""

    @property
    def doc_id(self) -> str: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...


@dataclass(frozen=True)
class Document:
    """One source document. ``metadata`` may carry version, effective_date,
    status ("current" | "superseded"), superseded_by and acl (groups allowed to read)."""

    id: str
    text: str
    title: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if isinstance(self.metadata, Admitted):
            return
        named = next((k for k in self.metadata if k != FILTERS_KEY and access_like(k)), None)
        if named is not None:
            raise WorkbenchError(f"document {self.id!r}: metadata {named!r} names readers; a "
                                 "Document with access is built only through the one door, "
                                 "workbench.corpus.admit(id, text, title, metadata), which "
                                 "checks it (or a loader: load_corpus, load_documents)")

    @property
    def acl(self) -> tuple[str, ...]:
        """Groups allowed to read, trimmed and case-folded; empty means everyone. A malformed
        ``acl`` raises ValueError (:func:`~workbench.corpus.access.acl_of`)."""
        return acl_of(self.metadata, f"document {self.id!r}")

    @property
    def is_current(self) -> bool:
        """False when the document is superseded (``status: superseded`` or a
        ``superseded_by``): the negation of :func:`~workbench.corpus.access.is_superseded`."""
        return not is_superseded(self)


@dataclass(frozen=True)
class Span:
    """Half-open character range ``[start, end)`` in a document's text."""

    doc_id: str
    start: int
    end: int

    def __post_init__(self) -> None:
        if not (0 <= self.start < self.end):
            raise WorkbenchError(
                f"Span {self.doc_id}[{self.start}:{self.end}] is empty or negative: "
                "start must be >= 0 and end > start"
            )

    def __len__(self) -> int:
        return self.end - self.start

    def overlap(self, start: int, end: int) -> int:
        """Number of characters this span shares with ``[start, end)``."""
        return max(0, min(self.end, end) - max(self.start, start))

    def text_in(self, doc: Document) -> str:
        return doc.text[self.start : self.end]

    @classmethod
    def locate(cls, doc: Document, quote: str) -> Span:
        """The span of ``quote`` in ``doc``; refuses a quote that is absent or ambiguous.
        Located by the rule production hits are (:func:`~workbench.corpus.offsets.find_spans`:
        exactly, else whitespace- and Unicode-insensitively, so a sentence copied from a PDF
        viewer with spaces where the text breaks lines is found), mapped back to exact
        offsets."""
        quote = normalize_text(quote)
        if not quote.strip():
            raise WorkbenchError("quote is empty: give the exact words of the evidence")
        _, spans = find_spans(doc.text, quote, limit=2)
        if not spans:
            raise WorkbenchError(f"quote {quote[:60]!r} not found in document {doc.id!r} "
                             "(exactly or with its whitespace and Unicode normalised)")
        if len(spans) > 1:
            raise WorkbenchError(f"quote {quote[:60]!r} occurs more than once in document "
                             f"{doc.id!r}: quote more words so it is unique")
        return cls(doc.id, *spans[0])


@dataclass(frozen=True, slots=True)
class Chunk:
    """A retrievable unit. Invariant: ``document.text[start:end] == text``.

    ``embed_text`` is what gets embedded or indexed (may carry a contextual header);
    ``text`` is what the generator reads.
    """

    id: str
    doc_id: str
    start: int
    end: int
    _: KW_ONLY
    text: str
    embed_text: str = ""
    parent_id: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if not self.embed_text:
            object.__setattr__(self, "embed_text", self.text)

    @property
    def content_hash(self) -> str:
        """sha256 of ``embed_text``: the embedding-cache key (with the model id)."""
        return hashlib.sha256(self.embed_text.encode("utf-8")).hexdigest()


class Corpus(Mapping[str, Document]):
    """An ordered, id-unique collection of documents (a read-only mapping id -> Document)."""

    def __init__(self, documents: Iterable[Document], source: str = "<memory>"):
        self._docs: dict[str, Document] = {}
        self.source = source
        for doc in documents:
            if doc.id in self._docs:
                raise WorkbenchError(
                    f"{source}: duplicate document id {doc.id!r}: every document needs a unique id"
                )
            self._docs[doc.id] = doc

    def __getitem__(self, doc_id: str) -> Document:
        return self._docs[doc_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._docs)

    def __len__(self) -> int:
        return len(self._docs)

    def __repr__(self) -> str:
        chars = sum(len(d.text) for d in self._docs.values())
        return f"Corpus({len(self)} documents, {chars:,} characters, from {self.source})"

    @property
    def documents(self) -> list[Document]:
        return list(self._docs.values())
