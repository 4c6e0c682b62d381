"""Documents as a production system extracted them: LangChain ``Document``s from any loader,
LlamaIndex ``Document``s or nodes, or ``{"doc_id", "text", "metadata"}`` records (the text
may be ``page_content``, or ``document`` as a Chroma record has it).

:func:`extracted_documents` reads them (by attribute: neither library is imported) into one
:class:`Extracted` record per document, the text kept as it was indexed, so production
chunks are located in exactly that text. :func:`~workbench.corpus.loaders.load_documents`
turns the records into a :class:`~workbench.corpus.Corpus` through the loaders' access rules.

Conventions:

* the document id is ``doc_id(metadata)`` or ``metadata[doc_id]`` when given, else
  ``metadata["doc_id"]`` / ``["document_id"]``, else the stem of the file it came from
  (``source``, ``file_path``, ``file_name``: the id the workbench's own loader gives the
  same file), else the object's own id (``ref_doc_id`` of a node, ``id_`` or ``id``);
* several records of one document (a PDF loader's pages, a document's nodes) are one
  document: placed at their offsets when every one has them (``start_char_idx`` /
  ``start_index``; characters no record covers are spaces, overlaps must agree), else in
  page order (``page`` / ``page_number`` when every one has an integer) or the order given,
  joined by a blank line. Every record's metadata is kept (:attr:`Extracted.parts`) and goes
  through the door (:func:`~workbench.corpus.admission.admit`): an ``acl`` or any key naming
  readers on any part is seen, and parts that disagree about access refuse the document;
  a record's own keys beside ``metadata`` that name readers (a top-level ``acl``) refuse it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Any

from workbench.corpus.admission import refuse_unread_access
from workbench.io import InputError, is_int

__all__ = ["PAGE_SEPARATOR", "SOURCE_KEYS", "DocIdRule", "Extracted", "extracted_documents"]

#: What joins the pages of one document.
PAGE_SEPARATOR = "\n\n"
_DOC_KEYS = ("doc_id", "document_id")
#: Metadata keys that name the file a page or hit came from (LangChain, LlamaIndex, readers).
SOURCE_KEYS = ("source", "file_path", "file_name", "filename", "path")
_OFFSET_KEYS = ("start_char_idx", "start_index")
_PAGE_KEYS = ("page", "page_number")
#: Keys of one page or node, not of the document.
_PART_KEYS = ("page", "page_number", "page_label", "start_index", "start_char_idx",
              "end_char_idx")

#: How a document id is read from metadata: a key, a function of the metadata, or None (the
#: usual keys, then the source file's stem).
DocIdRule = str | Callable[[Mapping[str, Any]], str | None] | None


@dataclass(frozen=True)
class Extracted:
    """One document as the production system extracted it: ``parts`` are ``(where,
    metadata)`` of each of its records (page and offset keys left out), ``where`` names
    its first record in errors."""

    doc_id: str
    text: str
    title: str
    parts: tuple[tuple[str, Mapping[str, Any]], ...]
    _: KW_ONLY
    where: str


@dataclass
class _Part:
    doc_id: Any
    text: Any
    metadata: dict[str, Any]
    offset: int | None
    where: str


def _int(value: Any) -> int | None:
    return value if is_int(value) else None


def _part(item: Any, rule: DocIdRule, where: str) -> _Part:
    own_id: Any = None
    offset = None
    if isinstance(item, Mapping):
        refuse_unread_access({k: v for k, v in item.items() if k != "metadata"}, where)
        meta = item.get("metadata") or {}
        text = item.get("text", item.get("page_content", item.get("document")))
        own_id = item.get("doc_id", item.get("id"))
    elif hasattr(item, "page_content") and hasattr(item, "metadata"):  # LangChain
        meta, text, own_id = item.metadata or {}, item.page_content, getattr(item, "id", None)
    elif hasattr(item, "node_id") and hasattr(item, "get_content"):  # LlamaIndex
        meta = getattr(item, "metadata", None) or {}
        text = getattr(item, "text", None)
        text = text if isinstance(text, str) else item.get_content()
        own_id = getattr(item, "ref_doc_id", None) or item.node_id
        offset = _int(getattr(item, "start_char_idx", None))
    else:
        raise InputError(where, f"{type(item).__name__} is not a document: give LangChain "
                         "Documents, LlamaIndex Documents or nodes, or {\"doc_id\", \"text\", "
                         "\"metadata\"} records")
    if not isinstance(meta, Mapping):
        raise InputError(where, "must be an object", field="metadata")
    meta = dict(meta)
    if offset is None:
        offset = next((_int(meta[k]) for k in _OFFSET_KEYS if _int(meta.get(k)) is not None),
                      None)
    return _Part(_doc_id(meta, rule, own_id), text, meta, offset, where)


def _doc_id(meta: Mapping[str, Any], rule: DocIdRule, own_id: Any) -> Any:
    if callable(rule):
        return rule(meta)
    if isinstance(rule, str):
        return meta.get(rule)
    for key in _DOC_KEYS:
        if isinstance(meta.get(key), str) and meta[key]:
            return meta[key]
    for key in SOURCE_KEYS:
        if isinstance(meta.get(key), str) and meta[key]:
            return Path(meta[key]).stem
    return own_id


def _joined(parts: Sequence[_Part]) -> str:
    """The text of one document's parts (see the module doc)."""
    if len(parts) == 1:
        return str(parts[0].text)
    offsets = [p.offset for p in parts]
    if all(o is not None for o in offsets):
        size = max(int(p.offset or 0) + len(p.text) for p in parts)
        chars: list[str | None] = [None] * size
        for p in parts:
            at = int(p.offset or 0)
            for i, ch in enumerate(p.text, start=at):
                if chars[i] not in (None, ch):
                    raise InputError(p.where, f"its text disagrees at offset {i} with another "
                                     f"part of document {p.doc_id!r} that covers it: give "
                                     "the documents, not nodes, or nodes of one document")
                chars[i] = ch
        return "".join(" " if ch is None else ch for ch in chars)
    pages = [next((_int(p.metadata.get(k)) for k in _PAGE_KEYS
                   if _int(p.metadata.get(k)) is not None), None) for p in parts]
    order = (sorted(range(len(parts)), key=lambda i: pages[i] or 0)
             if all(n is not None for n in pages) else range(len(parts)))
    return PAGE_SEPARATOR.join(str(parts[i].text) for i in order)


def extracted_documents(items: Iterable[Any], doc_id: DocIdRule = None,
                        where: Sequence[str] | None = None,
                        source: str = "the documents given") -> list[Extracted]:
    """One :class:`Extracted` record per document of ``items`` (see the module doc), in
    the order each document first appears; ``where`` names each item in errors (default
    ``source, document N``)."""
    groups: dict[Any, list[_Part]] = {}
    for n, item in enumerate(items):
        at = where[n] if where is not None else f"{source}, document {n + 1}"
        part = _part(item, doc_id, at)
        if not isinstance(part.text, str):
            raise InputError(at, "must be a string", field="text")
        if not isinstance(part.doc_id, str) or not part.doc_id:
            raise InputError(at, "no document id: give metadata 'doc_id' or 'source', or "
                             "doc_id= (a metadata key, or a function of the metadata)",
                             field="doc_id")
        groups.setdefault(part.doc_id, []).append(part)
    out = []
    for key, parts in groups.items():
        first = parts[0]
        metas = [{k: v for k, v in p.metadata.items() if k not in _PART_KEYS} for p in parts]
        title = next((m.pop("title") for m in metas if "title" in m), "")
        for m in metas:
            m.pop("title", None)
        out.append(Extracted(key, _joined(parts), title if isinstance(title, str) else "",
                             tuple((p.where, m) for p, m in zip(parts, metas, strict=True)),
                             where=first.where))
    return out
