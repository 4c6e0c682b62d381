"""Each content-type chunker against fixed and recursive on its own content type and on the
rest of the handbook, and the model-written chunk context against the static header.

    python benchmarks/bench_content_chunkers.py [--size N] [-k 5] [--dense]

For data/content_types/{tickets,glossary,code} (the corpora and golden sets of the README
there; code holds billing.py and seats.ts, the TypeScript through tree-sitter) it prints one
table per content type: per chunker (fixed, recursive, the content chunker, semantic),
evidence recall@k with its 95% interval on the content type and on the handbook
(data/handbook: the rest of the corpus, where the content chunker should not be needed),
split rate (evidence spans no single chunk holds whole) on each, index cost (chunks, index
tokens) of the content type, and the paired verdict against recursive on each (BM25; MiniLM
dense too with ``--dense``). Then the chunk-context rows: contextualize (ExtractiveReader: an
offline stand-in for a model, so its cost is real but its sentences are extracts) vs the
static header, with calls, tokens, seconds and recall@k on the tickets.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import warnings
from pathlib import Path

from workbench.chunking import chunk_corpus, diagnose_chunking, parse_chunker
from workbench.corpus import Corpus, Document, load_folder
from workbench.corpus.conversations import load_conversations
from workbench.evaluation import evaluate
from workbench.generation import ExtractiveReader
from workbench.generation.chunk_context import ContextCost, contextualize
from workbench.golden import GoldenSet
from workbench.retrieval import BM25Retriever, EmbeddingCache, make_retriever, with_embedder
from workbench.stats import compare_paired, mean_interval

ROOT = Path(__file__).resolve().parents[1] / "data" / "content_types"
HANDBOOK = ROOT.parent / "handbook"


def corpora() -> dict[str, tuple[Corpus, GoldenSet, str]]:
    code = [Document(p.name, p.read_text(encoding="utf-8"), p.name, {"path": p.name})
            for p in sorted((ROOT / "code").iterdir()) if p.suffix in (".py", ".ts")]
    glossary = load_folder(ROOT / "glossary")
    return {
        "tickets": (load_conversations(ROOT / "tickets" / "tickets.jsonl"),
                    GoldenSet.load(ROOT / "tickets" / "golden.jsonl"), "conversation"),
        "glossary": (glossary, GoldenSet.load(ROOT / "glossary" / "golden.jsonl"), "glossary"),
        "code": (Corpus(code), GoldenSet.load(ROOT / "code" / "golden.jsonl"), "code"),
    }


def per_question(retriever: object, golden: GoldenSet, chunks: list, k: int) -> dict[str, float]:
    frame = evaluate(retriever, golden, chunks, metrics=[f"recall@{k}"], k=k).frame  # type: ignore[arg-type]
    return dict(zip(frame["qid"], frame["value"], strict=True))


def score(spec: str, corpus: Corpus, golden: GoldenSet, retriever_kind: str, k: int,
          cache: EmbeddingCache) -> tuple[dict[str, float], float, int, int]:
    """Per-question evidence recall@k, split rate, chunks and index tokens of one chunking."""
    chunker = with_embedder(spec, cache)
    chunks = chunk_corpus(chunker, corpus)
    retriever = make_retriever(retriever_kind, chunks, encoder="minilm", cache=cache,
                               progress=False)
    spans = [e for item in golden.items for e in item.evidence]
    diag = diagnose_chunking(chunker, corpus, spans)
    return per_question(retriever, golden, chunks, k), diag.split_rate, diag.n_chunks, \
        diag.index_tokens


def cell(scores: dict[str, float]) -> str:
    mean = sum(scores.values()) / len(scores)
    lo, hi, _ = mean_interval(list(scores.values()))
    return f"{mean:.3f} [{lo:.2f}, {hi:.2f}]"


def verdict(base: dict[str, float], mine: dict[str, float]) -> str:
    cmp = compare_paired(base, mine)
    p = "p < 0.001" if cmp.p_value < 0.001 else f"p = {cmp.p_value:.3f}"
    return f"{cmp.verdict} ({p})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=None,
                    help="one budget for all (default: 300, code 450: its functions)")
    ap.add_argument("-k", type=int, default=5)
    ap.add_argument("--dense", action="store_true")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    k = args.k
    kinds = ["bm25", "dense"] if args.dense else ["bm25"]
    cache = EmbeddingCache()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        handbook = load_folder(HANDBOOK / "docs")
    hb_golden = GoldenSet.load(HANDBOOK / "golden.jsonl").validate(handbook)
    hb_golden = GoldenSet([i for i in hb_golden if i.evidence])
    for name, (corpus, golden, kind) in corpora().items():
        golden = golden.validate(corpus)
        size = args.size or (450 if name == "code" else 300)
        specs = [f"fixed:size={size},overlap={size // 6}", f"recursive:size={size}",
                 f"{kind}:size={size}", f"semantic:size={size}"]
        for retriever_kind in kinds:
            print(f"\n{name} ({len(golden)} questions) vs the rest of the handbook "
                  f"({len(hb_golden)} questions), {retriever_kind}, recall@{k} (chunks "
                  "relevant by the evidence spans) [95% interval]")
            print(f"{'chunker':<28} {name + ' recall':>22} {'split':>6} {'chunks':>6} "
                  f"{'tokens':>7} {'handbook recall':>22} {'split':>6}  verdict vs recursive "
                  f"({name}; handbook)")
            rows = {}
            for spec in specs:
                rows[spec] = (score(spec, corpus, golden, retriever_kind, k, cache),
                              score(spec, handbook, hb_golden, retriever_kind, k, cache))
            base = rows[specs[1]]
            for spec, ((mine, split, n, tokens), (hb, hb_split, _, _)) in rows.items():
                said = "" if spec == specs[1] else (
                    f"{verdict(base[0][0], mine)}; {verdict(base[1][0], hb)}")
                print(f"{spec:<28} {cell(mine):>22} {split:>6.2f} {n:>6} {tokens:>7} "
                      f"{cell(hb):>22} {hb_split:>6.2f}  {said}")
    size = args.size or 300
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
