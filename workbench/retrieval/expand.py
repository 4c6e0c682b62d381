"""Expanding what a retriever returns: small-to-big (parent) and neighbour windows.

``ParentRetriever`` searches small child chunks and returns their parents: up to ``k``
distinct parent ids, in the order of their best child, scored by that child's score.

``NeighbourExpander`` adds each hit's neighbouring chunks in the same document. Contract:
**the budget is in chunks**. ``search(query, k)`` returns at most ``k`` hits: the base
retriever's hits in order, each followed by its neighbours not already returned (nearest
first, the preceding one before the following one at each distance), until ``k`` chunks.
A hit already returned as an earlier hit's neighbour is not repeated, but its own
neighbours are still added after it.
So with ``window=1`` and ``k=6`` you get about two seeds with their neighbours, and
recall@k compares fairly with a plain retriever handing the generator ``k`` chunks.
Metrics are computed on what ``search`` returns. To attach neighbours without a budget
(``k`` seeds, up to ``k * (1 + 2 * window)`` chunks) call ``expand(hits)`` yourself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from workbench.corpus import Chunk
from workbench.io import WorkbenchError
from workbench.retrieval.base import Hit, Retriever


def parent_map(parents: Mapping[str, str | Chunk] | Iterable[Chunk]) -> dict[str, str]:
    """child id -> parent id, from a mapping (to ids or parent Chunks) or from child
    chunks' ``parent_id`` (a chunk without one is its own parent)."""
    if isinstance(parents, Mapping):
        return {cid: p if isinstance(p, str) else p.id for cid, p in parents.items()}
    return {c.id: c.parent_id or c.id for c in parents}


class ParentRetriever:
    """Search children, return parents (small-to-big retrieval).

    Fetches ``fetch * k`` children (doubling while fewer than ``k`` distinct parents turn
    up and the child retriever has more), keeps each parent's first (best) occurrence.
    Hit details: ``children`` (matched child ids, best first) and ``child_ranks``. A child
    id missing from the map counts as its own parent.
    """

    def __init__(
        self,
        child_retriever: Retriever,
        parents: Mapping[str, str | Chunk] | Iterable[Chunk],
        fetch: int = 4,
        name: str | None = None,
    ):
        if fetch < 1:
            raise WorkbenchError("fetch must be >= 1")
        self.child_retriever = child_retriever
        self.parent_of = parent_map(parents)
        self.fetch = fetch
        self.name = name or f"{getattr(child_retriever, 'name', 'child')}>parent"

    def __repr__(self) -> str:
        return f"ParentRetriever({self.name!r}, {len(self.parent_of)} children, fetch={self.fetch})"

    def search(self, query: str, k: int) -> list[Hit]:
        if k <= 0:
            return []
        want = self.fetch * k
        limit = max(len(self.parent_of), want)
        while True:
            children = list(self.child_retriever.search(query, want))
            groups = self._group(children)
            if len(groups) >= k or len(children) < want or want >= limit:
                break
            want = min(want * 2, limit)
        hits = []
        for rank, (pid, members) in enumerate(list(groups.items())[:k], start=1):
            details = {
                "children": [h.chunk_id for h in members],
                "child_ranks": [h.rank for h in members],
            }
            hits.append(Hit(pid, float(members[0].score), rank, self.name, details=details))
        return hits

    def _group(self, children: Iterable[Hit]) -> dict[str, list[Hit]]:
        groups: dict[str, list[Hit]] = {}
        seen: set[str] = set()
        for hit in children:
            if hit.chunk_id in seen:
                continue
            seen.add(hit.chunk_id)
            pid = self.parent_of.get(hit.chunk_id, hit.chunk_id)
            groups.setdefault(pid, []).append(hit)
        return groups


class NeighbourExpander:
    """Each hit followed by its neighbours within ``window`` chunks in the same document;
    at most ``k`` chunks in all (see the module docstring for the contract).

    Neighbours follow text order within a document (chunks sorted by start offset, which
    for ``{doc}#{i}`` ids is ordinal order). Details: a seed has ``{"role": "seed",
    "neighbours": [...]}`` (those added after it); a neighbour has ``{"role": "neighbour",
    "seed": id, "offset": ±d}`` and its seed's score.
    """

    def __init__(
        self,
        retriever: Retriever,
        chunks: Iterable[Chunk],
        window: int = 1,
        name: str | None = None,
    ):
        if window < 0:
            raise WorkbenchError("window must be >= 0")
        self.retriever = retriever
        self.window = window
        self.name = name or f"{getattr(retriever, 'name', 'base')}+neighbours"
        by_doc: dict[str, list[Chunk]] = {}
        for chunk in chunks:
            by_doc.setdefault(chunk.doc_id, []).append(chunk)
        self._position: dict[str, tuple[str, int]] = {}
        self._doc_ids: dict[str, list[str]] = {}
        for doc_id, doc_chunks in by_doc.items():
            ordered = sorted(doc_chunks, key=lambda c: (c.start, c.end, c.id))
            self._doc_ids[doc_id] = [c.id for c in ordered]
            for i, c in enumerate(ordered):
                self._position[c.id] = (doc_id, i)

    def __repr__(self) -> str:
        return f"NeighbourExpander({self.name!r}, window={self.window})"

    def neighbours(self, chunk_id: str) -> list[tuple[str, int]]:
        """``(neighbour id, offset)`` pairs, nearest first, preceding before following."""
        if chunk_id not in self._position:
            return []
        doc_id, i = self._position[chunk_id]
        ids = self._doc_ids[doc_id]
        out = []
        for d in range(1, self.window + 1):
            for j in (i - d, i + d):
                if 0 <= j < len(ids):
                    out.append((ids[j], j - i))
        return out

    def expand(self, hits: Sequence[Hit], limit: int | None = None) -> list[Hit]:
        """``hits`` each followed by its new neighbours, deduplicated, re-ranked 1..n,
        cut at ``limit`` chunks if given."""
        rows: list[tuple[str, float, dict[str, Any]]] = []
        seen: set[str] = set()
        for hit in hits:
            if limit is not None and len(rows) >= limit:
                break
            added: list[str] = []
            if hit.chunk_id not in seen:  # a seed already added as a neighbour stays there,
                seen.add(hit.chunk_id)  # but its own neighbours are still added
                rows.append((hit.chunk_id, hit.score, {"role": "seed", "neighbours": added}))
            for nid, offset in self.neighbours(hit.chunk_id):
                if limit is not None and len(rows) >= limit:
                    break
                if nid in seen:
                    continue
                seen.add(nid)
                added.append(nid)
                details = {"role": "neighbour", "seed": hit.chunk_id, "offset": offset}
                rows.append((nid, hit.score, details))
        return [
            Hit(cid, float(score), rank, self.name, details=details)
            for rank, (cid, score, details) in enumerate(rows, start=1)
        ]

    def search(self, query: str, k: int) -> list[Hit]:
        out: list[Hit] = []
        want = k
        while k > 0:
            seeds = list(self.retriever.search(query, want))
            out = self.expand(seeds, limit=k)
            if len(out) >= k or len(seeds) < want or want >= 64 * k:
                break
            want *= 2
        return out
