"""One sweep task, run in this process or on a worker (process pool, Dask): chunk once,
index once per retriever, embed through the :class:`~workbench.retrieval.cache.EmbeddingCache` and
evaluate every configuration of that chunking. Tasks and results are plain data; the task
function is pickled by its path, ``workbench.sweep.worker.run_group``. The corpus and the
golden set travel as plain rows and are rebuilt with :func:`decode_docs` and
:func:`decode_golden`."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.corpus import FACT_KEYS, Document, admit
from workbench.evaluation import Run
from workbench.golden import GoldenSet, Problem, parse_item
from workbench.io import WorkbenchError
from workbench.retrieval.base import Hit

if TYPE_CHECKING:
    from workbench.retrieval import Encoder
    from workbench.retrieval.cache import EmbeddingCache

_LOCAL = threading.local()


def _encoder(ref: str | Encoder) -> Encoder:
    """An Encoder from a name (loaded once per process and thread) or the object itself."""
    if not isinstance(ref, str):
        return ref
    memo: dict[str, Encoder] = _LOCAL.__dict__.setdefault("encoders", {})
    if ref not in memo:
        from workbench.retrieval.encoders import get_encoder

        memo[ref] = get_encoder(ref)
    return memo[ref]


def _cache(ref: EmbeddingCache | str | Path) -> EmbeddingCache:
    """The embedding cache of a task: the cache itself (in process), or one per folder,
    process and thread."""
    if not isinstance(ref, str | Path):
        return ref
    memo: dict[str, EmbeddingCache] = _LOCAL.__dict__.setdefault("caches", {})
    key = str(ref)
    if key not in memo:
        from workbench.retrieval.cache import EmbeddingCache

        memo[key] = EmbeddingCache(key)
    return memo[key]


def decode_docs(rows: Sequence[tuple[str, str, str, dict[str, Any]]]) -> list[Document]:
    """Documents from the ``(id, text, title, metadata)`` rows a task carries, admitted again
    through the one door (their access read as it was at load)."""
    return [admit(i, text, title, {k: v for k, v in meta.items() if k not in FACT_KEYS},
                  where=f"sweep task document {i!r}",
                  facts={k: v for k, v in meta.items() if k in FACT_KEYS})
            for i, text, title, meta in rows]


def decode_golden(rows: Sequence[dict[str, Any]]) -> GoldenSet:
    """The golden set from the ``GoldenItem.to_json()`` rows a task carries."""
    problems: list[Problem] = []
    items = [parse_item(row, f"golden[{i}]", problems) for i, row in enumerate(rows)]
    if problems:  # pragma: no cover - the rows come from valid items
        raise WorkbenchError("; ".join(str(p) for p in problems))
    return GoldenSet([i for i in items if i is not None])


_TOKEN_COUNTS: dict[str, int] = {}


def _count_tokens(texts: list[str]) -> list[int]:
    """MiniLM token counts (the counter ``diagnose_chunking`` uses), memoised per process:
    chunkings of one sweep share most texts (header on/off, the zero-overlap baseline)."""
    from workbench.text.tokens import get_counter

    todo = list(dict.fromkeys(t for t in texts if t not in _TOKEN_COUNTS))
    if todo:
        if len(_TOKEN_COUNTS) > 500_000:
            _TOKEN_COUNTS.clear()
        counter = get_counter("minilm")
        batch = getattr(counter, "count_batch", None)
        counts = batch(todo) if batch is not None else [counter.count(t) for t in todo]
        _TOKEN_COUNTS.update(zip(todo, counts, strict=True))
    return [_TOKEN_COUNTS[t] for t in texts]


def run_group(task: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Chunk once, index once per retriever, and evaluate every configuration of one
    chunking. Returns plain data (picklable, JSON-able) keyed by config key."""
    from workbench.chunking import chunk_corpus, split_rate, without_overlap
    from workbench.evaluation import evaluate
    from workbench.metrics import Relevance
    from workbench.retrieval import with_embedder
    from workbench.retrieval.bm25 import BM25Retriever

    docs = decode_docs(task["docs"])
    golden = decode_golden(task["golden"])
    cache = _cache(task["cache"])
    chunker = with_embedder(task["spec"], cache, _LOCAL.__dict__.setdefault("encoders", {}))
    chunks = chunk_corpus(chunker, docs)
    if not chunks:
        raise WorkbenchError(f"chunker {task['spec']} produced no chunks")
    embed_counts = _count_tokens([c.embed_text for c in chunks])
    text_tokens = dict(zip([c.id for c in chunks], _count_tokens([c.text for c in chunks]),
                           strict=True))
    index_tokens = sum(embed_counts)
    cost = 1.0
    zero = without_overlap(chunker)
    if zero is not None:
        base = sum(_count_tokens([c.embed_text for c in chunk_corpus(zero, docs)]))
        cost = index_tokens / base if base else 1.0
    spans = [ev for item in golden for ev in item.evidence]
    split = float(split_rate(chunks, spans))  # a property of the chunking alone
    table = chunks.table  # the chunking's index, built once for every configuration
    relevance = Relevance(golden, table, evidence_threshold=task["evidence_threshold"])
    questions = [item.question for item in golden]
    qids = [item.qid for item in golden]
    depth_of = {c["key"]: max(c["depth"], task["position_depth"]) for c in task["configs"]}
    deepest: dict[tuple[str, Any], int] = {}
    for c in task["configs"]:
        ref = (c["retriever"], c["encoder_key"])
        deepest[ref] = max(deepest.get(ref, 0), depth_of[c["key"]])

    bm25: list[BM25Retriever] = []
    dense: dict[Any, tuple[Any, np.ndarray, int, int]] = {}
    searched: dict[tuple[str, Any], list[list[Hit]]] = {}

    def get_bm25() -> BM25Retriever:
        if not bm25:
            bm25.append(BM25Retriever(chunks))
        return bm25[0]

    def get_dense(enc_key: Any) -> tuple[Any, np.ndarray, int, int]:
        if enc_key not in dense:
            from workbench.retrieval.dense import DenseRetriever

            encoder = _encoder(task["encoders"][enc_key])
            vecs = cache.embed(encoder, [c.embed_text for c in chunks], kind="document",
                               progress=task["progress"])
            embedded, reused = cache.stats.embedded, cache.stats.reused
            qvecs = cache.embed(encoder, questions, kind="query", progress=False)
            retriever = DenseRetriever.from_vectors([c.id for c in chunks], vecs, encoder)
            dense[enc_key] = (retriever, qvecs, embedded, reused)
            return dense[enc_key]
        retriever, qvecs, _, _ = dense[enc_key]
        return retriever, qvecs, 0, len(chunks)

    out: dict[str, dict[str, Any]] = {}
    for c in task["configs"]:
        ref = (c["retriever"], c["encoder_key"])
        embedded = reused = 0
        depth = deepest[ref]
        if c["retriever"] == "bm25":
            if ref not in searched:
                b = get_bm25()
                searched[ref] = [b.search(q, depth) for q in questions]
        else:
            retriever, qvecs, embedded, reused = get_dense(c["encoder_key"])
            if ref not in searched:
                if c["retriever"] == "dense":
                    searched[ref] = retriever.search_vectors(qvecs, depth)
                else:
                    from workbench.retrieval.hybrid import HybridRetriever

                    fetch = max(50, depth)
                    b = get_bm25()
                    hybrid = HybridRetriever([b, retriever], name="hybrid")
                    dense_hits = retriever.search_vectors(qvecs, fetch)
                    searched[ref] = [hybrid.fuse([b.search(q, fetch), d], depth)
                                     for q, d in zip(questions, dense_hits, strict=True)]
        hits = searched[ref]
        run = Run(c["key"], MappingProxyType({q: tuple(h[: c["depth"]])
                                              for q, h in zip(qids, hits, strict=True)}))
        ev = evaluate(run, golden, table, metrics=c["metrics"], k=c["k"],
                      evidence_threshold=task["evidence_threshold"], relevance=relevance)
        frame = ev.frame
        prompt = [sum(text_tokens[h.chunk_id] for h in hs[: c["k"]]) for hs in hits]
        kept = {q: hs[: depth_of[c["key"]]] for q, hs in zip(qids, hits, strict=True)}
        out[c["key"]] = {
            "rows": [[m, q, r, float(v)] for m, q, r, v in zip(
                frame["metric"], frame["qid"], frame["relevance"], frame["value"], strict=True)],
            "excluded": ev.excluded,
            "hits": {q: [[h.chunk_id, float(h.score)] for h in hs] for q, hs in kept.items()},
            "found_rank": {q: relevance.first_found(q, [h.chunk_id for h in kept[q]])
                           for q in relevance.qids},
            "cost": {"chunks": len(chunks), "index_tokens": int(index_tokens),
                     "cost_multiplier": float(cost),
                     "split_rate": split,
                     "prompt_tokens_at_k": float(np.mean(prompt)) if prompt else 0.0},
            "embedded": int(embedded), "reused": int(reused),
        }
    return out
