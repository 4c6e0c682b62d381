"""Each content-type chunker against fixed and recursive on its own content type, and the
model-written chunk context against the static header.

    python benchmarks/bench_content_chunkers.py [--size 300] [-k 5] [--dense]

For data/content_types/{tickets,glossary,code} (the corpora and golden sets of the README
there) it prints, per chunker: evidence recall@k with its 95% interval (BM25; MiniLM dense
with ``--dense``), split rate (evidence spans no single chunk holds whole), index cost
(chunks, index tokens), and the paired verdict of the content chunker against recursive.
Then the chunk-context rows: contextualize (ExtractiveReader: an offline stand-in for a
model, so its cost is real but its sentences are extracts) vs the static header, with
calls, tokens, seconds and recall@k on the tickets.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from workbench.chunking import chunk_corpus, diagnose_chunking, parse_chunker
from workbench.corpus import Corpus, Document, load_folder
from workbench.corpus.conversations import load_conversations
from workbench.evaluation import compare_paired, evaluate, mean_interval
from workbench.generation import ExtractiveReader
from workbench.generation.chunk_context import ContextCost, contextualize
from workbench.golden import GoldenSet
from workbench.retrieval import BM25Retriever, make_retriever

ROOT = Path(__file__).resolve().parents[1] / "data" / "content_types"


def corpora() -> dict[str, tuple[Corpus, GoldenSet, str]]:
    code = (ROOT / "code" / "billing.py").read_text(encoding="utf-8")
    return {
        "tickets": (load_conversations(ROOT / "tickets" / "tickets.jsonl"),
                    GoldenSet.load(ROOT / "tickets" / "golden.jsonl"), "conversation"),
        "glossary": (load_folder(ROOT / "glossary"), GoldenSet.load(ROOT / "glossary" /
                                                                    "golden.jsonl"), "glossary"),
        "code": (Corpus([Document("billing.py", code, "billing.py", {"path": "billing.py"})]),
                 GoldenSet.load(ROOT / "code" / "golden.jsonl"), "code"),
    }


def per_question(retriever: object, golden: GoldenSet, chunks: list, k: int) -> dict[str, float]:
    frame = evaluate(retriever, golden, chunks, metrics=[f"recall@{k}"], k=k).frame  # type: ignore[arg-type]
    return dict(zip(frame["qid"], frame["value"], strict=True))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=300)
    ap.add_argument("-k", type=int, default=5)
    ap.add_argument("--dense", action="store_true")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    k, size = args.k, args.size
    kinds = ["bm25", "dense"] if args.dense else ["bm25"]
    print(f"{'content':<9} {'retriever':<6} {'chunker':<42} {'recall@' + str(k):>8} "
          f"{'95% interval':>14} {'split':>6} {'chunks':>6} {'tokens':>7}  verdict vs recursive")
    for name, (corpus, golden, kind) in corpora().items():
        golden = golden.validate(corpus)
        spans = [e for item in golden.items for e in item.evidence]
        specs = [f"fixed:size={size},overlap={size // 6}", f"recursive:size={size}",
                 f"{kind}:size={size}"]
        for retriever_kind in kinds:
            scores: dict[str, dict[str, float]] = {}
            for spec in specs:
                chunks = chunk_corpus(parse_chunker(spec), corpus)
                retriever = make_retriever(retriever_kind, chunks, encoder="minilm",
                                           progress=False)
                scores[spec] = per_question(retriever, golden, chunks, k)
                diag = diagnose_chunking(spec, corpus, spans)
                mean = sum(scores[spec].values()) / len(scores[spec])
                lo, hi, _ = mean_interval(list(scores[spec].values()))
                verdict = ""
                if spec == specs[-1]:
                    cmp = compare_paired(scores[specs[1]], scores[spec])
                    verdict = f"{cmp.verdict} (p={cmp.p_value:.3f}, n={cmp.n})"
                print(f"{name:<9} {retriever_kind:<6} {spec:<42} {mean:>8.3f} "
                      f"[{lo:.2f}, {hi:.2f}]".ljust(82)
                      + f"{diag.split_rate:>6.2f} {diag.n_chunks:>6} {diag.index_tokens:>7}  "
                      f"{verdict}")
    corpus, golden, _ = corpora()["tickets"]
    golden = golden.validate(corpus)
    base = chunk_corpus(parse_chunker(f"recursive:size={size}"), corpus)
    header = chunk_corpus(parse_chunker(f"recursive:size={size},header=true"), corpus)
    with tempfile.TemporaryDirectory() as cache:
        model, cost = contextualize(base, corpus, ExtractiveReader(), cache=cache)
        _, again = contextualize(base, corpus, ExtractiveReader(), cache=cache)
    static = ContextCost.static_header(len(header))
    s_static = per_question(BM25Retriever(header), golden, header, k)
    s_model = per_question(BM25Retriever(model), golden, model, k)
    cmp = compare_paired(s_static, s_model)
    print(f"\nchunk context on tickets (recursive:size={size}, BM25, recall@{k})")
    for label, c, s in (("static header", static, s_static), ("model-written", cost, s_model),
                        ("model-written, re-run", again, s_model)):
        print(f"  {label:<22} calls={c.calls:<3} cached={c.cached:<3} tokens={c.tokens:<6} "
              f"seconds={c.seconds:.3f}  recall={sum(s.values()) / len(s):.3f}")
    print(f"  paired verdict model-written vs static: {cmp.verdict} (p={cmp.p_value:.3f})")


if __name__ == "__main__":
    main()
