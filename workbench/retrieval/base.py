"""The Retriever protocol and the Hit type: what every retriever returns, and the one order.

Conventions: ``search(query, k)`` returns at most ``k`` hits, best first, ranks 1-based;
``Hit.score`` is higher-is-better; ties on score are broken by chunk id in *descending*
order (trec_eval's rule, the one tie rule everywhere, :func:`workbench.ranking.top_k`, so a
run scores the same as a ranked list and as a scored dict). A hit may carry its
:class:`~workbench.corpus.Chunk` (``Hit.chunk``), so what reads it (evaluation, diagnosis,
traces, the chunk preview) has real offsets and the document without parsing the chunk id.
A production retriever is wrapped by
:class:`~workbench.retrieval.callable_retriever.CallableRetriever`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Protocol, runtime_checkable

from workbench.corpus import Chunk
from workbench.ranking import top_k

__all__ = ["MAX_K", "Hit", "Retriever", "rank_hits"]

#: The deepest ranking a run asks for (``workbench eval -k``, a sweep grid's ``k``).
MAX_K = 10_000


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
    _: KW_ONLY
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
