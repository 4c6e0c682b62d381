"""The realism filter: a person's scores as a judge's few shots, the threshold, unreadable
replies, and the judge's agreement with the person on held-out folds (a judge not shown to
beat chance refused before it scores anything)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.generation import ChatReply
from workbench.golden import Evidence, GoldenItem
from workbench.synthetic.realism import (
    RealismJudge,
    UnmeasuredJudgeWarning,
    UntrustedJudgeError,
    filter_synthetic,
    realism_agreement,
)


class ScoringModel:
    model_id = "scorer"

    def __init__(self, scores):
        self.scores = dict(scores)
        self.prompts = []

    def chat(self, messages, max_tokens=None):
        prompt = messages[-1]["content"]
        self.prompts.append(prompt)
        question = prompt.rsplit("QUESTION: ", 1)[1].split("\n", 1)[0]
        return ChatReply(str(self.scores.get(question, "unsure")))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=4, max_size=12), st.integers(1, 5),
       st.integers(1, 3))
def test_filter_keeps_exactly_the_items_scored_at_or_above_the_threshold(scores, threshold,
                                                                         n_human):
    items = [GoldenItem(f"s{i}", f"question {i}", evidence=(Evidence("d", 0, 7, "Refunds"),),
                        source="synthetic", extra={"kind": "easy"})
             for i in range(len(scores))]
    human = {f"s{i}": scores[i] for i in range(n_human)}
    model = ScoringModel({f"question {i}": s for i, s in enumerate(scores)})
    judge = RealismJudge(model, [(f"question {i}", scores[i]) for i in range(n_human)])
    with pytest.warns(UnmeasuredJudgeWarning, match="agreement"):
        result = filter_synthetic(items, human, judge, threshold=threshold)
    assert [i.qid for i in result.kept] == [f"s{i}" for i, s in enumerate(scores)
                                           if s >= threshold]
    assert all(i.extra["realism"] >= threshold for i in result.kept)
    table = result.table.set_index("qid")
    assert (table.loc[list(human), "judge"] == "person").all()
    assert all(j.startswith("judge:scorer@realism-fewshot-v1+")
               for j in table.drop(index=list(human))["judge"])
    assert model.prompts and all("SCORE: " in p for p in model.prompts)
    assert len(model.prompts) == len(scores) - n_human


def test_filter_refuses_bad_scores_and_records_unreadable_replies():
    items = [GoldenItem("a", "q a", relevant_chunk_ids=("c",)),
             GoldenItem("b", "q b", relevant_chunk_ids=("c",))]
    with pytest.raises(ValueError, match="integer 1-5"):
        filter_synthetic(items, {"a": 6}, None)
    with pytest.raises(ValueError, match="no person's score and no judge"):
        filter_synthetic(items, {"a": 4}, None)
    with pytest.raises(ValueError, match="not among the items"):
        filter_synthetic(items, {"zz": 4}, None)
    with pytest.raises(ValueError, match="needs examples"):
        RealismJudge(ScoringModel({}), [])
    with pytest.warns(UnmeasuredJudgeWarning):
        result = filter_synthetic(items, {"a": 4}, RealismJudge(ScoringModel({}), [("q a", 4)]))
    row = result.table.set_index("qid").loc["b"]
    assert [i.qid for i in result.kept] == ["a"] and math.isnan(row["score"])
    assert row["reply"] == "unsure"
    # other few shots are another judge
    assert RealismJudge(ScoringModel({}), [("x", 1)]).prompt_version != RealismJudge(
        ScoringModel({}), [("x", 2)]).prompt_version


class Rater:
    """A chat model that rates each question from a table (``None``: an unreadable reply),
    recording the few shots each prompt carried."""

    model_id = "rater"

    def __init__(self, ratings):
        self.ratings, self.prompts = dict(ratings), []

    def chat(self, messages, max_tokens=None):
        prompt = messages[-1]["content"]
        self.prompts.append(prompt)
        question = prompt.rsplit("QUESTION: ", 1)[1].split("\n", 1)[0]
        score = self.ratings[question]
        return ChatReply("no idea" if score is None else f"{score}")


def test_held_out_folds_never_show_an_item_its_own_score():
    scored = [(f"question {i}", 1 + i % 5) for i in range(20)]
    model = Rater(dict(scored))
    got = realism_agreement(model, scored, folds=4, resamples=500)
    assert got.n == 20 and got.kappa == pytest.approx(1.0) and got.better_than_chance
    for prompt in model.prompts:
        asked = prompt.rsplit("QUESTION: ", 1)[1].split("\n", 1)[0]
        shots = prompt.rsplit("QUESTION: ", 1)[0]
        assert f"QUESTION: {asked}\n" not in shots
    assert len(model.prompts) == 20


def test_unreadable_replies_are_counted_and_a_chance_judge_is_refused_by_the_filter():
    scored = [(f"question {i}", 1 + i % 5) for i in range(12)]
    model = Rater({q: (None if i < 2 else 3) for i, (q, _) in enumerate(scored)})
    got = realism_agreement(model, scored, folds=3)
    assert got.unreadable == 2 and got.n == 10 and not got.better_than_chance
    items = [GoldenItem(f"s{i}", q, evidence=(Evidence("d", 0, 1, "x"),), source="synthetic")
             for i, (q, _) in enumerate(scored)]
    judge = RealismJudge(model, scored[:4])
    before = len(model.prompts)
    with pytest.raises(UntrustedJudgeError, match="not shown to beat chance"):
        filter_synthetic(items, {"s0": 1}, judge, agreement=got)
    assert len(model.prompts) == before  # refused before scoring anything
    # the person's scores alone need no judge
    alone = filter_synthetic(items[:1], {"s0": 4}, judge, agreement=got)
    assert [i.qid for i in alone.kept] == ["s0"]
    with pytest.raises(ValueError, match="folds"):
        realism_agreement(model, scored[:1])


def test_progress_bars_count_every_question_judged(capsys):
    scored = [(f"question {i}", 1 + i % 5) for i in range(6)]
    model = Rater(dict(scored))
    quiet = realism_agreement(model, scored, folds=2, resamples=100)
    assert capsys.readouterr().err == ""  # no bar unless asked
    shown = realism_agreement(model, scored, folds=2, resamples=100, progress=True)
    assert shown == quiet and "realism agreement" in (err := capsys.readouterr().err)
    assert "6/6" in err
    items = [GoldenItem(f"s{i}", q, evidence=(Evidence("d", 0, 1, "x"),), source="synthetic")
             for i, (q, _) in enumerate(scored)]
    kept = filter_synthetic(items, {"s0": 4}, RealismJudge(model, scored[:4]), agreement=shown,
                            progress=True)
    assert len(kept.table) == 6 and "6/6" in capsys.readouterr().err
