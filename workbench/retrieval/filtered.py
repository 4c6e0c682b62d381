"""Filters before search: structured fields choose the candidates, then any retriever ranks.

Structured fields (:data:`FILTER_FIELDS`: product, version, language, audience, or any key)
are kept apart from the indexed text: a chunk's value for a field is its
``metadata[field]`` or ``metadata["filters"][field]``, else its document's (front matter or
JSONL ``metadata``; a field that sounds like access, ``audience``, is declared under
``filters:``, :data:`~workbench.corpus.access.FILTERS_KEY`), see :func:`chunk_fields`. A
filter is ``{field: value or [values]}``; a chunk passes when, for every field, its value
(or one of its values, for a list) equals one of the filter's values (compared trimmed and
case-folded, numbers as text). A chunk without the field does not
pass (deny by default).

:class:`FilteredRetriever` builds its retriever over the passing chunks only (``build``
is any ``chunks -> Retriever``: ``BM25Retriever``, a dense or hybrid retriever, an adapter
over a fresh vector store), so no excluded chunk can be ranked, and no ``k`` is spent on
one. Retrievers are built once per distinct filter and reused.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from workbench.corpus import Chunk, Document
from workbench.corpus.access import FILTERS_KEY
from workbench.io import WorkbenchError
from workbench.retrieval.base import Hit, Retriever

__all__ = ["FILTER_FIELDS", "Filter", "FilteredRetriever", "chunk_fields", "filter_key",
           "passes"]

FILTER_FIELDS = ("product", "version", "language", "audience")

Filter = Mapping[str, Any]


def _values(value: Any) -> set[str]:
    items = value if isinstance(value, list | tuple | set | frozenset) else [value]
    return {str(v).strip().casefold() for v in items if v is not None and str(v).strip()}


def chunk_fields(chunk: Chunk, documents: Mapping[str, Document] | None = None,
                 fields: Iterable[str] = FILTER_FIELDS) -> dict[str, Any]:
    """The structured fields of a chunk: its own metadata first, then its document's; in
    each, the field itself, else its entry under ``filters``."""
    doc = documents.get(chunk.doc_id) if documents is not None else None
    out: dict[str, Any] = {}
    for name in fields:
        for meta in (chunk.metadata, doc.metadata if doc is not None else {}):
            declared = meta.get(FILTERS_KEY)
            value = meta.get(name)
            if value is None and isinstance(declared, Mapping):
                value = declared.get(name)
            if value is not None:
                out[name] = value
                break
    return out


def filter_key(where: Filter) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """A filter in a normal form (fields sorted, values folded and sorted): equal filters
    have equal keys. An empty value list is refused (it would pass nothing silently)."""
    key = []
    for name in sorted(where):
        values = _values(where[name])
        if not values:
            raise WorkbenchError(f"filter field {name!r} has no value; give a value or leave the "
                             f"field out")
        key.append((name, tuple(sorted(values))))
    return tuple(key)


def passes(fields: Mapping[str, Any], where: Filter) -> bool:
    """Whether a chunk with ``fields`` passes the filter ``where`` (module docstring)."""
    return all(_values(fields.get(name)) & set(values) for name, values in filter_key(where))


class FilteredRetriever:
    """A retriever over only the chunks that pass ``where`` (module docstring).

    ``build(chunks)`` makes the inner retriever; ``documents`` supply the fields a chunk's
    metadata lacks. ``with_filter(other)`` is the same corpus under another filter, sharing
    the built retrievers. A filter that passes no chunk returns no hits.
    """

    def __init__(self, chunks: Sequence[Chunk], build: Callable[[list[Chunk]], Retriever],
                 where: Filter, documents: Mapping[str, Document] | None = None,
                 *, name: str | None = None, built: dict[Any, Retriever | None] | None = None):
        self.chunks = list(chunks)
        self.build = build
        self.where = dict(where)
        self.key = filter_key(self.where)
        self.documents = documents
        self.name = name or "filtered"
        self.built = {} if built is None else built  # filter key -> retriever, shared

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={'|'.join(v)}" for k, v in self.key)
        return f"FilteredRetriever({self.name!r}, {shown})"

    def candidates(self) -> list[Chunk]:
        """The chunks that pass the filter, in corpus order."""
        names = [name for name, _ in self.key]
        return [c for c in self.chunks
                if passes(chunk_fields(c, self.documents, names), self.where)]

    def with_filter(self, where: Filter) -> FilteredRetriever:
        return FilteredRetriever(self.chunks, self.build, where, self.documents, name=self.name,
                                 built=self.built)

    def retriever(self) -> Retriever | None:
        """The inner retriever over the candidates (None when there are none)."""
        if self.key not in self.built:
            chosen = self.candidates()
            self.built[self.key] = self.build(chosen) if chosen else None
        return self.built[self.key]

    def search(self, query: str, k: int) -> list[Hit]:
        inner = self.retriever()
        return [] if inner is None else inner.search(query, k)
