"""Retrievers: the protocol, BM25, dense, hybrid (RRF), rerank, parent/neighbour expansion.

``make_retriever(spec, chunks)`` builds one from a short name used by the CLI and sweeps:
``bm25``, ``dense``, ``hybrid`` (BM25 + dense, RRF) and ``hybrid+rerank`` (the hybrid's top
50 re-scored by a second encoder, multilingual-e5 by default). Dense pieces import torch
lazily, so ``bm25`` never loads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workbench.corpus import Chunk
from workbench.retrieval.base import CallableRetriever, Hit, Retriever, rank_hits
from workbench.retrieval.bm25 import BM25Retriever, tokenize

RETRIEVER_NAMES = ("bm25", "dense", "hybrid", "hybrid+rerank")

__all__ = ["RETRIEVER_NAMES", "BM25Retriever", "CallableRetriever", "Hit", "Retriever",
           "make_retriever", "rank_hits", "tokenize"]


def make_retriever(spec: str, chunks: Sequence[Chunk], encoder: Any = None, cache: Any = None,
                   reranker_encoder: Any = "e5") -> Retriever:
    """Build a named retriever over ``chunks``. ``encoder`` is a name, path or Encoder."""
    if spec == "bm25":
        return BM25Retriever(chunks)
    if spec not in RETRIEVER_NAMES:
        raise ValueError(f"unknown retriever {spec!r}: choose one of {', '.join(RETRIEVER_NAMES)}")
    from workbench.retrieval.cache import EmbeddingCache
    from workbench.retrieval.dense import DenseRetriever, get_encoder
    from workbench.retrieval.hybrid import HybridRetriever

    enc = get_encoder(encoder) if encoder is None or isinstance(encoder, str) else encoder
    cache = cache if cache is not None else EmbeddingCache()
    dense = DenseRetriever(chunks, encoder=enc, cache=cache)
    if spec == "dense":
        return dense
    hybrid = HybridRetriever([BM25Retriever(chunks), dense], name="hybrid")
    if spec == "hybrid":
        return hybrid
    from workbench.retrieval.rerank import EncoderReranker, RerankedRetriever

    second = (get_encoder(reranker_encoder) if isinstance(reranker_encoder, str)
              else reranker_encoder)
    return RerankedRetriever(hybrid, EncoderReranker(second, chunks, cache=cache), n=50,
                             name="hybrid+rerank")
