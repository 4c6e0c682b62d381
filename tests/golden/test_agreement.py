"""Agreement of two labellers: span overlap in characters, must-mention, Cohen's kappa (the
stats kappa, tests/stats/test_kappa.py), the disagreement table; properties: a set agrees with
itself perfectly, agreement is symmetric, kappa lies in [-1, 1]."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.golden import Evidence, GoldenItem, GoldenSet
from workbench.golden.agreement import agreement, span_overlap
from workbench.stats import cohen_kappa


def item(qid, ev=(), must=(), category="lookup", answerable=None, question=None):
    return GoldenItem(qid, question or f"question {qid}", evidence=tuple(ev),
                      answer_must_mention=tuple(must), category=category,
                      answerable=bool(ev) if answerable is None else answerable)


@pytest.mark.parametrize(("a", "b"), [([], []), ([True] * 3, [True] * 3),
                                      ([True] * 3, [True, False, True])])
def test_the_agreement_kappas_are_the_stats_kappa_undefined_included(a, b):
    """Answerable and category kappas follow workbench.stats.cohen_kappa: NaN with no
    questions or one and the same label from both, 0 when only one labeller varied."""
    ga = GoldenSet([item(f"q{i}", answerable=v, category=str(v)) for i, v in enumerate(a)])
    gb = GoldenSet([item(f"q{i}", answerable=v, category=str(v)) for i, v in enumerate(b)])
    got = agreement(ga, gb)
    for value in (got.kappa_answerable, got.kappa_category):
        want = cohen_kappa(a, b)
        assert (math.isnan(value) and math.isnan(want)) or value == want
    summary = dict(zip(got.summary().metric, got.summary().value, strict=True))
    assert ((math.isnan(summary["answerable_kappa"]) and math.isnan(got.kappa_answerable))
            or summary["answerable_kappa"] == got.kappa_answerable)


def test_span_overlap_counts_characters_per_document():
    a = [Evidence("d", 0, 10, "x" * 10)]
    assert span_overlap(a, [Evidence("d", 5, 15, "y")]) == (5 / 15, 10 / 20)
    # same offsets, another document: no overlap
    assert span_overlap(a, [Evidence("e", 0, 10, "x")]) == (0.0, 0.0)
    # overlapping spans of one labeller count once
    both = [Evidence("d", 0, 6, "x"), Evidence("d", 4, 10, "x")]
    assert span_overlap(both, a) == (1.0, 1.0)
    assert span_overlap(a, []) == (0.0, 0.0)
    assert all(math.isnan(v) for v in span_overlap([], []))


def test_two_labellers_report_per_question_overall_and_side_by_side():
    one = GoldenSet([
        item("q1", [Evidence("pw", 0, 40, "p" * 40)], ["14 characters"]),
        item("q2", [Evidence("leave", 10, 30, "l" * 20)], ["16 weeks"], category="policy"),
        item("q3", answerable=False, category="out-of-scope"),
        item("q4", [Evidence("gift", 0, 10, "g" * 10)]),
    ])
    two = GoldenSet([
        item("q1", [Evidence("pw", 0, 40, "p" * 40)], ["14 Characters"]),
        item("q2", [Evidence("leave", 20, 40, "l" * 20)], ["16 weeks", "full pay"]),
        item("q3", [Evidence("gift", 0, 10, "g" * 10)], category="out-of-scope"),
        item("q5", answerable=False),
    ])
    result = agreement(one, two, names=("ana", "ben"))
    table = result.per_question.set_index("qid")
    assert list(table.index) == ["q1", "q2", "q3"]
    assert result.only_a == ("q4",) and result.only_b == ("q5",)
    assert table.loc["q1", "span_jaccard"] == 1.0 and table.loc["q1", "agree"]
    assert table.loc["q2", "span_jaccard"] == pytest.approx(10 / 30)
    assert table.loc["q2", "must_mention_jaccard"] == 0.5
    assert table.loc["q3", "span_jaccard"] == 0.0 and not table.loc["q3", "same_documents"]
    summary = result.summary().set_index("metric")
    assert summary.loc["answerable_agreement", "value"] == pytest.approx(2 / 3)
    assert summary.loc["span_jaccard", "n"] == 3
    assert summary.loc["category_agreement", "value"] == pytest.approx(2 / 3)
    sides = result.disagreements()
    assert list(sides["qid"]) == ["q2", "q3"]
    assert sides.loc[0, "category (ana)"] == "policy" and sides.loc[0, "category (ben)"] == "lookup"
    assert "leave[20:40]" in sides.loc[0, "evidence (ben)"]
    html = result.to_html()
    assert "2 to adjudicate" in html and "<script>" not in agreement(
        GoldenSet([item("x", answerable=False, category="<script>")]),
        GoldenSet([item("x", answerable=False)])).to_html()


def test_matching_by_question_text():
    a = GoldenSet([item("a1", answerable=False, question="How long is parental leave?")])
    b = GoldenSet([item("b7", answerable=False, question="how long is parental  leave")])
    assert len(agreement(a, b).per_question) == 0
    assert list(agreement(a, b, match="question").per_question["qid"]) == ["a1"]
    twice = GoldenSet([item("b1", answerable=False, question="same?"),
                       item("b2", answerable=False, question="Same")])
    with pytest.raises(ValueError, match="read the same"):
        agreement(a, twice, match="question")


# ----- properties over generated golden sets ------------------------------------------------

@st.composite
def golden_sets(draw):
    items = []
    for n in range(draw(st.integers(0, 8))):
        spans = draw(st.lists(st.tuples(st.sampled_from(["d1", "d2"]), st.integers(0, 50),
                                        st.integers(1, 30)), max_size=3))
        ev = [Evidence(d, s, s + w, "t" * w) for d, s, w in spans]
        must = draw(st.lists(st.sampled_from(["14 days", "$500", "EXP-7"]), max_size=2))
        items.append(item(f"q{n}", ev, must, category=draw(st.sampled_from(["a", "b", "c"]))))
    return GoldenSet(items)


@settings(max_examples=100, deadline=None)
@given(golden_sets())
def test_a_set_agrees_with_itself_perfectly(golden):
    result = agreement(golden, golden)
    assert result.disagreements().empty
    s = result.summary().set_index("metric")["value"]
    for metric in ("answerable_agreement", "category_agreement", "span_jaccard", "span_dice",
                   "must_mention_jaccard", "same_documents"):
        assert s[metric] == 1.0 or math.isnan(s[metric])
    for k in (result.kappa_answerable, result.kappa_category):
        assert k == 1.0 or math.isnan(k)


@settings(max_examples=100, deadline=None)
@given(golden_sets(), golden_sets())
def test_agreement_is_symmetric_and_bounded(a, b):
    ab, ba = agreement(a, b).summary(), agreement(b, a).summary()
    for x, y in zip(ab["value"][:-2], ba["value"][:-2], strict=True):
        assert x == pytest.approx(y, nan_ok=True)
    for metric, value in zip(ab["metric"], ab["value"], strict=True):
        if "kappa" in metric and not math.isnan(value):
            assert -1 <= value <= 1
        elif not metric.startswith("only_") and not math.isnan(value):
            assert 0 <= value <= 1
