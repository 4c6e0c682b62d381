"""Time a memoised dense sweep against the naive loop that re-chunks and re-embeds per config.

    python benchmarks/bench_sweep.py [--max-docs N] [--max-chars C] [--sizes 200,400,800]
                                     [--overlaps 0,15%,30%] [--ks 5] [--retrievers dense]
                                     [--threads 1]

Data: the Chroma chunking-evaluation corpora (``../shared/datasets/chroma_chunking_evaluation``,
five Markdown files, 1.4 MB) with the references of ``questions_df.csv`` as evidence spans.
Grid: fixed chunking, sizes x overlaps x header on/off (3 x 3 x 2 = 18 chunkings by default),
dense retrieval with the real all-MiniLM-L6-v2, k = 5, cold embedding cache. ``--ks 3,5,10``
and ``--retrievers dense,hybrid`` multiply the configurations over the same 18 chunkings (what
a real sweep does): the naive loop re-embeds for each of them, the sweep does not.

Reported: wall time of the sweep; texts embedded against the floor (the number of distinct
``embed_text`` strings over all 18 chunkings, which no method can go below) and against the
naive total (every chunk of every configuration). The naive loop is *estimated*, not run:
its embedding time is the measured seconds per embedded text (documents and queries
separately) times the texts it would embed, plus the sweep's own non-embedding time (chunking,
indexing, scoring happen in both). A warm rerun (everything in the cache) is timed too.
``--max-docs`` keeps the N smallest documents and ``--max-chars`` truncates each document
(questions whose evidence falls outside are dropped), to keep a run bounded.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]
CHROMA = ROOT.parent / "shared" / "datasets" / "chroma_chunking_evaluation"


class TimedEncoder:
    """Wraps an encoder; counts texts and seconds per kind (documents / queries)."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.model_id = inner.model_id
        self.seconds = {"document": 0.0, "query": 0.0}
        self.texts = {"document": 0, "query": 0}

    def _timed(self, kind: str, fn: Any, texts: Sequence[str]) -> np.ndarray:
        start = time.perf_counter()
        out = fn(texts)
        self.seconds[kind] += time.perf_counter() - start
        self.texts[kind] += len(texts)
        return np.asarray(out)

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._timed("document", self.inner.encode_documents, texts)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._timed("query", self.inner.encode_queries, texts)


def load_chroma(max_docs: int | None, max_chars: int | None) -> tuple[list[Any], Any]:
    import pandas as pd

    from workbench.corpus import Document
    from workbench.golden import Evidence, GoldenItem, GoldenSet
    from workbench.text import nfc

    paths = sorted(CHROMA.glob("corpora/*.md"), key=lambda p: (p.stat().st_size, p.name))
    paths = paths[:max_docs] if max_docs else paths
    docs = []
    for p in sorted(paths):
        text = nfc(p.read_text(encoding="utf-8"))
        docs.append(Document(p.stem, text[:max_chars] if max_chars else text, p.stem))
    by_id = {d.id: d for d in docs}
    items = []
    questions = pd.read_csv(CHROMA / "questions_df.csv")
    for i, row in enumerate(questions.itertuples()):
        doc = by_id.get(str(row.corpus_id))
        refs = json.loads(str(row.references))
        if doc is None or not refs or any(r["end_index"] > len(doc.text) for r in refs):
            continue
        evidence = tuple(Evidence(doc.id, r["start_index"], r["end_index"],
                                  doc.text[r["start_index"]:r["end_index"]]) for r in refs)
        items.append(GoldenItem(f"c{i:04d}", nfc(str(row.question)), evidence=evidence,
                                category=doc.id, source="synthetic"))
    return docs, GoldenSet(items)


def overlap_value(text: str) -> int | str:
    return text if text.endswith("%") else int(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-docs", type=int, default=None, help="keep the N smallest documents")
    ap.add_argument("--max-chars", type=int, default=None, help="truncate each document")
    ap.add_argument("--sizes", default="200,400,800", help="chunk sizes in characters")
    ap.add_argument("--overlaps", default="0,15%,30%", help="overlaps (integers or N%%)")
    ap.add_argument("--ks", default="5", help="values of k, e.g. 3,5,10")
    ap.add_argument("--retrievers", default="dense", help="dense and/or hybrid")
    ap.add_argument("--threads", type=int, default=1, help="torch threads for MiniLM")
    args = ap.parse_args()
    if not CHROMA.is_dir():
        raise SystemExit(f"{CHROMA} not found: clone ../shared beside the repository")

    from workbench.chunking import chunk_corpus, parse_chunker
    from workbench.retrieval.encoders import get_encoder
    from workbench.sweep import run_sweep

    docs, golden = load_chroma(args.max_docs, args.max_chars)
    sizes = [int(s) for s in args.sizes.split(",")]
    overlaps = [overlap_value(o.strip()) for o in args.overlaps.split(",")]
    chars = sum(len(d.text) for d in docs)
    print(f"corpus: {len(docs)} documents, {chars:,} characters; {len(golden)} questions")
    encoder = TimedEncoder(get_encoder("minilm", threads=args.threads))
    encoder.inner.model  # load before timing  # noqa: B018
    grid = {"chunker": "fixed", "size": sizes, "overlap": overlaps, "header": [False, True],
            "retriever": args.retrievers.split(","), "encoder": [encoder],
            "k": [int(k) for k in args.ks.split(",")]}

    with tempfile.TemporaryDirectory() as cache:
        start = time.perf_counter()
        result = run_sweep(grid, golden, docs, metrics=["recall@k", "mrr@k"], cache=cache,
                       progress=False)
        wall = time.perf_counter() - start
        start = time.perf_counter()
        warm = run_sweep(grid, golden, docs, metrics=["recall@k", "mrr@k"], cache=cache,
                     progress=False)
        warm_wall = time.perf_counter() - start

    unique: set[str] = set()
    for spec in result.config_table["spec"]:
        unique.update(c.embed_text for c in chunk_corpus(parse_chunker(spec), docs))
    configs = len(result.config_table)
    chunkings = result.config_table["spec"].nunique()
    per_doc = encoder.seconds["document"] / max(encoder.texts["document"], 1)
    per_query = encoder.seconds["query"] / max(encoder.texts["query"], 1)
    embed_seconds = encoder.seconds["document"] + encoder.seconds["query"]
    other = wall - embed_seconds

    def naive(table: Any) -> tuple[int, int, float]:
        n_docs, n_q = int(table["chunks"].sum()), len(table) * len(golden)
        return n_docs, n_q, other + n_docs * per_doc + n_q * per_query

    first = result.config_table.drop_duplicates("spec")
    print(f"grid: {configs} configurations over {chunkings} chunkings ({len(sizes)} sizes x "
          f"{len(overlaps)} overlaps x header on/off) x retrievers {args.retrievers} x k "
          f"{args.ks}; MiniLM, {args.threads} torch thread(s)")
    print(f"measured embedding speed    : {1 / per_doc:.1f} chunks/s, "
          f"{1 / per_query if per_query else float('nan'):.1f} questions/s")
    print(f"texts embedded by the sweep : {result.embedded:,} chunk texts "
          f"(+ {encoder.texts['query']} questions, once)")
    print(f"floor (distinct embed_texts): {len(unique):,}")
    print(f"sweep wall time (cold cache): {wall:.1f} s, of which embedding {embed_seconds:.1f} s")
    print(f"sweep wall time (warm cache): {warm_wall:.1f} s, embedded {warm.embedded}")
    views = [("one config per chunking", first)]
    if len(first) < configs:
        views.append(("every configuration", result.config_table))
    for label, table in views:
        n_docs, n_q, seconds = naive(table)
        print(f"naive loop, {label:<23}: {n_docs:,} chunk texts + {n_q:,} questions embedded "
              f"({n_docs / max(result.embedded, 1):.2f}x the sweep), estimated {seconds:.1f} s "
              f"= {seconds / wall:.2f}x the cold sweep, {seconds / warm_wall:.0f}x the warm one")
    best = result.best("recall@k")
    row = result.leaderboard("recall@k").loc[best]
    print(f"best recall@k: {best}: {row['mean']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}]"
          f", n={int(row['n'])}")


if __name__ == "__main__":
    main()
