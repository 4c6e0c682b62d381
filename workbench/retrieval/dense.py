"""Dense retrieval: an exact / HNSW vector index over chunk embeddings.

Importing this module is cheap: hnswlib is imported only when an HNSW index is first built,
and the encoders (:mod:`workbench.retrieval.encoders`) load their models on first use.
Vectors are L2-normalised, so scores are cosine similarities.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.io import WorkbenchError, WorkbenchWarning
from workbench.ranking import top_k
from workbench.retrieval.base import Hit, rank_hits
from workbench.retrieval.cache import embed_uncached
from workbench.retrieval.encoders import (
    Encoder,
    LanguageWarning,
    choose_encoder,
    get_encoder,
    language_warning,
    unit_vectors,
)

if TYPE_CHECKING:
    from workbench.corpus import Chunk
    from workbench.retrieval.cache import EmbeddingCache

__all__ = ["HNSW_AUTO_THRESHOLD", "HNSW_CHECK_SAMPLE", "HNSW_RECALL_BOUND", "DenseRetriever"]

HNSW_AUTO_THRESHOLD = 100_000
#: The recall@10 against exact search below which an HNSW index's numbers are not exact
#: enough to measure with: ``index="auto"`` then searches exactly (see ``for_measuring``).
HNSW_RECALL_BOUND = 0.99
#: Queries of the user's own set on which ``index_check`` measures the HNSW index.
HNSW_CHECK_SAMPLE = 100


class DenseRetriever:
    """Embed chunks once, then answer queries by cosine similarity.

    ``index``: ``"exact"`` (matrix product, always correct), ``"hnsw"`` (hnswlib,
    approximate: ef_construction=200, M=16, ef_search=max(ef_search, 2k)), or ``"auto"``
    (HNSW above 100,000 chunks). Embeddings go through ``cache`` when one is given.
    Without an ``encoder`` it picks one for the chunks' language
    (:func:`~workbench.retrieval.encoders.choose_encoder`); a given encoder that does not read
    that language gets a :class:`~workbench.retrieval.encoders.LanguageWarning`.
    """

    def __init__(
        self,
        chunks: Sequence[Chunk],
        encoder: Encoder | None = None,
        cache: EmbeddingCache | None = None,
        *,
        index: str = "auto",
        name: str = "dense",
        progress: bool = True,
        ef_search: int = 64,
        threads: int = 1,
    ):
        ids = [c.id for c in chunks]
        texts = [c.embed_text for c in chunks]
        if encoder is None:
            encoder = get_encoder(choose_encoder(texts)[0])
        elif (problem := language_warning(encoder, texts)) is not None:
            warnings.warn(problem, LanguageWarning, stacklevel=2)
        self.encoder: Encoder | None = encoder
        self.cache = cache
        if cache is not None:
            vectors = cache.embed(self.encoder, texts, kind="document", progress=progress)
        elif texts:
            vectors = embed_uncached(self.encoder, texts, progress=progress)
        else:
            vectors = np.zeros((0, 0), dtype=np.float32)
        self._setup(ids, vectors, index, name, ef_search, threads)

    @classmethod
    def from_vectors(
        cls,
        ids: Sequence[str],
        vectors: np.ndarray,
        encoder: Encoder | None = None,
        *,
        index: str = "auto",
        name: str = "dense",
        ef_search: int = 64,
        threads: int = 1,
    ) -> DenseRetriever:
        """A retriever over precomputed vectors (normalised here). Without an encoder it
        answers ``search_vectors`` only."""
        self = cls.__new__(cls)
        self.encoder = encoder
        self.cache = None
        vecs = np.asarray(vectors, dtype=np.float32)
        self._setup(list(ids), vecs, index, name, ef_search, threads)
        return self

    def _setup(
        self,
        ids: list[str],
        vectors: np.ndarray,
        index: str,
        name: str,
        ef_search: int,
        threads: int,
    ) -> None:
        if index not in ("auto", "exact", "hnsw"):
            raise WorkbenchError(f"index must be 'auto', 'exact' or 'hnsw', not {index!r}")
        if len(set(ids)) != len(ids):
            dup = next(i for i in ids if ids.count(i) > 1)
            raise WorkbenchError(f"duplicate chunk id {dup!r}: chunk ids must be unique")
        if len(vectors) != len(ids):
            raise WorkbenchError(f"{len(vectors)} vectors for {len(ids)} chunk ids")
        self.name = name
        self.ids = ids
        dim = vectors.shape[1] if vectors.ndim == 2 else 0
        self.vectors = unit_vectors(vectors) if len(ids) else np.zeros((0, dim), np.float32)
        self.ef_search = ef_search
        self.threads = threads
        self._prefetched: dict[str, np.ndarray] = {}  # query -> vector (prefetch_queries)
        self.index_asked = index
        self.index_kind = (
            "hnsw" if index == "hnsw" or (index == "auto" and len(ids) > HNSW_AUTO_THRESHOLD)
            else "exact"
        )
        self._hnsw: Any = None
        if self.index_kind == "hnsw":
            self._build_hnsw()
        #: What a result measured with this retriever says of its index: nothing for an exact
        #: index; for HNSW its kind, and its recall once measured (:meth:`for_measuring`).
        self.index_info: dict[str, Any] = {"index": "hnsw"} if self.index_kind == "hnsw" else {}

    def __repr__(self) -> str:
        model = self.encoder.model_id if self.encoder is not None else "vectors"
        return f"DenseRetriever({self.name!r}, {len(self.ids)} chunks, {model}, {self.index_kind})"

    def __len__(self) -> int:
        return len(self.ids)

    # -- HNSW ---------------------------------------------------------------------------

    def _build_hnsw(self) -> Any:
        if self._hnsw is None and len(self.ids):
            import hnswlib

            index = hnswlib.Index(space="ip", dim=int(self.vectors.shape[1]))
            index.init_index(max_elements=len(self.ids), ef_construction=200, M=16, random_seed=0)
            index.add_items(self.vectors, np.arange(len(self.ids)), num_threads=self.threads)
            self._hnsw = index
        return self._hnsw

    def _hnsw_search(self, qvecs: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        index = self._build_hnsw()
        k_eff = min(k, len(self.ids))
        index.set_ef(max(self.ef_search, 2 * k_eff))
        labels, distances = index.knn_query(qvecs, k=k_eff, num_threads=self.threads)
        return [
            [(self.ids[int(i)], 1.0 - float(d)) for i, d in zip(row_l, row_d, strict=True)]
            for row_l, row_d in zip(labels, distances, strict=True)
        ]

    def _exact_search(self, qvecs: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        out = []
        for start in range(0, len(qvecs), 256):  # bounded memory: 256 x n scores at a time
            for row in qvecs[start : start + 256] @ self.vectors.T:
                idx = top_k(self.ids, row, k)
                out.append([(self.ids[i], float(row[i])) for i in idx])
        return out

    def hnsw_recall(self, queries: Sequence[str] | np.ndarray, k: int = 10) -> float:
        """Recall@k of the HNSW index against exact search on the same queries
        (mean over queries of |HNSW top-k ∩ exact top-k| / |exact top-k|)."""
        qvecs = self._query_vectors(queries)
        if not len(self.ids) or not len(qvecs):
            return 1.0
        approx = self._hnsw_search(qvecs, k)
        exact = self._exact_search(qvecs, k)
        total = 0.0
        for a, e in zip(approx, exact, strict=True):
            truth = {cid for cid, _ in e}
            total += len(truth & {cid for cid, _ in a}) / len(truth)
        return total / len(qvecs)

    def index_check(self, queries: Sequence[str], k: int = 10) -> dict[str, Any]:
        """The recall of this retriever's index, measured on (up to
        :data:`HNSW_CHECK_SAMPLE` of) the user's own ``queries``: nothing for an exact index
        (what a measurement does unless told otherwise); for an HNSW index
        ``{"index": "hnsw", "index_recall@10": ...}``, its recall against exact search. A
        measurement only: the retriever is left as it is (:meth:`for_measuring` acts on it)."""
        if self.index_kind != "hnsw":
            return {}
        sample = list(dict.fromkeys(queries))
        step = max(len(sample) // HNSW_CHECK_SAMPLE, 1)
        recall = self.hnsw_recall(sample[::step][:HNSW_CHECK_SAMPLE], k)
        return {"index": "hnsw", f"index_recall@{k}": round(recall, 4)}

    def for_measuring(self, queries: Sequence[str], k: int = 10) -> DenseRetriever:
        """The retriever a measurement on ``queries`` searches with, its index decided when
        it is built: an exact index as it is; an HNSW index checked on the queries
        (:meth:`index_check`) and, below :data:`HNSW_RECALL_BOUND`, for ``index="auto"`` a
        retriever built exact over the same vectors (the numbers then are exact), for an
        explicit ``index="hnsw"`` the approximate one; either way a WorkbenchWarning says
        so. This retriever is never changed; :attr:`index_info` of the one returned says
        which index it searches and the recall measured."""
        info = self.index_check(queries, k)
        if not info:
            return self
        recall = info[f"index_recall@{k}"]
        exact = recall < HNSW_RECALL_BOUND and self.index_asked == "auto"
        if recall < HNSW_RECALL_BOUND:
            what = ("searching exactly instead" if exact else
                    "its numbers are APPROXIMATE (pass index='exact' for exact ones)")
            sample = min(len(set(queries)), HNSW_CHECK_SAMPLE)
            warnings.warn(f"{self.name}: the HNSW index finds {recall:.1%} of the exact top "
                          f"{k} on {sample} of your queries, below {HNSW_RECALL_BOUND:.0%}: "
                          f"{what}", WorkbenchWarning, stacklevel=2)
        built = copy.copy(self)  # the vectors, encoder and cache shared
        if exact:
            built.index_kind, built._hnsw = "exact", None
        built.index_info = {**info, "index": built.index_kind}
        return built

    # -- search -------------------------------------------------------------------------

    def _query_vectors(self, queries: Sequence[str] | np.ndarray) -> np.ndarray:
        if isinstance(queries, np.ndarray):
            return unit_vectors(queries)
        queries = list(queries)
        memo = self._prefetched
        if memo and all(q in memo for q in queries):
            return np.stack([memo[q] for q in queries])
        if self.encoder is None:
            raise WorkbenchError("this retriever was built from vectors without an encoder")
        return unit_vectors(self.encoder.encode_queries(queries))

    def prefetch_queries(self, queries: Sequence[str], progress: bool = False) -> None:
        """Encode ``queries`` in one batch (through the cache, when the retriever has one)
        and keep their vectors for the next ``search`` calls (replacing the last prefetch):
        ``evaluate`` calls it with the golden set's questions."""
        queries = list(dict.fromkeys(queries))
        if not queries or self.encoder is None:
            return
        if self.cache is not None:
            qvecs = self.cache.embed(self.encoder, queries, kind="query", progress=progress)
        else:
            qvecs = self.encoder.encode_queries(queries)
        self._prefetched = dict(zip(queries, unit_vectors(qvecs), strict=True))

    def search_vectors(self, qvecs: np.ndarray, k: int) -> list[list[Hit]]:
        """Top-k hits for each row of ``qvecs`` (query vectors)."""
        qvecs = unit_vectors(qvecs)
        if k <= 0 or not len(self.ids):
            return [[] for _ in range(len(qvecs))]
        if self.index_kind == "hnsw":
            found = self._hnsw_search(qvecs, k)
        else:
            found = self._exact_search(qvecs, k)
        return [rank_hits(pairs, k, self.name) for pairs in found]

    def search_many(
        self, queries: Sequence[str], k: int, progress: bool = False
    ) -> list[list[Hit]]:
        """``search`` for many queries, encoding them in one batch (through the cache, with
        ``kind="query"``, when the retriever has one)."""
        queries = list(queries)
        if not queries:
            return []
        if self.cache is not None and self.encoder is not None:
            qvecs = self.cache.embed(self.encoder, queries, kind="query", progress=progress)
        else:
            qvecs = self._query_vectors(queries)
        return self.search_vectors(qvecs, k)

    def search(self, query: str, k: int) -> list[Hit]:
        if k <= 0 or not len(self.ids):
            return []
        return self.search_vectors(self._query_vectors([query]), k)[0]
