import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest

from workbench.chunking import FixedChunker, chunk_corpus
from workbench.corpus import Chunk, Document
from workbench.evaluation import Evaluation, Run, evaluate
from workbench.golden import Evidence, GoldenItem, GoldenSet
from workbench.metrics import Relevance
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
    chunks = [Chunk(cid, cid.split("#")[0], 0, 1, text="x") for cid in ranked["q1"]]
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
    chunks = [Chunk("5f0c-uuid", "refunds", 0, 1, text="x"),
              Chunk("77aa-uuid", "terms", 0, 1, text="y")]
    golden = GoldenSet([GoldenItem("q1", "a", relevant_chunk_ids=("5f0c-uuid",))])
    ev = evaluate(Run.from_ranked({"q1": ["77aa-uuid", "5f0c-uuid"]}), golden, chunks,
                  metrics=["mrr"], level="document")
    assert ev.summary()["mean"].item() == pytest.approx(1 / 2)


def test_document_level_keeps_the_grades_of_the_labelled_chunks():
    """A document's grade is the best grade of its labelled chunks: a threshold above 1
    keeps the questions whose documents reach it, and graded nDCG follows trec_eval."""
    chunks = [Chunk(cid, cid.split("#")[0], 0, 1, text="x")
              for cid in ("d1#0", "d1#1", "d2#0", "d3#0")]
    golden = GoldenSet([
        GoldenItem("q1", "a", relevance={"d1#0": 1, "d1#1": 2, "d2#0": 1}),
        GoldenItem("q2", "b", relevance={"d3#0": 1}),
    ])
    run = Run.from_ranked({"q1": ["d2#0", "d3#0", "d1#0"], "q2": ["d3#0"]})
    at_two = evaluate(run, golden, chunks, metrics=["hit_rate@3"], level="document",
                      grade_threshold=2)
    assert list(at_two.frame["qid"]) == ["q1"]  # d1 holds a grade-2 chunk
    assert at_two.excluded["no_relevant_at_threshold"] == ["q2"]
    ev = evaluate(run, golden, chunks, metrics=["ndcg@3"], level="document")
    # documents d2 (1), d3 (0), d1 (2); the ideal is d1 (2), d2 (1)
    dcg = 1 / np.log2(2) + 2 / np.log2(4)
    ideal = 2 / np.log2(2) + 1 / np.log2(3)
    assert ev.frame.set_index("qid").loc["q1", "value"] == pytest.approx(dcg / ideal)
    assert golden[0].doc_grades(chunks) == {"d1": 2, "d2": 1}
    assert golden[0].doc_ids(chunks) == ("d1", "d2")


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


# ----- regressions of the "one ruler" issue: plausible numbers that were wrong --------------

def _tiny_evidence(n: int = 12):
    """n questions, each with one evidence span that is exactly one chunk."""
    from workbench.golden import Evidence

    chunks = [Chunk(f"d#{i}", "d", 10 * i, 10 * i + 10, text=f"word{i:05d} ") for i in range(n + 2)]
    golden = GoldenSet([GoldenItem(f"q{i}", f"question {i}",
                                   evidence=(Evidence("d", 10 * i, 10 * i + 9, f"word{i:05d}"),),
                                   category="a" if i % 2 else "b") for i in range(n)])
    return chunks, golden


def test_compare_two_evaluations_with_the_same_system_name():
    """new.compare(old) when both used the same retriever name: compares, baseline = old."""
    chunks, golden = _tiny_evidence()
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
    chunks, golden = _tiny_evidence()
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
    chunks, golden = _tiny_evidence()
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
    chunks, golden = _tiny_evidence(13)
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
    from workbench.gate.check import evaluation_from_scores

    ev = evaluation_from_scores({f"q{i}": {"precision@5": 0.2} for i in range(5)})
    row = ev.summary().iloc[0]
    assert row["ci_low"] < 0.2 < row["ci_high"] and row["small_n"]


def test_every_number_says_which_relevance_it_uses():
    chunks, golden = _tiny_evidence()
    mixed = GoldenSet([*golden, GoldenItem("z", "labelled", relevant_chunk_ids=("d#13",))])
    ranked = {i.qid: [f"d#{i.qid[1:]}"] for i in golden} | {"z": ["d#13"]}
    ev = evaluate(Run.from_ranked(ranked), mixed, chunks, metrics=["recall@1"], k=1,
                  evidence_threshold=1.0)
    summary = ev.summary().set_index("relevance")
    assert summary.loc["evidence>=1", "n"] == 12 and summary.loc["chunk_id>=1", "n"] == 1
    assert "evidence spans, found when" in ev._repr_html_()
    assert set(ev.table(None).index.get_level_values("relevance")) == {"evidence>=1",
                                                                        "chunk_id>=1"}


def test_bad_arguments_are_one_line_errors():
    chunks, golden = _tiny_evidence()
    run = Run.from_ranked({i.qid: ["d#0"] for i in golden})
    with pytest.raises(ValueError, match="k must be a positive integer"):
        evaluate(run, golden, chunks, k="5")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="k must be a positive integer"):
        evaluate(run, golden, chunks, k=0)
    with pytest.raises(ValueError, match="cutoff of recall must be a positive integer"):
        evaluate(run, golden, chunks, metrics=["recall@-1"])
    with pytest.raises(ValueError, match="pass the chunks"):
        evaluate(run, golden)  # evidence items cannot be judged without the chunks
    with pytest.raises(ValueError, match="golden set is empty"):
        evaluate(run, GoldenSet([]), chunks)
    with pytest.raises(ValueError, match="all 1 golden questions are unanswerable"):
        evaluate(run, GoldenSet([GoldenItem("u", "?", answerable=False)]), chunks)
    with pytest.raises(ValueError, match="evidence_threshold must be a number in"):
        evaluate(run, golden, chunks, evidence_threshold=0.0)
    unknown = Run.from_ranked({i.qid: ["5f0c-uuid"] for i in golden})
    with pytest.raises(ValueError, match=r"returned 1 chunk id\(s\) that are not among the 14"):
        evaluate(unknown, golden, chunks)


def test_a_huge_k_is_bounded_by_the_corpus():
    chunks, golden = _tiny_evidence()
    ev = evaluate(CallableRetriever(lambda q: [c.id for c in chunks]), golden, chunks,
                  metrics=["recall@1000000000", "precision@1000000000"], k=1_000_000_000)
    means = ev.summary().set_index("metric")["mean"]
    assert means["recall@1000000000"] == 1.0
    assert means["precision@1000000000"] == pytest.approx(1e-9)  # P@k divides by k


def test_one_tie_rule_a_run_scores_the_same_as_a_list_and_as_a_dict():
    """Retrievers and trec_eval order equal scores the same way (id descending), so the
    scored-dict form of a retriever's hits ranks exactly as its list."""
    from workbench.metrics import score_queries
    from workbench.retrieval import BM25Retriever

    chunks = [Chunk(f"d#{i}", "d", 0, 1, text="same words here") for i in range(6)]
    hits = BM25Retriever(chunks).search("same words", 6)
    as_list = {"q": [h.chunk_id for h in hits]}
    as_dict = {"q": {h.chunk_id: h.score for h in hits}}
    qrels = {"q": {"d#2": 1}}
    metrics = ["mrr", "recall@3", "ndcg@3", "precision@2"]
    a = score_queries(qrels, as_list, metrics)
    b = score_queries(qrels, as_dict, metrics)
    assert all(a.values[m][0] == b.values[m][0] for m in metrics)
    assert as_list["q"] == [f"d#{i}" for i in range(5, -1, -1)]


def test_ndcg_is_not_computed_against_the_retrieved_chunks_alone():
    """A production run whose hits carry their chunks, without the whole chunking: the nDCG
    ideal would be built from the retrieved chunks only and read too high."""
    from dataclasses import replace

    chunks, golden = _tiny_evidence()
    by_id = {c.id: c for c in chunks}
    hits = {i.qid: tuple(replace(h, chunk=by_id[h.chunk_id])
                         for h in Run.from_ranked({i.qid: ["d#13", f"d#{i.qid[1:]}"]}).hits[i.qid])
            for i in golden}
    run = Run("prod", hits)
    with pytest.raises(ValueError, match=r"need.*the whole chunking"):
        evaluate(run, golden, metrics=["ndcg@5"], k=5)
    with pytest.warns(UserWarning, match="ndcg@5 left out"):
        ev = evaluate(run, golden, k=5)
    assert "ndcg@5" not in ev.metrics and "recall@5" in ev.metrics
    assert evaluate(run, golden, chunks, k=5).metrics[-1] == "ndcg@5"  # with the chunking


def test_chunk_id_labels_outside_the_chunking_are_named_in_a_warning():
    """A label no chunk of the chunking has can never be retrieved: a plausible-looking mean
    would hide it, so the label is named with what to do."""
    chunks = [Chunk("a#0", "a", 0, 1, text="x"), Chunk("a#1", "a", 1, 2, text="y")]
    golden = GoldenSet([GoldenItem("q1", "a", relevant_chunk_ids=("a#0",)),
                        GoldenItem("q2", "b", relevant_chunk_ids=("old-chunking#7",))])
    run = Run.from_ranked({"q1": ["a#0"], "q2": ["a#1"]})
    with pytest.warns(UserWarning, match=r"1 chunk-id label.*'q2', label 'old-chunking#7'.*"
                                         r"Re-label.*anchor"):
        evaluate(run, golden, chunks, metrics=["hit_rate@1"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        evaluate(run, GoldenSet([golden[0]]), chunks, metrics=["hit_rate@1"])
        # only the retrieved chunks are known (a production run's hits): nothing to warn
        Relevance(golden, chunks, chunking_complete=False)
        # labels that all name documents are document qrels: evaluate scores them by document
        Relevance([GoldenItem("q3", "c", relevant_chunk_ids=("a",))], chunks)


def test_span_metrics_at_document_level_say_to_score_evidence_at_chunk_level():
    chunks = [Chunk("a#0", "a", 0, 1, text="x")]
    golden = GoldenSet([GoldenItem("q1", "a", relevant_chunk_ids=("a#0",))])
    with pytest.raises(ValueError, match=r"coverage@2.*level='chunk'.*level='document'"):
        evaluate(Run.from_ranked({"q1": ["a#0"]}), golden, chunks, metrics=["coverage@2"],
                 level="document")


def test_evidence_text_errors_name_the_item_and_the_cause():
    doc = Document("d", "0123456789")
    chunks = [Chunk("d#0", "d", 0, 10, text=doc.text)]
    past = GoldenItem("q1", "a", evidence=(Evidence("d", 5, 20),))
    with pytest.raises(ValueError, match=r"'q1' evidence\[0\].*past the end of document "
                                         r"'d' \(10 characters\)"):
        Relevance([past], chunks, documents={"d": doc})
    elsewhere = GoldenItem("q2", "a", evidence=(Evidence("other", 0, 3),))
    with pytest.raises(ValueError, match=r"'q2' evidence\[0\].*document 'other' is not among "
                                         r"the 1 documents given"):
        Relevance([elsewhere], chunks, documents={"d": doc})
    with pytest.raises(ValueError, match="has no quoted text"):
        Relevance([elsewhere], chunks)
    blank = GoldenItem("q3", "a", evidence=(Evidence("d", 0, 3, "   "),))
    with pytest.raises(ValueError, match=r"'q3' evidence\[0\]: evidence d\[0:3\] holds only "
                                         "whitespace"):
        Relevance([blank], chunks)


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
