"""Our BM25 on Chinese against an independent character-bigram BM25 (no assertions).

    python benchmarks/bench_bm25_chinese.py [--file cmrc2018/cmrc2018_dev.json] [-k 5]

Corpus: every paragraph of CMRC 2018 dev (``../shared/datasets``) as one document. Questions:
every question with an answer span in its paragraph, which is the one relevant document.
Three retrievers rank the paragraphs, each through bm25s with the same BM25 (Lucene
variant, k1=1.5, b=0.75), so only the tokenisation differs:

* ``workbench``: our :class:`BM25Retriever` with its default tokeniser, over the
  ``document`` chunking (one chunk per paragraph);
* ``char-bigram``: the reference, built here directly with bm25s and nothing of ours:
  lower-cased runs of letters and digits, each run cut into overlapping character bigrams
  (a one-character run stays a unigram), ranked by ``bm25s.BM25.retrieve``;
* ``workbench, no zh stop``: ours with the English stop list only (the Chinese question
  characters kept), to show what the script fix and the stop list each bring;
* ``workbench pre-fix``: our BM25 with the tokeniser before issue 14, where a Han run that
  follows a digit or a Latin letter became one giant token (for the record).

MRR@k and nDCG@k (binary relevance, trec_eval conventions) come from
:func:`workbench.metrics.score_queries` on the same qrels for all three (each run scored
once: the means and the per-question reciprocal ranks); the paired sign test
(:func:`workbench.stats.sign_test` on the wins / losses per question on reciprocal
rank) says whether a difference is beyond noise.
Exits 1 when our BM25 scores below the reference on either metric.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

import bm25s

from workbench.chunking import DocumentChunker, chunk_corpus
from workbench.golden import load_squad
from workbench.metrics import score_queries
from workbench.retrieval import BM25Retriever
from workbench.retrieval.bm25 import ENGLISH_STOPWORDS, tokenize
from workbench.stats import sign_test
from workbench.text import CJK, nfc

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ROOT.parent / "shared" / "datasets"
K1, B = 1.5, 0.75


def char_bigrams(text: str) -> list[str]:
    """The reference tokeniser: character bigrams within each run of letters and digits."""
    out: list[str] = []
    for run in re.findall(r"[^\W_]+", text.lower()):
        out.extend([run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)])
    return out


_PRE_FIX = re.compile(rf"[{CJK}]+|[^\W_]+(?:[-_.][^\W_]+)*")


def pre_fix_tokenize(text: str) -> list[str]:
    """The tokeniser before issue 14 (for the record): ``[^\\W_]+`` also matched Han."""
    out: list[str] = []
    for token in (m.group(0) for m in _PRE_FIX.finditer(nfc(text).lower())):
        if re.fullmatch(rf"[{CJK}]+", token):
            out.extend(token)
            out.extend(token[i : i + 2] for i in range(len(token) - 1))
        elif token not in ENGLISH_STOPWORDS:
            out.append(token)
            parts = re.split(r"[-_.]", token)
            if len(parts) > 1:
                out.extend(p for p in parts if p and p not in ENGLISH_STOPWORDS)
    return out


def reference_run(doc_ids: list[str], doc_texts: list[str], questions: dict[str, str],
                  k: int) -> dict[str, list[str]]:
    """The independent char-bigram BM25: bm25s end to end (its own vocabulary and retrieve)."""
    model = bm25s.BM25(k1=K1, b=B, method="lucene")
    model.index([char_bigrams(t) for t in doc_texts], show_progress=False)
    known = model.vocab_dict  # bm25s refuses query tokens that are not in its vocabulary
    tokens = {q: [t for t in char_bigrams(text) if t in known] for q, text in questions.items()}
    qids = [q for q, toks in tokens.items() if toks]
    found, _ = model.retrieve([tokens[q] for q in qids], k=k, show_progress=False)
    run: dict[str, list[str]] = {q: [] for q in questions}  # no known token: nothing found
    run.update({q: [doc_ids[int(i)] for i in row] for q, row in zip(qids, found, strict=True)})
    return run


def workbench_run(chunks: list, questions: dict[str, str], k: int,
                  tokenizer: Callable[[str], list[str]] | None = None) -> dict[str, list[str]]:
    retriever = (BM25Retriever(chunks) if tokenizer is None
                 else BM25Retriever(chunks, tokenizer=tokenizer))
    doc_of = {c.id: c.doc_id for c in chunks}
    return {q: [doc_of[h.chunk_id] for h in retriever.search(text, k)]
            for q, text in questions.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", default="cmrc2018/cmrc2018_dev.json",
                        help="SQuAD-style JSON under ../shared/datasets")
    parser.add_argument("-k", type=int, default=5)
    args = parser.parse_args()
    path = DATASETS / args.file
    if not path.exists():
        print(f"skipped: {path} not found (the shared datasets live beside the repository)")
        return 0
    corpus, golden = load_squad(path)
    chunks = chunk_corpus(DocumentChunker(), corpus.documents)
    items = [i for i in golden if i.answerable and i.evidence]
    questions = {i.qid: i.question for i in items}
    qrels = {i.qid: {i.evidence[0].doc_id: 1} for i in items}
    k = args.k
    names = [f"mrr@{k}", f"ndcg@{k}", f"hit_rate@{k}"]
    print(f"{path.name}: {len(corpus)} paragraphs, {len(items)} questions; BM25 Lucene "
          f"k1={K1} b={B}; relevance: the answer's paragraph (document level)\n")

    runs: dict[str, dict[str, list[str]]] = {}
    seconds: dict[str, float] = {}
    for name, build in (
        ("workbench", lambda: workbench_run(chunks, questions, k)),
        ("char-bigram (bm25s)", lambda: reference_run(
            [d.id for d in corpus.documents], [d.text for d in corpus.documents], questions, k)),
        ("workbench, no zh stop", lambda: workbench_run(
            chunks, questions, k, lambda t: tokenize(t, ENGLISH_STOPWORDS))),
        ("workbench pre-fix", lambda: workbench_run(chunks, questions, k, pre_fix_tokenize)),
    ):
        started = time.perf_counter()
        runs[name] = build()
        seconds[name] = time.perf_counter() - started

    print(f"{'retriever':<22}{names[0]:>9}{names[1]:>9}{names[2]:>13}{'seconds':>9}")
    scores = {name: score_queries(qrels, run, names) for name, run in runs.items()}
    means = {name: s.mean() for name, s in scores.items()}
    for name, m in means.items():
        print(f"{name:<22}{m[names[0]]:>9.4f}{m[names[1]]:>9.4f}{m[names[2]]:>13.4f}"
              f"{seconds[name]:>9.1f}")

    ours = scores["workbench"].values[names[0]]
    ref = scores["char-bigram (bm25s)"].values[names[0]]
    wins, losses = int((ours > ref).sum()), int((ours < ref).sum())
    p = sign_test(wins, losses)
    print(f"\nworkbench vs char-bigram, reciprocal rank per question: {wins} wins, {losses} "
          f"losses, {len(ours) - wins - losses} ties (two-sided sign test p={p:.3g})")
    below = [n for n in names[:2] if means["workbench"][n] < means["char-bigram (bm25s)"][n]]
    if below:
        print(f"workbench is below the reference on {', '.join(below)}")
        return 1
    print("workbench is at or above the reference on both metrics")
    return 0


if __name__ == "__main__":
    sys.exit(main())
