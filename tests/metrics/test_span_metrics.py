"""Span metrics (Chroma's chunking report): hand-computed cases, a brute-force character-set
reference under hypothesis, and the Run/GoldenSet integration. Recall is the evidence metric
``coverage@k`` (tests/metrics/test_evidence_metrics.py holds its brute-force reference)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.corpus import Chunk, Span
from workbench.evaluation import Run, evaluate
from workbench.golden import Evidence, GoldenItem, GoldenSet
from workbench.metrics.spans import (
    RangeIndex,
    intersect,
    span_iou,
    span_precision,
    span_precision_omega,
    span_value,
    subtract,
    union_ranges,
)


def test_range_algebra():
    assert union_ranges([(5, 8), (0, 3), (3, 4), (7, 10)]) == [(0, 4), (5, 10)]
    assert union_ranges([]) == []
    assert intersect((0, 10), (5, 20)) == (5, 10)
    assert intersect((0, 10), (10, 20)) == (10, 10)  # touching: empty, not None
    assert intersect((0, 10), (11, 20)) is None
    assert subtract((0, 10), [(2, 4), (3, 6), (8, 30)]) == [(0, 2), (6, 8)]
    assert subtract((0, 10), []) == [(0, 10)]
    assert subtract((0, 10), [(0, 10)]) == []


def test_single_chunk_covering_reference():
    # reference [10, 20) inside chunk [0, 50)
    ret, ref = [("d", 0, 50)], [Span("d", 10, 20)]
    assert span_precision(ret, ref) == 10 / 50
    assert span_iou(ret, ref) == 10 / 50


def test_partial_cover_and_miss():
    # chunk [15, 25) covers half of [10, 20); chunk of another document adds length only
    ret = [("d", 15, 25), ("e", 0, 30)]
    ref = [("d", 10, 20)]
    assert span_precision(ret, ref) == 5 / (10 + 30)
    # IoU denominator: retrieved lengths (40) + uncovered reference text [10, 15) (5)
    assert span_iou(ret, ref) == 5 / 45


def test_overlapping_chunks_count_once_in_numerator_twice_in_denominator():
    # two overlapping chunks [0, 30) and [20, 50) both hold the reference [22, 28)
    ret = [("d", 0, 30), ("d", 20, 50)]
    ref = [("d", 22, 28)]
    assert span_precision(ret, ref) == 6 / 60  # not 6 / 50: no union of retrieved lengths
    assert span_iou(ret, ref) == 6 / 60


def test_several_references():
    # refs [0, 10) and [100, 120); chunks [5, 40) and [110, 200)
    ret = [("d", 5, 40), ("d", 110, 200)]
    ref = [("d", 0, 10), ("d", 100, 120)]
    covered = 5 + 10
    assert span_precision(ret, ref) == covered / (35 + 90)
    assert span_iou(ret, ref) == covered / (125 + 5 + 10)


def test_nothing_retrieved_and_no_references():
    assert span_precision([], [("d", 0, 10)]) == 0.0
    assert span_iou([], [("d", 0, 10)]) == 0.0
    with pytest.raises(ValueError, match="reference"):
        span_precision([("d", 0, 10)], [])
    with pytest.raises(ValueError, match="Chunk, a Span"):
        span_precision([42], [("d", 0, 1)])
    with pytest.raises(ValueError, match="not a span metric"):
        span_value("span_recall", [("d", 0, 10)], [("d", 0, 10)])


def test_precision_omega_counts_touching_chunks():
    chunks = [("d", 0, 10), ("d", 10, 20), ("d", 20, 30), ("d", 30, 40)]
    # reference [12, 18) inside chunk [10, 20): omega = 6 / 10
    assert span_precision_omega(chunks, [("d", 12, 18)]) == 6 / 10
    # reference [10, 20) exactly equals a chunk, but [0, 10) and [20, 30) touch it:
    # they add nothing to the numerator and their length to the (unioned) denominator
    assert span_precision_omega(chunks, [("d", 10, 20)]) == 10 / 30


def test_precision_omega_unions_overlapping_chunks_and_uncovered_text():
    # overlapping chunks [0, 28) and [10, 30) both meet the reference [25, 35), which runs
    # past the chunking's end (30): denominator = union [0, 30) + uncovered [30, 35) = 35
    chunks = [("d", 0, 28), ("d", 10, 30), ("d", 40, 50)]
    assert span_precision_omega(chunks, [("d", 25, 35)]) == 5 / 35
    # a chunk that does not meet the reference stays out of the denominator
    assert span_precision_omega([("d", 0, 20), ("d", 10, 30)], [("d", 25, 35)]) == 5 / 25


def test_chunk_and_span_objects_are_accepted():
    chunk = Chunk("d#0", "d", 0, 4, text="abcd")
    ev = Evidence("d", 1, 3, "bc")
    assert span_precision([chunk], [ev]) == 0.5
    assert span_value("span_iou", [chunk], [ev]) == 0.5


def test_span_value_needs_the_chunking_for_omega():
    index = RangeIndex([("d", 0, 10), ("d", 50, 60)])
    assert span_value("span_precision_omega", [], [("d", 0, 10)], index) == 1.0
    with pytest.raises(ValueError, match="whole chunking"):
        span_value("span_precision_omega", [], [("d", 0, 10)])


# ----- brute force: character sets -------------------------------------------------------

ranges = st.tuples(st.sampled_from("de"), st.integers(0, 40), st.integers(1, 15)).map(
    lambda t: (t[0], t[1], t[1] + t[2]))


def chars(rs):
    return {(d, i) for d, s, e in rs for i in range(s, e)}


@settings(max_examples=300, deadline=None)
@given(st.lists(ranges, max_size=6), st.lists(ranges, min_size=1, max_size=4),
       st.lists(ranges, max_size=12))
def test_against_character_sets(retrieved, references, extra_chunks):
    covered = chars(retrieved) & chars(references)
    ref_total = sum(e - s for _, s, e in references)
    ret_total = sum(e - s for _, s, e in retrieved)
    uncovered = sum(len(chars([g]) - chars(retrieved)) for g in references)
    assert ref_total > 0
    assert math.isclose(span_precision(retrieved, references),
                        len(covered) / ret_total if ret_total else 0.0)
    iou_den = ret_total + uncovered
    assert math.isclose(span_iou(retrieved, references), len(covered) / iou_den)

    chunking = retrieved + extra_chunks
    meeting = [c for c in chunking
               if any(c[0] == g[0] and max(c[1], g[1]) <= min(c[2], g[2]) for g in references)]
    num = chars(meeting) & chars(references)
    den = chars(meeting) | (chars(references) - chars(meeting))
    expected = len(num) / len(den) if num else 0.0
    assert math.isclose(span_precision_omega(chunking, references), expected)
    index = RangeIndex(chunking)
    assert math.isclose(span_value("span_precision_omega", [], references, index), expected)
    assert math.isclose(span_value("span_iou", retrieved, references, index),
                        len(covered) / iou_den)


# ----- integration with Run / GoldenSet ---------------------------------------------------


SPAN_NAMES = ["coverage@2", "span_recall@2", "span_precision@2", "span_iou@2",
              "span_precision_omega"]


def test_span_metrics_through_evaluate():
    """The span metrics are asked for by name like any metric; span_recall is coverage."""
    chunks = [Chunk(f"d#{i}", "d", 10 * i, 10 * i + 10, text="x" * 10) for i in range(5)]
    golden = GoldenSet([
        GoldenItem("q1", "first?", evidence=(Evidence("d", 2, 8, "x" * 6),), category="a"),
        GoldenItem("q2", "second?", evidence=(Evidence("d", 15, 25, "x" * 10),), category="b"),
        GoldenItem("q3", "none?", answerable=False),
        GoldenItem("q4", "by id?", relevant_chunk_ids=("d#4",), category="a"),
    ])
    run = Run.from_ranked({"q1": ["d#0", "d#3"], "q2": ["d#1", "d#4"], "q3": ["d#0"],
                           "q4": ["d#4"]}, system="toy")
    ev = evaluate(run, golden, chunks, metrics=SPAN_NAMES, k=2)
    assert ev.metrics == ["coverage@2", "span_precision@2", "span_iou@2", "span_precision_omega"]
    means = ev.summary().set_index("metric")["mean"]
    assert means["coverage@2"] == pytest.approx((1.0 + 0.5) / 2)
    assert means["span_precision@2"] == pytest.approx((6 / 20 + 5 / 20) / 2)
    assert means["span_iou@2"] == pytest.approx((6 / 20 + 5 / 25) / 2)
    assert means["span_precision_omega"] == pytest.approx((6 / 10 + 10 / 20) / 2)
    assert ev.excluded["unanswerable"] == ["q3"]
    assert ev.excluded["no_evidence (coverage@2)"] == ["q4"]  # chunk-id labels: no spans
    assert set(ev.by("category")["category"]) == {"a", "b"}
    bad = Run.from_ranked({"q1": ["zz#9"], "q2": ["d#0"], "q4": ["d#4"]}, system="bad")
    with pytest.raises(ValueError, match="not among the 5 chunks given"):
        evaluate(bad, golden, chunks, metrics=SPAN_NAMES, k=2)


# ----- reproduction: PrecisionΩ depends only on the chunking and the scoring ---------------

# The report's text-embedding-3-large table (PrecisionΩ mean ± std, percent) for
# TokenTextSplitter in cl100k tokens: our fixed token windows are the same windows, so the
# retriever-free PrecisionΩ must match. (Recursive rows differ by design: LangChain's
# splitter makes smaller chunks than ours; see benchmarks/chroma_chunking.py.)
PUBLISHED_OMEGA = {(800, 400): (4.7, 3.1), (400, 200): (8.4, 5.1), (400, 0): (12.5, 8.1)}


def test_precision_omega_reproduces_the_chroma_report(datasets):
    import json

    import pandas as pd

    from workbench.chunking import FixedChunker, chunk_corpus
    from workbench.corpus import Document

    root = datasets / "chroma_chunking_evaluation"
    docs = [Document(p.stem, p.read_text(encoding="utf-8"), p.stem)
            for p in sorted((root / "corpora").glob("*.md"))]
    questions = pd.read_csv(root / "questions_df.csv")
    references = {
        str(i): [Span(str(row.corpus_id), r["start_index"], r["end_index"])
                 for r in json.loads(str(row.references))]
        for i, row in zip(questions.index, questions.itertuples(), strict=True)}
    assert len(references) == 472
    for (size, overlap), (mean, std) in PUBLISHED_OMEGA.items():
        chunks = chunk_corpus(FixedChunker(size, overlap, "tokens", "cl100k"), docs)
        index = RangeIndex(chunks)
        omega = np.array([span_value("span_precision_omega", [], refs, index)
                          for refs in references.values()])
        assert 100 * omega.mean() == pytest.approx(mean, abs=0.3)
        assert 100 * omega.std() == pytest.approx(std, abs=0.3)  # population std, as printed
