"""ev.worst(n) and ev.flipped(a, b): the worst failures read one by one (evaluation.failures)."""

from __future__ import annotations

from types import MappingProxyType

import pytest

import workbench as wb
from workbench.chunking import chunk_corpus, parse_chunker
from workbench.corpus import Document
from workbench.evaluation import Run
from workbench.golden import Evidence, GoldenItem, GoldenSet
from workbench.metrics import Relevance
from workbench.retrieval import BM25Retriever
from workbench.retrieval.base import Hit


@pytest.fixture(scope="module")
def setup(handbook):
    corpus, golden = handbook
    chunks = chunk_corpus(parse_chunker("fixed:size=200,overlap=0"), corpus)
    ev = wb.evaluate(BM25Retriever(chunks), golden, chunks, k=5, system="bm25")
    return golden, chunks, ev


def _run(name, ranked):
    return Run(name, MappingProxyType({q: tuple(Hit(c, 1.0 / r, r, name)
                                               for r, c in enumerate(ids, start=1))
                                       for q, ids in ranked.items()}))


def test_worst_is_ordered_and_lists_only_failures(setup):
    golden, chunks, ev = setup
    worst = ev.worst(10, golden=golden, chunks=chunks)
    assert 0 < len(worst) <= 10
    keys = [(f.recall, f.coverage, -(f.first_rank or float("inf"))) for f in worst]
    assert keys == sorted(keys)
    recall = ev.frame.query("metric == 'recall@5'").set_index("qid")["value"]
    for f in worst:
        assert f.recall == pytest.approx(recall[f.qid]) and (f.recall < 1 or f.coverage < 1)
        assert len(f.retrieved) == 5 and [r for r, *_ in f.retrieved] == [1, 2, 3, 4, 5]
    every = ev.worst(1000, golden=golden, chunks=chunks)
    failing = {q for q, v in recall.items() if v < 1}
    assert failing <= {f.qid for f in every}  # every question with recall < 1 is listed
    assert [f.qid for f in every[:10]] == [f.qid for f in worst]


def test_the_window_holds_the_evidence_and_marks_the_chunk_starts(setup):
    golden, chunks, ev = setup
    by_id = {c.id: c for c in chunks}
    for f in ev.worst(10, golden=golden, chunks=chunks):
        for (doc, start, end, quote), (pieces, cut) in zip(f.evidence, f.windows, strict=True):
            assert "".join(t for t, _, inside in pieces if inside) == quote
            marked = [cid for _, cid, _ in pieces if cid]
            assert all(by_id[c].doc_id == doc for c in marked)
            holders = [c for c in chunks if c.doc_id == doc and c.start <= start
                       and end <= c.end]
            assert cut == (not holders)
            if cut:
                assert "(cut)" in f.text()


def test_a_perfect_run_has_no_failures_and_a_removed_question_is_worst(setup):
    golden, chunks, _ = setup
    relevance = Relevance(golden, chunks)
    perfect = {q: relevance.gold(q)[:5] for q in relevance.qids}
    ev = wb.evaluate(_run("perfect", perfect), golden, chunks, k=5)
    if all(len(relevance.gold(q)) <= 5 for q in relevance.qids):
        assert len(ev.worst(10, golden=golden, chunks=chunks)) == 0
    victim = sorted(relevance.qids)[0]
    broken = dict(perfect, **{victim: []})
    worst = wb.evaluate(_run("broken", broken), golden, chunks, k=5).worst(
        10, golden=golden, chunks=chunks)
    assert worst[0].qid == victim and worst[0].first_rank is None and worst[0].recall == 0


def test_document_text_is_escaped_in_html():
    doc = Document("d", "intro <script>alert(1)</script> the answer is 42 here. tail text", "D")
    chunks = chunk_corpus(parse_chunker("fixed:size=20,overlap=0"), [doc])
    start = doc.text.index("the answer")
    item = GoldenItem("q", "what <b>is</b> it?", evidence=(
        Evidence("d", start, start + 16, doc.text[start:start + 16]),))
    ev = wb.evaluate(_run("r", {"q": [chunks[0].id]}), GoldenSet([item]), chunks, k=1)
    html = ev.worst(golden=GoldenSet([item]), chunks=chunks)._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html and "<b>is" not in html
    assert "wb-cut" in html  # 16 characters across 20-character chunks: cut


def test_flipped_both_ways(setup, handbook):
    golden, _chunks, ev = setup
    other_chunks = chunk_corpus(parse_chunker("fixed:size=800,overlap=0"), handbook[0])
    other = wb.evaluate(BM25Retriever(other_chunks), golden, other_chunks, k=5, system="big")
    both = ev + other
    a, b = both.configs()
    f = both.flipped(a, b, "recall@5")
    g = both.flipped(b, a, "recall@5")
    assert {q for q, *_ in f.lost} == {q for q, *_ in g.gained}
    assert {q for q, *_ in f.gained} == {q for q, *_ in g.lost}
    frame = both.frame.query("metric == 'recall@5'")
    va = frame[frame.system == "bm25"].set_index("qid")["value"]
    vb = frame[frame.system == "big"].set_index("qid")["value"]
    assert {q for q, *_ in f.gained} == {q for q in va.index if vb[q] > va[q]}
    assert {q for q, *_ in f.lost} == {q for q in va.index if vb[q] < va[q]}
    assert all(x > y for _, x, y in f.lost) and f"{len(f.lost)} lost" in f.text()

