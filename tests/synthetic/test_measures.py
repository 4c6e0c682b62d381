"""What sets synthetic items apart, measured: the question/chunk overlap, slices by kind."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import HANDBOOK
from workbench.evaluation import evaluate
from workbench.golden import GoldenSet
from workbench.synthetic.measures import item_slices, lexical_overlap, overlap_table


def test_easy_synthetic_questions_borrow_the_chunk_words_and_score_higher(book, made):
    _, chunks, bm25 = book
    real = GoldenSet.load(HANDBOOK / "golden.jsonl")
    items = [*real, *made[1].items]
    table = overlap_table(items, chunks).groupby("kind")["overlap"].mean()
    assert table["easy"] > table["-"] + 0.3
    ev = evaluate(bm25, items, chunks, metrics=["recall@5"], k=5)
    sliced = item_slices(ev, items).set_index(["source", "kind"])["mean"]
    assert sliced[("synthetic", "easy")] > sliced[("owner", "-")]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(["refund", "days", "travel", "policy", "hotel", "the", "cap"]),
                min_size=1, max_size=8),
       st.lists(st.sampled_from(["refund", "days", "travel", "hotel", "boots", "tent"]),
                max_size=10), st.sampled_from(["boots", "cap", "days"]))
def test_overlap_is_a_share_that_grows_with_the_text(question, text, extra):
    q, t = " ".join(question), " ".join(text)
    value = lexical_overlap(q, t)
    assert 0.0 <= value <= 1.0
    assert lexical_overlap(q, t + " " + extra) >= value
    assert lexical_overlap(q, q + " " + t) == (1.0 if value or set(question) - {"the"} else 0.0)


def test_item_slices_are_the_means_of_their_questions(book, made):
    _, chunks, bm25 = book
    items = list(made[1].items)
    ev = evaluate(bm25, items, chunks, metrics=["hit@5"], k=5)
    sliced = item_slices(ev, items, fields=("kind",)).set_index("kind")
    frame = ev.frame
    kinds = {i.qid: i.extra["kind"] for i in items}
    for kind, row in sliced.iterrows():
        values = [v for q, v in zip(frame["qid"], frame["value"], strict=True)
                  if kinds[q] == kind]
        assert row["n"] == len(values) and math.isclose(row["mean"], sum(values) / len(values))
        assert row["ci_low"] <= row["mean"] <= row["ci_high"]
    assert sliced["n"].sum() == ev.n
    with pytest.raises(ValueError, match="not among the items"):
        item_slices(ev, items[:1])
