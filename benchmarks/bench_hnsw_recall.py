"""HNSW recall@10 against exact search on real embeddings, at DenseRetriever's default
settings (M=16, ef_construction=200, ef_search=max(64, 2k)): what ``index="auto"`` would
measure with above 100,000 chunks, and what ``index_check`` reports.

    PYTHONPATH=. python benchmarks/bench_hnsw_recall.py [--chunks 20000] [--queries 500]

Corpora, embedded with the default encoder (MiniLM): the handbook (its own golden
questions) and a larger one of real text, XQuAD (en) paragraphs cut into 300-character
chunks and copied under new ids up to ``--chunks`` (copies are near duplicates, which is
harder for HNSW than distinct text), searched with XQuAD's questions. Also random unit
vectors of the same size and dimension, as the issue's reference point.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from workbench.chunking import FixedChunker, chunk_corpus
from workbench.corpus import Chunk, load_folder
from workbench.golden import GoldenSet
from workbench.golden.datasets import load_squad
from workbench.retrieval.dense import DenseRetriever
from workbench.retrieval.encoders import get_encoder

ROOT = Path(__file__).resolve().parents[1]
DATASETS = Path(os.environ.get("WORKBENCH_DATASETS", ROOT.parent / "shared" / "datasets"))


def recall(name: str, ids: list[str], vectors: np.ndarray, queries: np.ndarray) -> None:
    t = time.perf_counter()
    hnsw = DenseRetriever.from_vectors(ids, vectors, index="hnsw")
    built = time.perf_counter() - t
    print(f"{name:<44}{len(ids):>9,}{len(queries):>9}{hnsw.hnsw_recall(queries, 10):>12.4f}"
          f"{built:>9.1f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=20_000)
    ap.add_argument("--queries", type=int, default=500)
    args = ap.parse_args()
    encoder = get_encoder("minilm")
    print(f"{'corpus':<44}{'chunks':>9}{'queries':>9}{'recall@10':>12}{'build s':>9}")

    corpus = load_folder(ROOT / "data" / "handbook" / "docs")
    chunks = chunk_corpus(FixedChunker(300, 50), corpus.documents)
    golden = GoldenSet.load(ROOT / "data" / "handbook" / "golden.jsonl")
    vecs = encoder.encode_documents([c.embed_text for c in chunks])
    recall("handbook (its golden questions)", [c.id for c in chunks], vecs,
           encoder.encode_queries([i.question for i in golden]))

    squad, questions = load_squad(DATASETS / "xquad" / "xquad.en.json")
    base = chunk_corpus(FixedChunker(300, 50), squad.documents)
    texts = [c.embed_text for c in base]
    t = time.perf_counter()
    base_vecs = encoder.encode_documents(texts)
    print(f"  (embedded {len(texts):,} XQuAD chunks in {time.perf_counter() - t:.0f}s)")
    copies = args.chunks // len(base) + 1
    rng = np.random.default_rng(0)
    # copies: the same texts, each vector nudged as a re-chunked or edited copy would be
    vecs = np.concatenate([base_vecs] + [
        base_vecs + 0.05 * rng.standard_normal(base_vecs.shape).astype(np.float32)
        for _ in range(copies - 1)])[: args.chunks]
    ids = [f"{c.id}~{i}" for i in range(copies) for c in base][: args.chunks]
    picked = [i.question for i in questions][: args.queries]
    qvecs = encoder.encode_queries(picked)
    recall(f"XQuAD en x{copies} (nudged copies)", ids, vecs, qvecs)
    distinct = [Chunk(c.id, c.doc_id, c.start, c.end, text=c.text) for c in base]
    recall("XQuAD en, distinct chunks only", [c.id for c in distinct], base_vecs, qvecs)
    rand = rng.standard_normal(vecs.shape).astype(np.float32)
    recall("random unit vectors (the issue's reference)", ids, rand,
           rng.standard_normal((len(picked), vecs.shape[1])).astype(np.float32))


if __name__ == "__main__":
    main()
