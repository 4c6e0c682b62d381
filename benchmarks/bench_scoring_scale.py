"""Scoring cost against corpus size: ``evaluate`` of one ready run of 1,000 questions on
corpora of 10k, 100k and 1M chunks. Search is left out (the run is given), so the time is
scoring alone: judging the golden set under the chunking and scoring the ranking.

    python benchmarks/bench_scoring_scale.py [--chunks 10000 100000 1000000] [--questions 1000]

The corpus is real text (the handbook's documents) copied into as many documents as it takes,
cut into 300-character chunks (every other document with 150-character overlap). Each
question has 1-2 evidence spans in a random document, or (``--labels chunk_id``) the chunk
ids holding them; its ranking is 10 random chunks with the evidence's chunk at a random rank.

Each size prints: the one-off build of the chunking's index (``ChunkTable(chunks)`` and its
lookups: seconds and traced MB), scoring given that table (the line that should stay flat),
scoring given the list ``chunk_corpus`` returns (a ``ChunkList``: its first call builds the
table it keeps, later calls reuse it), scoring given a plain list (read on every call), and
pytrec_eval scoring the same run against the chunk holding each question's evidence (judged
1; recall@5, nDCG@5, reciprocal rank) for reference. The last line is each column's slope,
the largest size's time over the smallest's. Times are the best of ``--repeat`` in CPU
seconds of this process (single-threaded work).
"""

from __future__ import annotations

import argparse
import functools
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np

from workbench.corpus import Chunk, ChunkList, ChunkTable, load_folder
from workbench.evaluation import Run, evaluate
from workbench.golden import Evidence, GoldenItem
from workbench.retrieval import Hit

ROOT = Path(__file__).resolve().parents[1]
SIZE, STEP = 300, 150


def make_corpus(n_chunks: int) -> tuple[list[Chunk], dict[str, str]]:
    """``n_chunks`` chunks of copies of the handbook's documents, and each document's text."""
    texts = [d.text for d in load_folder(ROOT / "data" / "handbook" / "docs").documents]
    chunks: list[Chunk] = []
    docs: dict[str, str] = {}
    d = 0
    while len(chunks) < n_chunks:
        text, doc_id = texts[d % len(texts)], f"doc{d}"
        docs[doc_id] = text
        step = STEP if d % 2 else SIZE
        for i, start in enumerate(range(0, max(len(text) - STEP, 1), step)):
            end = min(start + SIZE, len(text))
            chunks.append(Chunk(f"{doc_id}#{i}", doc_id, start, end, text=text[start:end]))
            if len(chunks) == n_chunks:
                break
        d += 1
    return chunks, docs


def make_questions(chunks: list[Chunk], docs: dict[str, str], n: int, labels: str,
                   seed: int = 0) -> tuple[list[GoldenItem], Run, dict[str, str]]:
    """``n`` questions labelled by evidence spans (or chunk ids), a run of 10 hits each, and
    the chunk holding each question's evidence."""
    rng = np.random.default_rng(seed)
    items, hits, holders = [], {}, {}
    for q in range(n):
        holder = chunks[int(rng.integers(len(chunks)))]
        text = docs[holder.doc_id]
        start = holder.start + int(rng.integers(0, max(holder.end - holder.start - 40, 1)))
        end = min(start + int(rng.integers(20, 120)), len(text))
        qid = f"q{q}"
        holders[qid] = holder.id
        if labels == "evidence":
            items.append(GoldenItem(qid, "?", evidence=(
                Evidence(holder.doc_id, start, end, text[start:end]),)))
        else:
            items.append(GoldenItem(qid, "?", relevant_chunk_ids=(holder.id,)))
        ranking = [chunks[int(i)].id for i in rng.choice(len(chunks), size=10, replace=False)]
        ranking[int(rng.integers(0, 10))] = holder.id
        ranking = list(dict.fromkeys(ranking))
        hits[qid] = tuple(Hit(cid, 1.0 / (r + 1), r + 1) for r, cid in enumerate(ranking))
    return items, Run("bm25", hits), holders


def best_of(repeat: int, score: Callable[[], object]) -> float:
    """The least CPU seconds of ``repeat`` calls of ``score``."""
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        score()
        best = min(best, time.process_time() - t)
    return best


def build_table(chunks: list[Chunk]) -> tuple[ChunkTable, float, float]:
    """The chunking's index with the lookups chunk-level scoring uses (ids, documents' chunks),
    its CPU seconds and its traced peak MB."""
    tracemalloc.start()
    t = time.process_time()
    table = ChunkTable(chunks)
    _ = "" in table, table.doc_ids  # builds the id set and the documents' runs
    seconds = time.process_time() - t
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return table, seconds, peak


def pytrec_seconds(run: Run, holders: dict[str, str], repeat: int) -> float | None:
    """pytrec_eval on the same run, the chunk holding each question's evidence judged 1."""
    try:
        import pytrec_eval
    except ImportError:
        return None
    qrels = {q: {cid: 1} for q, cid in holders.items()}
    scored = {q: {h.chunk_id: float(h.score) for h in hs} for q, hs in run.hits.items()}
    return best_of(repeat, lambda: pytrec_eval.RelevanceEvaluator(
        qrels, {"recall_5", "ndcg_cut_5", "recip_rank"}).evaluate(scored))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--questions", type=int, default=1000)
    ap.add_argument("--labels", choices=["evidence", "chunk_id"], default="evidence")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"{'chunks':>10}{'corpus s':>10}{'table s':>9}{'table MB':>10}{'given table':>13}"
          f"{'ChunkList 1st':>15}{'ChunkList':>11}{'plain list':>12}{'pytrec_eval':>13}   "
          f"({args.questions} questions, "
          f"{args.labels} labels, scoring CPU s, best of {args.repeat})")
    first: tuple[float, ...] = ()
    last: tuple[float, ...] = ()
    for n in args.chunks:
        t = time.perf_counter()
        chunks, docs = make_corpus(n)
        golden, run, holders = make_questions(chunks, docs, args.questions, args.labels)
        made = time.perf_counter() - t
        table, build_s, build_mb = build_table(chunks)
        assert evaluate(run, golden, table, k=5).n == args.questions
        given_table = best_of(args.repeat, functools.partial(evaluate, run, golden, table, k=5))
        kept = ChunkList(chunks)
        kept_first = best_of(1, functools.partial(evaluate, run, golden, kept, k=5))
        given_kept = best_of(args.repeat, functools.partial(evaluate, run, golden, kept, k=5))
        given_list = best_of(args.repeat, functools.partial(evaluate, run, golden, chunks, k=5))
        trec = pytrec_seconds(run, holders, args.repeat)
        last = (given_table, kept_first, given_kept, given_list,
                *(() if trec is None else (trec,)))
        first = first or last
        print(f"{n:>10,}{made:>10.1f}{build_s:>9.3f}{build_mb:>10.1f}{given_table:>13.3f}"
              f"{kept_first:>15.3f}{given_kept:>11.3f}{given_list:>12.3f}"
              f"{'-' if trec is None else f'{trec:.3f}':>13}", flush=True)
        del chunks, docs, golden, run, holders, table, kept
    widths = (13, 15, 11, 12, 13)
    slope = "".join(f"{f'{b / a:.1f}x' if a else '-':>{w}}" for a, b, w in zip(
        first, last, widths, strict=False))
    print(f"{'slope':>10}{'':>29}{slope}   (largest size / smallest)")


if __name__ == "__main__":
    main()
