"""Semantic chunking: cut where the embeddings of neighbouring sentences drift apart
(:class:`SemanticChunker`).

Chunking sits below retrieval, so the chunker takes any :class:`Embedder` (a callable
``texts -> (n, d) array``); to go through the embedding cache pass
``lambda texts: cache.embed(encoder, texts, progress=False)``
(:class:`~workbench.retrieval.cache.EmbeddingCache`), so sentences seen before are never
embedded twice. The spec string names the encoder (``encoder=minilm``, the default); the
embedder itself is attached from above: :func:`workbench.retrieval.with_embedder` (what
``workbench chunks`` / ``eval``, sweeps, the pipeline and the chunk preview call) gives it
the named encoder through the embedding cache; :meth:`SemanticChunker.using` attaches any
callable.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, ClassVar, Protocol

import numpy as np

from workbench.chunking.base import DEFAULT_COUNTER, BudgetedChunker
from workbench.chunking.packing import Piece, Ruler, descend, pack, settle, to_chunks
from workbench.chunking.units import sentence_units, word_units
from workbench.corpus import Chunk, Document
from workbench.io import WorkbenchError

__all__ = ["RULES", "Embedder", "SemanticChunker", "breakpoints"]

#: breakpoint rule -> its default amount (as LangChain's SemanticChunker)
RULES = {"percentile": 95.0, "stdev": 3.0, "gradient": 95.0}


class Embedder(Protocol):
    """Texts to vectors, one row per text (normalised or not)."""

    def __call__(self, texts: Sequence[str]) -> Any: ...


def breakpoints(distances: Sequence[float], rule: str, amount: float) -> list[int]:
    """Indices ``i`` where to cut between sentence ``i`` and ``i + 1``: ``percentile``, the
    distances above the ``amount``-th percentile; ``stdev``, above the mean plus ``amount``
    standard deviations; ``gradient``, where the distance's gradient is above its
    ``amount``-th percentile. A constant series has no breakpoint."""
    d = np.asarray(distances, dtype=np.float64)
    if d.size == 0 or np.ptp(d) == 0:
        return []
    if rule == "percentile":
        values, limit = d, float(np.percentile(d, amount))
    elif rule == "stdev":
        values, limit = d, float(d.mean() + amount * d.std())
    elif rule == "gradient":
        values = np.gradient(d) if d.size > 1 else d
        limit = float(np.percentile(values, amount))
    else:
        raise WorkbenchError(f"semantic: rule must be one of {', '.join(RULES)}, got {rule!r}")
    return [int(i) for i in np.flatnonzero(values > limit)]


@dataclass(frozen=True, repr=False)
class SemanticChunker(BudgetedChunker):
    """Sentences grouped where their meaning runs on; a new group starts at each breakpoint
    (:func:`breakpoints` of the cosine distances between neighbouring sentences, each
    sentence embedded with ``window`` sentences either side). A group over ``size`` is
    packed by sentences (then words) into several chunks; two groups never share a chunk.
    ``amount`` 0 means the rule's default (:data:`RULES`). Chunks record
    ``metadata["group"]``, the group's number in the document.
    """

    size: int = 800
    rule: str = "percentile"
    amount: float = 0.0
    window: int = 1
    _: KW_ONLY
    unit: str = "chars"
    counter: str = DEFAULT_COUNTER
    embedder: Embedder | None = field(default=None, compare=False)
    encoder: str = "minilm"
    kind: ClassVar[str] = "semantic"
    spec_params: ClassVar[tuple[str, ...]] = ("size", "rule", "amount", "window", "encoder")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.rule not in RULES:
            raise WorkbenchError(f"semantic: rule must be one of {', '.join(RULES)}, got "
                             f"{self.rule!r}")
        if not isinstance(self.window, int) or self.window < 0:
            raise WorkbenchError(f"semantic: window must be an integer >= 0, got {self.window!r}")
        if not isinstance(self.encoder, str) or not self.encoder.strip() or any(
                ch in self.encoder for ch in ",=()"):
            raise WorkbenchError(f"semantic: encoder must be an encoder name such as 'minilm', "
                             f"got {self.encoder!r}")
        if not 0 <= float(self.amount) <= (100 if self.rule != "stdev" else 1e6):
            raise WorkbenchError(f"semantic: amount must be a percentile in 0..100 (or a number "
                             f"of standard deviations), got {self.amount!r}")
        object.__setattr__(self, "amount", float(self.amount) or RULES[self.rule])

    def using(self, embedder: Embedder) -> SemanticChunker:
        """The same chunker with ``embedder`` attached."""
        return dataclasses.replace(self, embedder=embedder)

    def chunk(self, document: Document) -> list[Chunk]:
        if self.embedder is None:
            raise WorkbenchError(f"{self.label}: the semantic chunker needs an embedder; attach "
                             "its encoder with workbench.retrieval.with_embedder(chunker) (or "
                             "chunker.using(lambda texts: cache.embed(encoder, texts)))")
        text = document.text
        r = Ruler(text, self.unit, self.counter)
        sentences = sentence_units(text, 0, len(text))
        cuts = set(self._cuts(text, sentences))
        groups: list[list[tuple[int, int]]] = []
        for i, span in enumerate(sentences):
            if not groups or i - 1 in cuts:
                groups.append([])
            groups[-1].append(span)
        out: list[Piece] = []
        for g, group in enumerate(groups):
            pieces = [p for a, b in group for p in descend(r, a, b, self.size, overlap=0,
                                                           splitters=(word_units,))]
            for p in settle(pack(pieces, r, self.size), r, self.size):
                out.append(Piece(p.start, p.end, {**p.meta, "group": g}, solo=True))
        return to_chunks(document, out)

    def _cuts(self, text: str, sentences: list[tuple[int, int]]) -> list[int]:
        if len(sentences) < 2:
            return []
        w = self.window
        windows = [" ".join(text[a:b] for a, b in sentences[max(0, i - w): i + w + 1])
                   for i in range(len(sentences))]
        assert self.embedder is not None
        vecs = np.asarray(self.embedder(windows), dtype=np.float64)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        unit = np.divide(vecs, norms, out=np.zeros_like(vecs), where=norms > 0)
        distances = 1.0 - np.sum(unit[:-1] * unit[1:], axis=1)
        return breakpoints(distances.tolist(), self.rule, self.amount)
