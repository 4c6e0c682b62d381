"""Hybrid retrieval: fuse the rankings of several retrievers (typically BM25 + dense).

Reciprocal rank fusion (RRF) scores a chunk by ``sum_i w_i / (c + rank_i)`` over the input
lists it appears in: it uses positions only, so the inputs' scores need not be comparable
(Cormack, Clarke and Büttcher, "Reciprocal rank fusion outperforms Condorcet and individual
rank learning methods", SIGIR 2009; c = 60 there, as here by default).
Weighted fusion min-max normalises each input list's scores to [0, 1] and sums them times
the weights (a chunk absent from a list gets 0 from it).

Every fused hit carries provenance in ``details``::

    {"ranks":  {"bm25": 1, "dense": None},       # 1-based rank in each input, None = absent
     "scores": {"bm25": 12.3, "dense": None}}     # the input's own score, None = absent

so a table can show which retriever found each relevant chunk (see ``contribution_table``);
:meth:`HybridRetriever.search_inputs` returns what each input returned with the fused hits.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from workbench.corpus import Chunk
from workbench.io import WorkbenchError
from workbench.ranking import top_k
from workbench.retrieval.base import Hit, Retriever

DEFAULT_C = 60


def rrf_fuse(
    rankings: Sequence[Sequence[str]],
    c: float = DEFAULT_C,
    weights: Sequence[float] | None = None,
) -> list[tuple[str, float]]:
    """Reciprocal rank fusion of ranked id lists (best first).

    Returns every id with its fused score ``sum_i w_i / (c + rank_i)``, sorted by score
    descending (rounded to 12 decimals, so sums equal up to float noise tie), ties broken by
    id descending (the one tie rule, see :mod:`workbench.retrieval.base`). A repeated id
    within one list counts once, at its first (best) position.
    """
    if c < 0:
        raise WorkbenchError(f"c must be >= 0, not {c}")
    weights = _check_weights(weights, len(rankings))
    scores: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        seen: set[str] = set()
        rank = 0
        for cid in ranking:
            if cid in seen:
                continue
            seen.add(cid)
            rank += 1
            scores[cid] = scores.get(cid, 0.0) + weight / (c + rank)
    return _ordered(scores)


def weighted_fuse(
    scored_lists: Sequence[Sequence[tuple[str, float]]],
    weights: Sequence[float] | None = None,
) -> list[tuple[str, float]]:
    """Weighted sum of per-list min-max normalised scores (a list whose scores are all
    equal normalises to 1.0). Sorted like :func:`rrf_fuse`."""
    weights = _check_weights(weights, len(scored_lists))
    fused: dict[str, float] = {}
    for pairs, weight in zip(scored_lists, weights, strict=True):
        first: dict[str, float] = {}
        for cid, score in pairs:
            first.setdefault(cid, float(score))
        if not first:
            continue
        lo, hi = min(first.values()), max(first.values())
        for cid, score in first.items():
            norm = (score - lo) / (hi - lo) if hi > lo else 1.0
            fused[cid] = fused.get(cid, 0.0) + weight * norm
    return _ordered(fused)


def _ordered(scores: dict[str, float]) -> list[tuple[str, float]]:
    """Scores rounded to 12 decimals (sums equal up to float noise tie), best first, ties by
    id descending; the rounded score is the one reported, so ranking the pairs again by
    score gives the same order."""
    ids = list(scores)
    rounded = [round(score, 12) for score in scores.values()]
    return [(ids[i], rounded[i]) for i in top_k(ids, rounded)]


def _check_weights(weights: Sequence[float] | None, n: int) -> list[float]:
    if weights is None:
        return [1.0] * n
    out = [float(w) for w in weights]
    if len(out) != n:
        raise WorkbenchError(f"{len(out)} weights for {n} rankings: give one weight per retriever")
    if any(w < 0 for w in out):
        raise WorkbenchError("weights must be >= 0")
    return out


@dataclass(frozen=True)
class FusedSearch:
    """One search through a :class:`HybridRetriever`: ``inputs`` (input name -> the hits it
    returned, at most ``depth``), ``fused`` (the top k after fusion) and ``input_s`` (input
    name -> the seconds its search took)."""

    inputs: Mapping[str, tuple[Hit, ...]]
    fused: tuple[Hit, ...]
    input_s: Mapping[str, float]


class HybridRetriever:
    """Fuse several retrievers: fetch ``depth`` hits from each, fuse, return the top k.

    ``method="rrf"`` (default, constant ``c``) or ``"weighted"`` (min-max normalised
    scores). ``weights`` apply to either method (default 1 each). Input names key the
    provenance in each hit's ``details``; a repeated name gets a suffix (``dense-2``).
    :meth:`search_inputs` also returns each input's hits and seconds (inputs run one after
    another here; in a parallel deployment the cost is the slowest).
    """

    def __init__(
        self,
        retrievers: Sequence[Retriever],
        method: str = "rrf",
        *,
        c: float = DEFAULT_C,
        weights: Sequence[float] | None = None,
        depth: int = 50,
        name: str = "hybrid",
    ):
        if not retrievers:
            raise WorkbenchError("HybridRetriever needs at least one retriever")
        if method not in ("rrf", "weighted"):
            raise WorkbenchError(f"method must be 'rrf' or 'weighted', not {method!r}")
        if depth < 1:
            raise WorkbenchError("depth must be >= 1")
        self.retrievers = list(retrievers)
        self.method = method
        self.c = c
        self.weights = _check_weights(weights, len(self.retrievers))
        self.depth = depth
        self.name = name
        self.input_names = _unique_names([getattr(r, "name", "") or "input" for r in retrievers])

    def __repr__(self) -> str:
        inputs = ", ".join(self.input_names)
        return (
            f"HybridRetriever({self.name!r}, {self.method}, inputs=[{inputs}], "
            f"depth={self.depth})"
        )

    def search(self, query: str, k: int) -> list[Hit]:
        return list(self.search_inputs(query, k).fused)

    def prefetch_queries(self, queries: Sequence[str], progress: bool = False) -> None:
        """Let each input that can encode ``queries`` in one batch do so (see
        :meth:`~workbench.retrieval.dense.DenseRetriever.prefetch_queries`)."""
        for retriever in self.retrievers:
            prefetch = getattr(retriever, "prefetch_queries", None)
            if prefetch is not None:
                prefetch(queries, progress=progress)

    def search_inputs(self, query: str, k: int) -> FusedSearch:
        """One search with what each input returned (see :class:`FusedSearch`)."""
        if k <= 0:
            return FusedSearch(MappingProxyType({}), (), MappingProxyType({}))
        fetch = max(self.depth, k)
        per_input: dict[str, tuple[Hit, ...]] = {}
        seconds: dict[str, float] = {}
        for name, retriever in zip(self.input_names, self.retrievers, strict=True):
            start = time.perf_counter()
            per_input[name] = tuple(retriever.search(query, fetch))
            seconds[name] = time.perf_counter() - start
        fused = self.fuse(list(per_input.values()), k)
        return FusedSearch(MappingProxyType(per_input), tuple(fused), MappingProxyType(seconds))

    def fuse(self, per_input: Sequence[Sequence[Hit]], k: int) -> list[Hit]:
        """Fuse already-retrieved hit lists (one per input, in input order)."""
        if len(per_input) != len(self.retrievers):
            raise WorkbenchError(f"{len(per_input)} hit lists for {len(self.retrievers)} inputs")
        ranks: list[dict[str, int]] = []
        scores: list[dict[str, float]] = []
        carried: dict[str, Chunk] = {}  # the chunk an id's first input hit carries
        for hits in per_input:
            r: dict[str, int] = {}
            s: dict[str, float] = {}
            for hit in hits:
                if hit.chunk is not None:
                    carried.setdefault(hit.chunk_id, hit.chunk)
                if hit.chunk_id not in r:
                    r[hit.chunk_id] = len(r) + 1
                    s[hit.chunk_id] = float(hit.score)
            ranks.append(r)
            scores.append(s)
        if self.method == "rrf":
            fused = rrf_fuse([list(r) for r in ranks], c=self.c, weights=self.weights)
        else:
            fused = weighted_fuse([list(s.items()) for s in scores], weights=self.weights)
        out = []
        for position, (cid, score) in enumerate(fused[:k], start=1):
            details = {
                "ranks": {n: r.get(cid) for n, r in zip(self.input_names, ranks, strict=True)},
                "scores": {n: s.get(cid) for n, s in zip(self.input_names, scores, strict=True)},
            }
            out.append(Hit(cid, float(score), position, self.name, details=details,
                           chunk=carried.get(cid)))
        return out


def _unique_names(names: Iterable[str]) -> list[str]:
    out: list[str] = []
    for name in names:
        candidate, n = name, 1
        while candidate in out:
            n += 1
            candidate = f"{name}-{n}"
        out.append(candidate)
    return out


def contribution_table(
    hits: Sequence[Hit], relevant_ids: Iterable[str], inputs: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """One row per relevant chunk: its fused rank (None if not returned) and its rank in
    each input list (None where that input missed it), read from the hits' ``details``.

    ``inputs`` names the input columns; by default those found in the hits' details. A
    relevant chunk the fusion did not return has no details, so its input ranks are None.
    Rows are plain dicts: ``pandas.DataFrame(rows)`` makes the table.
    """
    by_id = {h.chunk_id: h for h in hits}
    if inputs is None:
        names: list[str] = []
        for h in hits:
            for n in _ranks_of(h):
                if n not in names:
                    names.append(n)
        inputs = names
    rows = []
    for cid in relevant_ids:
        hit = by_id.get(cid)
        ranks = _ranks_of(hit) if hit is not None else {}
        row: dict[str, Any] = {"chunk_id": cid, "fused_rank": hit.rank if hit else None}
        for n in inputs:
            row[n] = ranks.get(n)
        row["found_by"] = [n for n in inputs if ranks.get(n) is not None]
        rows.append(row)
    return rows


def _ranks_of(hit: Hit) -> Mapping[str, Any]:
    ranks = hit.details.get("ranks") if hit.details else None
    return ranks if isinstance(ranks, Mapping) else {}
