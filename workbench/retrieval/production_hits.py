"""Production hits read and located: what
:class:`~workbench.retrieval.callable_retriever.CallableRetriever` and
:func:`~workbench.retrieval.callable_retriever.production_chunks` rank and keep.

:func:`read_hits` reads one result. A hit may be a workbench chunk id (``str``), a
``(hit, score)`` pair, a :class:`~workbench.retrieval.base.Hit`, a
:class:`~workbench.corpus.Chunk`, a dict ``{"chunk_id"}`` / ``{"doc_id", "text"}`` /
``{"doc_id", "start", "end"}`` (``"score"``, ``"metadata"`` and the production id as ``"id"``
or ``"chunk_id"`` optional), or the production library's own object: a LangChain
``Document``, a LlamaIndex ``NodeWithScore`` or node (read by their attributes). A hit's
access metadata is ``acl`` (read by :func:`~workbench.corpus.parse_acl`); any other
access-like key is refused, never dropped. :class:`HitLocator` turns read hits into chunks:
chunk ids through the chunks given, text and offsets through the documents
(:class:`~workbench.corpus.Locator`: exact, then normalised, front matter, aligned; offsets
into the raw file named by ``source``). Ambiguous or missing texts are
:class:`UnreadableHit` errors naming the hit, or, with ``unlocated="keep"``, empty chunks
that hold no evidence.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from workbench.corpus import Chunk, Document, LocateError, Locator, parse_acl, provenance
from workbench.corpus.access import access_word
from workbench.corpus.production import SOURCE_KEYS, DocIdRule
from workbench.io import WorkbenchError, is_int
from workbench.retrieval.base import Hit

__all__ = ["DocIdRule", "Docs", "HitLocator", "ProductionHit", "UnreadableHit", "read_hits"]

_DOC_KEYS = ("doc_id", "document_id", "ref_doc_id")
_START_KEYS = ("start_index", "start_char_idx", "start")
_END_KEYS = ("end_index", "end_char_idx", "end")

Docs = Mapping[str, Document] | Iterable[Document]


class UnreadableHit(WorkbenchError):
    """A production hit that cannot be read or located (the message names the retriever,
    the question and the hit's position)."""


@dataclass(kw_only=True)
class ProductionHit:
    """A production hit as read (:func:`read_hits`), before it is located
    (:meth:`HitLocator.chunk`); ``score`` is the one the ranking uses, ``raw_score`` the
    declared value (a distance before its sign is turned)."""

    chunk_id: str | None = None
    doc_id: str | None = None
    text: str | None = None
    start: int | None = None
    end: int | None = None
    score: float | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    chunk: Chunk | None = None
    raw_score: float | None = None


def _offset(meta: Mapping[str, Any], keys: Sequence[str]) -> int | None:
    for key in keys:
        value = meta.get(key)
        if is_int(value):
            return value
    return None


def _looks_like_a_printed_object(text: str) -> str | None:
    for mark, what in (("page_content=", "a LangChain Document"),
                       ("Node ID:", "a LlamaIndex node"), ("node=", "a LlamaIndex NodeWithScore")):
        if mark in text[:200]:
            return what
    return None


def _read(item: Any, score: float | None = None) -> ProductionHit:
    """One hit as the callable returned it (see the module doc for the shapes)."""
    if isinstance(item, str):
        what = _looks_like_a_printed_object(item)
        if what:
            raise TypeError(f"a string that looks like {what} turned into str ({item[:60]!r}): "
                            "return the object itself, not str() of it")
        return ProductionHit(chunk_id=item, score=score)
    if isinstance(item, Hit):
        return ProductionHit(chunk_id=item.chunk_id, score=item.score if score is None else score,
                     chunk=item.chunk)
    if isinstance(item, Chunk):
        return ProductionHit(chunk_id=item.id, score=score, chunk=item)
    if isinstance(item, tuple | list):
        if len(item) == 2 and not isinstance(item[1], bool) and isinstance(item[1], int | float):
            return _read(item[0], _score_value(item[1]))
        raise TypeError(f"a {type(item).__name__} of {len(item)} items: return (hit, score) "
                        "pairs")
    if isinstance(item, Mapping):
        return _from_mapping(item, score)
    if hasattr(item, "page_content") and hasattr(item, "metadata"):  # LangChain Document
        meta = dict(item.metadata or {})
        return ProductionHit(chunk_id=getattr(item, "id", None) or None, text=item.page_content,
                     start=_offset(meta, _START_KEYS), end=_offset(meta, _END_KEYS),
                     score=score, metadata=meta)
    if hasattr(item, "node") and hasattr(item, "score"):  # LlamaIndex NodeWithScore
        node_score = None if item.score is None else _score_value(item.score)
        return _read(item.node, node_score if score is None else score)
    if hasattr(item, "node_id") and hasattr(item, "get_content"):  # LlamaIndex node
        meta = dict(getattr(item, "metadata", None) or {})
        text = getattr(item, "text", None)
        start = getattr(item, "start_char_idx", None)
        end = getattr(item, "end_char_idx", None)
        ref = getattr(item, "ref_doc_id", None)
        if ref and "ref_doc_id" not in meta:
            meta["ref_doc_id"] = ref
        return ProductionHit(chunk_id=item.node_id, text=text if isinstance(text, str)
                     else item.get_content(),
                     start=start if start is not None else _offset(meta, _START_KEYS),
                     end=end if start is not None else _offset(meta, _END_KEYS),
                     score=score, metadata=meta)
    raise TypeError(f"{type(item).__name__} is not a hit this wrapper reads: return chunk "
                    "ids, (hit, score) pairs, Hits, Chunks, {'doc_id', 'text'} dicts, LangChain "
                    "Documents or LlamaIndex nodes")


def _score_value(raw: Any) -> float:
    """A hit's score as a float; an integer too large for one is refused, never an
    OverflowError."""
    try:
        return float(raw)
    except OverflowError:
        raise TypeError(f"field 'score' is an integer of {len(str(abs(int(raw))))} digits, "
                        "too large for a float: give the score as a number below 1e308"
                        ) from None


#: The fields of a hit dict (any other key that folds to an access word is access metadata).
_HIT_FIELDS = ("chunk_id", "doc_id", "text", "start", "end", "id", "score", "metadata")


def _from_mapping(item: Mapping[str, Any], score: float | None) -> ProductionHit:
    raw_score = item.get("score", score)
    if raw_score is not None and (isinstance(raw_score, bool)
                                  or not isinstance(raw_score, int | float)):
        raise TypeError(f"field 'score' is {raw_score!r}: give a number")
    value = None if raw_score is None else _score_value(raw_score)
    fields = {k: item.get(k) for k in ("chunk_id", "doc_id", "text", "start", "end", "id")}
    for name in ("chunk_id", "doc_id", "text", "id"):
        if fields[name] is not None and not isinstance(fields[name], str):
            raise TypeError(f"field {name!r} must be a string")
    for name in ("start", "end"):
        v = fields[name]
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            raise TypeError(f"field {name!r} must be an integer offset")
    meta = item.get("metadata") or {}
    if not isinstance(meta, Mapping):  # never dropped: it may say who may read the chunk
        raise TypeError(f"field 'metadata' is a {type(meta).__name__}: give an object")
    top = {k: v for k, v in item.items() if k not in _HIT_FIELDS and access_word(k)}
    if top:  # access given beside the metadata: read (acl) or refused, as in it
        if "acl" in top and "acl" in meta:
            raise TypeError("'acl' given both on the hit and in its metadata: give it once")
        meta = {**meta, **top}
    if fields["chunk_id"] is not None and fields["doc_id"] is None and fields["text"] is None:
        return ProductionHit(chunk_id=fields["chunk_id"], score=value, metadata=meta)
    if fields["doc_id"] is None and fields["text"] is None:
        raise TypeError("a hit dict needs 'chunk_id', 'text', or 'doc_id' with 'start' and "
                        "'end'")
    if fields["text"] is None and (fields["start"] is None or fields["end"] is None):
        raise TypeError("a hit dict with 'doc_id' and no 'text' needs 'start' and 'end'")
    start = fields["start"] if fields["start"] is not None else _offset(meta, _START_KEYS)
    end = fields["end"] if fields["start"] is not None else _offset(meta, _END_KEYS)
    return ProductionHit(chunk_id=fields["chunk_id"] or fields["id"], doc_id=fields["doc_id"],
                 text=fields["text"], start=start, end=end, score=value, metadata=meta)


def _access_of(meta: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The access metadata a production hit carries onto its located chunk: ``acl`` read by
    :func:`~workbench.corpus.parse_acl` (so ``can_read_chunk`` applies it); any other key at
    any depth that folds to an access word (``ACL``, ``groups``, ``meta.acl``) is refused
    (:class:`UnreadableHit`), never dropped."""
    def walk(value: Any, field: str) -> None:
        if isinstance(value, Mapping):
            for key, inner in value.items():
                name = f"{field}{key}"
                if name != "acl" and access_word(key):
                    raise UnreadableHit(f"{where}: metadata key {name!r} looks like access but "
                                        "only 'acl' is read as access, so the chunk would be "
                                        "readable by everyone: name it 'acl'")
                walk(inner, f"{name}.")
        elif isinstance(value, list | tuple):
            for inner in value:
                walk(inner, field)

    walk(meta, "")
    if "acl" not in meta:
        return {}
    try:
        return {"acl": parse_acl(meta["acl"], where, "metadata.acl")}
    except ValueError as exc:
        raise UnreadableHit(str(exc)) from None


class HitLocator:
    """Turns read hits into chunks: chunk ids through the chunks given, text and offsets
    through the documents (located once per production chunk; one production chunk id, one
    passage and one access list). ``unlocated``: ``"raise"`` refuses a hit that cannot be
    located, ``"keep"`` makes it an empty chunk saying why."""

    def __init__(self, documents: Docs | Locator | None, chunks: Iterable[Chunk] | None,
                 doc_id: DocIdRule, unlocated: str):
        if unlocated not in ("raise", "keep"):
            raise WorkbenchError(f"unlocated must be 'raise' or 'keep', not {unlocated!r}")
        self.locator = (documents if isinstance(documents, Locator) or documents is None
                        else Locator(documents))
        self.chunks = None if chunks is None else MappingProxyType({c.id: c for c in chunks})
        self.doc_id = doc_id
        self.unlocated = unlocated
        self.located: dict[tuple[Any, ...], Chunk] = {}
        self.by_id: dict[str, Chunk] = {}
        self._raw: dict[tuple[str, str], str | None] = {}

    def chunk(self, r: ProductionHit, where: str, after: int | None = None
              ) -> tuple[Chunk | None, dict[str, Any]]:
        """The chunk of a hit (None for a bare chunk id when no chunks were given) and the
        details to record; ``where`` names the hit in errors; ``after`` places a repeated
        text (:meth:`~workbench.corpus.Locator.locate`)."""
        if r.chunk is not None:
            return r.chunk, {}
        by_id = r.text is None and r.doc_id is None
        access = _access_of(r.metadata, where)
        if r.chunk_id is not None and (by_id or self.locator is None):
            if self.chunks is None:
                if access:  # fail closed: the access list would be lost with the chunk
                    raise UnreadableHit(
                        f"{where}: chunk id {r.chunk_id!r} carries acl {access['acl']} but no "
                        "chunks were given to carry it: pass chunks= (or return the chunk's "
                        "text and document with documents=)")
                return None, {}
            chunk = self.chunks.get(r.chunk_id)
            if chunk is None:
                raise UnreadableHit(
                    f"{where}: chunk id {r.chunk_id!r} is not among the chunks given "
                    f"({len(self.chunks)}): return the chunk's text and document (or pass "
                    "documents=) instead")
            return self._with_access(chunk, access, where), {}
        if self.locator is None:
            raise UnreadableHit(f"{where}: a hit given as text or offsets needs the documents: "
                                "pass documents= (the corpus the production system indexed)")
        doc_id = r.doc_id or self._doc_id(r.metadata)
        access = _access_of(r.metadata, where)
        key = (r.chunk_id, doc_id, r.text, r.start, r.end, access.get("acl"), after)
        if key in self.located:
            chunk = self.located[key]
            return chunk, ({"unlocated": chunk.metadata["unlocated_kind"]}
                           if "unlocated_kind" in chunk.metadata else {})
        try:
            found = self.locator.locate(r.text, doc_id, r.start, r.end,
                                        raw=self._raw_text(r.metadata, doc_id), after=after)
        except LocateError as exc:
            if self.unlocated == "raise":
                raise UnreadableHit(f"{where}: {exc}") from None
            empty = Chunk(r.chunk_id or f"unlocated:{len(self.located)}", doc_id or "", 0, 0,
                          text="", embed_text=r.text or "", metadata=MappingProxyType(
                              {"unlocated": str(exc), "unlocated_kind": exc.kind, **access}))
            self.located[key] = empty
            return empty, {"unlocated": exc.kind}
        doc = self.locator.document(found.doc_id)
        cid = r.chunk_id or f"{found.doc_id}@{found.start}-{found.end}"
        chunk = Chunk(cid, found.doc_id, found.start, found.end,
                      text=doc.text[found.start:found.end],
                      embed_text=r.text or "", metadata=MappingProxyType(
                          {"located": found.how, **provenance(doc, found.start, found.end),
                           **({} if found.score is None else {"located_score": found.score}),
                           **access}))
        before = self.by_id.setdefault(cid, chunk)
        if before.metadata.get("acl") != chunk.metadata.get("acl"):
            raise UnreadableHit(f"{where}: chunk id {cid!r} came with acl "
                                f"{before.metadata.get('acl')} before and "
                                f"{chunk.metadata.get('acl')} now: a production chunk has one "
                                "access list")
        if (before.doc_id, before.start, before.end) != (chunk.doc_id, chunk.start, chunk.end):
            raise UnreadableHit(f"{where}: chunk id {cid!r} was located at "
                                f"{before.doc_id}[{before.start}:{before.end}] before and at "
                                f"{chunk.doc_id}[{chunk.start}:{chunk.end}] now: production "
                                "chunk ids must name one passage")
        self.located[key] = before
        return before, {}

    def _with_access(self, chunk: Chunk, access: Mapping[str, Any], where: str) -> Chunk:
        """A given chunk with the acl its hit carries (``can_read_chunk`` then applies it);
        an acl other than the chunk's own, or than the same id's earlier hit, is refused."""
        if not access:
            return self.by_id.get(chunk.id, chunk)
        own = chunk.metadata.get("acl")
        if own is not None and parse_acl(own, where, "acl") != access["acl"]:
            raise UnreadableHit(f"{where}: chunk id {chunk.id!r} has acl {own} but its hit "
                                f"carries {access['acl']}: a production chunk has one access "
                                "list")
        carried = replace(chunk, metadata=MappingProxyType({**chunk.metadata, **access}))
        before = self.by_id.setdefault(chunk.id, carried)
        if before.metadata.get("acl") != carried.metadata.get("acl"):
            raise UnreadableHit(f"{where}: chunk id {chunk.id!r} came with acl "
                                f"{before.metadata.get('acl')} before and {access['acl']} now: "
                                "a production chunk has one access list")
        return before

    def _doc_id(self, meta: Mapping[str, Any]) -> str | None:
        if callable(self.doc_id):
            return self.doc_id(meta)
        keys = (self.doc_id,) if isinstance(self.doc_id, str) else _DOC_KEYS
        docs = self.locator.documents if self.locator is not None else {}
        named = [(k, meta[k]) for k in keys if isinstance(meta.get(k), str) and meta[k]]
        if named and (named[0][1] in docs or named[0][0] != "ref_doc_id"):
            return str(named[0][1])
        for key in SOURCE_KEYS:  # a ref_doc_id not in the corpus: the reader's uuid
            value = meta.get(key)
            if isinstance(value, str) and value:
                for candidate in (value, Path(value).stem, Path(value).name):
                    if candidate in docs:
                        return candidate
        return str(named[0][1]) if named else None

    def _raw_text(self, meta: Mapping[str, Any], doc_id: str | None) -> str | None:
        """The raw file a hit's offsets may refer to: its ``source`` when that is a markdown
        or text file on disk that holds the document's text (read and checked once)."""
        path = next((meta[k] for k in SOURCE_KEYS if isinstance(meta.get(k), str)), None)
        if path is None or doc_id is None or self.locator is None \
                or Path(path).suffix not in (".md", ".txt"):
            return None
        if (path, doc_id) not in self._raw:
            raw: str | None
            try:
                with open(path, encoding="utf-8", newline="") as fh:
                    raw = fh.read()
                self.locator.raw_map(doc_id, raw)
            except (OSError, UnicodeDecodeError, LocateError):
                raw = None
            self._raw[path, doc_id] = raw
        return self._raw[path, doc_id]


def read_hits(out: Any, where: str) -> list[ProductionHit]:
    """Every hit of one result, read (see the module doc for the shapes); ``where`` names
    the result in errors, a hit by its position."""
    if isinstance(out, str | bytes | Mapping) or not isinstance(out, Iterable):
        raise UnreadableHit(f"{where}: got {type(out).__name__}: return a list of hits, best "
                            "first")
    reads = []
    for i, item in enumerate(out, start=1):
        try:
            reads.append(_read(item))
        except TypeError as exc:
            raise UnreadableHit(f"{where}, hit {i}: {exc}") from None
    return reads
