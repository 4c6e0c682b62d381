"""Conversational golden items and query rewriting scored three ways on the handbook."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import HANDBOOK
from workbench.chunking import FixedChunker, chunk_corpus
from workbench.corpus import UNRESTRICTED, load_folder
from workbench.generation.rewrite import evaluate_rewrites, last_user_turn_rewrite
from workbench.golden import GoldenSet, GoldenSetError
from workbench.golden.items import ROLES
from workbench.retrieval import BM25Retriever
from workbench.text import normalize_text


def test_conversations_load_validate_and_round_trip(tmp_path):
    docs = load_folder(HANDBOOK / "docs")
    conv = GoldenSet.load(HANDBOOK / "conversations.jsonl")
    assert len(conv) == 10 and all(i.history and i.gold_rewrite for i in conv)
    assert conv.problems(docs) == []
    conv.save(tmp_path / "c.jsonl")
    again = GoldenSet.load(tmp_path / "c.jsonl")
    assert [i.to_json() for i in again] == [i.to_json() for i in conv]
    # an old file is unchanged: the same rows, no history or gold_rewrite key appears
    old = GoldenSet.load(HANDBOOK / "golden.jsonl")
    old.save(tmp_path / "g.jsonl")
    rows = [json.loads(line) for line in (tmp_path / "g.jsonl").read_text().splitlines()]
    assert len(rows) == len(old) and all(i.history == () and i.gold_rewrite is None
                                         for i in old)
    assert not any("history" in r or "gold_rewrite" in r for r in rows)


TURN_KEYS = ["role", "content", "name"]
TURN_VALUES = ["user", "assistant", "bot", "", "  ", "x y", 3]


@settings(max_examples=60)
@given(st.one_of(st.just("x"), st.just({"role": "user", "content": "x"}),
                 st.lists(st.one_of(st.just("turn"), st.dictionaries(
                     st.sampled_from(TURN_KEYS), st.sampled_from(TURN_VALUES), max_size=3)),
                     max_size=3)))
def test_bad_history_is_one_clear_problem(tmp_path_factory, history):
    """The oracle is the rule itself: a list of {"role": "user" | "assistant", "content":
    non-blank text} loads (content normalised), anything else is one problem naming the
    field."""
    ok = isinstance(history, list) and all(
        isinstance(t, dict) and set(t) == {"role", "content"} and t["role"] in ROLES
        and isinstance(t["content"], str) and t["content"].strip() != "" for t in history)
    row = {"qid": "c1", "question": "and then?", "relevant_doc_ids": ["d"], "history": history}
    p = tmp_path_factory.mktemp("h") / "g.jsonl"
    p.write_text(json.dumps(row) + "\n")
    if ok:
        assert [dict(t) for t in GoldenSet.load(p)[0].history] == [
            {"role": t["role"], "content": normalize_text(t["content"])} for t in history]
    else:
        with pytest.raises(GoldenSetError, match="field 'history'") as err:
            GoldenSet.load(p)
        assert str(err.value).count("history") == 1


def test_last_user_turn_rewrite():
    hist = [{"role": "user", "content": "annual leave days"},
            {"role": "assistant", "content": "20 days"}]
    assert last_user_turn_rewrite(hist, "and after 10 years?") == "annual leave days and " \
                                                                  "after 10 years?"
    assert last_user_turn_rewrite([], "q") == "q"


def test_chat_rewriter_falls_back_to_the_question_when_the_endpoint_fails():
    from workbench.generation import OpenAIChatGenerator
    from workbench.generation.rewrite import ChatRewriter

    client = OpenAIChatGenerator("http://127.0.0.1:9", "none", api_key_env="", max_retries=0,
                                 timeout=2)
    rewriter = ChatRewriter(client)
    assert rewriter([{"role": "user", "content": "leave"}], "and after 10 years?") == \
        "and after 10 years?"
    assert rewriter.failures and rewriter.failures[0][0] == "and after 10 years?"
    assert rewriter.model_id == "none"


def test_three_ways_on_the_handbook_conversations():
    docs = load_folder(HANDBOOK / "docs")
    conv = GoldenSet.load(HANDBOOK / "conversations.jsonl")
    chunks = chunk_corpus(FixedChunker(size=800, overlap=100), docs.documents)
    result = evaluate_rewrites(BM25Retriever(chunks), conv, chunks, last_user_turn_rewrite, k=5)
    assert result.rewrites["c01"].startswith("how many days of annual leave")
    table = result.gold.summary() if result.gold is not None else None
    print("\n" + table.to_string())
    cmp = result.compare()
    print(cmp.to_string())
    assert set(cmp["items"]) == {"all", "with gold rewrite"}
    # the identity "rewrite" scores exactly as the raw last turn: no flips
    same = evaluate_rewrites(BM25Retriever(chunks), conv, chunks, lambda h, q: q, k=5)
    ident = same.compare()
    assert (ident.loc[ident["items"] == "all", "wins"] == 0).all()
    assert (ident.loc[ident["items"] == "all", "losses"] == 0).all()
    with pytest.raises(ValueError, match="no conversational items"):
        evaluate_rewrites(BM25Retriever(chunks), GoldenSet.load(HANDBOOK / "golden.jsonl"),
                          chunks, last_user_turn_rewrite)


def test_a_rewritten_query_is_traced_beside_the_original(tmp_path):
    from workbench.diagnose import load_traces, save_traces
    from workbench.diagnose.traces import trace_question
    from workbench.generation import ExtractiveReader
    from workbench.widgets import trace_viewer_html

    docs = load_folder(HANDBOOK / "docs")
    chunks = chunk_corpus(FixedChunker(size=800, overlap=100), docs.documents)
    bm25 = BM25Retriever(chunks)
    item = next(iter(GoldenSet.load(HANDBOOK / "conversations.jsonl")))
    rewrite = last_user_turn_rewrite(list(item.history), item.question)
    assert rewrite != item.question
    traced = trace_question(ExtractiveReader(), bm25, item.question, chunks, documents=docs, k=3,
                            item=item, rewritten_query=rewrite, user_groups=UNRESTRICTED)
    plain = trace_question(ExtractiveReader(), bm25, item.question, chunks, documents=docs, k=3,
                           item=item, user_groups=UNRESTRICTED)
    assert traced.query == item.question and traced.rewritten_query == rewrite
    # the rewrite is what was searched: its hits are the rewrite's, not the raw turn's
    assert [h.chunk_id for h in traced.retrieved] == [h.chunk_id for h in
                                                     bm25.search(rewrite, 3)]
    assert plain.rewritten_query is None and [h.chunk_id for h in plain.retrieved] == [
        h.chunk_id for h in bm25.search(item.question, 3)]
    save_traces(tmp_path / "t.jsonl", [traced])
    assert load_traces(tmp_path / "t.jsonl")[0].rewritten_query == rewrite
    html = trace_viewer_html(traced, item, chunks, docs, user_groups=UNRESTRICTED)
    assert "Rewritten:" in html and "Rewritten:" not in trace_viewer_html(plain, item, chunks,
                                                                           docs,
                                                                           user_groups=UNRESTRICTED)
