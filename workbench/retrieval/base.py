"""The Retriever protocol, the Hit type, and wrapping any production retriever.

Conventions: ``search(query, k)`` returns at most ``k`` hits, best first, ranks 1-based;
``Hit.score`` is higher-is-better; ties on score are broken by chunk id in *descending*
order (trec_eval's rule, the one tie rule everywhere, :func:`workbench.ranking.top_k`, so a
run scores the same as a ranked list and as a scored dict). A hit may carry its
:class:`~workbench.corpus.Chunk` (``Hit.chunk``), so what reads it (evaluation, diagnosis,
traces, the chunk preview) has real offsets and the document without parsing the chunk id.

:class:`CallableRetriever` wraps a production retriever, any callable
``question[, k] -> hits``. A hit may be a workbench chunk id (``str``), a ``(hit, score)``
pair, a :class:`Hit`, a :class:`~workbench.corpus.Chunk`, a dict ``{"chunk_id"}`` /
``{"doc_id", "text"}`` / ``{"doc_id", "start", "end"}`` (``"score"``, ``"metadata"`` and the
production id as ``"id"`` or ``"chunk_id"`` optional; text and offsets are located when
documents are given),
or the production library's own object: a LangChain ``Document``, a LlamaIndex
``NodeWithScore`` or node (read by their attributes; :mod:`~workbench.retrieval.adapters` wraps
the retrievers themselves). Text and offsets are located in the documents
(:class:`~workbench.corpus.Locator`: exact, then normalised; ambiguous or missing texts
are errors naming the hit, or, with ``unlocated="keep"``, ranks that hold no evidence).

The rules of its ranking, the same everywhere:

* the hits keep the order the callable returned them in (what the generator receives) and
  are cut at ``k``; **duplicates are kept** as ranks (``[junk] * 10 + [gold]`` at ``k=2`` is
  two junk chunks, not junk and gold);
* scores are declared: ``scores="similarity"`` (higher is better), ``"distance"`` (lower
  is better, e.g. Chroma's; ``Hit.score`` is then ``-distance`` and ``details["distance"]``
  the raw value) or ``"ignore"``. Declared scores must agree with the order (a list whose
  similarities rise is refused: it is usually a distance declared as a similarity);
* **ties** on score are ordered by chunk id, descending (trec_eval's rule), so a run scores
  the same as a list and as a TREC file. The id is the one the hit ends up with (a located
  hit without an id is ``{doc_id}@{start}-{end}``), and the cut at ``k`` comes after the
  ties are ordered.
"""

from __future__ import annotations

import inspect
import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from workbench.corpus import Chunk, Document, LocateError, Locator, parse_acl, provenance
from workbench.corpus.access import access_word
from workbench.corpus.location_report import UNLOCATED, LocatedChunks, LocationReport
from workbench.io import WorkbenchError
from workbench.ranking import top_k

__all__ = ["MAX_K", "SCORE_KINDS", "CallableRetriever", "Hit", "Retriever", "UnreadableHit",
           "production_chunks", "rank_hits"]

SCORE_KINDS = ("similarity", "distance", "ignore")
#: The deepest ranking a run asks for (``workbench eval -k``, a sweep grid's ``k``).
MAX_K = 10_000
_DOC_KEYS = ("doc_id", "document_id", "ref_doc_id")
_PATH_KEYS = ("source", "file_path", "file_name", "filename", "path")
_START_KEYS = ("start_index", "start_char_idx", "start")
_END_KEYS = ("end_index", "end_char_idx", "end")

Docs = Mapping[str, Document] | Iterable[Document]
DocIdRule = str | Callable[[Mapping[str, Any]], str | None] | None


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk: ``rank`` is 1-based; ``source`` names the retriever;
    ``details`` carries provenance (e.g. per-input ranks after fusion, rank before rerank);
    ``chunk`` the chunk itself when the retriever knows it (production hits located in the
    documents always carry it)."""

    chunk_id: str
    score: float
    rank: int
    source: str = ""
    details: Mapping[str, Any] = field(default_factory=dict, hash=False)
    chunk: Chunk | None = field(default=None, compare=False, hash=False, repr=False)


@runtime_checkable
class Retriever(Protocol):
    """Anything with ``search(query, k) -> list[Hit]`` (best first, at most k)."""

    name: str

    def search(self, query: str, k: int) -> list[Hit]: ...


def rank_hits(scored: Iterable[tuple[str, float]], k: int, source: str) -> list[Hit]:
    """The top ``k`` of ``(chunk_id, score)`` pairs as hits, in the one order
    (:func:`workbench.ranking.top_k`: score, then chunk id, both descending)."""
    pairs = list(scored)
    ids = [cid for cid, _ in pairs]
    best = top_k(ids, [score for _, score in pairs], k)
    return [Hit(ids[i], float(pairs[i][1]), rank, source) for rank, i in enumerate(best, 1)]


class UnreadableHit(WorkbenchError):
    """A production hit that cannot be read or located (the message names the retriever,
    the question and the hit's position)."""


@dataclass
class _Read:
    """A production hit as read, before it is located."""

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
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _looks_like_a_printed_object(text: str) -> str | None:
    for mark, what in (("page_content=", "a LangChain Document"),
                       ("Node ID:", "a LlamaIndex node"), ("node=", "a LlamaIndex NodeWithScore")):
        if mark in text[:200]:
            return what
    return None


def _read(item: Any, score: float | None = None) -> _Read:
    """One hit as the callable returned it (see the module doc for the shapes)."""
    if isinstance(item, str):
        what = _looks_like_a_printed_object(item)
        if what:
            raise TypeError(f"a string that looks like {what} turned into str ({item[:60]!r}): "
                            "return the object itself, not str() of it")
        return _Read(chunk_id=item, score=score)
    if isinstance(item, Hit):
        return _Read(chunk_id=item.chunk_id, score=item.score if score is None else score,
                     chunk=item.chunk)
    if isinstance(item, Chunk):
        return _Read(chunk_id=item.id, score=score, chunk=item)
    if isinstance(item, tuple | list):
        if len(item) == 2 and not isinstance(item[1], bool) and isinstance(item[1], int | float):
            return _read(item[0], _score_value(item[1]))
        raise TypeError(f"a {type(item).__name__} of {len(item)} items: return (hit, score) "
                        "pairs")
    if isinstance(item, Mapping):
        return _from_mapping(item, score)
    if hasattr(item, "page_content") and hasattr(item, "metadata"):  # LangChain Document
        meta = dict(item.metadata or {})
        return _Read(chunk_id=getattr(item, "id", None) or None, text=item.page_content,
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
        return _Read(chunk_id=item.node_id, text=text if isinstance(text, str)
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


def _from_mapping(item: Mapping[str, Any], score: float | None) -> _Read:
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
        return _Read(chunk_id=fields["chunk_id"], score=value, metadata=meta)
    if fields["doc_id"] is None and fields["text"] is None:
        raise TypeError("a hit dict needs 'chunk_id', 'text', or 'doc_id' with 'start' and "
                        "'end'")
    if fields["text"] is None and (fields["start"] is None or fields["end"] is None):
        raise TypeError("a hit dict with 'doc_id' and no 'text' needs 'start' and 'end'")
    start = fields["start"] if fields["start"] is not None else _offset(meta, _START_KEYS)
    end = fields["end"] if fields["start"] is not None else _offset(meta, _END_KEYS)
    return _Read(chunk_id=fields["chunk_id"] or fields["id"], doc_id=fields["doc_id"],
                 text=fields["text"], start=start, end=end, score=value, metadata=meta)


def _takes_k(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` wants k: its second positional parameter is required, or is named
    ``k``. A second parameter with a default under another name (``lambda q, cache=...``)
    is the callable's own business, never overwritten with k."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # no signature (a builtin): the question only
        return False
    positional = [p for p in params if p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                                                  inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    if len(positional) < 2:
        return False
    second = positional[1]
    return second.default is inspect.Parameter.empty or second.name == "k"


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


class _Resolver:
    """Turns read hits into chunks: chunk ids through the chunks given, text and offsets
    through the documents (located once per production chunk)."""

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

    def chunk(self, r: _Read, where: str, after: int | None = None
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
        for key in _PATH_KEYS:  # a ref_doc_id not in the corpus: the reader's uuid
            value = meta.get(key)
            if isinstance(value, str) and value:
                for candidate in (value, Path(value).stem, Path(value).name):
                    if candidate in docs:
                        return candidate
        return str(named[0][1]) if named else None

    def _raw_text(self, meta: Mapping[str, Any], doc_id: str | None) -> str | None:
        """The raw file a hit's offsets may refer to: its ``source`` when that is a markdown
        or text file on disk that holds the document's text (read and checked once)."""
        path = next((meta[k] for k in _PATH_KEYS if isinstance(meta.get(k), str)), None)
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


class CallableRetriever:
    """Wrap a production retriever ``fn(question[, k]) -> hits`` (``k`` is passed when the
    second parameter of ``fn`` is required or named ``k``; one with a default under another
    name is left alone). It is scored exactly like ours (rules in the module doc).

    ``documents`` (a Corpus, Documents or a :class:`~workbench.corpus.Locator`) is needed for
    hits given as text or offsets; ``chunks`` resolves chunk-id hits to their chunks (an id
    not among them is then an error). ``doc_id`` names the metadata key holding a hit's
    document id, or is a function ``metadata -> doc id`` (default: ``doc_id``, then the stem
    of ``source`` / ``file_path``, else the text is searched in the whole corpus).
    ``unlocated="keep"`` keeps a hit that cannot be located as a rank with no evidence (an
    empty chunk, ``details["unlocated"]`` says why) instead of raising."""

    def __init__(self, fn: Callable[..., Any], name: str = "callable", *,
                 documents: Docs | Locator | None = None, chunks: Iterable[Chunk] | None = None,
                 scores: str = "similarity", doc_id: DocIdRule = None,
                 unlocated: str = "raise"):
        if scores not in SCORE_KINDS:
            raise WorkbenchError(f"scores must be one of {', '.join(SCORE_KINDS)}, not {scores!r}")
        self.fn = fn
        self.name = name
        self.scores = scores
        self._resolver = _Resolver(documents, chunks, doc_id, unlocated)
        self._takes_k = _takes_k(fn)

    def __repr__(self) -> str:
        return f"CallableRetriever({self.name})"

    @property
    def located_chunks(self) -> list[Chunk]:
        """Every production chunk located so far, in document order."""
        return sorted(self._resolver.by_id.values(),
                      key=lambda c: (c.doc_id, c.start, c.end, c.id))

    @property
    def location_report(self) -> LocationReport:
        """How the production chunks returned so far were located (exactly, normalised,
        aligned, not at all: :class:`~workbench.corpus.LocationReport`), each counted once."""
        distinct = {id(c): c for c in self._resolver.located.values()}
        return LocationReport.of(distinct.values(), self._resolver.unlocated)

    def search(self, query: str, k: int) -> list[Hit]:
        out = self.fn(query, k) if self._takes_k else self.fn(query)
        return self.rank(out, k, f"retriever {self.name!r}, question {query[:60]!r}")

    def rank(self, items: Any, k: int | None = None, where: str = "") -> list[Hit]:
        """The hits of one result as this retriever ranks them (the module doc's rules),
        cut at ``k`` (all of them with None); ``where`` names the result in errors (a hit
        by its position in the result)."""
        where = where or f"retriever {self.name!r}"
        located: list[tuple[_Read, Chunk | None, dict[str, Any]]] = []
        for run in self._runs(_read_all(items, where), where):
            if k is not None and len(located) >= k:
                break
            # a tie is ordered by the chunk id the hits end up with, so locate them first
            located.extend((r, *self._resolver.chunk(r, f"{where}, hit {position}"))
                           for position, r in run)
        # without scores the order returned is the ranking: each hit's score is -position
        best = top_k([_chunk_id(r, chunk) for r, chunk, _ in located],
                     [-float(n) if r.score is None else r.score
                      for n, (r, _, _) in enumerate(located)], k)
        hits = []
        for rank, (r, chunk, details) in enumerate((located[i] for i in best), start=1):
            if r.raw_score is not None and self.scores == "distance":
                details["distance"] = r.raw_score
            score = -float(rank) if r.score is None else r.score
            hits.append(Hit(_chunk_id(r, chunk), score, rank, self.name,
                            MappingProxyType(details), chunk))
        return hits

    def _runs(self, reads: list[_Read], where: str) -> list[list[tuple[int, _Read]]]:
        """Scores declared and checked against the order; the hits, with their positions in
        the result, in runs of equal scores (one hit a run when there are no scores)."""
        numbered = list(enumerate(reads, start=1))
        scored = [r.score is not None for r in reads]
        if self.scores == "ignore" or not any(scored):
            for r in reads:
                r.score = None
            return [[pair] for pair in numbered]
        if not all(scored):
            raise UnreadableHit(f"{where}: the hits come with and without scores: give every "
                                "hit a score, or none")
        values = [float(r.score) for r in reads if r.score is not None]
        if any(math.isnan(v) for v in values):
            raise UnreadableHit(f"{where}: a score is NaN")
        sign = -1.0 if self.scores == "distance" else 1.0
        for r, v in zip(reads, values, strict=True):
            r.raw_score, r.score = v, sign * v
        for i in range(1, len(reads)):
            if sign * values[i] > sign * values[i - 1]:
                other = "similarity" if self.scores == "distance" else "distance"
                raise UnreadableHit(
                    f"{where}: the scores get better down the list ({values[i - 1]:g} at rank "
                    f"{i}, {values[i]:g} at rank {i + 1}) although they are declared as "
                    f"{self.scores}s: declare scores={other!r}, or scores='ignore' to rank by "
                    "the order returned")
        # equal scores are now consecutive
        return [list(run) for _, run in itertools.groupby(numbered, key=lambda p: p[1].score)]


def _chunk_id(r: _Read, chunk: Chunk | None) -> str:
    """The chunk id a hit ends up with: its located chunk's, else the id it came with."""
    return chunk.id if chunk is not None else str(r.chunk_id)


def _read_all(out: Any, where: str) -> list[_Read]:
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


def production_chunks(items: Iterable[Any], documents: Docs | Locator, *,
                      doc_id: DocIdRule = None, name: str = "production",
                      unlocated: str = "raise") -> LocatedChunks:
    """The workbench chunks of a production chunking: LangChain ``Document`` splits,
    LlamaIndex nodes, ``{"doc_id", "text"}`` dicts, ... (any hit shape of the module doc),
    located in ``documents`` (exactly, normalised or aligned: :class:`~workbench.corpus.Locator`),
    one chunk per distinct production chunk, in the given order, with the counts as
    ``.report`` (:class:`~workbench.corpus.LocationReport`).

    A text that occurs more than once in its document is placed by the chunking's order
    (the first occurrence after the chunk listed before it, before the one listed after it),
    when the document's located chunks are listed in document order. A chunk that holds only
    front matter holds no document text: it is skipped and counted (kept with ``"keep"``).
    Any other chunk that cannot be located: ``unlocated="raise"`` refuses the chunking
    naming it, ``"skip"`` leaves it out (counted), ``"keep"`` keeps it as a chunk holding no
    evidence (empty, its text in ``embed_text``, why in ``metadata["unlocated"]``)."""
    if unlocated not in UNLOCATED:
        raise WorkbenchError(f"unlocated must be one of {', '.join(UNLOCATED)}, not {unlocated!r}")
    resolver = _Resolver(documents, None, doc_id, "keep")
    reads = _read_all(items, name)
    placed = [resolver.chunk(r, f"{name}, chunk {n}")[0] for n, r in enumerate(reads, 1)]
    _place_repeated(resolver, reads, placed, name)
    out: dict[str, Chunk] = {}
    for n, chunk in enumerate(placed, start=1):
        if chunk is None:
            continue
        kind = chunk.metadata.get("unlocated_kind")
        if unlocated == "raise" and kind not in (None, "front_matter"):
            raise UnreadableHit(f"{name}, chunk {n}: {chunk.metadata['unlocated']} "
                                "(unlocated='skip' leaves such chunks out with a count, "
                                "'keep' keeps them as chunks holding no evidence)")
        out.setdefault(chunk.id, chunk)
    report = LocationReport.of(out.values(), "keep" if unlocated == "keep" else "skip")
    kept = [c for c in out.values() if unlocated == "keep" or "unlocated_kind" not in c.metadata]
    return LocatedChunks(kept, report)


def _place_repeated(resolver: _Resolver, reads: list[_Read], placed: list[Chunk | None],
                    name: str) -> None:
    """Locate the ambiguous chunks of ``placed`` again by the listed order (see
    :func:`production_chunks`), in place."""
    def located(c: Chunk | None) -> bool:
        return c is not None and "unlocated_kind" not in c.metadata

    starts: dict[str, list[int]] = {}
    for c in placed:
        if c is not None and located(c):
            starts.setdefault(c.doc_id, []).append(c.start)
    in_order = {d: all(a <= b for a, b in itertools.pairwise(s)) for d, s in starts.items()}
    for i, c in enumerate(placed):
        if c is None or c.metadata.get("unlocated_kind") != "ambiguous" \
                or not in_order.get(c.doc_id, True) or not c.doc_id:
            continue
        before = next((p for p in reversed(placed[:i]) if located(p) and p is not None
                       and p.doc_id == c.doc_id), None)
        later = next((p for p in placed[i + 1:] if located(p) and p is not None
                      and p.doc_id == c.doc_id), None)
        again, _ = resolver.chunk(reads[i], f"{name}, chunk {i + 1}",
                                  after=0 if before is None else before.start + 1)
        if again is not None and located(again) and (later is None
                                                     or again.start <= later.start):
            placed[i] = again
