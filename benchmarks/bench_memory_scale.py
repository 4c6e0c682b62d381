"""Peak memory and build time of a BM25 evaluation at scale, against bm25s + pytrec_eval on
the same chunks, and the bytes per chunk of each part of ours.

    PYTHONPATH=. python benchmarks/bench_memory_scale.py [--chunks 100000 1000000]
        [--questions 1000] [--components 100000]

Each side runs in a fresh child process, so its peak is its own (``ru_maxrss`` of the child):

* workbench: the chunks as ``Chunk`` objects -> ``BM25Retriever`` -> search every question
  (``Run.from_retriever``, k=10) -> ``evaluate`` (evidence spans, the default metrics);
* peer: the same chunk texts and ids as lists -> ``bm25s.tokenize`` + ``BM25.index`` ->
  ``retrieve`` (k=10) -> ``pytrec_eval`` (the chunk holding each question's span, judged 1).

The corpus is bench_scoring_scale's (the handbook's documents copied, 300-character chunks).
Each question is 6-10 words of a random chunk, its evidence those words. "build" is chunks
to a searchable index (tokenising included); "base" is the child's memory after its imports,
before any chunk. ``--components`` measures, in this process with tracemalloc, what each part
of ours holds per chunk (and the transient peak of the index build and of scoring).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scoring_scale import make_corpus

from workbench.golden import Evidence, GoldenItem


def questions(ids: list[str], doc_ids: list[str], starts: list[int], texts: list[str],
              n: int, seed: int = 0) -> list[tuple[str, str, str, int, int, str]]:
    """``n`` questions: (qid, text, doc id, start, end, holder chunk id), the text 6-10
    consecutive words of a random chunk (its evidence)."""
    rng = np.random.default_rng(seed)
    out = []
    for q in range(n):
        i = int(rng.integers(len(ids)))
        words = texts[i].split(" ")
        a = int(rng.integers(0, max(len(words) - 10, 1)))
        text = " ".join(words[a:a + int(rng.integers(6, 11))]).strip() or texts[i][:20]
        start = starts[i] + texts[i].index(text)
        out.append((f"q{q}", text, doc_ids[i], start, start + len(text), ids[i]))
    return out


def ours(n: int, n_questions: int) -> dict[str, float]:
    from workbench.evaluation import Run, evaluate
    from workbench.retrieval.bm25 import BM25Retriever

    t = time.perf_counter()
    chunks, _ = make_corpus(n)
    chunk_s = time.perf_counter() - t
    asked = questions([c.id for c in chunks], [c.doc_id for c in chunks],
                      [c.start for c in chunks], [c.text for c in chunks], n_questions)
    golden = [GoldenItem(q, text, evidence=(Evidence(doc, a, b, text),))
              for q, text, doc, a, b, _ in asked]
    t = time.perf_counter()
    retriever = BM25Retriever(chunks)
    build_s = time.perf_counter() - t
    t = time.perf_counter()
    run = Run.from_retriever(retriever, golden, k=10)
    search_s = time.perf_counter() - t
    t = time.perf_counter()
    result = evaluate(run, golden, chunks, k=10)
    score_s = time.perf_counter() - t
    return {"chunk_s": chunk_s, "build_s": build_s, "search_s": search_s, "score_s": score_s,
            "mean": float(result.summary()["mean"].mean())}


def peer(n: int, n_questions: int) -> dict[str, float]:
    import bm25s
    import pytrec_eval

    t = time.perf_counter()
    chunks, _ = make_corpus(n)  # the same chunks, kept as plain lists
    ids, doc_ids = [c.id for c in chunks], [c.doc_id for c in chunks]
    starts, texts = [c.start for c in chunks], [c.text for c in chunks]
    del chunks
    chunk_s = time.perf_counter() - t
    asked = questions(ids, doc_ids, starts, texts, n_questions)
    t = time.perf_counter()
    bm25 = bm25s.BM25()
    bm25.index(bm25s.tokenize(texts, stopwords="en", show_progress=False),
               show_progress=False)
    build_s = time.perf_counter() - t
    t = time.perf_counter()
    found, scores = bm25.retrieve(bm25s.tokenize([a[1] for a in asked], stopwords="en",
                                                 show_progress=False), k=10,
                                  show_progress=False)
    run = {q[0]: {ids[int(d)]: float(s) for d, s in zip(row, srow, strict=True)}
           for q, row, srow in zip(asked, found, scores, strict=True)}
    search_s = time.perf_counter() - t
    t = time.perf_counter()
    qrels = {q[0]: {q[5]: 1} for q in asked}
    res = pytrec_eval.RelevanceEvaluator(qrels, {"recall_10", "ndcg_cut_10", "recip_rank",
                                                 "P_10"}).evaluate(run)
    score_s = time.perf_counter() - t
    return {"chunk_s": chunk_s, "build_s": build_s, "search_s": search_s, "score_s": score_s,
            "mean": float(np.mean([r["recip_rank"] for r in res.values()]))}


def child(side: str, n: int, n_questions: int) -> None:
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    got: dict[str, Any] = (ours if side == "ours" else peer)(n, n_questions)
    got |= {"base_mb": base, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    print(json.dumps(got))


def measure(side: str, n: int, n_questions: int) -> dict[str, float]:
    """One side in a fresh process; its figures."""
    out = subprocess.run([sys.executable, __file__, "--child", side, str(n), str(n_questions)],
                         capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def components(n: int) -> None:
    """Bytes per chunk of each part of ours at ``n`` chunks (tracemalloc)."""
    from workbench.corpus import Chunk
    from workbench.evaluation import Run, evaluate
    from workbench.retrieval.bm25 import BM25Retriever

    chunks, _ = make_corpus(n)
    ids, doc_ids = [c.id for c in chunks], [c.doc_id for c in chunks]
    starts, ends = [c.start for c in chunks], [c.end for c in chunks]
    texts = [c.text for c in chunks]
    del chunks
    rows: list[tuple[str, float]] = [
        ("chunk texts (str)", sum(map(sys.getsizeof, texts)) / n),
        ("chunk ids (str)", sum(map(sys.getsizeof, ids)) / n),
    ]
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    chunks = [Chunk(i, d, a, b, text=t) for i, d, a, b, t in zip(ids, doc_ids, starts, ends, texts,
                                                              strict=True)]
    rows.append(("Chunk objects (texts and ids shared)",
                 (tracemalloc.get_traced_memory()[0] - before) / n))
    del ids, doc_ids, starts, ends, texts
    tracemalloc.reset_peak()
    retriever = BM25Retriever(chunks)
    held, peak = tracemalloc.get_traced_memory()
    index = retriever._bm25.scores
    arrays = sum(index[k].nbytes for k in ("data", "indices", "indptr"))
    vocab = sys.getsizeof(retriever.vocab) + sum(map(sys.getsizeof, retriever.vocab))
    rows += [("BM25 index arrays (data, indices, indptr)", arrays / n),
             ("BM25 chunk id list and tie ranks", (sys.getsizeof(retriever.chunk_ids)
                                                    + retriever._id_rank.nbytes) / n),
             ("BM25 vocabulary (terms and their ids)", vocab / n),
             ("BM25 build, transient above what it keeps", (peak - held) / n)]
    asked = questions([c.id for c in chunks], [c.doc_id for c in chunks],
                      [c.start for c in chunks], [c.text for c in chunks], 1000)
    golden = [GoldenItem(q, text, evidence=(Evidence(doc, a, b, text),))
              for q, text, doc, a, b, _ in asked]
    run = Run.from_retriever(retriever, golden, k=10)
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    evaluate(run, golden, chunks, k=10)
    rows.append(("scoring 1,000 questions, transient", (tracemalloc.get_traced_memory()[1]
                                                       - before) / n))
    tracemalloc.stop()
    print(f"\nbytes per chunk by component, {n:,} chunks (tracemalloc; one chunk's text "
          "is held once, by its Chunk)")
    for name, value in rows:
        print(f"  {name:<46}{value:>9.0f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--questions", type=int, default=1000)
    ap.add_argument("--components", type=int, default=100_000,
                    help="chunks for the bytes-per-chunk table (0: none)")
    ap.add_argument("--child", nargs=3, metavar=("SIDE", "N", "Q"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]), int(args.child[2]))
        return
    print(f"{'chunks':>10} {'side':<10}{'peak MB':>9}{'base MB':>9}{'build s':>9}{'chunk s':>9}"
          f"{'search s':>9}{'score s':>9}")
    for n in args.chunks:
        got = {side: measure(side, n, args.questions) for side in ("ours", "peer")}
        for side, g in got.items():
            print(f"{n:>10,} {side:<10}{g['peak_mb']:>9.0f}{g['base_mb']:>9.0f}"
                  f"{g['build_s']:>9.1f}{g['chunk_s']:>9.1f}{g['search_s']:>9.1f}"
                  f"{g['score_s']:>9.2f}", flush=True)
        o, p = got["ours"], got["peer"]
        print(f"{n:>10,} {'ours/peer':<10}{o['peak_mb'] / p['peak_mb']:>9.2f}{'':>9}"
              f"{o['build_s'] / p['build_s']:>9.2f}   (peak above base: "
              f"{(o['peak_mb'] - o['base_mb']) / (p['peak_mb'] - p['base_mb']):.2f})",
              flush=True)
    if args.components:
        components(args.components)


if __name__ == "__main__":
    main()
