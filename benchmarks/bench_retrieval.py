"""Time retrieval building blocks against their peers and print ratios (no assertions).

    python benchmarks/bench_retrieval.py [--passages 50000] [--bm25-queries 100]
                                         [--sizes 10000,100000] [--texts 300] [--numba]

1. **BM25**: our ``BM25Retriever`` vs ``rank_bm25.BM25Okapi`` vs raw ``bm25s`` on the same
   tokens (our tokeniser, run once and timed on its own). Passages are overlapping 48-word
   windows over the Chroma chunking-evaluation corpora (``../shared/datasets``; synthetic
   text when absent), queries are that dataset's questions. Build times include
   tokenisation for everyone; query time is one ``search(query, 10)`` at a time. Top-10
   agreement is the mean share of shared ids. rank-bm25's Okapi IDF (negative IDFs
   floored at 0.25 x the mean IDF) differs from bm25s' Lucene IDF, so its top 10 may differ
   slightly by design; ours and raw bm25s should agree exactly.
2. **Dense index**: exact numpy (matrix product + argpartition) vs hnswlib (M=16,
   ef_construction=200, ef_search=64, one thread) on random unit vectors (d=384): build time,
   per-query time, recall@10 of HNSW against exact. Random vectors are HNSW's hardest case
   (no cluster structure, full intrinsic dimension): its recall there is poor, so the same
   figures are also shown on real MiniLM vectors (the Chroma chunks, read from the cache
   once ``benchmarks/chroma_chunking.py`` has run).
3. **Embedding cache**: MiniLM throughput on a few hundred texts with the cache cold, warm
   in memory, and warm from disk (a fresh cache object reading the shards).
4. **The shared ordering** (``workbench.ranking.top_k``, ``--skip`` the others to run it
   alone): BM25 and exact dense search as they are now vs the same searches with the inline
   ordering each had before (copied below as the reference: BM25's argpartition + lexsort
   over a precomputed id order, dense's partition + a Python sort of the pool), on the same
   scores, with the outputs checked identical. Queries that match fewer than k chunks make
   BM25's tie pool every zero-scored chunk: those are timed apart.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from workbench.corpus import Chunk
from workbench.retrieval.bm25 import BM25Retriever, tokenize

ROOT = Path(__file__).resolve().parents[1]
CHROMA = ROOT.parent / "shared" / "datasets" / "chroma_chunking_evaluation"


def passages_and_queries(n: int, width: int = 48) -> tuple[list[Chunk], list[str], str]:
    """``n`` overlapping ``width``-word windows (as Chunks) and real questions."""
    if CHROMA.is_dir():
        texts = [p.read_text(encoding="utf-8") for p in sorted((CHROMA / "corpora").glob("*.md"))]
        questions = pd.read_csv(CHROMA / "questions_df.csv")["question"].astype(str).tolist()
        source = "Chroma corpora"
    else:
        rng = np.random.default_rng(0)
        vocab = [f"w{i}" for i in range(20_000)]
        zipf = 1 / np.arange(1, len(vocab) + 1)
        texts = [" ".join(rng.choice(vocab, size=300_000, p=zipf / zipf.sum()))]
        questions = [" ".join(rng.choice(vocab[:5000], size=8)) for _ in range(500)]
        source = "synthetic Zipf text (shared datasets absent)"
    words = [w for t in texts for w in t.split()]
    stride = max(1, (len(words) - width) // n)
    chunks = []
    for i in range(n):
        start = (i * stride) % max(1, len(words) - width)
        text = " ".join(words[start : start + width])
        chunks.append(Chunk(f"p#{i}", "p", 0, len(text), text=text))
    return chunks, questions, f"{source}: {n:,} windows of {width} words, stride {stride}"


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def per_query_ms(fn: Callable[[Any], Any], queries: Sequence[Any] | np.ndarray
                 ) -> tuple[float, list]:
    tops, times = [], []
    for q in queries:
        t = time.perf_counter()
        tops.append(fn(q))
        times.append(time.perf_counter() - t)
    return 1000 * statistics.median(times), tops


def agreement(a: list[list[str]], b: list[list[str]]) -> float:
    return float(np.mean([len(set(x) & set(y)) / max(len(x), 1) for x, y in zip(a, b,
                                                                                 strict=True)]))


def top10(scores: np.ndarray, ids: Sequence[str]) -> list[str]:
    k = min(10, len(scores))
    idx = np.argpartition(-scores, k - 1)[:k]
    return [ids[i] for i in sorted(idx.tolist(), key=lambda i: (-float(scores[i]), ids[i]))]


def bench_bm25(n: int, n_queries: int, numba: bool) -> None:
    import bm25s
    from rank_bm25 import BM25Okapi

    chunks, questions, source = passages_and_queries(n)
    queries = questions[:n_queries]
    ids = [c.id for c in chunks]
    print(f"\n## BM25 — {source}; {len(queries)} queries, top 10")
    tok_s, docs = timed(lambda: [tokenize(c.embed_text) for c in chunks])
    q_tokens = [tokenize(q) for q in queries]
    rows = []

    ours_s, ours = timed(lambda: BM25Retriever(chunks))
    ours_ms, ours_top = per_query_ms(lambda q: [h.chunk_id for h in ours.search(q, 10)], queries)
    rows.append({"system": "workbench BM25Retriever (bm25s, numpy)", "build_s": ours_s,
                 "query_ms_p50": ours_ms, "top10_agreement_vs_ours": 1.0})

    def raw_index() -> tuple[Any, dict[str, int]]:
        vocab: dict[str, int] = {}
        tok_ids = [[vocab.setdefault(t, len(vocab)) for t in d] for d in docs]
        model = bm25s.BM25()
        model.index(bm25s.tokenization.Tokenized(ids=tok_ids, vocab=vocab), show_progress=False)
        return model, vocab

    raw_s, (raw, vocab) = timed(raw_index)
    raw_s += tok_s

    def raw_search(q: list[str]) -> list[str]:
        qids = [vocab[t] for t in q if t in vocab]
        scores = raw.get_scores(qids) if qids else np.zeros(len(ids), dtype=np.float32)
        return top10(np.asarray(scores), ids)

    raw_ms, raw_top = per_query_ms(raw_search, q_tokens)
    rows.append({"system": "raw bm25s (numpy, get_scores + argpartition)", "build_s": raw_s,
                 "query_ms_p50": raw_ms, "top10_agreement_vs_ours": agreement(ours_top, raw_top)})
    same_scores = np.mean([
        np.allclose([h.score for h in ours.search(q, 10)],
                    sorted(np.asarray(raw.get_scores([vocab[t] for t in qt if t in vocab]))
                           [[int(i[2:]) for i in top]], reverse=True), atol=1e-5)
        if any(t in vocab for t in qt) else True
        for q, qt, top in zip(queries, q_tokens, raw_top, strict=True)])

    q_ids = [[vocab[t] for t in q if t in vocab] or [0] for q in q_tokens]
    batch_s, _ = timed(lambda: raw.retrieve(bm25s.tokenization.Tokenized(ids=q_ids, vocab=vocab),
                                            k=10, show_progress=False, n_threads=1))
    rows.append({"system": "raw bm25s retrieve() batch (numpy)", "build_s": raw_s,
                 "query_ms_p50": 1000 * batch_s / len(queries),
                 "top10_agreement_vs_ours": float("nan")})

    if numba:
        def numba_index() -> Any:
            model = bm25s.BM25(backend="numba")
            model.index(bm25s.tokenization.Tokenized(ids=[[vocab[t] for t in d] for d in docs],
                                                     vocab=vocab), show_progress=False)
            return model

        nb_s, nb = timed(numba_index)
        tokenized_q = bm25s.tokenization.Tokenized(ids=q_ids, vocab=vocab)
        first_s, _ = timed(lambda: nb.retrieve(tokenized_q, k=10, show_progress=False,
                                               n_threads=1))
        again_s, _ = timed(lambda: nb.retrieve(tokenized_q, k=10, show_progress=False,
                                               n_threads=1))
        rows.append({"system": f"raw bm25s retrieve() batch (numba; first call with JIT "
                               f"{first_s:.1f} s)", "build_s": nb_s + tok_s,
                     "query_ms_p50": 1000 * again_s / len(queries),
                     "top10_agreement_vs_ours": float("nan")})

    okapi_s, okapi = timed(lambda: BM25Okapi(docs))
    okapi_s += tok_s
    okapi_ms, okapi_top = per_query_ms(lambda q: top10(np.asarray(okapi.get_scores(q)), ids),
                                       q_tokens)
    rows.append({"system": "rank_bm25 BM25Okapi", "build_s": okapi_s, "query_ms_p50": okapi_ms,
                 "top10_agreement_vs_ours": agreement(ours_top, okapi_top)})

    table = pd.DataFrame(rows).set_index("system")
    table["build_x_vs_ours"] = table["build_s"] / ours_s
    table["query_x_vs_ours"] = table["query_ms_p50"] / ours_ms
    print(f"tokenisation alone: {tok_s:.2f} s (included in every build time); ours and raw "
          f"bm25s return the same top-10 *scores* on {100 * same_scores:.0f}% of queries "
          "(id differences are ties at rank 10: overlapping windows score alike)")
    print(table.round(3).to_string())


def _dense_row(n: int, dim: int, n_queries: int, rng: np.random.Generator,
               given: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, Any]:
    from workbench.retrieval.dense import DenseRetriever
    from workbench.retrieval.encoders import unit_vectors

    if given is not None:
        vectors, queries = given
    else:
        vectors = unit_vectors(rng.standard_normal((n, dim), dtype=np.float32))
        queries = unit_vectors(rng.standard_normal((n_queries, dim), dtype=np.float32))
    ids = [f"c{i}" for i in range(n)]
    exact_build, exact = timed(lambda: DenseRetriever.from_vectors(ids, vectors, index="exact"))
    hnsw_build, hnsw = timed(lambda: DenseRetriever.from_vectors(ids, vectors, index="hnsw"))
    exact_ms, _ = per_query_ms(lambda q: exact.search_vectors(q[None, :], 10), queries)
    hnsw_ms, _ = per_query_ms(lambda q: hnsw.search_vectors(q[None, :], 10), queries)
    row = {"vectors": n, "exact_build_s": exact_build, "hnsw_build_s": hnsw_build,
           "exact_query_ms": exact_ms, "hnsw_query_ms": hnsw_ms,
           "hnsw_speedup": exact_ms / hnsw_ms, "hnsw_recall@10": hnsw.hnsw_recall(queries, k=10)}
    hnsw.ef_search = 256
    row["ef256_query_ms"], _ = per_query_ms(lambda q: hnsw.search_vectors(q[None, :], 10),
                                            queries)
    row["ef256_recall@10"] = hnsw.hnsw_recall(queries, k=10)
    return row


class _CacheOnly:
    """Stands in for MiniLM when every vector must come from the cache (never encodes)."""

    model_id = "sentence-transformers/all-MiniLM-L6-v2"

    def encode_queries(self, _texts: Sequence[str]) -> np.ndarray:
        raise LookupError("not cached")

    encode_documents = encode_queries


def real_vectors() -> tuple[np.ndarray, np.ndarray] | None:
    """MiniLM vectors of the Chroma chunks and questions, if benchmarks/chroma_chunking.py
    has put them in the cache (never embeds anything here)."""
    if not CHROMA.is_dir():
        return None
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from chroma_chunking import CACHE, CONFIGS, load

    from workbench.chunking import chunk_corpus, parse_chunker
    from workbench.retrieval.cache import EmbeddingCache

    docs, questions = load(None, None)
    texts = list(dict.fromkeys(c.embed_text for spec, *_ in CONFIGS.values()
                               for c in chunk_corpus(parse_chunker(spec), docs)))
    cache = EmbeddingCache(CACHE)
    try:
        chunks = cache.embed(_CacheOnly(), texts, progress=False)
        queries = cache.embed(_CacheOnly(), questions["question"].astype(str).tolist(),
                              kind="query", progress=False)
    except LookupError:
        return None
    return chunks, queries


def bench_dense(sizes: Sequence[int], dim: int = 384, n_queries: int = 200) -> None:
    print(f"\n## Dense index — random unit vectors, d={dim}, {n_queries} queries, k=10, 1 thread"
          " (HNSW: M=16, ef_construction=200, ef_search=64 unless noted)")
    rng = np.random.default_rng(0)
    rows = [_dense_row(n, dim, n_queries, rng) for n in sizes]
    print(pd.DataFrame(rows).set_index("vectors").round(3).to_string())
    real = real_vectors()
    if real is None:
        print("(real MiniLM vectors: run benchmarks/chroma_chunking.py once to cache them)")
        return
    print(f"\nSame, on real MiniLM vectors: {len(real[0]):,} Chroma chunks (every chunking of "
          f"benchmarks/chroma_chunking.py, from the cache) and their {len(real[1])} questions")
    row = _dense_row(len(real[0]), dim, len(real[1]), rng, real)
    print(pd.DataFrame([row]).set_index("vectors").round(3).to_string())


def bench_cache(n_texts: int) -> None:
    from workbench.retrieval.cache import EmbeddingCache
    from workbench.retrieval.encoders import get_encoder

    chunks, _, source = passages_and_queries(n_texts, width=40)
    texts = [c.embed_text for c in chunks]
    print(f"\n## MiniLM through the embedding cache — {n_texts} texts of 40 words ({source})")
    encoder = get_encoder("minilm")
    load_s, _ = timed(lambda: encoder.encode_documents(["warm-up"]))
    with tempfile.TemporaryDirectory() as tmp:
        cache = EmbeddingCache(tmp)
        cold_s, cold = timed(lambda: cache.embed(encoder, texts, progress=False))
        cold_embedded = cache.stats.embedded
        warm_s, warm = timed(lambda: cache.embed(encoder, texts, progress=False))
        warm_embedded = cache.stats.embedded
        fresh = EmbeddingCache(tmp)
        disk_s, disk = timed(lambda: fresh.embed(encoder, texts, progress=False))
        disk_embedded = fresh.stats.embedded
    same = bool(np.array_equal(cold, warm) and np.array_equal(cold, disk))
    rows = [
        {"pass": "cold (model loaded beforehand)", "seconds": cold_s, "embedded": cold_embedded},
        {"pass": "warm, same cache object", "seconds": warm_s, "embedded": warm_embedded},
        {"pass": "warm, fresh cache object (reads shards)", "seconds": disk_s,
         "embedded": disk_embedded},
    ]
    table = pd.DataFrame(rows).set_index("pass")
    table["texts_per_s"] = n_texts / table["seconds"]
    table["x_vs_cold"] = cold_s / table["seconds"]
    print(f"model load + first call: {load_s:.1f} s; identical vectors on every pass: {same}")
    print(table.round(3).to_string())


def _before_bm25(bm25: BM25Retriever, id_order: np.ndarray, query: str, k: int) -> list[str]:
    """BM25Retriever.search as it was before workbench.ranking (the reference)."""
    scores = bm25.scores(query)
    k = min(k, len(scores))
    if k <= 0:
        return []
    top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    cutoff = scores[top].min()
    pool = np.flatnonzero(scores >= cutoff)
    ranked = pool[np.lexsort((-id_order[pool], -scores[pool]))][:k]
    return [bm25.chunk_ids[i] for i in ranked]


def _before_dense(scores: np.ndarray, ids: Sequence[str], k: int) -> list[int]:
    """dense.top_k_indices as it was before workbench.ranking (the reference)."""
    n = len(scores)
    if k <= 0 or n == 0:
        return []
    if k < n:
        kth = np.partition(scores, n - k)[n - k]
        candidates = np.flatnonzero(scores >= kth)
    else:
        candidates = np.arange(n)
    order = sorted(candidates.tolist(), key=lambda i: (float(scores[i]), ids[i]), reverse=True)
    return order[:k]


def bench_ordering(n: int, n_queries: int, n_vectors: int, dim: int = 384) -> None:
    """Search time with the shared top_k vs the inline ordering it replaced, in one run."""
    from workbench.ranking import top_k
    from workbench.retrieval.dense import DenseRetriever
    from workbench.retrieval.encoders import unit_vectors

    chunks, questions, source = passages_and_queries(n)
    bm25 = BM25Retriever(chunks)
    id_order = np.argsort(np.argsort(bm25.chunk_ids, kind="stable"))
    matched = [q for q in questions if np.count_nonzero(bm25.scores(q)) >= 10][:n_queries]
    sparse = [f"{q} zzqx" for q in ("ERR-4031", "xylograph", "quux")]  # < 10 chunks match
    rows = []
    for label, queries in (("BM25, queries matching >= 10 chunks", matched),
                           ("BM25, queries matching < 10 (pool = all zero scores)", sparse)):
        before_ms, before = per_query_ms(lambda q: _before_bm25(bm25, id_order, q, 10), queries)
        after_ms, after = per_query_ms(lambda q: [h.chunk_id for h in bm25.search(q, 10)],
                                       queries)
        rows.append({"search": f"{label} ({len(queries)} queries, {n:,} chunks)",
                     "before_ms_p50": before_ms, "after_ms_p50": after_ms,
                     "identical": before == after})
    rng = np.random.default_rng(0)
    vectors = unit_vectors(rng.standard_normal((n_vectors, dim), dtype=np.float32))
    # ties on purpose: every vector appears twice under two ids
    vectors = np.concatenate([vectors, vectors])
    ids = [f"c{i}" for i in range(len(vectors))]
    dense = DenseRetriever.from_vectors(ids, vectors, index="exact")
    qvecs = unit_vectors(rng.standard_normal((n_queries, dim), dtype=np.float32))
    before_ms, before = per_query_ms(
        lambda q: [ids[i] for i in _before_dense(dense.vectors @ q, ids, 10)], qvecs)
    after_ms, after = per_query_ms(
        lambda q: [h.chunk_id for h in dense.search_vectors(q[None, :], 10)[0]], qvecs)
    rows.append({"search": f"dense exact ({len(qvecs)} queries, {len(ids):,} vectors, "
                           "each twice)", "before_ms_p50": before_ms, "after_ms_p50": after_ms,
                 "identical": before == after})
    row = dense.vectors @ qvecs[0]
    order_before, _ = per_query_ms(lambda _: _before_dense(row, ids, 10), range(50))
    order_after, _ = per_query_ms(lambda _: top_k(ids, row, 10), range(50))
    rows.append({"search": f"ordering alone, one dense score row ({len(ids):,})",
                 "before_ms_p50": order_before, "after_ms_p50": order_after,
                 "identical": _before_dense(row, ids, 10) == top_k(ids, row, 10).tolist()})
    table = pd.DataFrame(rows).set_index("search")
    table["after_x_before"] = table["after_ms_p50"] / table["before_ms_p50"]
    print(f"\n## The shared ordering (workbench.ranking.top_k) vs the inline ordering it "
          f"replaced — {source}")
    print(table.round(3).to_string())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--passages", type=int, default=50_000, help="BM25 corpus size")
    ap.add_argument("--bm25-queries", type=int, default=100,
                    help="queries timed (rank-bm25 is slow)")
    ap.add_argument("--sizes", default="10000,100000", help="dense index sizes")
    ap.add_argument("--texts", type=int, default=300, help="texts for the cache benchmark")
    ap.add_argument("--numba", action="store_true", help="also time bm25s' numba backend")
    ap.add_argument("--skip", default="", help="comma-separated: bm25,dense,cache,order")
    args = ap.parse_args()
    skip = set(args.skip.split(","))
    if "bm25" not in skip:
        bench_bm25(args.passages, args.bm25_queries, args.numba)
    if "dense" not in skip:
        bench_dense([int(s) for s in args.sizes.split(",") if s])
    if "cache" not in skip:
        bench_cache(args.texts)
    if "order" not in skip:
        bench_ordering(args.passages, args.bm25_queries, max(int(s) for s in
                                                             args.sizes.split(",") if s) // 2)


if __name__ == "__main__":
    main()
