"""Labeller latency at 10,000 chunks: BM25 search p95, warm dense search p95 (MiniLM query
encoding + exact numpy search), and save -> line on disk (validate, lock, re-read, atomic
write) against a plain unlocked append as the peer. Targets (issue 20): < 100 ms, < 100 ms,
< 50 ms.

Run: PYTHONPATH=$PWD HF_HUB_OFFLINE=1 python benchmarks/bench_labeller.py
The 10k chunks are the handbook's chunks repeated over renamed copies of its documents; dense
vectors are MiniLM's for each distinct chunk text (embedding 10k chunks takes ~10 minutes on
2 cores, and search time does not depend on which vectors they are).
"""

from __future__ import annotations

import json
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from workbench.chunking import RecursiveChunker, chunk_corpus
from workbench.corpus import UNRESTRICTED, Corpus, load_folder
from workbench.retrieval import DenseRetriever, get_encoder
from workbench.widgets.labeller import Labeller

ROOT = Path(__file__).resolve().parents[1]
QUERIES = ["how many days to submit travel receipts", "password length", "parental leave weeks",
           "refund to my card", "webhook retries", "ship to Iceland", "boots worn outside",
           "年假结转", "nghỉ phép bao nhiêu ngày", "API rate limit per minute"] * 5


def p95(xs: list[float]) -> float:
    return float(np.percentile(xs, 95)) * 1000


def main() -> None:
    base = load_folder(ROOT / "data" / "handbook" / "docs")
    per_copy = len(chunk_corpus(RecursiveChunker(), base))
    copies = -(-10_000 // per_copy)
    docs = [replace(d, id=f"{d.id}~{n}") for n in range(copies) for d in base.values()]
    corpus = Corpus(docs)
    chunks = chunk_corpus(RecursiveChunker(), corpus)[:10_000]
    keep = {c.doc_id for c in chunks}
    corpus = Corpus(d for d in docs if d.id in keep)
    encoder = get_encoder("minilm")
    texts = sorted({c.embed_text for c in chunks})
    t0 = time.perf_counter()
    by_text = dict(zip(texts, encoder.encode_documents(texts), strict=True))
    print(f"{len(chunks):,} chunks, {len(texts)} distinct texts embedded in "
          f"{time.perf_counter() - t0:.1f} s")
    dense = DenseRetriever.from_vectors([c.id for c in chunks],
                                        np.stack([by_text[c.embed_text] for c in chunks]),
                                        encoder=encoder, index="exact")
    folder = Path(tempfile.mkdtemp())
    questions = [{"qid": f"b{i:03d}", "question": q} for i, q in enumerate(QUERIES)]
    lab = Labeller(corpus, questions, folder / "golden.jsonl", chunks=chunks, dense=dense,
                   user_groups=UNRESTRICTED)
    dense.search(QUERIES[0], 5)  # warm
    bm25_t, dense_t, both_t = [], [], []
    for q in QUERIES:
        t = time.perf_counter()
        lab.bm25.search(q, 5)
        bm25_t.append(time.perf_counter() - t)
        t = time.perf_counter()
        dense.search(q, 5)
        dense_t.append(time.perf_counter() - t)
        t = time.perf_counter()
        lab.search(q)  # what a search in the widget costs: both panes + the document
        both_t.append(time.perf_counter() - t)
    print(f"BM25 search p95 {p95(bm25_t):.1f} ms (target < 100)")
    print(f"warm dense search p95 {p95(dense_t):.1f} ms (target < 100)")
    print(f"widget search (BM25 + dense + document) p95 {p95(both_t):.1f} ms")

    doc = corpus.documents[0]
    save_t, peer_t = [], []
    peer = folder / "peer.jsonl"
    for q in questions:
        lab.next_question(q["qid"])
        lab.show_document(doc.id)
        lab.select(0, min(80, len(doc.text)))
        t = time.perf_counter()
        lab.save()
        save_t.append(time.perf_counter() - t)
        assert q["qid"] in lab.session.labelled, lab.status
        line = json.dumps(lab.session.labelled[q["qid"]].to_json(), ensure_ascii=False) + "\n"
        t = time.perf_counter()
        with peer.open("a", encoding="utf-8") as f:
            f.write(line)
        peer_t.append(time.perf_counter() - t)
    n = len((folder / "golden.jsonl").read_text(encoding="utf-8").splitlines())
    assert n == len(questions)
    print(f"save -> line on disk p95 {p95(save_t):.1f} ms over {n} saves (target < 50); "
          f"plain unlocked append p95 {p95(peer_t):.2f} ms; ratio "
          f"{p95(save_t) / max(p95(peer_t), 1e-6):.0f}x (validation, lock, re-read, atomic write)")


if __name__ == "__main__":
    main()
