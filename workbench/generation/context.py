"""Context assembly: from retrieved hits to the labelled passages a generator reads.

``documents`` (the corpus) is required: without it neither access nor version can be
checked, so assembly refuses to run rather than pass everything through. Order of operations
(each drop is recorded with its reason):

1. ``acl``: the user's groups must be allowed to read the chunk's document (and the chunk,
   when ``chunk.metadata["acl"]`` is set): :func:`workbench.corpus.can_read_chunk`, which
   trims and case-folds group names. An absent ACL or one containing ``"all"`` means
   everyone. These chunks are removed *before* anything else happens, so their text and ids
   never reach the passages, the rendered prompt or the recorded context: the ``dropped``
   entry of such a chunk says only ``(RESTRICTED, "acl")``.
2. ``unknown_document``: a chunk whose document is not among ``documents`` has no ACL or
   version to check and is dropped (fail closed; as ``(RESTRICTED, "acl")`` for a user).
3. ``superseded``: chunks of documents with ``status: superseded`` (or a ``superseded_by``:
   :func:`workbench.corpus.is_superseded`) are removed unless ``include_superseded=True``.
4. ``duplicate``: the same chunk id twice, or the same text (whitespace-insensitive).
5. ``budget``: passages are taken in rank order while they fit in ``budget_tokens``; a
   passage that does not fit is dropped whole (a later, shorter one may still fit).

Labels ``P1..Pn`` are given to the surviving passages in order. ``user_groups`` names the
reader (:func:`workbench.corpus.reader.require_reader`): the user's groups (``[]`` for a user
in no group), or ``UNRESTRICTED`` for the evaluation view; None is refused where the corpus
declares access.

Citations. :func:`citation_marks` is the one reading of citation markers in an answer, used
by :func:`resolve_citations`, grading (which strips them from claims) and the trace viewer
(which links them): a bracket ``[...]``, ``(...)``, ``【...】`` or ``（...）`` of at most 80
characters holding labels ``P<n>`` (``[P2]``, ``[P1, P3]``, ``[P1][P2]``, ``(P2)``,
``[see P4]``). A bracket holding no label is not a citation.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from workbench.corpus import Chunk, Document, can_read_chunk, is_superseded
from workbench.corpus.reader import Reader, require_reader
from workbench.io import WorkbenchError
from workbench.retrieval import Hit
from workbench.text import CJK, CJK_CHAR, HANGUL, WORD, TokenCounter

__all__ = [
    "ASSEMBLIES",
    "DROP_REASONS",
    "RESTRICTED",
    "AssembledContext",
    "CitationCheck",
    "CitationMark",
    "CountTokens",
    "HitLike",
    "Passage",
    "approx_tokens",
    "assemble_context",
    "citation_marks",
    "context_from_passages",
    "passthrough_context",
    "resolve_citations",
]

DROP_REASONS = ("acl", "unknown_document", "superseded", "duplicate", "budget")
ASSEMBLIES = ("workbench", "passthrough")
RESTRICTED = "<restricted>"

_APPROX_TOKEN = re.compile(rf"[{CJK}]|{WORD}+|[{HANGUL}]+|[^\w\s]", re.UNICODE)


def approx_tokens(text: str) -> int:
    """A tokenizer-free estimate: words count 4/3 tokens, each CJK character and each
    punctuation mark one. Pass a real counter (``count_tokens=``) when it matters."""
    words = cjk = punct = 0
    for match in _APPROX_TOKEN.finditer(text):
        piece = match.group()
        if CJK_CHAR.fullmatch(piece):
            cjk += 1
        elif piece[0].isalnum():
            words += 1
        else:
            punct += 1
    return (4 * words + 2) // 3 + cjk + punct


@dataclass(frozen=True)
class Passage:
    """One passage of the final context: ``label`` is ``P1``, ``P2``, ..."""

    label: str
    chunk_id: str
    doc_id: str
    text: str
    _: KW_ONLY
    title: str = ""

    def render(self) -> str:
        head = f"[{self.label}]" + (f" {self.title}" if self.title else "")
        return f"{head}\n{self.text.strip()}"


@dataclass(frozen=True)
class AssembledContext:
    """What the generator receives, after every filter and the budget cut."""

    passages: tuple[Passage, ...] = ()
    dropped: tuple[tuple[str, str], ...] = ()
    budget_tokens: int | None = None
    tokens_used: int = 0
    _: KW_ONLY
    params: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __len__(self) -> int:
        return len(self.passages)

    @property
    def chunk_ids(self) -> tuple[str, ...]:
        return tuple(p.chunk_id for p in self.passages)

    @property
    def labels(self) -> dict[str, str]:
        """label -> chunk id, e.g. ``{"P1": "policy-refunds#3"}``."""
        return {p.label: p.chunk_id for p in self.passages}

    def dropped_by(self, reason: str) -> list[str]:
        return [cid for cid, why in self.dropped if why == reason]

    def render(self) -> str:
        """The passages as they appear in the prompt, separated by blank lines."""
        return "\n\n".join(p.render() for p in self.passages)

    def to_record(self) -> dict[str, Any]:
        """The recorded context (for traces and caches): labels, ids, drops, budget."""
        return {
            "passages": [{"label": p.label, "chunk_id": p.chunk_id, "doc_id": p.doc_id}
                         for p in self.passages],
            "dropped": [list(d) for d in self.dropped],
            "budget_tokens": self.budget_tokens,
            "tokens_used": self.tokens_used,
        }


def _norm_text(text: str) -> str:
    return " ".join(text.split())


#: How a context's tokens are counted: a function ``text -> tokens`` or a token counter
#: (:class:`~workbench.text.TokenCounter`); None is :func:`approx_tokens`.
CountTokens = Callable[[str], int] | TokenCounter | None
#: What assembly takes as a hit: a Hit, a Chunk or a chunk id.
HitLike = Hit | Chunk | str


def _as_counter(count_tokens: CountTokens) -> Callable[[str], int]:
    if count_tokens is None:
        return approx_tokens
    if callable(count_tokens):
        return count_tokens
    if callable(getattr(count_tokens, "count", None)):
        return count_tokens.count
    raise WorkbenchError("count_tokens must be a callable str -> int or a counter with .count()")


def _chunk_id(hit: HitLike) -> str:
    if isinstance(hit, str):
        return hit
    if isinstance(hit, Chunk):
        return hit.id
    cid = getattr(hit, "chunk_id", None)
    if not isinstance(cid, str):
        raise WorkbenchError(f"cannot read a chunk id from {type(hit).__name__}: pass Hits, "
                         "Chunks or chunk id strings")
    return cid


def _readable(hits: Sequence[HitLike], by_id: Mapping[str, Chunk],
              docs: Mapping[str, Document], groups: frozenset[str] | None,
              dropped: list[tuple[str, str]],
              carried: bool = False) -> Iterator[tuple[Chunk, Document | None]]:
    """Each hit's chunk and document, best first, those the user may not read left out (and
    noted in ``dropped`` as ``(RESTRICTED, "acl")``, naming no id). ``carried``: a hit that
    carries its chunk (``Hit.chunk``) needs no entry in ``by_id``."""
    for hit in hits:
        cid = _chunk_id(hit)
        chunk = by_id.get(cid) or (getattr(hit, "chunk", None) if carried else None)
        if chunk is None:
            raise WorkbenchError(f"hit {cid!r} is not among the given chunks: pass the chunks the "
                             "retriever indexed")
        doc = docs.get(chunk.doc_id)
        if not can_read_chunk(groups, chunk, doc):
            dropped.append((RESTRICTED, "acl"))
            continue
        yield chunk, doc


def assemble_context(hits: Sequence[HitLike],
                     chunks_by_id: Mapping[str, Chunk] | Sequence[Chunk],
                     documents: Mapping[str, Document] | Iterable[Document] | None = None,
                     *,
                     user_groups: Reader | Iterable[str] | str | None = None,
                     budget_tokens: int | None = None,
                     count_tokens: CountTokens = None,
                     include_superseded: bool = False,
                     assembly: str = "workbench") -> AssembledContext:
    """Filter (ACL, version), deduplicate, cut to the budget and label ``hits``.

    ``hits`` are Hits, Chunks or chunk ids, best first. ``documents`` gives ACL, status and
    titles (a Corpus or any mapping/iterable of Documents); it is required. Returns the
    final context. ``assembly="passthrough"`` reproduces a production prompt instead
    (:func:`passthrough_context`: the hits in order, no filters but access control).
    """
    if assembly not in ASSEMBLIES:
        raise WorkbenchError(f"assembly must be one of {', '.join(ASSEMBLIES)}, not {assembly!r}")
    if assembly == "passthrough":
        return passthrough_context(hits, chunks_by_id, documents, user_groups=user_groups,
                                   count_tokens=count_tokens)
    by_id = chunks_by_id if isinstance(chunks_by_id, Mapping) else {c.id: c for c in chunks_by_id}
    if documents is None:
        raise WorkbenchError("assemble_context needs documents= (the corpus): without them no "
                         "access or version check is possible")
    docs: Mapping[str, Document] = (documents if isinstance(documents, Mapping)
                                    else {d.id: d for d in documents})
    groups = require_reader("assemble_context", user_groups, documents=docs,
                            chunks=by_id.values()).groups
    counter = _as_counter(count_tokens)
    if budget_tokens is not None and budget_tokens < 0:
        raise WorkbenchError(f"budget_tokens must be >= 0 or None, got {budget_tokens}")

    dropped: list[tuple[str, str]] = []
    kept: list[Chunk] = []
    seen_ids: set[str] = set()
    seen_text: set[str] = set()
    for chunk, doc in _readable(hits, by_id, docs, groups, dropped):
        cid = chunk.id
        if doc is None:
            dropped.append((cid, "unknown_document"))
            continue
        if not include_superseded and is_superseded(doc):
            dropped.append((cid, "superseded"))
            continue
        norm = _norm_text(chunk.text)
        if cid in seen_ids or norm in seen_text:
            dropped.append((cid, "duplicate"))
            continue
        seen_ids.add(cid)
        seen_text.add(norm)
        kept.append(chunk)

    passages: list[Passage] = []
    used = 0
    for chunk in kept:
        doc = docs.get(chunk.doc_id)
        title = doc.title if doc is not None else ""
        draft = Passage(f"P{len(passages) + 1}", chunk.id, chunk.doc_id, chunk.text, title=title)
        cost = counter(draft.render())
        if budget_tokens is not None and used + cost > budget_tokens:
            dropped.append((chunk.id, "budget"))
            continue
        used += cost
        passages.append(draft)
    return AssembledContext(tuple(passages), tuple(dropped), budget_tokens, used,
                            params={"user_groups": None if groups is None else sorted(groups),
                             "include_superseded": include_superseded})


def passthrough_context(hits: Sequence[HitLike],
                        chunks_by_id: Mapping[str, Chunk] | Sequence[Chunk],
                        documents: Mapping[str, Document] | Iterable[Document] | None = None,
                        *,
                        user_groups: Reader | Iterable[str] | str | None = None,
                        count_tokens: CountTokens = None) -> AssembledContext:
    """The prompt a production pipeline without our filters builds: every hit in rank order,
    labelled ``P1..Pn``; superseded versions, duplicates and an over-long context are all
    kept. Access control is not one of the filters: with ``user_groups`` given, chunks the
    user may not read are still dropped first (``(RESTRICTED, "acl")``). A hit that carries its
    chunk (``Hit.chunk``) needs no entry in ``chunks_by_id``."""
    by_id = chunks_by_id if isinstance(chunks_by_id, Mapping) else {c.id: c for c in chunks_by_id}
    docs: Mapping[str, Document] = ({} if documents is None else documents
                                    if isinstance(documents, Mapping)
                                    else {d.id: d for d in documents})
    groups = require_reader("passthrough_context", user_groups, documents=docs,
                            chunks=by_id.values()).groups
    counter = _as_counter(count_tokens)
    passages: list[Passage] = []
    dropped: list[tuple[str, str]] = []
    for chunk, doc in _readable(hits, by_id, docs, groups, dropped, carried=True):
        passages.append(Passage(f"P{len(passages) + 1}", chunk.id, chunk.doc_id, chunk.text,
                                title=doc.title if doc is not None else ""))
    used = sum(counter(p.render()) for p in passages)
    return AssembledContext(tuple(passages), tuple(dropped), None, used,
                            params={"user_groups": None if groups is None else sorted(groups),
                             "assembly": "passthrough"})


def context_from_passages(items: Iterable[Any]) -> AssembledContext:
    """A context from ready passages, in the given order (no filtering): each item is a
    Chunk, a Passage, or a ``(chunk_id, doc_id, text[, title])`` tuple. Used by experiments
    that place passages by hand (e.g. the position experiment)."""
    passages = []
    for i, item in enumerate(items, start=1):
        label = f"P{i}"
        if isinstance(item, Chunk):
            passages.append(Passage(label, item.id, item.doc_id, item.text))
        elif isinstance(item, Passage):
            passages.append(Passage(label, item.chunk_id, item.doc_id, item.text, title=item.title))
        else:
            cid, doc_id, text, *rest = item
            title = str(rest[0]) if rest else ""
            passages.append(Passage(label, str(cid), str(doc_id), str(text), title=title))
    tokens = sum(approx_tokens(p.render()) for p in passages)
    return AssembledContext(tuple(passages), (), None, tokens)


@dataclass(frozen=True)
class CitationCheck:
    """Citations found in an answer: ``labels`` in order of first use, the ``chunk_ids``
    they map to, and ``unknown`` labels that name no passage of the context."""

    labels: tuple[str, ...] = ()
    chunk_ids: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.unknown


_BRACKET = re.compile(r"[\[【(（]([^\[\]【】()（）]{1,80})[\]】)）]")
_LABEL = re.compile(r"(?<![A-Za-z0-9])[Pp]\s?(\d{1,4})(?!\d)")


@dataclass(frozen=True)
class CitationMark:
    """One citation marker in an answer: ``text[start:end]`` is the bracket, ``labels`` the
    passage labels it names (``("P1", "P3")``)."""

    start: int
    end: int
    labels: tuple[str, ...]


def citation_marks(answer_text: str) -> list[CitationMark]:
    """Every citation marker in ``answer_text``, in order (see the module docstring)."""
    marks = []
    for bracket in _BRACKET.finditer(answer_text):
        labels = tuple(f"P{int(m.group(1))}" for m in _LABEL.finditer(bracket.group(1)))
        if labels:
            marks.append(CitationMark(bracket.start(), bracket.end(), labels))
    return marks


def resolve_citations(answer_text: str, context: AssembledContext) -> CitationCheck:
    """Map ``[P2]``-style citations (:func:`citation_marks`) to chunk ids. Labels that the
    context does not hold are returned in ``unknown``, never mapped."""
    labels = list(dict.fromkeys(label for mark in citation_marks(answer_text)
                                for label in mark.labels))
    known = context.labels
    ids = tuple(dict.fromkeys(known[label] for label in labels if label in known))
    unknown = tuple(label for label in labels if label not in known)
    return CitationCheck(tuple(labels), ids, unknown)
