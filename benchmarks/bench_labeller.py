"""Labeller: how good its proposed answers are, how fast it searches and saves, how often it
warns of "one fact stated twice" wrongly.

1. Proposals on the handbook golden set (answerable items): the share whose proposed span
   (:func:`~workbench.widgets.labeller.propose_span` over the BM25 + dense hits) overlaps,
   contains or equals a gold evidence span, ranked by term overlap and by the dense
   encoder's cosine (the encoder the labeller picks for the corpus: e5 for the handbook).
2. Search latency at 1,000, 10,000 and 100,000 chunks (the handbook's chunks repeated over
   renamed copies of its documents; dense vectors are MiniLM's for each distinct text, and
   search time does not depend on which vectors they are): BM25 and dense side by side, and
   the widget's whole search (both panes, the proposal, the document). Targets (issue 33):
   p95 < 100 ms at 10k, < 300 ms at 100k. Start-up (issue 36): the first session (BM25
   built, every document's values read for the conflict warning), a second one on the same
   chunks (both reused), and a first one given the BM25 the user built for evaluation.
3. First search of a session on the handbook: cold (empty embedding cache) and warm (the
   cache the cold run filled); the encoder is loaded before either.
4. Save -> line on disk (validate, lock, re-read, atomic write), target < 50 ms.
5. Conflict warnings: every sentence stating a value is selected; a warning is true when its
   two documents are versions of one policy (``superseded_by``), false otherwise. On the
   handbook and on corpora it has never seen (chroma_chunking_evaluation, when present).

Run: PYTHONPATH=$PWD HF_HUB_OFFLINE=1 python benchmarks/bench_labeller.py
[--sizes 1000,10000,100000] [--parts conflicts,proposals,first,latency]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from workbench.chunking import RecursiveChunker, chunk_corpus, sentence_spans
from workbench.corpus import UNRESTRICTED, Corpus, Document, load_folder
from workbench.golden import GoldenSet
from workbench.golden.labelling import FactIndex, span_warnings
from workbench.retrieval import BM25Retriever, DenseRetriever, EmbeddingCache, get_encoder
from workbench.widgets.labeller import PROPOSE_FROM, Labeller, propose_span

ROOT = Path(__file__).resolve().parents[1]
HANDBOOK = ROOT / "data" / "handbook"
UNSEEN = ROOT.parent / "shared" / "datasets" / "chroma_chunking_evaluation" / "corpora"
QUERIES = ["how many days to submit travel receipts", "password length", "parental leave weeks",
           "refund to my card", "webhook retries", "ship to Iceland", "boots worn outside",
           "年假结转", "nghỉ phép bao nhiêu ngày", "API rate limit per minute"] * 5


def pct(xs: list[float], q: float) -> float:
    return float(np.percentile(xs, q)) * 1000


def proposals(corpus: Corpus) -> None:
    golden = GoldenSet.load(HANDBOOK / "golden.jsonl")
    with tempfile.TemporaryDirectory() as cache_dir:
        lab = Labeller(corpus, ["warm up"], Path(cache_dir) / "g.jsonl",
                       cache=EmbeddingCache(cache_dir), user_groups=UNRESTRICTED)
        items = [i for i in golden.answerable if i.evidence]
        for name, encoder in (("term overlap", None), ("dense encoder cosine", lab._encoder)):
            over = contain = exact = 0
            for item in items:
                lab._search(item.question)
                hits = [h for pair in zip(lab.bm25_hits, lab.dense_hits, strict=False)
                        for h in pair]
                hits += lab.bm25_hits[len(hits) // 2:] + lab.dense_hits[len(hits) // 2:]
                got = propose_span(item.question, hits if encoder is None else
                                   hits[:PROPOSE_FROM], corpus, encoder=encoder)
                if got is None:
                    continue
                d, a, b = got
                gold = [e for e in item.evidence if e.doc_id == d]
                over += any(min(b, e.end) > max(a, e.start) for e in gold)
                contain += any(a <= e.start and e.end <= b for e in gold)
                exact += any((a, b) == (e.start, e.end) for e in gold)
            n = len(items)
            print(f"proposal by {name}: on the gold evidence {over / n:.0%}, contains it "
                  f"{contain / n:.0%}, equals it {exact / n:.0%} (n={n})")


def latency(base: Corpus, size: int, encoder: object) -> None:
    per_copy = len(chunk_corpus(RecursiveChunker(), base))
    copies = -(-size // per_copy)
    docs = [replace(d, id=f"{d.id}~{n}") for n in range(copies) for d in base.documents]
    chunks = chunk_corpus(RecursiveChunker(), Corpus(docs))[:size]
    keep = {c.doc_id for c in chunks}
    corpus = Corpus(d for d in docs if d.id in keep)
    texts = sorted({c.embed_text for c in chunks})
    by_text = dict(zip(texts, encoder.encode_documents(texts), strict=True))  # type: ignore[attr-defined]
    dense = DenseRetriever.from_vectors([c.id for c in chunks],
                                        np.stack([by_text[c.embed_text] for c in chunks]),
                                        encoder=encoder, index="exact")  # type: ignore[arg-type]
    folder = Path(tempfile.mkdtemp())
    questions = [{"qid": f"b{i:03d}", "question": q} for i, q in enumerate(QUERIES)]
    # a first session given the BM25 the user built for evaluation (over renamed documents:
    # nothing of this process's is reused, the values are read), a first session that builds
    # BM25 and reads the values, and a second one on the same chunks that reuses both
    renamed = Corpus(replace(d, id=f"{d.id}^") for d in corpus.documents)
    renamed_chunks = chunk_corpus(RecursiveChunker(), renamed)[:size]
    runs = [(renamed, renamed_chunks, BM25Retriever(renamed_chunks), False),
            (corpus, chunks, None, dense), (corpus, chunks, None, dense)]
    starts = []
    for n, (docs_of, chunks_of, retriever, dense_of) in enumerate(runs):
        t = time.perf_counter()
        lab = Labeller(docs_of, questions, folder / f"golden{n}.jsonl", chunks=chunks_of,
                       dense=dense_of, cache=EmbeddingCache(folder / "cache"),
                       user_groups=UNRESTRICTED, retriever=retriever)
        starts.append(time.perf_counter() - t)
    print(f"{len(chunks):>7,} chunks  start-up {starts[1]:.2f} s (BM25 built), again on the "
          f"same chunks {starts[2]:.2f} s (reused); given the user's BM25 {starts[0]:.2f} s")
    bm25_t, dense_t, both_t = [], [], []
    for q in QUERIES:
        t = time.perf_counter()
        lab.bm25.search(q, 5)
        bm25_t.append(time.perf_counter() - t)
        t = time.perf_counter()
        dense.search(q, 5)
        dense_t.append(time.perf_counter() - t)
        t = time.perf_counter()
        lab.search(q)
        both_t.append(time.perf_counter() - t)
    print(f"{len(chunks):>7,} chunks  BM25 p50 {pct(bm25_t, 50):5.1f} p95 {pct(bm25_t, 95):5.1f}"
          f" ms | dense p50 {pct(dense_t, 50):5.1f} p95 {pct(dense_t, 95):5.1f} ms | widget "
          f"search p50 {pct(both_t, 50):5.1f} p95 {pct(both_t, 95):5.1f} ms")
    if size == 10_000:
        save_latency(lab, corpus, questions)


def save_latency(lab: Labeller, corpus: Corpus, questions: list[dict]) -> None:
    doc = corpus.documents[0]
    write_t, save_t = [], []
    for n, q in enumerate(questions):
        lab.next_question(q["qid"])
        lab.select(0, min(80, len(doc.text)), doc.id)
        t = time.perf_counter()
        if n % 2:
            lab.save()                      # the widget: write, then open the next question
            save_t.append(time.perf_counter() - t)
        else:
            lab.session.save(q["qid"], [(doc.id, 0, min(80, len(doc.text)))])
            write_t.append(time.perf_counter() - t)
        assert q["qid"] in lab.session.labelled, lab.status
    n = len(lab.session.path.read_text(encoding="utf-8").splitlines())
    print(f"save -> line on disk p95 {pct(write_t, 95):.1f} ms (validate, lock, re-read, "
          f"atomic write; target < 50); the widget's save with opening the next question "
          f"(search, proposal) p95 {pct(save_t, 95):.1f} ms; {n} saves")


def first_search(corpus: Corpus) -> None:
    with tempfile.TemporaryDirectory() as d:
        for state in ("cold", "warm"):
            t = time.perf_counter()
            lab = Labeller(corpus, ["how long do refunds take"], Path(d) / f"{state}.jsonl",
                           cache=EmbeddingCache(Path(d) / "cache"), user_groups=UNRESTRICTED)
            assert lab.bm25_hits and lab.selection
            print(f"first search, {state} embedding cache: {time.perf_counter() - t:.1f} s "
                  f"(open the labeller on {len(lab.chunks)} chunks, search, propose)")


def conflicts(name: str, corpus: Corpus) -> None:
    index = FactIndex(corpus, UNRESTRICTED)
    versions = {frozenset((d.id, str(d.metadata.get("superseded_by"))))
                for d in corpus.documents if d.metadata.get("superseded_by")}
    checked = warned = false = 0
    examples: list[str] = []
    for doc in corpus.documents:
        starts = {f.sentence for f in index.of(doc.id)}
        for a, b in sentence_spans(doc.text):
            if not any(a <= s < b for s in starts):
                continue
            checked += 1
            ws = [w for w in span_warnings(corpus, [(doc.id, a, b)], UNRESTRICTED, index=index)
                  if "stated twice" in w]
            if not ws:
                continue
            warned += 1
            other = {w.split("'")[1] for w in ws}
            if not all(frozenset((doc.id, o)) in versions for o in other):
                false += 1
                examples.append(f"{doc.id}: {doc.text[a:b][:70]!r} -> {ws[0][:110]}")
    print(f"{name}: {checked} sentences stating a value, {warned} warned, {false} of them "
          f"falsely: false-warning rate {false / max(checked, 1):.1%} of sentences")
    for e in examples[:3]:
        print("   e.g.", e)


def unseen() -> Corpus | None:
    if not UNSEEN.exists():
        return None
    return Corpus(Document(p.stem, p.read_text(encoding="utf-8")) for p in sorted(
        UNSEEN.glob("*.md")))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--parts", default="conflicts,proposals,first,latency")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    parts = args.parts.split(",")
    corpus = Corpus(load_folder(HANDBOOK / "docs").values())
    if "conflicts" in parts:
        conflicts("handbook", corpus)
        other = unseen()
        if other is not None:
            conflicts("chroma_chunking_evaluation (unseen)", other)
    if "proposals" in parts:
        proposals(corpus)
    if "first" in parts:
        first_search(corpus)
    if "latency" in parts:
        encoder = get_encoder("minilm")
        for size in sizes:
            latency(corpus, size, encoder)


if __name__ == "__main__":
    main()
