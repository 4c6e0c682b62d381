"""The Retriever protocol, the Hit type, and wrapping any callable as a retriever.

Conventions: ``search(query, k)`` returns at most ``k`` hits, best first, ranks 1-based,
ties on score broken by chunk id in *descending* order (trec_eval's rule, the one tie rule
everywhere, so a run scores the same as a ranked list and as a scored dict).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from workbench.corpus import Chunk


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk: ``rank`` is 1-based; ``source`` names the retriever;
    ``details`` carries provenance (e.g. per-input ranks after fusion, rank before rerank);
    ``chunk`` is the chunk itself when the retriever knows it (a production system's hit
    located in its document), so nothing downstream needs the workbench's own chunking."""

    chunk_id: str
    score: float
    rank: int
    source: str = ""
    details: Mapping[str, Any] = field(default_factory=dict, hash=False)
    chunk: Chunk | None = field(default=None, compare=False, repr=False)


@runtime_checkable
class Retriever(Protocol):
    """Anything with ``search(query, k) -> list[Hit]`` (best first, at most k)."""

    name: str

    def search(self, query: str, k: int) -> list[Hit]: ...


def rank_hits(scored: Iterable[tuple[str, float]], k: int, source: str) -> list[Hit]:
    """Sort ``(chunk_id, score)`` pairs by score, then chunk id, both descending (the tie
    rule of the module docstring); keep the top ``k``."""
    ordered = sorted(scored, key=lambda pair: (pair[1], pair[0]), reverse=True)[:k]
    return [Hit(cid, float(score), rank, source) for rank, (cid, score) in enumerate(ordered, 1)]


class CallableRetriever:
    """Wrap a production retriever: any ``question -> list of chunk ids`` (best first),
    or ``question -> list of (chunk_id, score)``. It is scored exactly like ours."""

    def __init__(self, fn: Callable[[str], Sequence[Any]], name: str = "callable"):
        self.fn = fn
        self.name = name

    def __repr__(self) -> str:
        return f"CallableRetriever({self.name})"

    def search(self, query: str, k: int) -> list[Hit]:
        out = self.fn(query)
        hits: list[Hit] = []
        seen: set[str] = set()
        for i, item in enumerate(out):
            if isinstance(item, str):
                cid, score = item, -float(i)
            elif isinstance(item, Hit):
                cid, score = item.chunk_id, item.score
            elif isinstance(item, tuple | list) and len(item) == 2:
                cid, score = str(item[0]), float(item[1])
            else:
                raise ValueError(
                    f"retriever {self.name!r} returned {type(item).__name__} at position {i}: "
                    "return chunk ids (str) or (chunk_id, score) pairs"
                )
            if cid in seen:
                continue
            seen.add(cid)
            hits.append(Hit(cid, score, len(hits) + 1, self.name))
            if len(hits) == k:
                break
        return hits
