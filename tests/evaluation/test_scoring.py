"""evaluate (workbench.evaluation.scoring): a retriever or a Run scored against a golden set,
at chunk and document level, and the inputs it refuses."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.chunking import FixedChunker, chunk_corpus
from workbench.corpus import Chunk, ChunkList, ChunkTable, Document
from workbench.evaluation import Evaluation, Run, evaluate
from workbench.golden import Evidence, GoldenItem, GoldenSet
from workbench.io import WorkbenchError
from workbench.metrics import Relevance
from workbench.retrieval import BM25Retriever, CallableRetriever, Hit

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


# ----- regressions of the "one ruler" issue: plausible numbers that were wrong --------------

def tiny_evidence(n: int = 12):
    """n questions, each with one evidence span that is exactly one chunk."""
    from workbench.golden import Evidence

    chunks = [Chunk(f"d#{i}", "d", 10 * i, 10 * i + 10, text=f"word{i:05d} ") for i in range(n + 2)]
    golden = GoldenSet([GoldenItem(f"q{i}", f"question {i}",
                                   evidence=(Evidence("d", 10 * i, 10 * i + 9, f"word{i:05d}"),),
                                   category="a" if i % 2 else "b") for i in range(n)])
    return chunks, golden



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


def test_bad_arguments_are_one_line_errors():
    chunks, golden = tiny_evidence()
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
    chunks, golden = tiny_evidence()
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

    chunks, golden = tiny_evidence()
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


# ----- the chunking given as a ChunkTable: the same numbers and refusals as a plain list -----

_WORDS = ["alpha", "beta", "gamma", "delta", "refund", "leave", "vpn", "the", "a"]


def _outcome(run, golden, chunks, **kw):
    """The frame and exclusions of an evaluation, or its refusal; with the warnings it gave
    (counts of chunks given read as N: appended documents change them, nothing else)."""
    import re

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            ev = evaluate(run, golden, chunks, **kw)
            out = (ev.frame.to_dict("list"), ev.excluded)
        except WorkbenchError as e:
            out = ("refused", str(e))
    said = [str(w.message) for w in caught]
    return re.sub(r"\b\d+ chunks", "N chunks", repr((out, said)))


@st.composite
def _corpora(draw):
    """Documents cut with any size and overlap, golden items of every kind (evidence spans,
    graded chunk ids, some of no chunk, document ids read as chunk ids, unanswerable), and a
    run whose hits may name an unknown id or carry a chunk of no given document."""
    chunks, texts = [], {}
    for d in range(draw(st.integers(1, 3))):
        doc = f"doc{d}"
        text = " ".join(draw(st.lists(st.sampled_from(_WORDS), min_size=3, max_size=14)))
        texts[doc] = text
        size = draw(st.integers(4, 30))
        step = size - draw(st.integers(0, size - 1))
        for i, start in enumerate(range(0, len(text), step)):
            end = min(start + size, len(text))
            chunks.append(Chunk(f"{doc}#{i}", doc, start, end, text=text[start:end]))
    ids = [c.id for c in chunks]
    items = []
    for q in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["evidence", "chunk_id", "doc_as_chunk", "unanswerable"]))
        if kind == "evidence":
            evidence = []
            for _ in range(draw(st.integers(1, 2))):
                doc = draw(st.sampled_from(sorted(texts)))
                text = texts[doc]
                starts = [i for i, ch in enumerate(text) if ch != " "]
                start = draw(st.sampled_from(starts))
                end = draw(st.integers(start + 1, min(len(text), start + 25)))
                evidence.append(Evidence(doc, start, end, text[start:end]))
            items.append(GoldenItem(f"q{q}", "?", evidence=tuple(evidence)))
        elif kind == "chunk_id":
            labels = tuple(draw(st.lists(st.sampled_from([*ids, "gone#3"]), min_size=1,
                                         max_size=3, unique=True)))
            grades = {c: draw(st.integers(0, 2)) for c in labels}
            items.append(GoldenItem(f"q{q}", "?", relevant_chunk_ids=labels, relevance=grades))
        elif kind == "doc_as_chunk":
            items.append(GoldenItem(f"q{q}", "?", relevant_chunk_ids=(
                draw(st.sampled_from(sorted(texts))),)))
        else:
            items.append(GoldenItem(f"q{q}", "?", answerable=False))
    carried = Chunk("held#0", "held", 0, 5, text="alpha")
    hits = {}
    for item in items:
        ranked = draw(st.lists(st.sampled_from([*ids, "stray#0", "held#0"]), max_size=8,
                               unique=True))
        hits[item.qid] = tuple(Hit(cid, 1.0 / r, r, chunk=carried if cid == "held#0" else None)
                               for r, cid in enumerate(ranked, start=1))
    return chunks, GoldenSet(items), Run("sys", hits)


_UNRELATED = [Chunk(f"other{d}#{i}", f"other{d}", 5 * i, 5 * i + 5, text="gamma")
              for d in range(3) for i in range(4)]


@settings(max_examples=100, deadline=None)
@given(_corpora(), st.randoms(use_true_random=False),
       st.sampled_from([{}, {"level": "document"},
                        {"metrics": ["recall@3", "ndcg@5", "span_iou@3", "coverage@2"]}]))
def test_a_chunk_table_shuffled_or_grown_scores_as_the_plain_list(corpus, rng, kw):
    """The oracle is the plain list: the same chunks as a ChunkTable, in another order, or
    with other documents' chunks appended give the same rows, exclusions, refusals and
    warnings (relevance=... judged of the table, or of the list, too)."""
    chunks, golden, run = corpus
    expected = _outcome(run, golden, chunks, **kw)
    shuffled = list(chunks)
    rng.shuffle(shuffled)
    assert _outcome(run, golden, ChunkTable(chunks), **kw) == expected
    assert _outcome(run, golden, shuffled, **kw) == expected
    assert _outcome(run, golden, ChunkTable(shuffled), **kw) == expected
    assert _outcome(run, golden, [*chunks, *_UNRELATED], **kw) == expected
    assert _outcome(run, golden, ChunkTable([*_UNRELATED, *shuffled]), **kw) == expected
    if "level" not in kw:  # judgments reused: of the table or of the list, the same
        try:
            of_table, of_list = _judged(golden, ChunkTable(chunks)), _judged(golden, chunks)
        except WorkbenchError:
            return
        reused = _outcome(run, golden, chunks, relevance=of_list, **kw)
        assert _outcome(run, golden, of_table.index.table, relevance=of_table, **kw) == reused
        assert _outcome(run, golden, ChunkTable(chunks), relevance=of_list, **kw) == reused
        grown = [*chunks, *_UNRELATED]  # another chunking: refused alike
        assert _outcome(run, golden, ChunkTable(grown), relevance=of_table, **kw) \
            == _outcome(run, golden, grown, relevance=of_list, **kw)


def _judged(golden, chunks):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Relevance(golden, chunks)


def test_editing_the_list_after_building_the_table_changes_no_number():
    chunks, golden = tiny_evidence(6)
    run = Run.from_ranked({item.qid: [f"d#{i}" for i in range(8)] for item in golden}, "toy")
    table = ChunkTable(chunks)
    before = evaluate(run, golden, table).frame
    relevance = Relevance(golden, table)
    chunks.reverse()
    chunks[:] = [Chunk(c.id, c.doc_id, c.start + 3, c.end + 3, text=c.text) for c in chunks]
    after = evaluate(run, golden, table, relevance=relevance).frame
    assert after.equals(before)
    assert not evaluate(run, golden, chunks).frame.equals(before)  # the edit itself matters


_EDITS = {
    "append": lambda kept, draw: kept.append(draw(st.sampled_from(_UNRELATED))),
    "extend": lambda kept, draw: kept.extend(_UNRELATED[:draw(st.integers(0, 4))]),
    "+=": lambda kept, draw: kept.__iadd__(_UNRELATED[4:6]),
    "insert": lambda kept, draw: kept.insert(draw(st.integers(-3, 3)), _UNRELATED[7]),
    "pop": lambda kept, draw: kept.pop(draw(st.integers(-len(kept), len(kept) - 1)))
    if kept else None,
    "del": lambda kept, draw: kept.__delitem__(slice(draw(st.integers(0, 3)), None, 2)),
    "set": lambda kept, draw: kept.__setitem__(slice(0, 1), _UNRELATED[8:10]),
    "reverse": lambda kept, draw: kept.reverse(),
    "sort": lambda kept, draw: kept.sort(key=lambda c: (c.doc_id, -c.start)),
    "*=": lambda kept, draw: kept.__imul__(draw(st.integers(0, 2))),
    "clear": lambda kept, draw: kept.clear(),
}


@settings(max_examples=60, deadline=None)
@given(_corpora(), st.data(),
       st.sampled_from([{}, {"level": "document"}, {"metrics": ["recall@3", "span_iou@3"]}]))
def test_a_chunk_list_scores_as_a_plain_list_of_its_chunks_at_every_moment(corpus, data, kw):
    """The list chunk_corpus returns keeps its table between calls: scored, edited in place
    by any list method (removing chunks the run returns, adding others, repeating them,
    reordering), and scored again, it gives what a plain list of the same chunks gives."""
    chunks, golden, run = corpus
    kept = ChunkList(chunks)
    assert _outcome(run, golden, kept, **kw) == _outcome(run, golden, list(kept), **kw)
    assert _outcome(run, golden, kept, **kw) == _outcome(run, golden, list(kept), **kw)
    for _ in range(data.draw(st.integers(1, 3))):
        data.draw(st.sampled_from(sorted(_EDITS)).map(_EDITS.get))(kept, data.draw)
        assert _outcome(run, golden, kept, **kw) == _outcome(run, golden, list(kept), **kw)
