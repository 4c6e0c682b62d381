import pandas as pd
import pytest

from workbench.chunking import FixedChunker, chunk_corpus
from workbench.corpus import Chunk
from workbench.evaluation import Evaluation, Run, evaluate
from workbench.golden import GoldenItem, GoldenSet
from workbench.retrieval import BM25Retriever, CallableRetriever

GOLDEN = GoldenSet([
    GoldenItem("q1", "a", relevant_chunk_ids=("refunds#3",), category="lookup"),
    GoldenItem("q2", "b", relevant_chunk_ids=("leave#0",), category="lookup"),
    GoldenItem("q3", "c", relevant_chunk_ids=("vpn#2",), category="colloquial"),
    GoldenItem("q4", "d", answerable=False, category="unanswerable"),
])
RANKED = {"q1": ["shipping#1", "refunds#3", "terms#7", "refunds#4", "faq#2"],
          "q2": ["leave#0", "leave#2", "remote#1", "faq#0", "terms#1"],
          "q3": ["security#1", "remote#1", "faq#3", "it#0", "terms#2"],
          "q4": ["faq#0"]}


def test_seed_three_question_example_and_tidy_table():
    ev = evaluate(Run.from_ranked(RANKED, "toy"), GOLDEN, metrics=["recall@1", "recall@3", "mrr"])
    summary = ev.summary().set_index("metric")
    assert summary.loc["mrr", "mean"] == pytest.approx(0.5)
    assert summary.loc["recall@3", "mean"] == pytest.approx(2 / 3)
    assert summary.loc["recall@1", "mean"] == pytest.approx(1 / 3)
    assert (summary["n"] == 3).all()
    assert ev.excluded["unanswerable"] == ["q4"]
    frame = ev.to_frame()
    assert list(frame.columns) == list(Evaluation.COLUMNS)
    assert set(frame["qid"]) == {"q1", "q2", "q3"}
    by = ev.by("category").set_index(["category", "metric"])
    assert by.loc[("lookup", "mrr"), "mean"] == pytest.approx(0.75)
    assert by.loc[("colloquial", "mrr"), "n"] == 1
    low, high = summary.loc["mrr", ["ci_low", "ci_high"]]
    assert 0 <= low <= 0.5 <= high <= 1
    assert "n=3 questions" in ev._repr_html_()


def test_document_level_scores_a_document_at_its_best_chunk():
    ranked = {"q1": ["terms#7", "refunds#9", "refunds#3"]}
    chunks = [Chunk(cid, cid.split("#")[0], 0, 1, "x") for cid in ranked["q1"]]
    golden = GoldenSet([GoldenItem("q1", "a", relevant_chunk_ids=("refunds#3",))])
    chunk_ev = evaluate(Run.from_ranked(ranked), golden, chunks, metrics=["mrr"])
    doc_ev = evaluate(Run.from_ranked(ranked), golden, chunks, metrics=["mrr"],
                      level="document")
    assert chunk_ev.summary()["mean"].item() == pytest.approx(1 / 3)
    assert doc_ev.summary()["mean"].item() == pytest.approx(1 / 2)
    assert list(doc_ev.frame["relevance"]) == ["document>=1"]
    documents_of = {c.id: c.doc_id for c in chunks}
    assert Run.from_ranked(ranked).to_documents(documents_of).ranked() == {
        "q1": ["terms", "refunds"]}
    with pytest.raises(ValueError, match="needs the chunks"):
        evaluate(Run.from_ranked(ranked), golden, metrics=["mrr"], level="document")


def test_document_level_takes_the_document_from_the_chunk_not_its_id():
    """Production chunk ids are uuids: the document comes from the chunk."""
    chunks = [Chunk("5f0c-uuid", "refunds", 0, 1, "x"), Chunk("77aa-uuid", "terms", 0, 1, "y")]
    golden = GoldenSet([GoldenItem("q1", "a", relevant_chunk_ids=("5f0c-uuid",))])
    ev = evaluate(Run.from_ranked({"q1": ["77aa-uuid", "5f0c-uuid"]}), golden, chunks,
                  metrics=["mrr"], level="document")
    assert ev.summary()["mean"].item() == pytest.approx(1 / 2)


def test_missing_questions_and_bad_level_are_clear_errors():
    with pytest.raises(ValueError, match="no results for 1 golden"):
        evaluate(Run.from_ranked({"q1": [], "q2": []}), GOLDEN)
    with pytest.raises(ValueError, match="level must be"):
        evaluate(Run.from_ranked(RANKED), GOLDEN, level="paragraph")


def test_retriever_is_searched_and_timed_on_handbook(handbook):
    corpus, golden = handbook
    chunks = chunk_corpus(FixedChunker(size=800, overlap=100), corpus.documents)
    ev = evaluate(BM25Retriever(chunks), golden, chunks, k=5)
    assert ev.n == len(golden.answerable)
    assert len(ev.excluded["unanswerable"]) == len(golden) - len(golden.answerable)
    assert ev.metrics == ["recall@5", "precision@5", "hit_rate@5", "mrr@5", "ndcg@5"]
    lat = ev.latency()
    assert lat.loc[0, "n"] == len(golden) and lat.loc[0, "p95_ms"] >= lat.loc[0, "p50_ms"] > 0
    means = ev.by("category").query("metric == 'hit_rate@5'").set_index("category")["mean"]
    assert means["exact-code"] > means["colloquial"]  # BM25 wins on codes, loses on paraphrase


def test_compare_says_when_difference_is_noise():
    chunks = [Chunk(f"d#{i}", "d", 0, 1, "x") for i in range(3)]
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
