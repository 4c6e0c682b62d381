"""Evidence scoring as array work (metrics/evidence_batch.py) against a plain reference written
here character by character, on generated documents, chunkings, spans and rankings; and the
metamorphic tests across chunkings of the same text."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import spans_of
from workbench.chunking import FixedChunker, chunk_corpus
from workbench.corpus import Chunk, Document
from workbench.golden import Evidence, GoldenItem
from workbench.io import WorkbenchError
from workbench.metrics import DEFAULT_EVIDENCE_THRESHOLD, Relevance, parse_metric

WORDS = ["refund", "a", "policy", "days", "x", "webhook"]
METRICS = [parse_metric(m) for m in (
    "recall@1", "recall@3", "recall@20", "precision@1", "precision@2", "precision@5",
    "precision@20", "hit_rate@1", "hit_rate@3", "mrr", "mrr@2", "ndcg", "ndcg@1", "ndcg@3",
    "map", "ap@2", "r_precision", "coverage@1", "coverage@3", "coverage@20")]


def _reference(spans: list[Evidence], where: dict[str, tuple[str, int, int]],
               ranking: list[str], threshold: float, kind: str, k: int | None,
               ideal_ranks: list[float]) -> float:
    """The definitions of metrics/evidence.py, counted on sets of character positions."""
    solid = [{i for i in range(s.start, s.end) if not s.text[i - s.start].isspace()}
             for s in spans]
    held: set[tuple[str, int]] = set()
    covered = [[0] * len(spans)]  # covered[r][j]: span j's characters in the top r
    for cid in ranking:
        if cid in where:
            doc, start, end = where[cid]
            held |= {(doc, i) for i in range(start, end)}
        covered.append([sum((s.doc_id, i) in held for i in chars)
                        for s, chars in zip(spans, solid, strict=True)])
    needed = [max(1, math.ceil(threshold * len(chars) - 1e-9)) for chars in solid]
    found = [next((r for r in range(1, len(ranking) + 1) if covered[r][j] >= needed[j]),
                  math.inf) for j in range(len(spans))]
    depth = max(len(ranking), 1)
    cut = depth if k is None else k
    m = len(spans)

    def useful(limit: float) -> int:
        return sum(1 for r in range(1, min(int(limit), len(ranking)) + 1)
                   if any(covered[r][j] > covered[r - 1][j] and found[j] <= limit
                          for j in range(m)))

    hits = sorted(f for f in found if f <= cut)
    if kind == "recall":
        return len(hits) / m
    if kind == "hit_rate":
        return 1.0 if hits else 0.0
    if kind == "mrr":
        return 1.0 / hits[0] if hits else 0.0
    if kind == "precision":
        return useful(cut) / cut
    if kind == "r_precision":
        return sum(f <= m for f in found) / m
    if kind == "ap":
        return sum(useful(f) / f for f in hits) / m
    if kind == "ndcg":
        ideal = sum(1 / math.log2(r + 1) for r in ideal_ranks
                    if r <= (math.inf if k is None else k))
        return sum(1 / math.log2(f + 1) for f in hits) / ideal if ideal > 0 else 0.0
    assert kind == "coverage"
    top = min(cut, len(ranking))
    return sum(covered[top]) / sum(len(chars) for chars in solid)


@st.composite
def scoring_cases(draw):
    """1-3 documents with blanks of several kinds (one may have no chunk); chunks that
    overlap, nest, repeat under another id or have no length; spans on chunk boundaries,
    across chunks, in gaps, repeated within an item and shared by items; rankings with
    repeats, unknown ids, nothing, or missing."""
    blanks = draw(st.sampled_from([" ", "\n", " \u3000", "\u00a0\t"]))
    docs = []
    for doc_id in ("a", "b", "c")[:draw(st.integers(1, 3))]:
        words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12))
        docs.append(Document(doc_id, blanks.join(words), doc_id))
    chunks: list[Chunk] = []
    for doc in docs[:max(1, len(docs) - draw(st.integers(0, 1)))]:
        n = len(doc.text)
        for _ in range(draw(st.integers(0, 7))):
            start = draw(st.integers(0, n))
            end = draw(st.integers(start, n))  # zero-length chunks too
            for _ in range(draw(st.sampled_from([1, 1, 2]))):  # a duplicate under another id
                chunks.append(Chunk(f"{doc.id}#{len(chunks)}", doc.id, start, end,
                                    text=doc.text[start:end]))
    items = []
    for q in range(draw(st.integers(1, 5))):
        evidence = []
        for _ in range(draw(st.integers(1, 4))):
            doc = draw(st.sampled_from(docs))
            cuts = sorted({0, len(doc.text)} | {p for c in chunks if c.doc_id == doc.id
                                                 for p in (c.start, c.end)})
            if draw(st.booleans()):  # on chunk boundaries
                start, end = sorted(draw(st.lists(st.sampled_from(cuts), min_size=2,
                                                  max_size=2, unique=True))) \
                    if len(cuts) > 1 else (0, len(doc.text))
            else:
                start, end = draw(spans_of(doc.text))
            if doc.text[start:end].strip():
                evidence.append(Evidence(doc.id, start, end, doc.text[start:end]))
        if evidence and draw(st.booleans()):
            evidence.append(evidence[0])  # the same span twice is one unit
        if items and draw(st.integers(0, 4)) == 0:
            evidence = list(items[0].evidence)  # a tie: another item with the same spans
        if evidence:
            items.append(GoldenItem(f"q{q}", "?", evidence=tuple(evidence)))
    ids = [c.id for c in chunks] + ["elsewhere#0"]
    ranked = {}
    for item in items:
        if draw(st.integers(0, 5)):  # sometimes missing from the run
            ranked[item.qid] = draw(st.lists(st.sampled_from(ids), max_size=8))
    threshold = draw(st.sampled_from([0.25, 0.5, DEFAULT_EVIDENCE_THRESHOLD, 1.0]))
    return chunks, items, ranked, threshold


@settings(max_examples=400, deadline=None)
@given(scoring_cases())
def test_array_scoring_equals_a_character_by_character_reference(case):
    chunks, items, ranked, threshold = case
    if not items:
        return
    relevance = Relevance(items, chunks, evidence_threshold=threshold)
    scores = relevance.score(ranked, METRICS)
    where = {c.id: (c.doc_id, c.start, c.end) for c in chunks}
    for item in items:
        spans = list(dict.fromkeys(item.evidence))
        ideal = relevance._evidence[item.qid].ideal_ranks(threshold)
        ranking = list(ranked.get(item.qid, ()))
        for metric in METRICS:
            want = _reference(spans, where, ranking, threshold, metric.kind, metric.k, ideal)
            got = scores.values[metric.name][item.qid]
            assert got == pytest.approx(want, rel=1e-12, abs=1e-12), (metric.name, item.qid)
        assert relevance.found_ranks(item.qid, ranking) == [
            next((r for r in range(1, len(ranking) + 1)
                  if _reference(spans[j:j + 1], where, ranking[:r], threshold, "recall",
                                None, ideal) == 1.0), math.inf)
            for j in range(len(spans))]


def test_tiny_sets_and_empty_rankings():
    """One item of one character; a run that retrieved nothing, or left the item out."""
    chunk = Chunk("d#0", "d", 0, 1, text="x")
    relevance = Relevance([GoldenItem("q", "?", evidence=(Evidence("d", 0, 1, "x"),))],
                          [chunk])
    for ranked, want in (({"q": ["d#0"]}, 1.0), ({"q": []}, 0.0), ({}, 0.0),
                         ({"q": ["d#0", "d#0"]}, 1.0)):
        scores = relevance.score(ranked, METRICS)
        for name in ("recall@1", "hit_rate@1", "mrr", "ndcg", "map", "coverage@1"):
            assert scores.values[name]["q"] == want, (ranked, name)
    assert relevance.score({"q": ["d#0", "d#0"]}, METRICS).values["precision@2"]["q"] == 0.5
    huge = [parse_metric(f"{kind}@1000000000") for kind in ("precision", "coverage", "ap")]
    values = relevance.score({"q": ["d#0"]}, huge).values  # k far past any rank: no table of k
    assert [values[m.name]["q"] for m in huge] == [1e-9, 1.0, 1.0]


def test_a_zero_length_span_is_refused_in_one_line():
    with pytest.raises(WorkbenchError, match="empty"):
        Relevance([GoldenItem("q", "?", evidence=(Evidence("d", 3, 3, ""),))], [])


@st.composite
def two_chunkings(draw):
    """Documents, evidence, and a second chunking of the same text that covers all of it
    (fixed windows, with or without overlap)."""
    docs = [Document(d, " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1,
                                                 max_size=40))), d)
            for d in ("a", "b", "c")[:draw(st.integers(1, 3))]]
    items = []
    for q in range(draw(st.integers(1, 4))):
        evidence = []
        for _ in range(draw(st.integers(1, 3))):
            doc = draw(st.sampled_from(docs))
            start, end = draw(spans_of(doc.text))
            if doc.text[start:end].strip():
                evidence.append(Evidence(doc.id, start, end, doc.text[start:end]))
        if evidence:
            items.append(GoldenItem(f"q{q}", "?", evidence=tuple(evidence)))
    size = draw(st.integers(8, 60))
    fine = chunk_corpus(FixedChunker(size=size, overlap=draw(st.integers(0, size // 2))),
                        docs)
    order = draw(st.permutations(range(len(docs))))
    return docs, items, fine, order, draw(st.sampled_from([0.5, 0.75, 1.0]))


@settings(max_examples=150, deadline=None)
@given(two_chunkings())
def test_the_same_evidence_under_two_chunkings_of_the_same_text(case):
    """One chunk per document: every span is found at the rank of its document, so recall@k
    is the share of spans in the top k documents. Any chunking that covers the text, all of
    it retrieved: every span is found and covered (recall, hit rate, coverage 1), and the
    chunks of a document ranked together find its spans no earlier than its one chunk."""
    docs, items, fine, order, threshold = case
    if not items:
        return
    whole = [Chunk(f"{d.id}#all", d.id, 0, len(d.text), text=d.text) for d in docs]
    ranked_docs = [docs[i].id for i in order]
    by_doc = Relevance(items, whole, evidence_threshold=threshold)
    by_window = Relevance(items, fine, evidence_threshold=threshold)
    doc_run = {it.qid: [f"{d}#all" for d in ranked_docs] for it in items}
    window_run = {it.qid: [c.id for d in ranked_docs for c in fine if c.doc_id == d]
                  for it in items}
    k = len(docs)
    metrics = [parse_metric(m) for m in (f"recall@{k}", "recall@1", f"coverage@{k}",
                                         f"hit_rate@{k}")]
    got_doc = by_doc.score(doc_run, metrics).values
    got_window = by_window.score(window_run, [parse_metric(f"recall@{len(fine)}"),
                                              parse_metric(f"coverage@{len(fine)}")]).values
    for item in items:
        spans = list(dict.fromkeys(item.evidence))
        first = sum(s.doc_id == ranked_docs[0] for s in spans) / len(spans)
        assert got_doc["recall@1"][item.qid] == first
        assert got_doc[f"recall@{k}"][item.qid] == 1.0
        assert got_doc[f"coverage@{k}"][item.qid] == 1.0
        assert got_doc[f"hit_rate@{k}"][item.qid] == 1.0
        assert got_window[f"recall@{len(fine)}"][item.qid] == 1.0
        assert got_window[f"coverage@{len(fine)}"][item.qid] == 1.0
        doc_rank = {s: ranked_docs.index(s.doc_id) + 1 for s in spans}
        window_found = by_window.found_ranks(item.qid, window_run[item.qid])
        assert by_doc.found_ranks(item.qid, doc_run[item.qid]) == [doc_rank[s] for s in spans]
        assert all(w >= doc_rank[s] for s, w in zip(spans, window_found, strict=True))
