"""A :class:`Run`: qid -> ranked hits of one system, with per-query search latency.

Ranks are 1-based. ``Run.from_retriever`` searches every golden question and times each
search; ``Run.from_ranked`` wraps plain ranked id lists; ``to_documents`` ranks each document
where its best chunk ranks (document-level scoring).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from tqdm.auto import tqdm

from workbench.golden import GoldenSet
from workbench.retrieval import Hit, Retriever

__all__ = ["Run"]


@dataclass(frozen=True)
class Run:
    """qid -> ranked hits for one system. ``latency_s`` holds per-query search seconds."""

    system: str
    hits: Mapping[str, tuple[Hit, ...]]
    latency_s: Mapping[str, float] = field(default_factory=dict, hash=False)
    params: Mapping[str, Any] = field(default_factory=dict, hash=False)

    @classmethod
    def from_retriever(cls, retriever: Retriever, golden: GoldenSet | Iterable[Any], k: int = 10,
                       *, system: str | None = None, progress: bool = False,
                       params: Mapping[str, Any] | None = None,
                       documents_of: Mapping[str, str] | None = None) -> Run:
        """Search every golden question (answerable or not) and time each search.

        With ``documents_of`` (chunk id -> document id), ``k`` counts documents: the search
        asks for more chunks until ``k`` distinct documents are ranked or nothing more
        comes back."""
        hits: dict[str, tuple[Hit, ...]] = {}
        latency: dict[str, float] = {}
        items = list(golden)
        # a retriever that offers it encodes every question in one batch first; its time is
        # shared out over the questions' latencies
        prefetch = getattr(retriever, "prefetch_queries", None)
        shared = 0.0
        if prefetch is not None and items:
            started = time.perf_counter()
            prefetch([item.question for item in items], progress=progress)
            shared = (time.perf_counter() - started) / len(items)
        # an approximate index is checked on these questions and the run searches with the
        # retriever built for them (exact where HNSW falls short; the one given is left as it
        # is): the run's params say which index, and its recall, in every result
        measuring = getattr(retriever, "for_measuring", None)
        if measuring is not None:
            retriever = measuring([item.question for item in items])
        said = dict(getattr(retriever, "index_info", {}))
        for item in tqdm(items, desc=f"search {getattr(retriever, 'name', '')}",
                         disable=not progress):
            started = time.perf_counter()
            found = retriever.search(item.question, k)
            if documents_of is not None:
                depth = k
                while (len({documents_of.get(h.chunk_id, h.chunk_id) for h in found}) < k
                       and len(found) >= depth and depth < len(documents_of)):
                    depth = min(2 * depth, len(documents_of))
                    found = retriever.search(item.question, depth)
            latency[item.qid] = time.perf_counter() - started + shared
            hits[item.qid] = tuple(found)
        name = str(system or getattr(retriever, "name", type(retriever).__name__))
        return cls(name, MappingProxyType(hits), MappingProxyType(latency),
                   MappingProxyType(said | dict(params or {})))

    @classmethod
    def from_ranked(cls, ranked: Mapping[str, Sequence[str]], system: str = "run") -> Run:
        """Build from plain ranked id lists (best first)."""
        hits = {q: tuple(Hit(cid, float(-i), i + 1, system) for i, cid in enumerate(ids))
                for q, ids in ranked.items()}
        return cls(system, MappingProxyType(hits))

    def ranked(self) -> dict[str, list[str]]:
        return {q: [h.chunk_id for h in hs] for q, hs in self.hits.items()}

    def to_documents(self, documents_of: Mapping[str, str]) -> Run:
        """Document-level run: a document ranks where its best chunk ranks. ``documents_of``
        maps chunk id -> document id (from the chunks: ids are never parsed)."""
        out: dict[str, tuple[Hit, ...]] = {}
        for qid, hs in self.hits.items():
            seen: dict[str, Hit] = {}
            for h in hs:
                doc = documents_of[h.chunk_id]
                if doc not in seen:
                    seen[doc] = Hit(doc, h.score, len(seen) + 1, h.source)
            out[qid] = tuple(seen.values())
        return Run(self.system, MappingProxyType(out), self.latency_s,
                   MappingProxyType({**self.params, "level": "document"}))
