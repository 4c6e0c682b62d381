"""Traces and evidence diagnosis: the four regression cases of the context-loss incident,
superseded sources, unrecorded context, ACL in traces, JSONL round trip, growing the golden
set from a bug report."""

from __future__ import annotations

import json
import re

import pytest

from workbench.corpus import UNRESTRICTED, Chunk, Corpus, Document, admit
from workbench.diagnose import (
    WITHHELD,
    Trace,
    case_from_bug_report,
    case_from_trace,
    diagnose_trace,
    diagnosis_table,
    load_traces,
    make_trace,
    save_traces,
    trace_question,
    traces_from_result,
)
from workbench.generation import Answer, ExtractiveReader, run_generation_eval
from workbench.generation.context import assemble_context, context_from_passages
from workbench.generation.grading import grade_answer
from workbench.golden import GoldenSet, add_case
from workbench.retrieval.base import Hit

# Version 4 of an expense policy: the general rule and, in the next chunk, its exception.
RULE = "Submit travel receipts within 14 days of returning from a trip."
EXCEPTION = "For international trips the deadline is 21 days instead."
R4 = f"# Expenses v4\n\n## Deadline\n\n{RULE}\n\n## International trips\n\n{EXCEPTION}\n"
R3 = "# Expenses v3\n\nSubmit travel receipts within 30 days of returning from a trip.\n"
DOCS = Corpus([
    Document("expense-r4", R4, "Expenses", {"version": 4, "status": "current"}),
    Document("expense-r3", R3, "Expenses (old)", {"version": 3, "status": "superseded",
                                                  "superseded_by": "expense-r4"}),
    admit("secret", "Board minutes: SECRET-MERGER-7 is approved.", "Minutes",
          {"acl": ["board"]}),
])
SPLIT = R4.index("## International")
CHUNKS = [Chunk("expense-r4#0", "expense-r4", 0, SPLIT, text=R4[:SPLIT]),
          Chunk("expense-r4#1", "expense-r4", SPLIT, len(R4), text=R4[SPLIT:]),
          Chunk("expense-r3#0", "expense-r3", 0, len(R3), text=R3),
          Chunk("secret#0", "secret", 0, len(DOCS["secret"].text), text=DOCS["secret"].text)]
BY_ID = {c.id: c for c in CHUNKS}
QUESTION = "how long do i have to hand in receipts for an international trip"
ITEM = case_from_bug_report(QUESTION, [("expense-r4", RULE), ("expense-r4", EXCEPTION)],
                            ["14 days", "21 days"], corpus=DOCS, qid="exc-1",
                            category="exception")


def trace(hits, answer, context=None, **kw):
    kw.setdefault("user_groups", UNRESTRICTED)
    ctx = context if context is not None else assemble_context(hits, CHUNKS, DOCS, **kw)
    ans = Answer(answer)
    return make_trace(ITEM.qid, ITEM.question, hits, ctx, answer=ans, grade=grade_answer(ITEM, ans,
                                                                                         ctx),
                      chunks=CHUNKS, corpus=DOCS)


# ----------------------------------------------------------------------------- seed cases

def test_exception_never_retrieved_is_a_retrieval_miss():
    t = trace(["expense-r4#0"], f"{RULE} [P1]")
    d = diagnose_trace(t, ITEM, CHUNKS, DOCS)
    assert d.labels == ("retrieval_miss",)
    assert d.evidence["retrieval_miss"] == ("expense-r4#1",)
    assert {f.fact: f.status for f in d.facts} == {"14 days": "cited",
                                                    "21 days": "not_retrieved"}
    assert d.passed is False


def test_exception_retrieved_but_not_in_context_is_context_loss():
    # both retrieved; the budget fits the rule only, so the exception never reaches the model
    hits = ["expense-r4#0", "expense-r4#1"]
    budget = assemble_context(hits[:1], CHUNKS, DOCS, user_groups=UNRESTRICTED).tokens_used
    t = trace(hits, f"{RULE} [P1]", budget_tokens=budget)
    assert t.context_ids == ["expense-r4#0"] and t.drop_reason("expense-r4#1") == "budget"
    d = diagnose_trace(t, ITEM, CHUNKS, DOCS)
    assert d.labels == ("context_loss",)
    assert d.evidence["context_loss"] == ("expense-r4#1",)
    assert {f.fact: f.status for f in d.facts}["21 days"] == "not_in_context"
    # the same without a budget: just a context that lacks the mapping
    t2 = trace(hits, f"{RULE} [P1]", context=context_from_passages([BY_ID["expense-r4#0"]]))
    assert diagnose_trace(t2, ITEM, CHUNKS).labels == ("context_loss",)


def test_citing_a_label_outside_the_context_is_an_unknown_citation():
    t = trace(["expense-r4#0", "expense-r4#1"], "14 days, or 21 days for international trips "
              "[P1][P9].")
    assert t.unknown_citations == ("P9",) and t.citations == {"P1": "expense-r4#0"}
    d = diagnose_trace(t, ITEM, CHUNKS, DOCS)
    assert d.labels == ("unknown_citation",)
    assert d.evidence["unknown_citation"] == ("P9",)


def test_valid_labels_with_a_wrong_number_pass_the_id_checks_but_fail_the_claims():
    t = trace(["expense-r4#0", "expense-r4#1"], "You have 30 days [P1][P2].")
    d = diagnose_trace(t, ITEM, CHUNKS, DOCS)
    assert d.labels == () and d.ids_ok  # no id problem at all...
    assert d.passed is False  # ...but the must-mention check rejects the answer
    assert t.grade is not None and t.grade["method"] == "must_mention"
    assert {f.fact: f.status for f in d.facts} == {"14 days": "retrieved_unused",
                                                    "21 days": "retrieved_unused"}
    good = trace(["expense-r4#0", "expense-r4#1"], "14 days [P1]; 21 days abroad [P2].")
    gd = diagnose_trace(good, ITEM, CHUNKS, DOCS)
    assert gd.labels == () and gd.passed is True
    assert {f.status for f in gd.facts} == {"cited"}


# ----------------------------------------------------------------------------- more labels

def test_superseded_source_cited_or_copied():
    hits = ["expense-r3#0", "expense-r4#0", "expense-r4#1"]
    cited = trace(hits, "30 days [P1].", include_superseded=True)
    assert cited.doc_versions["expense-r3"]["superseded_by"] == "expense-r4"
    d = diagnose_trace(cited, ITEM, CHUNKS, DOCS)
    assert "superseded_source" in d.labels and d.evidence["superseded_source"] == (
        "expense-r3#0",)
    copied = trace(hits, "Submit travel receipts within 30 days of returning from a trip.",
                   include_superseded=True)
    assert "superseded_source" in diagnose_trace(copied, ITEM, CHUNKS, DOCS).labels
    # the version filter (default) removes it before the prompt: no superseded source
    filtered = trace(hits, f"{RULE} [P1] {EXCEPTION} [P2]")
    assert filtered.drop_reason("expense-r3#0") == "superseded"
    assert diagnose_trace(filtered, ITEM, CHUNKS, DOCS).labels == ()
    # cited chunk's version known only from the corpus (trace recorded without it)
    bare = make_trace("exc-1", QUESTION, hits, assemble_context(hits, CHUNKS, DOCS,
                                                                include_superseded=True,
                                                                user_groups=UNRESTRICTED),
                      answer="30 days [P1]", chunks=CHUNKS)
    assert bare.doc_versions == {}
    assert "superseded_source" in diagnose_trace(bare, ITEM, CHUNKS, DOCS).labels


def test_superseded_source_fires_with_parent_retrieval():
    """Regression: parent chunk ids are ``doc#parent#j``; reading the document out of the id
    gave ``doc#parent``, which names no document, so the old version went unflagged."""
    from workbench.chunking import ParentChildChunker, RecursiveChunker
    from workbench.retrieval import BM25Retriever
    from workbench.retrieval.expand import ParentRetriever

    chunker = ParentChildChunker(RecursiveChunker(size=400), child_size=60)
    children = [c for d in DOCS.values() for c in chunker.chunk(d)]
    parents = [c for d in DOCS.values() for c in chunker.parents(d)]
    pieces = children + parents
    old = next(c for c in parents if c.doc_id == "expense-r3")
    assert old.id == "expense-r3#parent#0"
    retriever = ParentRetriever(BM25Retriever(children), children)
    hits = retriever.search("submit travel receipts within 30 days", 3)
    assert hits[0].chunk_id == old.id
    ctx = assemble_context(hits, pieces, DOCS, include_superseded=True, user_groups=UNRESTRICTED)
    label = next(lab for lab, cid in ctx.labels.items() if cid == old.id)
    t = make_trace("exc-1", QUESTION, hits, ctx, answer=f"30 days [{label}]", chunks=pieces)
    assert [p.doc_id for p in t.context if p.chunk_id == old.id] == ["expense-r3"]
    d = diagnose_trace(t, ITEM, pieces, DOCS)
    assert d.evidence.get("superseded_source") == (old.id,)
    # chunk ids need not hold the document at all (production ids are uuids)
    renamed = [Chunk(f"uuid-{n}", c.doc_id, c.start, c.end, text=c.text) for n, c in
               enumerate(CHUNKS)]
    ctx = assemble_context(["uuid-2"], renamed, DOCS, include_superseded=True,
                           user_groups=UNRESTRICTED)
    t = make_trace("exc-1", QUESTION, ["uuid-2"], ctx, answer="30 days [P1]", chunks=renamed)
    assert t.retrieved[0].doc_id == "expense-r3"
    assert "superseded_source" in diagnose_trace(t, ITEM, renamed, DOCS).labels
    assert make_trace("exc-1", QUESTION, ["uuid-2"], ctx, answer="x").retrieved[0].doc_id == ""


def test_grade_details_are_withheld_from_a_user_who_may_not_read_the_evidence():
    board_item = case_from_bug_report("is the merger approved", [("secret", "SECRET-MERGER-7")],
                                      ["SECRET-MERGER-7"], corpus=DOCS, qid="b1")
    hits = ["secret#0", "expense-r4#0"]
    outsider = assemble_context(hits, CHUNKS, DOCS, user_groups=["staff"])
    answer = Answer("I don't know.")
    grade = grade_answer(board_item, answer, outsider)
    assert "SECRET-MERGER-7" in json.dumps(dict(grade.details))  # what the grader knows
    t = make_trace("b1", "is the merger approved", hits, outsider, answer=answer, grade=grade,
                   chunks=CHUNKS,
                   corpus=DOCS, item=board_item)
    assert t.evidence_withheld and t.passed is False
    assert t.grade == {"passed": False, "method": "must_mention",
                       "details": {"withheld": WITHHELD}}
    assert "SECRET" not in json.dumps(t.to_json()) and "secret" not in json.dumps(t.to_json())
    # no item or no corpus to check against: withheld too (fail closed)
    assert make_trace("b1", "q", hits, outsider, answer=answer, grade=grade,
                      chunks=CHUNKS).evidence_withheld
    # a reader of the evidence, and the unrestricted view, keep the details
    board = assemble_context(hits, CHUNKS, DOCS, user_groups=["Board"])
    kept = make_trace("b1", "q", hits, board, answer=answer, grade=grade, chunks=CHUNKS,
                      corpus=DOCS,
                      item=board_item)
    assert not kept.evidence_withheld and kept.grade["details"]["missing"] == ["SECRET-MERGER-7"]
    everything = assemble_context(hits, CHUNKS, DOCS, user_groups=UNRESTRICTED)
    assert not make_trace("b1", "q", hits, everything, answer=answer, grade=grade,
                          chunks=CHUNKS).evidence_withheld


def test_unrecorded_context_unless_expansion_recorded_it():
    ctx = assemble_context(["expense-r4#0", "expense-r4#1"], CHUNKS, DOCS, user_groups=UNRESTRICTED)
    ans = f"{RULE} [P1] {EXCEPTION} [P2]"
    t = make_trace("exc-1", QUESTION, ["expense-r4#0"], ctx, answer=ans, chunks=CHUNKS)
    d = diagnose_trace(t, ITEM, CHUNKS)
    # as in the incident write-up: "found" is what retrieval recorded, so the unrecorded
    # chunk is also a retrieval miss
    assert d.labels == ("retrieval_miss", "unrecorded_context")
    assert d.evidence["unrecorded_context"] == ("expense-r4#1",)
    expanded = make_trace("exc-1", QUESTION, ["expense-r4#0"], ctx, answer=ans, chunks=CHUNKS,
                          expanded=["expense-r4#1"])
    assert [h.source for h in expanded.retrieved] == ["retrieval", "expansion"]
    assert diagnose_trace(expanded, ITEM, CHUNKS).labels == ()


def test_restricted_chunks_never_reach_the_trace(tmp_path):
    hits = [Hit("secret#0", 9.0, 1), Hit("expense-r4#0", 5.0, 2), Hit("expense-r4#1", 4.0, 3)]
    ctx = assemble_context(hits, CHUNKS, DOCS, user_groups=["staff"])
    t = make_trace("exc-1", QUESTION, hits, ctx, answer="14 days [P1]", chunks=CHUNKS, corpus=DOCS)
    assert t.retrieved_ids == ["expense-r4#0", "expense-r4#1"]
    assert [h.rank for h in t.retrieved] == [2, 3]  # true ranks kept
    assert t.user_groups == ("staff",) and "secret" not in t.doc_versions
    path = save_traces(tmp_path / "t.jsonl", [t])
    text = path.read_text()
    assert "secret" not in text and "SECRET-MERGER" not in text
    # the unrestricted evaluation view records everything
    open_view = make_trace("exc-1", QUESTION, hits, assemble_context(hits, CHUNKS, DOCS,
                                                                     user_groups=UNRESTRICTED),
                           answer="x", chunks=CHUNKS)
    assert open_view.retrieved_ids[0] == "secret#0"


def test_unanswerable_item_has_no_required_evidence():
    item = case_from_bug_report("who won the 1998 office chess cup", [], (), corpus=DOCS,
                                answerable=False)
    t = trace(["expense-r4#0"], "I don't know.")
    d = diagnose_trace(t, item, CHUNKS)
    assert d.labels == () and d.required == () and d.retrieved_ok is None


# ----------------------------------------------------------------------------- JSONL

def test_trace_jsonl_round_trip_holds_no_document_text(tmp_path):
    t = trace(["expense-r3#0", "expense-r4#0", "expense-r4#1"], "14 days [P1] and 21 [P2].",
              include_superseded=False)
    path = save_traces(tmp_path / "traces.jsonl", [t, t])
    assert load_traces(path) == [t, t]
    text = path.read_text(encoding="utf-8")
    for sentence in (RULE, EXCEPTION, R3.strip().splitlines()[-1], "## International trips"):
        assert sentence not in text
    row = json.loads(text.splitlines()[0])
    assert row["retrieved"][1] == {"chunk_id": "expense-r4#0", "rank": 2, "score": None,
                                   "doc_id": "expense-r4", "start": 0, "end": SPLIT,
                                   "source": "retrieval"}
    assert not list(tmp_path.glob(".*.tmp"))  # atomic write leaves no temporary file


def test_load_traces_names_file_and_line(tmp_path):
    good = json.dumps(trace(["expense-r4#0"], "x").to_json())
    path = tmp_path / "bad.jsonl"
    path.write_text(good + "\n\n{not json\n", encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{path}:3: malformed JSON")):
        load_traces(path)
    path.write_text(good + "\n" + json.dumps({"qid": "q1"}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{path}:2: field 'query'")):
        load_traces(path)
    path.write_text(json.dumps({"qid": "q", "query": "x", "retrieved": [{"oops": 1}]}) + "\n")
    with pytest.raises(ValueError, match=r":1: field 'retrieved'"):
        load_traces(path)
    # the field blamed is the one that failed, whatever the error's words
    for name, entry in (("context", {"TraceHit": 1}), ("context", [1]),
                        ("retrieved", {"TracePassage": 1}), ("retrieved", [1])):
        path.write_text(json.dumps({"qid": "q", "query": "x", name: [entry]}) + "\n")
        with pytest.raises(ValueError, match=rf":1: field '{name}'"):
            load_traces(path)
    with pytest.raises(ValueError, match="not found"):
        load_traces(tmp_path / "missing.jsonl")


# ----------------------------------------------------------------------------- real pipeline

def test_traces_from_a_generation_result_on_the_handbook(handbook, tmp_path):
    from workbench.chunking import FixedChunker, chunk_corpus
    from workbench.evaluation import Run
    from workbench.retrieval.bm25 import BM25Retriever

    corpus, golden = handbook
    chunks = chunk_corpus(FixedChunker(size=800, overlap=100), corpus.documents)
    bm25 = BM25Retriever(chunks)
    qids = ["q001", "q034", "q040", "q054"]
    result = run_generation_eval(ExtractiveReader(), bm25, golden, chunks, documents=corpus, k=5,
                                 budget_tokens=400, qids=qids, user_groups=UNRESTRICTED)
    run = Run.from_retriever(bm25, [golden.get(q) for q in qids], k=5)
    traces = traces_from_result(result, golden=golden, corpus=corpus, chunks=chunks, run=run)
    assert [t.qid for t in traces] == qids
    t34 = traces[1]
    assert t34.query == golden.get("q034").question and t34.category == "version-trap"
    assert t34.retrieved_ids == list(result.retrieved["q034"])
    assert all(h.score is not None for h in t34.retrieved) and "retrieval_s" in t34.timing
    assert t34.context_ids == list(result.contexts["q034", "live"].chunk_ids)
    assert t34.model_id == "extractive-reader/1" and t34.prompt_version == "extractive-v1"
    assert t34.grade is not None and t34.grade["method"] == "must_mention"
    # without golden= / run=: the question text and the scores come from the result itself
    bare = traces_from_result(result, corpus=corpus, chunks=chunks)
    assert [t.query for t in bare] == [t.query for t in traces]
    assert [[(h.chunk_id, h.rank) for h in t.retrieved] for t in bare] == [
        [(h.chunk_id, h.rank) for h in t.retrieved] for t in traces]
    assert [[h.score for h in t.retrieved] for t in bare] == [
        [pytest.approx(h.score) for h in t.retrieved] for t in traces]
    assert "retrieval_s" not in bare[1].timing  # search latency needs the Run
    oracle = traces_from_result(result, "oracle", golden=golden)
    assert {h.source for t in oracle for h in t.retrieved} <= {"oracle"}
    path = save_traces(tmp_path / "traces.jsonl", traces)
    assert load_traces(path) == traces
    text = path.read_text(encoding="utf-8")
    by_id = {c.id: c for c in chunks}
    answers = " ".join(t.answer for t in traces)
    for t in traces:  # no sentence of any recorded chunk, except what an answer quotes
        for cid in t.retrieved_ids:
            for sentence in re.split(r"(?<=[.!?])\s+", by_id[cid].text):
                if len(sentence) > 40 and sentence not in answers:
                    assert sentence not in text
    table = diagnosis_table(traces, golden, chunks, corpus)
    assert list(table["qid"]) == qids
    assert table.set_index("qid").loc["q054", "labels"] == []  # unanswerable: no evidence


def test_trace_question_reproduces_a_bug_report(handbook):
    from workbench.chunking import FixedChunker, chunk_corpus
    from workbench.retrieval.bm25 import BM25Retriever

    corpus, _ = handbook
    chunks = chunk_corpus(FixedChunker(size=800, overlap=100), corpus.documents)
    item = case_from_bug_report(
        # worded as users ask (the superseded policy's "returning"): the old version ranks
        # first by a clear margin, not by a near-tie that any tokeniser change could flip
        "do i have 30 days to submit my travel receipts after returning from a trip?",
        [("expenses-travel", "Travel receipts must be submitted within 14 days of the date "
                             "you return from the trip.")], ["14 days"], corpus=corpus)
    t = trace_question(ExtractiveReader(), BM25Retriever(chunks), item.question, chunks,
                       documents=corpus, item=item, include_superseded=True, budget_tokens=400,
                       user_groups=UNRESTRICTED)
    d = diagnose_trace(t, item, chunks, corpus)
    assert t.qid == item.qid and t.passed is False and "30 days" in t.answer
    assert d.labels == ("context_loss", "superseded_source")
    assert t.drop_reason("expenses-travel#1") == "budget"


# ----------------------------------------------------------------------------- golden growth

def test_case_from_bug_report_locates_quotes_and_refuses_ambiguous_ones(tmp_path, handbook):
    corpus, golden = handbook
    quote = "Travel receipts must be submitted within 14 days of the date you return"
    item = case_from_bug_report("the assistant said 30 days for travel receipts; it's 14",
                                [("expenses-travel", quote)], ["14 days"], corpus=corpus,
                                category="version-trap", reported="2026-03-02")
    ev = item.evidence[0]
    assert corpus["expenses-travel"].text[ev.start:ev.end] == quote == ev.text
    assert item.source == "real" and item.qid.startswith("real-")
    assert item.to_json()["reported"] == "2026-03-02"
    with pytest.raises(ValueError, match="more than once"):
        case_from_bug_report("q", [("expenses-travel", "14 days")], corpus=corpus)
    with pytest.raises(ValueError, match="not found"):
        case_from_bug_report("q", [("expenses-travel", "within 15 days")], corpus=corpus)
    with pytest.raises(ValueError, match="not in the corpus"):
        case_from_bug_report("q", [("no-such-doc", "x")], corpus=corpus)
    with pytest.raises(ValueError, match="at least one"):
        case_from_bug_report("q", [], corpus=corpus)
    # appended to a copy of the golden set, atomically; the original is untouched
    copy = tmp_path / "golden.jsonl"
    golden.save(copy)
    grown = add_case(copy, item, corpus)
    assert len(grown) == len(golden) + 1
    assert GoldenSet.load(copy).get(item.qid).evidence == item.evidence
    with pytest.raises(ValueError, match="already exists"):
        add_case(copy, item, corpus)


def test_case_from_trace_uses_the_traced_question():
    t = Trace("bug-7", QUESTION, category="exception")
    item = case_from_trace(t, EXCEPTION, "expense-r4", corpus=DOCS, must_mention=["21 days"])
    assert item.qid == "bug-7" and item.question == QUESTION and item.source == "real"
    assert item.category == "exception"
    assert item.evidence[0].text == EXCEPTION


# ----------------------------------------------------------------------------- one relevance

def test_a_prebuilt_relevance_gives_the_same_diagnoses_and_is_built_once(handbook, monkeypatch):
    """diagnosis_table judges the chunking once (not once per trace), passes its evidence
    threshold through, and every diagnosis equals the per-trace one."""
    from workbench.chunking import FixedChunker, chunk_corpus
    from workbench.diagnose import diagnosis as diagnosis_module
    from workbench.diagnose import trace_relevance
    from workbench.metrics import Relevance
    from workbench.retrieval.bm25 import BM25Retriever

    corpus, golden = handbook
    chunks = chunk_corpus(FixedChunker(size=300, overlap=0), corpus.documents)
    qids = ["q001", "q034", "q040", "q054", "q010", "q020"]
    result = run_generation_eval(ExtractiveReader(), BM25Retriever(chunks), golden, chunks,
                                 documents=corpus, k=3, budget_tokens=200, qids=qids,
                                 user_groups=UNRESTRICTED)
    traces = traces_from_result(result, golden=golden, corpus=corpus, chunks=chunks)
    built = []

    class Counting(Relevance):
        def __init__(self, *args, **kwargs):
            built.append(1)
            super().__init__(*args, **kwargs)

    for threshold in (0.75, 0.3, 1.0):
        shared = trace_relevance(traces, golden, chunks, threshold)
        for t in traces:
            alone = diagnose_trace(t, golden.get(t.qid), chunks, corpus,
                                   evidence_threshold=threshold)
            assert diagnose_trace(t, golden.get(t.qid), chunks, corpus,
                                  evidence_threshold=threshold,
                                  relevance=shared) == alone
        built.clear()
        monkeypatch.setattr(diagnosis_module, "Relevance", Counting)
        table = diagnosis_table(traces, golden, chunks, corpus, evidence_threshold=threshold)
        monkeypatch.undo()
        assert len(built) == 1
        for row in table.to_dict("records"):
            t = next(t for t in traces if t.qid == row["qid"])
            d = diagnose_trace(t, golden.get(t.qid), chunks, corpus, evidence_threshold=threshold)
            assert row["labels"] == list(d.labels)
            assert row["facts"] == {f.fact: f.status for f in d.facts}


def test_a_prebuilt_relevance_that_does_not_match_is_refused():
    from workbench.diagnose import trace_relevance

    t = trace(["expense-r4#0"], f"{RULE} [P1]")
    shared = trace_relevance([t], [ITEM], CHUNKS)
    assert diagnose_trace(t, ITEM, CHUNKS, DOCS, relevance=shared) == diagnose_trace(
        t, ITEM, CHUNKS, DOCS)
    with pytest.raises(ValueError, match=r"evidence_threshold 0\.75, the diagnosis asks 0\.5"):
        diagnose_trace(t, ITEM, CHUNKS, DOCS, evidence_threshold=0.5, relevance=shared)
    with pytest.raises(ValueError, match="another chunking"):
        diagnose_trace(t, ITEM, CHUNKS[:2], DOCS, relevance=shared)
    other = case_from_bug_report("another question", [("expense-r4", RULE)], ["14 days"],
                                 corpus=DOCS, qid=ITEM.qid)
    with pytest.raises(ValueError, match="does not hold golden item 'exc-1' as given"):
        diagnose_trace(t, other, CHUNKS, DOCS, relevance=shared)
    with pytest.raises(ValueError, match="does not hold golden item"):
        diagnose_trace(t, ITEM, CHUNKS, DOCS, relevance=trace_relevance([], [ITEM], CHUNKS))


def test_triage_and_diagnosis_share_one_definition_of_retrieved(handbook):
    """q049 and q051 need two spans each; one found is not the answer's evidence: triage
    said GEN_FAIL while diagnosis said their must-mention fact was never retrieved."""
    from workbench.chunking import FixedChunker, chunk_corpus
    from workbench.diagnose import diagnose_trace, triage
    from workbench.retrieval.bm25 import BM25Retriever

    corpus, golden = handbook
    chunks = chunk_corpus(FixedChunker(size=800, overlap=100), corpus.documents)
    result = run_generation_eval(ExtractiveReader(), BM25Retriever(chunks), golden, chunks,
                                 documents=corpus, k=5, user_groups=UNRESTRICTED)
    rows = triage(result).rows.set_index("qid")
    traces = traces_from_result(result, golden=golden, corpus=corpus, chunks=chunks)
    diagnosed = {t.qid: diagnose_trace(t, golden.get(t.qid), chunks, corpus) for t in traces}
    for qid, row in rows.iterrows():  # every question of the run, not only the two
        assert diagnosed[qid].retrieved_ok == row["retrieved_ok"], qid
    for qid in ("q049", "q051"):
        assert rows.loc[qid, "quadrant"] == "RET_FAIL"
        assert "not_retrieved" in {f.status for f in diagnosed[qid].facts}
        assert "retrieval_miss" in diagnosed[qid].labels
