"""The production-callable adapter: :class:`CallableRetriever` and :func:`production_chunks`.

:class:`CallableRetriever` wraps a production retriever, any callable
``question[, k] -> hits``; :func:`production_chunks` turns a production chunking into
workbench chunks. Each hit is read and located by :mod:`~workbench.retrieval.production_hits`
(chunk ids, ``(hit, score)`` pairs, Hits, Chunks, dicts, LangChain Documents, LlamaIndex
nodes; :mod:`~workbench.retrieval.adapters` wraps the retrievers themselves); a hit that
cannot be read or located is an :class:`~workbench.retrieval.production_hits.UnreadableHit`
naming it, or, with ``unlocated="keep"``, a rank that holds no evidence.

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
from collections.abc import Callable, Iterable
from types import MappingProxyType
from typing import Any

from workbench.corpus import Chunk, Locator
from workbench.corpus.location_report import UNLOCATED, LocatedChunks, LocationReport
from workbench.io import WorkbenchError
from workbench.ranking import top_k
from workbench.retrieval.base import Hit
from workbench.retrieval.production_hits import (
    DocIdRule,
    Docs,
    HitLocator,
    ProductionHit,
    UnreadableHit,
    read_hits,
)

__all__ = ["SCORE_KINDS", "CallableRetriever", "production_chunks"]

SCORE_KINDS = ("similarity", "distance", "ignore")


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
        self._resolver = HitLocator(documents, chunks, doc_id, unlocated)
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
        located: list[tuple[ProductionHit, Chunk | None, dict[str, Any]]] = []
        for run in self._runs(read_hits(items, where), where):
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
                            details=MappingProxyType(details), chunk=chunk))
        return hits

    def _runs(self, reads: list[ProductionHit], where: str
              ) -> list[list[tuple[int, ProductionHit]]]:
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


def _chunk_id(r: ProductionHit, chunk: Chunk | None) -> str:
    """The chunk id a hit ends up with: its located chunk's, else the id it came with."""
    return chunk.id if chunk is not None else str(r.chunk_id)


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
    resolver = HitLocator(documents, None, doc_id, "keep")
    reads = read_hits(items, name)
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


def _place_repeated(resolver: HitLocator, reads: list[ProductionHit], placed: list[Chunk | None],
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
