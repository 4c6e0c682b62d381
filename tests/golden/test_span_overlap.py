"""Span agreement (golden/agreement.py) against sets of characters: each labeller's evidence
over two documents, with spans nested in others, overlapping, adjacent, disjoint, repeated
and given in any order; Jaccard and Dice per question are those of the two sets of
(document, character) pairs, directly and through agreement()."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.golden import Evidence, GoldenItem, GoldenSet
from workbench.golden.agreement import agreement, span_overlap


@st.composite
def labels(draw):
    """0-5 spans over documents d1 and d2: each drawn freely, or nested in, adjacent to or
    equal to one drawn before; in any order."""
    spans: list[tuple[str, int, int]] = []
    for _ in range(draw(st.integers(0, 5))):
        how = draw(st.sampled_from(["free", "nested", "adjacent", "same"])) if spans else "free"
        if how == "free":
            doc, s = draw(st.sampled_from(["d1", "d2"])), draw(st.integers(0, 30))
            spans.append((doc, s, s + draw(st.integers(1, 12))))
            continue
        doc, s, e = draw(st.sampled_from(spans))
        if how == "nested":
            a = draw(st.integers(s, e - 1))
            spans.append((doc, a, draw(st.integers(a + 1, e))))
        elif how == "adjacent":
            spans.append((doc, e, e + draw(st.integers(1, 6))))
        else:
            spans.append((doc, s, e))
    order = draw(st.permutations(range(len(spans))))
    return [Evidence(spans[i][0], spans[i][1], spans[i][2], "t" * (spans[i][2] - spans[i][1]))
            for i in order]


def _characters(evidence: list[Evidence]) -> set[tuple[str, int]]:
    return {(ev.doc_id, i) for ev in evidence for i in range(ev.start, ev.end)}


def _reference(a: list[Evidence], b: list[Evidence]) -> tuple[float, float]:
    ca, cb = _characters(a), _characters(b)
    if not ca | cb:
        return math.nan, math.nan
    return len(ca & cb) / len(ca | cb), 2 * len(ca & cb) / (len(ca) + len(cb))


def _same(x: float, y: float) -> bool:
    return (math.isnan(x) and math.isnan(y)) or math.isclose(x, y, rel_tol=1e-12)


@settings(max_examples=500)
@given(labels(), labels())
def test_span_overlap_is_the_overlap_of_the_characters(a, b):
    got, want = span_overlap(a, b), _reference(a, b)
    assert all(_same(g, w) for g, w in zip(got, want, strict=True)), (got, want)
    assert all(_same(g, w) for g, w in zip(span_overlap(b, a), want, strict=True))


@settings(max_examples=100)
@given(st.lists(st.tuples(labels(), labels()), min_size=1, max_size=4))
def test_agreement_per_question_is_the_overlap_of_the_characters(pairs):
    def golden(side: int) -> GoldenSet:
        return GoldenSet([GoldenItem(f"q{n}", f"question {n}", evidence=tuple(p[side]),
                                     answerable=bool(p[side])) for n, p in enumerate(pairs)])

    table = agreement(golden(0), golden(1)).per_question.set_index("qid")
    for n, (a, b) in enumerate(pairs):
        jaccard, dice = _reference(a, b)
        row = table.loc[f"q{n}"]
        assert _same(row["span_jaccard"], jaccard) and _same(row["span_dice"], dice), n
