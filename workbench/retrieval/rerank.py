"""Second-stage reranking: re-score the first stage's top n and return the top k.

A reranker is anything with ``score(query, texts) -> np.ndarray`` (higher is better) and a
``model_id`` naming the model (:class:`Reranker`).
Two are provided: ``CrossEncoderReranker`` (a sentence-transformers ``CrossEncoder``,
reading query and chunk together) and ``EncoderReranker`` (a second, usually stronger,
bi-encoder scoring by cosine; its passage vectors can go through the embedding cache).

Each reranked hit's ``details`` holds ``rank_before`` (first-stage rank),
``rank_after`` (== ``hit.rank``), ``score_before`` and the first stage's own details under
``first_stage``. :meth:`RerankedRetriever.search_stages` returns both stages of one search
(:class:`RerankedSearch`: the first stage's hits, the reranked hits, each stage's seconds);
``moved(before, after, k)`` lists what the reranker pushed into and out of the top k. A
retriever keeps no state between searches, so one instance may serve many threads.

Chunk texts: the reranker reads ``Chunk.embed_text`` by default (what the first stage
indexed); give ``chunks`` to the reranker or to ``RerankedRetriever``. A first-stage hit
that carries its chunk (``Hit.chunk``) is read from it when its id is not among them.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, runtime_checkable

import numpy as np

from workbench.io import WorkbenchError
from workbench.retrieval.base import Hit, Retriever, rank_hits
from workbench.runtime.models import LazyModel, LoadedOnFirstUse, quiet_transformers

if TYPE_CHECKING:
    from workbench.corpus import Chunk
    from workbench.retrieval.cache import EmbeddingCache
    from workbench.retrieval.encoders import Encoder

ChunkTexts = Iterable["Chunk"] | Mapping[str, "str | Chunk"]


@runtime_checkable
class Reranker(Protocol):
    """``score(query, texts)``: one score per text, higher is better; ``model_id`` names the
    model (and anything that changes its scores)."""

    @property
    def model_id(self) -> str: ...

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray: ...


def chunk_texts(chunks: ChunkTexts, field: str = "embed_text") -> dict[str, str]:
    """Map chunk id -> text from chunks, or from a mapping of id -> text or id -> Chunk."""
    if isinstance(chunks, Mapping):
        items: Iterable[tuple[str, Any]] = chunks.items()
    else:
        items = ((c.id, c) for c in chunks)
    return {cid: v if isinstance(v, str) else str(getattr(v, field)) for cid, v in items}


class CrossEncoderReranker(LoadedOnFirstUse):
    """A sentence-transformers ``CrossEncoder`` (HF name or local path), loaded on first use.

    Scores are the model's outputs for ``(query, text)`` pairs; a model with more than one
    output label is refused (pick a reranking model, which has one).
    """

    def __init__(
        self,
        model: str | Path,
        chunks: ChunkTexts | None = None,
        *,
        batch_size: int = 32,
        device: str = "cpu",
        threads: int | None = 1,
        max_length: int | None = None,
    ):
        local = Path(model).expanduser()
        self.model_name = str(local.resolve()) if local.exists() else str(model)
        self.texts = chunk_texts(chunks) if chunks is not None else None
        self.batch_size = batch_size
        self.device = device
        self.max_length = max_length
        self._lazy = LazyModel(self._load, threads)  # `model`: the CrossEncoder

    def __repr__(self) -> str:
        return f"CrossEncoderReranker({self.model_name!r})"

    @property
    def model_id(self) -> str:
        return f"cross-encoder:{self.model_name}"

    def _load(self) -> Any:
        from sentence_transformers import CrossEncoder

        kwargs: dict[str, Any] = {"device": self.device}
        if self.max_length:
            kwargs["max_length"] = self.max_length
        with quiet_transformers():
            return CrossEncoder(self.model_name, **kwargs)

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros(0, dtype=np.float32)
        model = self.model
        self._lazy.cap_threads()
        out = model.predict(
            [(query, t) for t in texts],
            batch_size=self.batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        arr = np.asarray(out, dtype=np.float32)
        if arr.ndim == 2 and arr.shape[1] == 1:
            arr = arr[:, 0]
        if arr.shape != (len(texts),):
            raise WorkbenchError(
                f"cross-encoder {self.model_name} returned shape {arr.shape} for {len(texts)} "
                "pairs: use a reranking model with a single relevance output"
            )
        return arr


class EncoderReranker:
    """Re-score candidates by cosine with a second bi-encoder (e.g. multilingual-e5 over a
    MiniLM first stage). With ``cache``, candidate passage vectors are cached, so each
    chunk is embedded once however many queries retrieve it."""

    def __init__(
        self,
        encoder: Encoder,
        chunks: ChunkTexts | None = None,
        cache: EmbeddingCache | None = None,
    ):
        self.encoder = encoder
        self.texts = chunk_texts(chunks) if chunks is not None else None
        self.cache = cache

    def __repr__(self) -> str:
        return f"EncoderReranker({self.encoder.model_id!r})"

    @property
    def model_id(self) -> str:
        return f"encoder:{self.encoder.model_id}"

    def warm(self, progress: bool = True) -> int:
        """Embed every chunk the reranker knows into the cache now, in batches with a
        progress bar, instead of a few at a time inside searches. Returns how many texts
        were embedded (0 when all were cached, or without a cache or chunks)."""
        if self.cache is None or not self.texts:
            return 0
        self.cache.embed(self.encoder, list(self.texts.values()), "document", progress)
        return self.cache.stats.embedded

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros(0, dtype=np.float32)
        q = np.asarray(self.encoder.encode_queries([query]), dtype=np.float32)[0]
        if self.cache is not None:
            docs = self.cache.embed(self.encoder, list(texts), kind="document", progress=False)
        else:
            docs = np.asarray(self.encoder.encode_documents(list(texts)), dtype=np.float32)
        scores: np.ndarray = docs @ q
        return scores


@dataclass(frozen=True)
class RerankedSearch:
    """One search through a :class:`RerankedRetriever`: ``first_stage`` (the first stage's
    hits, deduplicated, at most ``n``), ``reranked`` (the top k after re-scoring) and the
    seconds each stage took."""

    first_stage: tuple[Hit, ...]
    reranked: tuple[Hit, ...]
    first_stage_s: float
    rerank_s: float

    def moved(self, k: int) -> Moved:
        """What re-scoring pushed into and out of the top ``k`` (:func:`moved`)."""
        return moved(self.first_stage, self.reranked, k)


class RerankedRetriever:
    """First stage's top ``n`` (at least ``k``) re-scored by ``reranker``; returns the top k.

    Texts come from ``chunks`` if given, else from the reranker's own ``texts`` mapping
    (set when the reranker was given chunks); a first-stage hit whose id is not among them
    is read from the chunk it carries (``Hit.chunk``, as a wrapped production retriever's
    hits do). A reranked hit keeps its first-stage chunk. :meth:`search_stages` returns the
    first stage's hits and the timings too.
    """

    def __init__(
        self,
        first_stage: Retriever,
        reranker: Reranker,
        n: int = 50,
        *,
        name: str | None = None,
        chunks: ChunkTexts | None = None,
    ):
        if n < 1:
            raise WorkbenchError("n must be >= 1")
        self.first_stage = first_stage
        self.reranker = reranker
        self.n = n
        self.name = name or f"{getattr(first_stage, 'name', 'first')}+rerank"
        texts = chunk_texts(chunks) if chunks is not None else getattr(reranker, "texts", None)
        if texts is None:
            raise WorkbenchError(
                "RerankedRetriever needs the chunk texts: pass chunks= here or to the reranker"
            )
        self.texts: Mapping[str, str] = texts

    def __repr__(self) -> str:
        return f"RerankedRetriever({self.name!r}, first_stage={self.first_stage!r}, n={self.n})"

    def search(self, query: str, k: int) -> list[Hit]:
        return list(self.search_stages(query, k).reranked)

    def prefetch_queries(self, queries: Sequence[str], progress: bool = False) -> None:
        """Let the first stage encode ``queries`` in one batch, when it can."""
        prefetch = getattr(self.first_stage, "prefetch_queries", None)
        if prefetch is not None:
            prefetch(queries, progress=progress)

    def search_stages(self, query: str, k: int) -> RerankedSearch:
        """Both stages of one search (see :class:`RerankedSearch`)."""
        if k <= 0:
            return RerankedSearch((), (), 0.0, 0.0)
        start = time.perf_counter()
        before = _dedupe(self.first_stage.search(query, max(self.n, k)))
        first_s = time.perf_counter() - start
        texts = [self._text(h) for h in before]
        start = time.perf_counter()
        scores = np.asarray(self.reranker.score(query, texts), dtype=np.float64)
        rerank_s = time.perf_counter() - start
        if scores.shape != (len(before),):
            raise WorkbenchError(f"reranker returned {scores.shape} scores for {len(before)} texts")
        by_id = {h.chunk_id: h for h in before}
        ranked = rank_hits(zip(by_id, scores.tolist(), strict=True), k, self.name)
        hits = []
        for hit in ranked:
            first = by_id[hit.chunk_id]
            details = {
                "rank_before": first.rank,
                "rank_after": hit.rank,
                "score_before": first.score,
                "first_stage": dict(first.details),
            }
            hits.append(Hit(hit.chunk_id, hit.score, hit.rank, self.name, details=details,
                            chunk=first.chunk))
        return RerankedSearch(tuple(before), tuple(hits), first_s, rerank_s)

    def _text(self, hit: Hit) -> str:
        """The text to rerank a first-stage hit by: from the texts given, else its chunk's."""
        text = self.texts.get(hit.chunk_id)
        if text is not None:
            return text
        if hit.chunk is not None:
            return hit.chunk.embed_text or hit.chunk.text
        raise KeyError(
            f"reranker has no text for chunk {hit.chunk_id!r}: give it (or RerankedRetriever) "
            "the same chunks as the first stage"
        )


def _dedupe(hits: Iterable[Hit]) -> list[Hit]:
    seen: set[str] = set()
    out = []
    for hit in hits:
        if hit.chunk_id not in seen:
            seen.add(hit.chunk_id)
            out.append(hit)
    return out


class Moved(NamedTuple):
    """``promoted``: in the top k after, not before (in after order); ``demoted``: in the
    top k before, not after (in before order)."""

    promoted: list[str]
    demoted: list[str]


def moved(hits_before: Sequence[Hit], hits_after: Sequence[Hit], k: int) -> Moved:
    """What reranking pushed into and out of the top ``k``."""
    top_before = [h.chunk_id for h in hits_before[:k]]
    top_after = [h.chunk_id for h in hits_after[:k]]
    return Moved(
        promoted=[c for c in top_after if c not in set(top_before)],
        demoted=[c for c in top_before if c not in set(top_after)],
    )
