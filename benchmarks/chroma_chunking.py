"""Reproduce the all-MiniLM-L6-v2 rows of Chroma's chunking report with our chunkers.

    python benchmarks/chroma_chunking.py [--corpora chatlogs,state_of_the_union]
                                         [--max-questions 50] [--configs recursive-250-125]

Smith & Troynikov, "Evaluating Chunking Strategies for Retrieval" (Chroma, July 2024) chunk
five corpora, embed every chunk of all five into one collection, retrieve the top 5 chunks for
each of 472 synthetic questions and score the retrieved *character ranges* against the
reference excerpts. Here the excerpts are the questions' evidence spans and everything is
scored by ``workbench.evaluate``: their recall is our evidence metric ``coverage@k`` (one
definition for the reproduction and the headline evidence recall; it counts non-whitespace
characters, theirs every character), their precision, IoU and PrecisionΩ are
``span_precision@k``, ``span_iou@k`` and ``span_precision_omega``
(:mod:`workbench.metrics.spans` for the exact definitions). Their
chunkers are LangChain's ``RecursiveCharacterTextSplitter`` (separators ``\\n\\n``, ``\\n``,
``.``, ``?``, ``!``, space, "") and ``TokenTextSplitter``, both measured in cl100k tokens; ours
are ``recursive:...,unit=tokens,counter=cl100k`` and ``fixed:...,unit=tokens,counter=cl100k``.

Needs ``../shared/datasets/chroma_chunking_evaluation``. Embeddings go through the embedding
cache (``.workbench_cache/embeddings`` at the repository root), so a re-run only searches.
A full cold run embeds ~10k chunks of ~200 tokens with MiniLM on one thread (~15-25 min).
Published numbers assume all corpora and all questions: with ``--corpora`` (fewer
distractor chunks) or ``--max-questions`` the difference column is only indicative.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from workbench.chunking import chunk_corpus, parse_chunker
from workbench.corpus import Document
from workbench.evaluation import Run, evaluate
from workbench.golden import Evidence, GoldenItem, GoldenSet
from workbench.retrieval.cache import EmbeddingCache
from workbench.retrieval.dense import DenseRetriever
from workbench.retrieval.encoders import get_encoder
from workbench.text.tokens import get_counter

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "datasets" / "chroma_chunking_evaluation"
CACHE = ROOT / ".workbench_cache" / "embeddings"

# name -> (our spec, their chunker, size, overlap)
CONFIGS = {
    "recursive-250-125": ("recursive:size=250,overlap=125,unit=tokens,counter=cl100k",
                          "RecursiveCharacterTextSplitter", 250, 125),
    "fixed-250-125": ("fixed:size=250,overlap=125,unit=tokens,counter=cl100k",
                      "TokenTextSplitter", 250, 125),
    "recursive-250-0": ("recursive:size=250,overlap=0,unit=tokens,counter=cl100k",
                        "RecursiveCharacterTextSplitter", 250, 0),
    "fixed-250-0": ("fixed:size=250,overlap=0,unit=tokens,counter=cl100k",
                    "TokenTextSplitter", 250, 0),
    "recursive-200-0": ("recursive:size=200,overlap=0,unit=tokens,counter=cl100k",
                        "RecursiveCharacterTextSplitter", 200, 0),
    "fixed-200-0": ("fixed:size=200,overlap=0,unit=tokens,counter=cl100k",
                    "TokenTextSplitter", 200, 0),
}
METRICS = {"coverage@{k}": "recall", "span_precision@{k}": "precision",
           "span_precision_omega": "precision_omega", "span_iou@{k}": "iou"}

NOTE = """\
Why ours differ from the published numbers (read before trusting any gap):
* Chunk boundaries. Our recursive chunker packs sections > paragraphs > sentences > words
  up to the budget with exact token counts; LangChain's splitter sums per-piece token
  counts (over-estimating the joined text), glues each separator ('.', '?', '!') to the
  *start* of the next piece and strips whitespace, so its chunks are smaller (the report's
  mean sizes are ~180/162/128 tokens; see our mean_tokens column). Smaller chunks raise
  precision and IoU. TokenTextSplitter windows are the same idea as ours, but they decode
  token windows and re-find the text (first occurrence), we slice exact offsets.
* Retrieval. Chroma searches an HNSW graph (search_ef=50, approximate) and used question
  embeddings frozen in its repository; we search exactly with fresh MiniLM embeddings
  (truncated at 256 word pieces, as theirs). Ties and near-ties at rank 5 flip a few
  questions; with n=472 and per-question std ~0.4, a recall gap under ~3.5 points
  (2 standard errors) is noise. Exact ties are common: the finance corpus repeats passages
  word for word, so copies score the same and only the tie rule (chunk id descending,
  trec_eval's) says which copy, at which offset, is returned. Chroma's graph picks another.
  With the recursive 250/0 chunks, 96 of 472 questions have a different top 5 under
  ascending ids, and recall rises from 76.2 to 76.8.
* Scoring is the same: we follow their code's definitions (union of covered reference
  text; retrieved lengths summed without a union; touching chunks count for PrecisionΩ).
  PrecisionΩ needs no retriever, so it checks chunking + scoring alone: our cl100k token
  windows reproduce the report's text-embedding-3-large TokenTextSplitter rows (800/400,
  400/200, 400/0: 4.7, 8.5, 12.7 vs 4.7, 8.4, 12.5; tests/metrics/test_span_metrics.py), yet sit
  1-2 points above its MiniLM-table TokenTextSplitter rows with the same windows. PrecisionΩ
  does not depend on the embedding model, so the MiniLM runs must have chunked slightly
  differently (undocumented): treat ~2 points as the floor of this reproduction.
"""


def load(corpora: list[str] | None, max_questions: int | None
         ) -> tuple[list[Document], pd.DataFrame]:
    if not DATA.is_dir():
        sys.exit(f"{DATA} not found: this benchmark needs ../shared/datasets beside the repo")
    docs = [Document(p.stem, p.read_text(encoding="utf-8"), p.stem)
            for p in sorted((DATA / "corpora").glob("*.md"))
            if corpora is None or p.stem in corpora]
    if corpora is not None:
        unknown = set(corpora) - {d.id for d in docs}
        if unknown:
            sys.exit(f"unknown corpora {sorted(unknown)}: choose from chatlogs, finance, "
                     "pubmed, state_of_the_union, wikitexts")
    questions = pd.read_csv(DATA / "questions_df.csv")
    questions = questions[questions["corpus_id"].isin([d.id for d in docs])]
    if max_questions is not None:
        questions = questions.head(max_questions)
    texts = {d.id: d.text for d in docs}
    for row in questions.itertuples():
        for ref in json.loads(str(row.references)):
            text = texts[str(row.corpus_id)]
            if text[ref["start_index"]:ref["end_index"]] != ref["content"]:
                sys.exit(f"reference offsets do not match {row.corpus_id}: data changed?")
    return docs, questions


def published(chunker: str, size: int, overlap: int) -> dict[str, float]:
    with (DATA / "published_results.csv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if (row["embedding_model"] == "all-MiniLM-L6-v2" and row["chunker"] == chunker
                    and int(row["chunk_size_tokens"]) == size
                    and int(row["overlap_tokens"]) == overlap):
                out = {m: float(row[f"{m}_mean"]) for m in METRICS.values()}
                out.update({f"{m}_std": float(row[f"{m}_std"]) for m in METRICS.values()})
                out["mean_tokens"] = float(row["mean_chunk_size_tokens"] or size)
                return out
    return {}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", help="comma-separated corpus ids (default: all five)")
    ap.add_argument("--max-questions", type=int, help="first N questions (default: all 472)")
    ap.add_argument("--configs", default=",".join(CONFIGS),
                    help=f"comma-separated subset of {', '.join(CONFIGS)}")
    ap.add_argument("-k", type=int, default=5, help="chunks retrieved per question (5)")
    ap.add_argument("--cache", default=str(CACHE), help="embedding cache folder")
    args = ap.parse_args()
    names = [c.strip() for c in args.configs.split(",") if c.strip()]
    bad = [n for n in names if n not in CONFIGS]
    if bad:
        sys.exit(f"unknown configs {bad}: choose from {', '.join(CONFIGS)}")
    corpora = args.corpora.split(",") if args.corpora else None
    docs, questions = load(corpora, args.max_questions)
    qids = [str(i) for i in questions.index]
    golden = GoldenSet([
        GoldenItem(q, str(row.question), category=str(row.corpus_id), source="synthetic",
                   evidence=tuple(Evidence(str(row.corpus_id), r["start_index"],
                                           r["end_index"], r["content"])
                                  for r in json.loads(str(row.references))))
        for q, row in zip(qids, questions.itertuples(), strict=True)])
    metrics = {m.format(k=args.k): theirs for m, theirs in METRICS.items()}
    print(f"{len(docs)} corpora, {sum(len(d.text) for d in docs):,} characters, "
          f"{len(questions)} questions, k={args.k}, all-MiniLM-L6-v2 (packaged), exact search")

    encoder = get_encoder("minilm")
    cache = EmbeddingCache(args.cache)
    cl100k = get_counter("cl100k")
    rows, per_corpus = [], []
    for name in names:
        spec, their_chunker, size, overlap = CONFIGS[name]
        started = time.perf_counter()
        chunks = chunk_corpus(parse_chunker(spec), docs)
        mean_tokens = float(np.mean([cl100k.count(c.text) for c in chunks]))
        dense = DenseRetriever(chunks, encoder=encoder, cache=cache, index="exact", name=name)
        embedded = cache.stats.embedded
        hits = dense.search_many(questions["question"].astype(str).tolist(), args.k)
        run = Run(name, dict(zip(qids, map(tuple, hits), strict=True)))
        ev = evaluate(run, golden, chunks, metrics=list(metrics), k=args.k)
        frame = ev.frame
        means = frame.groupby("metric")["value"].mean()
        stds = frame.groupby("metric")["value"].std(ddof=0)  # population std, as printed
        pub = published(their_chunker, size, overlap)
        row: dict[str, object] = {"config": name, "chunks": len(chunks),
                                  "mean_tokens": round(mean_tokens, 1),
                                  "pub_mean_tokens": pub.get("mean_tokens")}
        for ours, theirs in metrics.items():
            mine = 100 * means[ours]
            row[theirs] = f"{mine:.1f} ± {100 * stds[ours]:.1f}"
            if pub:
                row[f"pub_{theirs}"] = f"{pub[theirs]:.1f} ± {pub[theirs + '_std']:.1f}"
                row[f"Δ{theirs}"] = round(mine - pub[theirs], 1)
        row["seconds"] = round(time.perf_counter() - started, 1)
        row["embedded"] = embedded
        rows.append(row)
        by_corpus = ev.by("category").set_index(["category", "metric"])["mean"] * 100
        for corpus in sorted({c for c, _ in by_corpus.index}):
            per_corpus.append({"config": name, "corpus": corpus,
                               "recall": round(by_corpus[corpus, f"coverage@{args.k}"], 1),
                               "iou": round(by_corpus[corpus, f"span_iou@{args.k}"], 1)})
        print(f"  {name}: {len(chunks)} chunks ({embedded} embedded now), "
              f"{row['seconds']} s", flush=True)

    table = pd.DataFrame(rows).set_index("config")
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print("\nOurs vs published (percent, mean ± population std over questions; Δ = ours -"
              " published):")
        for group in (["chunks", "mean_tokens", "pub_mean_tokens", "seconds", "embedded"],
                      *[[m, f"pub_{m}", f"Δ{m}"] for m in METRICS.values()]):
            print(table[[c for c in group if c in table.columns]].to_string())
            print()
        print("Per corpus (ours, percent):")
        print(pd.DataFrame(per_corpus).pivot(index="corpus", columns="config")
              .round(1).to_string())
    if corpora is not None or args.max_questions is not None:
        print("\nNOTE: a subset was run; the published numbers are for all 5 corpora and 472 "
              "questions, so the Δ columns are indicative only.")
    print()
    print(NOTE)


if __name__ == "__main__":
    main()
