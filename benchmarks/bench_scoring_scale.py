"""Scoring cost against corpus size: ``evaluate`` of one ready run of 1,000 questions on
corpora of 10k, 100k and 1M chunks. Search is left out (the run is given), so the time is
scoring alone: judging the golden set under the chunking and scoring the ranking.

    python benchmarks/bench_scoring_scale.py [--chunks 10000 100000 1000000] [--questions 1000]

The corpus is real text (the handbook's documents) copied into as many documents as it takes,
cut into 300-character chunks (every other document with 150-character overlap). Each
question has 1-2 evidence spans in a random document, or (``--labels chunk_id``) the chunk
ids holding them; its ranking is 10 random chunks with the evidence's chunk at a random rank.
Times are the best of ``--repeat`` in CPU seconds of this process (single-threaded work).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from workbench.corpus import Chunk, load_folder
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
                   seed: int = 0) -> tuple[list[GoldenItem], Run]:
    """``n`` questions labelled by evidence spans (or chunk ids), and a run of 10 hits each."""
    rng = np.random.default_rng(seed)
    items, hits = [], {}
    for q in range(n):
        holder = chunks[int(rng.integers(len(chunks)))]
        text = docs[holder.doc_id]
        start = holder.start + int(rng.integers(0, max(holder.end - holder.start - 40, 1)))
        end = min(start + int(rng.integers(20, 120)), len(text))
        qid = f"q{q}"
        if labels == "evidence":
            items.append(GoldenItem(qid, "?", evidence=(
                Evidence(holder.doc_id, start, end, text[start:end]),)))
        else:
            items.append(GoldenItem(qid, "?", relevant_chunk_ids=(holder.id,)))
        ranking = [chunks[int(i)].id for i in rng.choice(len(chunks), size=10, replace=False)]
        ranking[int(rng.integers(0, 10))] = holder.id
        ranking = list(dict.fromkeys(ranking))
        hits[qid] = tuple(Hit(cid, 1.0 / (r + 1), r + 1) for r, cid in enumerate(ranking))
    return items, Run("bm25", hits)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--questions", type=int, default=1000)
    ap.add_argument("--labels", choices=["evidence", "chunk_id"], default="evidence")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"{'chunks':>10}{'build s':>9}{'score s':>9}   ({args.questions} questions, "
          f"{args.labels} labels, CPU s, best of {args.repeat})")
    for n in args.chunks:
        t = time.perf_counter()
        chunks, docs = make_corpus(n)
        golden, run = make_questions(chunks, docs, args.questions, args.labels)
        built = time.perf_counter() - t
        best = float("inf")
        for _ in range(args.repeat):
            t = time.process_time()
            result = evaluate(run, golden, chunks, k=5)
            best = min(best, time.process_time() - t)
        assert result.n == args.questions
        print(f"{n:>10,}{built:>9.1f}{best:>9.3f}", flush=True)
        del chunks, docs, golden, run, result


if __name__ == "__main__":
    main()
