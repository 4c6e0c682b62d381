"""The Evaluation (workbench.evaluation.evaluation): its views (summary, by, table, compare,
labels) and their intervals."""

import dataclasses

import pandas as pd
import pytest

from tests.evaluation.test_scoring import tiny_evidence
from workbench.chunking import FixedChunker, chunk_corpus
from workbench.corpus import Chunk
from workbench.evaluation import Evaluation, Run, evaluate
from workbench.golden import GoldenItem, GoldenSet
from workbench.retrieval import BM25Retriever, CallableRetriever


def test_compare_says_when_difference_is_noise():
    chunks = [Chunk(f"d#{i}", "d", 0, 1, text="x") for i in range(3)]
    golden = GoldenSet([GoldenItem(f"q{i}", "?", relevant_chunk_ids=("d#0",)) for i in range(60)])
    good = CallableRetriever(lambda q: ["d#0", "d#1"], name="good")
    worse_on_some = Run.from_ranked({f"q{i}": (["d#1", "d#2"] if i < 10 else ["d#0"])
                                     for i in range(60)}, "regressed")
    wobble = Run.from_ranked({f"q{i}": (["d#1"] if i == 0 else ["d#0"]) for i in range(60)},
                             "wobble")
    ev = (evaluate(good, golden, chunks, metrics=["hit_rate@1"])
          + evaluate(worse_on_some, golden, metrics=["hit_rate@1"])
          + evaluate(wobble, golden, metrics=["hit_rate@1"]))
    table = ev.compare("good")
    verdicts = table["verdict"].droplevel("metric")
    assert verdicts["regressed"] == "worse"
    assert verdicts["wobble"] == "can't tell with n=60"
    assert isinstance(table, pd.DataFrame) and set(table["test"]) == {"mcnemar-exact"}


def test_compare_two_evaluations_with_the_same_system_name():
    """new.compare(old) when both used the same retriever name: compares, baseline = old."""
    chunks, golden = tiny_evidence()
    old = evaluate(Run.from_ranked({i.qid: ["d#13"] for i in golden}, "bm25"), golden, chunks,
                   metrics=["hit_rate@1"], k=1)
    new = evaluate(Run.from_ranked({i.qid: [f"d#{i.qid[1:]}"] for i in golden}, "bm25"),
                   golden, chunks, metrics=["hit_rate@1"], k=1)
    table = new.compare(old).reset_index()
    assert list(table["baseline_config"]) == ["bm25 (baseline)"]
    row = table.iloc[0]
    assert row["name"] == "bm25" and row["delta"] == pytest.approx(1.0)
    assert row["wins"] == 12 and row["losses"] == 0 and row["verdict"] == "better"
    assert row["relevance"] == "evidence>=0.75"


def test_compare_a_sum_of_evaluations_never_overwrites_the_baseline():
    """(new + dense).compare(old): old keeps its own values; both candidates are compared."""
    chunks, golden = tiny_evidence()
    old = evaluate(Run.from_ranked({i.qid: ["d#13"] for i in golden}, "bm25"), golden, chunks,
                   metrics=["hit_rate@1"], k=1)
    new = evaluate(Run.from_ranked({i.qid: [f"d#{i.qid[1:]}"] for i in golden}, "bm25"),
                   golden, chunks, metrics=["hit_rate@1"], k=1)
    dense = evaluate(Run.from_ranked({i.qid: ["d#12"] for i in golden}, "dense"), golden,
                     chunks, metrics=["hit_rate@1"], k=1)
    table = (new + dense).compare(old).reset_index().set_index("name")
    assert table.loc["bm25", "delta"] == pytest.approx(1.0)
    assert table.loc["dense", "delta"] == 0.0 and table.loc["dense", "verdict"] != "better"
    assert (table["baseline_config"] == "bm25 (baseline)").all()
    with pytest.raises(ValueError, match="holds 2 configurations"):
        old.compare(new + dense)


def test_compare_refuses_numbers_judged_differently():
    chunks, golden = tiny_evidence()
    by_ids = GoldenSet([GoldenItem(i.qid, i.question, relevant_chunk_ids=(f"d#{i.qid[1:]}",))
                        for i in golden])
    run = Run.from_ranked({i.qid: [f"d#{i.qid[1:]}"] for i in golden}, "a")
    a = evaluate(run, golden, chunks, metrics=["hit_rate@1"], k=1)
    b = evaluate(Run(**{**run.__dict__, "system": "b"}), by_ids, chunks, metrics=["hit_rate@1"],
                 k=1)
    with pytest.raises(ValueError, match="relevance"):
        b.compare(a)


def test_small_categories_get_honest_intervals_and_a_mark():
    """8 of 8 at n=8 is not [1.000, 1.000]; 0 of 5 is not [0.0, 0.0]."""
    chunks, golden = tiny_evidence(13)
    perfect = {i.qid: [f"d#{i.qid[1:]}"] if i.category == "b" else ["d#14"] for i in golden}
    ev = evaluate(Run.from_ranked(perfect), golden, chunks, metrics=["hit_rate@1", "mrr"], k=1)
    cats = ev.by("category").set_index(["category", "metric"])
    b, a = cats.loc[("b", "hit_rate@1")], cats.loc[("a", "hit_rate@1")]
    assert (b["n"], b["mean"], b["ci_high"]) == (7, 1.0, 1.0)
    assert b["ci_low"] == pytest.approx(0.025 ** (1 / 7)) and b["interval"] == "clopper-pearson"
    assert (a["n"], a["mean"], a["ci_low"]) == (6, 0.0, 0.0)
    assert a["ci_high"] == pytest.approx(1 - 0.025 ** (1 / 6)) and a["small_n"]
    assert cats.loc[("b", "mrr"), "ci_low"] < 1.0  # all-1.0 MRR is a 0/1 sample too
    table = ev.table("category")
    assert table["hit_rate@1"].str.endswith("†").all() and "n" in table.columns
    whole = ev.summary().set_index("metric").loc["hit_rate@1"]
    assert not whole["small_n"] and whole["n"] == 13


def test_an_interior_constant_sample_still_gets_a_spread():
    """A bootstrap of five 0.2s collapses to [0.2, 0.2]; the summary does not."""
    from workbench.evaluation import evaluation_from_scores

    ev = evaluation_from_scores({f"q{i}": {"precision@5": 0.2} for i in range(5)})
    row = ev.summary().iloc[0]
    assert row["ci_low"] < 0.2 < row["ci_high"] and row["small_n"]


def test_every_number_says_which_relevance_it_uses():
    chunks, golden = tiny_evidence()
    mixed = GoldenSet([*golden, GoldenItem("z", "labelled", relevant_chunk_ids=("d#13",))])
    ranked = {i.qid: [f"d#{i.qid[1:]}"] for i in golden} | {"z": ["d#13"]}
    ev = evaluate(Run.from_ranked(ranked), mixed, chunks, metrics=["recall@1"], k=1,
                  evidence_threshold=1.0)
    summary = ev.summary().set_index("relevance")
    assert summary.loc["evidence>=1", "n"] == 12 and summary.loc["chunk_id>=1", "n"] == 1
    assert "evidence spans, found when" in ev._repr_html_()
    assert set(ev.table(None).index.get_level_values("relevance")) == {"evidence>=1",
                                                                        "chunk_id>=1"}


@pytest.mark.parametrize(("n", "small"), [(9, True), (10, False), (11, False)])
def test_the_small_sample_mark_sits_below_ten_questions(handbook, n, small):
    """n = 10 is not small (the rule is n < 10): the summary, the table's † and the
    by-category view agree at the boundary."""
    from workbench.evaluation import SMALL_MARK
    from workbench.stats import is_small_sample

    corpus, golden = handbook
    items = [i for i in golden.items if i.answerable][:n]
    subset = GoldenSet([dataclasses.replace(i, category="one") for i in items])
    chunks = chunk_corpus(FixedChunker(size=800, overlap=0), corpus.documents)
    ev = evaluate(BM25Retriever(chunks), subset, chunks, k=5)
    assert is_small_sample(n) is small
    assert set(ev.summary()["small_n"]) == {small} and set(ev.summary()["n"]) == {n}
    assert set(ev.by("category")["small_n"]) == {small}
    cells = ev.table().drop(columns="n", errors="ignore").to_numpy().ravel()
    assert all(str(c).endswith(SMALL_MARK) is small for c in cells if "[" in str(c))


def test_a_parameter_one_system_lacks_stays_out_of_its_label():
    """BM25 beside a configuration with parameters (a sweep's, a dense index's) keeps its own
    name: a missing parameter is never written ``nan`` in a label."""
    frame = pd.DataFrame({"system": ["bm25", "dense"], "qid": ["q", "q"],
                          "category": ["c", "c"], "source": ["owner", "owner"],
                          "relevance": ["chunk_id>=1"] * 2, "metric": ["mrr", "mrr"],
                          "value": [1.0, 0.5], "index": [None, "hnsw"]})
    ev = Evaluation(frame)
    assert ev.configs() == ["bm25", "dense index=hnsw"]
    assert ev.compare("bm25").reset_index()["name"].tolist() == ["dense index=hnsw"]
