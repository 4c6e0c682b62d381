"""Which coverage threshold should make an evidence span count as found?

    python benchmarks/evidence_threshold.py [--xquad N]

"Found" should mean "the facts the question asks for are in the context". For every golden
item, chunking, BM25 ranking and k in (3, 5, 10) (and, on XQuAD, k in 1, 3, 5, 10), each
evidence span's coverage by the top k is compared with the truth:

* handbook (evidence = a quoted sentence or passage; truth = every must-mention string that
  occurs in the span lies inside the retrieved part of the span);
* XQuAD en (../shared/datasets/xquad; evidence = the answer itself; truth = the whole answer
  retrieved), skipped when the datasets are absent.

For each threshold it prints the agreement and both kinds of disagreement: "found" while a
fact is cut off (a plausible, wrong, too high number) and "not found" while every fact was
retrieved (too low). The default, 0.75 (``workbench.metrics.DEFAULT_EVIDENCE_THRESHOLD``), is
the threshold with the best handbook agreement among those that never call a span found while
a fact is cut off; pass ``evidence_threshold=1.0`` when the spans are the answers themselves.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from workbench.chunking import chunk_corpus, parse_chunker
from workbench.corpus import load_folder
from workbench.golden import GoldenSet, load_squad
from workbench.metrics import DEFAULT_EVIDENCE_THRESHOLD, union_ranges
from workbench.metrics.evidence import ChunkIndex, EvidenceSpan, trace_ranking
from workbench.retrieval import BM25Retriever

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ROOT.parent / "shared" / "datasets"
THRESHOLDS = (0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0)
HANDBOOK_CHUNKINGS = (
    "fixed:size=150,overlap=0", "fixed:size=200,overlap=0", "fixed:size=300,overlap=0",
    "fixed:size=300,overlap=150", "fixed:size=400,overlap=100", "fixed:size=800,overlap=0",
    "fixed:size=800,overlap=400", "fixed:unit=tokens,size=64,overlap=16", "sentence:size=300",
    "recursive:size=400", "markdown:size=600")
XQUAD_CHUNKINGS = ("fixed:size=100,overlap=0", "fixed:size=200,overlap=0",
                   "fixed:size=300,overlap=150", "sentence:size=200")


def cases(corpus_docs: Sequence, golden: GoldenSet, chunkings: Iterable[str],
          ks: Sequence[int], facts_of) -> list[tuple[float, bool]]:
    """(coverage of a span by the top k, every fact of the span retrieved) for every span,
    chunking, BM25 ranking and k."""
    out = []
    for spec in chunkings:
        chunks = chunk_corpus(parse_chunker(spec), corpus_docs)
        index = ChunkIndex(chunks)
        bm25 = BM25Retriever(chunks)
        for item in golden:
            if not (item.answerable and item.evidence):
                continue
            ranked = [h.chunk_id for h in bm25.search(item.question, max(ks))]
            for ev in item.evidence:
                span = EvidenceSpan.of(ev.doc_id, ev.start, ev.end, ev.text)
                facts = facts_of(item, ev)
                if not facts:
                    continue
                judged = index.item([span])
                for k in ks:
                    progress = trace_ranking(judged, ranked[:k], 1.0)
                    held = progress.steps[0][-1][1] if progress.steps[0] else 0
                    pieces = [(a, b) for r, cid in enumerate(ranked[:k], start=1)
                              for j, a, b in judged.pieces.get(cid, ()) if j == 0]
                    retrieved = all(
                        sum(span.count(max(a, fa), min(b, fb)) for a, b in union_ranges(pieces))
                        == span.count(fa, fb) for fa, fb in facts)
                    out.append((held / span.size, retrieved))
    return out


def must_mention_facts(item, ev) -> list[tuple[int, int]]:
    """Offsets of the item's must-mention strings that occur inside the span."""
    found = []
    for fact in item.answer_must_mention:
        at = ev.text.lower().find(fact.lower())
        if at >= 0:
            found.append((ev.start + at, ev.start + at + len(fact)))
    return found


def whole_span(_item, ev) -> list[tuple[int, int]]:
    return [(ev.start, ev.end)]


def report(name: str, data: list[tuple[float, bool]]) -> None:
    partial = sum(0 < c < 1 for c, _ in data)
    print(f"\n{name}: {len(data)} (span, ranking, k) cases, {partial} with partial coverage")
    print(f"{'threshold':>9} {'agree':>7} {'found, fact cut off':>20} "
          f"{'missed, all retrieved':>22}")
    for t in THRESHOLDS:
        false_found = sum(c >= t - 1e-12 and not ok for c, ok in data)
        false_missed = sum(c < t - 1e-12 and ok for c, ok in data)
        agree = 1 - (false_found + false_missed) / len(data)
        mark = "  <- default" if t == DEFAULT_EVIDENCE_THRESHOLD else ""
        print(f"{t:>9.2f} {agree:>7.4f} {false_found:>20} {false_missed:>22}{mark}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--xquad", type=int, default=400, help="XQuAD questions (0: skip)")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    corpus = load_folder(ROOT / "data" / "handbook" / "docs")
    golden = GoldenSet.load(ROOT / "data" / "handbook" / "golden.jsonl")
    report(f"handbook, {len(HANDBOOK_CHUNKINGS)} chunkings, BM25, k in 3/5/10",
           cases(corpus.documents, golden, HANDBOOK_CHUNKINGS, (3, 5, 10), must_mention_facts))
    xquad = DATASETS / "xquad" / "xquad.en.json"
    if args.xquad and xquad.exists():
        docs, squad = load_squad(xquad)
        items = GoldenSet([i for i in squad if i.answerable and i.evidence][: args.xquad])
        report(f"XQuAD en, {len(items)} questions (evidence = the answer), "
               f"{len(XQUAD_CHUNKINGS)} chunkings, BM25, k in 1/3/5/10",
               cases(docs.documents, items, XQUAD_CHUNKINGS, (1, 3, 5, 10), whole_span))
    elif args.xquad:
        print(f"\nXQuAD skipped: {xquad} not found (clone beside ../shared)")


if __name__ == "__main__":
    main()
