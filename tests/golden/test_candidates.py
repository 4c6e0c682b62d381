"""Candidate questions from real sources: CSV, JSONL, text, run logs and trace exports;
normalisation, de-duplication (exact and near, numbers kept apart) and sampling."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT
from workbench.golden import GoldenItem, GoldenSet
from workbench.golden.candidates import (
    Candidate,
    dedupe,
    import_questions,
    question_key,
    read_questions,
    sample_candidates,
    save_candidates,
)
from workbench.golden.otel import flatten_attributes, read_spans
from workbench.io import InputError


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_csv_column_chosen_by_the_user_keeps_file_and_line(tmp_path):
    log = write(tmp_path / "log.csv", 'ticket,asked\n1,"How long must my\npassword be?"\n'
                "2,Wie viel Urlaub?\n3,\n4,Mật khẩu dài bao nhiêu?\n")
    found = import_questions(log, field="asked")
    assert [c.question for c in found] == ["How long must my password be?", "Wie viel Urlaub?",
                                           "Mật khẩu dài bao nhiêu?"]
    # the quoted cell spans lines 2-3: the next row starts on line 4
    assert [c.line for c in found] == [2, 4, 6]
    assert {c.source for c in found} == {"real"} and found[0].file == str(log)
    assert found.blank == (f"{log}:5",)


def test_a_missing_column_names_the_file_line_and_columns(tmp_path):
    log = write(tmp_path / "log.csv", "ticket,asked\n1,hi\n")
    with pytest.raises(InputError, match=r"log\.csv:1: field 'question': no column 'question'"
                                         r".*\['ticket', 'asked'\]"):
        import_questions(log)


def test_jsonl_dotted_field_and_a_missing_field_names_its_line(tmp_path):
    log = write(tmp_path / "log.jsonl", '{"request": {"text": "refund window?"}}\n\n'
                '{"request": {"txt": "oops"}}\n')
    with pytest.raises(InputError, match=r"log\.jsonl:3: field 'request\.text'"):
        import_questions(log, field="request.text")
    ok = write(tmp_path / "ok.jsonl", '{"request": {"text": "refund\\u200b window?"}}\n')
    (cand,) = import_questions(ok, field="request.text")
    assert cand.question == "refund window?" and cand.line == 1  # invisible character removed
    bad = write(tmp_path / "bad.jsonl", '{"question": 3}\n')
    with pytest.raises(InputError, match=r"bad\.jsonl:1: field 'question': must be text"):
        import_questions(bad)


def test_plain_text_one_question_per_line_and_unknown_suffix(tmp_path):
    log = write(tmp_path / "q.txt", "first question\n\n  second   question \n")
    assert [(c.question, c.line) for c in import_questions(log)] == [
        ("first question", 1), ("second question", 3)]
    with pytest.raises(InputError, match="format="):
        import_questions(write(tmp_path / "q.log", "x\n"))
    assert len(import_questions(tmp_path / "q.log", format="txt")) == 1


def test_run_log_questions_carry_their_hits_and_top_score(tmp_path):
    rows = [{"qid": "a", "query": "how long is parental leave",
             "hits": [{"doc_id": "leave", "text": "16 weeks", "score": 0.4},
                      {"chunk_id": "leave#2", "score": 0.2}]},
            {"qid": "b", "query": "gift card expiry", "hits": [{"chunk_id": "g#0", "score": 0.9}]},
            {"qid": "c", "query": "no hits at all", "hits": []}]
    log = write(tmp_path / "run.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    found = import_questions(log, format="run")
    assert [(c.qid, c.top_score) for c in found] == [("a", 0.4), ("b", 0.9), ("c", None)]
    assert found[0].hits[0]["doc_id"] == "leave" and len(found[0].hits) == 2
    # low confidence first; unscored last
    assert [c.qid for c in sample_candidates(found, by="confidence")] == ["a", "b", "c"]
    dist = import_questions(log, format="run", scores="distance")
    assert [c.top_score for c in dist] == [0.2, 0.9, None]
    assert [c.qid for c in sample_candidates(dist, by="confidence")] == ["b", "a", "c"]
    no_query = write(tmp_path / "r2.jsonl", '{"qid": "a", "hits": []}\n')
    with pytest.raises(InputError, match=r"r2\.jsonl:1: field 'query'"):
        import_questions(no_query, format="run")
    bad = write(tmp_path / "r3.jsonl", '{"qid": "a", "query": "q", "hits": [{"score": "x"}]}\n')
    with pytest.raises(InputError, match=r"r3\.jsonl:1: field 'hits': hit 1: score"):
        import_questions(bad, format="run")


def _otlp_attr(key, value):
    kind = {str: "stringValue", float: "doubleValue", int: "intValue"}[type(value)]
    return {"key": key, "value": {kind: str(value) if kind == "intValue" else value}}


def test_otlp_json_export_one_question_per_trace_with_retrieved_documents(tmp_path):
    """OTLP JSON as a collector or Langfuse writes it, OpenInference attributes."""
    def span(trace, sid, parent, attrs):
        out = {"traceId": trace, "spanId": sid, "name": "x",
               "attributes": [_otlp_attr(k, v) for k, v in attrs.items()]}
        if parent:
            out["parentSpanId"] = parent
        return out
    spans = [
        span("t1", "s1", None, {"openinference.span.kind": "CHAIN",
                                "input.value": "What is the  refund window?"}),
        span("t1", "s2", "s1", {"openinference.span.kind": "RETRIEVER",
                                "input.value": "refund window policy",
                                "retrieval.documents.0.document.id": "refunds#1",
                                "retrieval.documents.0.document.content": "30 days",
                                "retrieval.documents.0.document.score": 0.61,
                                "retrieval.documents.1.document.id": "refunds#4",
                                "retrieval.documents.1.document.score": 0.35}),
        span("t2", "s3", None, {"openinference.span.kind": "LLM",
                                "input.mime_type": "application/json",
                                "input.value": json.dumps({"messages": [
                                    {"role": "system", "content": "be brief"},
                                    {"role": "user", "content": "退款期限是多久？"}]})}),
        span("t3", "s4", None, {"openinference.span.kind": "LLM",
                                "llm.input_messages.0.message.role": "system",
                                "llm.input_messages.0.message.content": "sys",
                                "llm.input_messages.1.message.role": "user",
                                "llm.input_messages.1.message.content": "gift card expiry?"}),
    ]
    doc = {"resourceSpans": [{"resource": {"attributes": []},
                              "scopeSpans": [{"scope": {"name": "openinference"},
                                              "spans": spans}]}]}
    path = write(tmp_path / "traces.json", json.dumps(doc))
    found = import_questions(path)
    assert [(c.question, c.qid, c.line) for c in found] == [
        ("What is the refund window?", "t1", 1), ("退款期限是多久？", "t2", 2),
        ("gift card expiry?", "t3", 3)]
    assert found[0].top_score == 0.61
    assert [h["id"] for h in found[0].hits] == ["refunds#1", "refunds#4"]
    assert found[0].hits[0]["text"] == "30 days"
    # a user-chosen attribute: the first span carrying it, the root first; traces without it
    # are blank entries, not guesses
    assert [q.question for q in read_spans(path, "input.value")] == [
        "What is the refund window?", "退款期限是多久？", None]
    assert import_questions(path, field="input.value").blank == (f"{path}:3",)


def test_phoenix_style_span_list_with_nested_attributes(tmp_path):
    spans = [{"name": "query", "context": {"trace_id": "a", "span_id": "1"}, "parent_id": None,
              "attributes": {"openinference": {"span": {"kind": "CHAIN"}},
                             "input": {"value": "how much is the home office stipend"},
                             "user": {"query": "home office stipend?"}}},
             {"name": "retrieve", "context": {"trace_id": "a", "span_id": "2"}, "parent_id": "1",
              "attributes": {"openinference.span.kind": "RETRIEVER",
                             "retrieval": {"documents": [
                                 {"document": {"id": "remote#3", "content": "$500",
                                               "score": 0.8}}]}}}]
    path = write(tmp_path / "phoenix.json", json.dumps(spans))
    (cand,) = import_questions(path)
    assert cand.question == "how much is the home office stipend" and cand.top_score == 0.8
    (chosen,) = import_questions(path, field="user.query")
    assert chosen.question == "home office stipend?"
    # a JSON input without any query field is refused with the trace named
    spans[0]["attributes"]["input"]["value"] = '{"foo": 1}'
    bad = write(tmp_path / "bad.json", json.dumps(spans))
    with pytest.raises(InputError, match=r"bad\.json \(trace 1: a\): field 'input\.value'"):
        import_questions(bad)


def test_langfuse_observations_with_top_level_input(tmp_path):
    obs = {"data": [{"id": "o1", "traceId": "tr", "type": "GENERATION",
                     "input": {"query": "Can I work from abroad?"}}]}
    (cand,) = import_questions(write(tmp_path / "lf.json", json.dumps(obs)))
    assert cand.question == "Can I work from abroad?" and cand.qid == "tr"


def test_flatten_attributes_reads_otlp_values():
    attrs = [{"key": "a.b", "value": {"intValue": "3"}},
             {"key": "l", "value": {"arrayValue": {"values": [{"stringValue": "x"}]}}},
             {"key": "kv", "value": {"kvlistValue": {"values": [
                 {"key": "k", "value": {"boolValue": True}}]}}}]
    assert flatten_attributes(attrs) == {"a.b": 3, "l": ["x"], "kv.k": True}


def test_dedupe_says_what_was_merged_into_what(tmp_path):
    a = write(tmp_path / "a.txt", "How long must my password be?\nhow long must my PASSWORD "
              "be\nhow long must my pasword be?\nIs a 14 day notice enough?\n"
              "Is a 30 day notice enough?\n")
    b = write(tmp_path / "b.txt", "How long must my password be!!\n")
    found = import_questions(a, b)
    assert [c.question for c in found] == ["How long must my password be?",
                                           "Is a 14 day notice enough?",
                                           "Is a 30 day notice enough?"]
    assert found[0].merged_from == (f"{a}:2", f"{a}:3", f"{b}:1")
    assert [(m.dropped, m.method) for m in found.merges] == [
        (f"{a}:2", "exact"), (f"{a}:3", "near"), (f"{b}:1", "exact")]
    assert all(m.kept == f"{a}:1" for m in found.merges)
    assert "3 exact" not in found.summary() and "2 exact and 1 near" in found.summary()
    assert len(import_questions(a, b, threshold=100)) == 4  # exact only


words = st.lists(st.sampled_from(["leave", "refund", "days", "how", "long", "card", "Mật",
                                  "khẩu", "退款", "12", "30"]), min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(st.lists(words, min_size=1, max_size=12), st.floats(50, 100))
def test_dedupe_keeps_each_key_once_and_accounts_for_every_question(qs, threshold):
    cands = [Candidate(" ".join(q), "f", n) for n, q in enumerate(qs, 1)]
    found = dedupe(cands, threshold)
    keys = [question_key(c.question) for c in found]
    assert len(keys) == len(set(keys))  # no two kept share a key
    assert len(found) + len(found.merges) == len(cands)
    assert sum(len(c.merged_from) for c in found) == len(found.merges)
    # a question differing in its numbers is never merged
    for m in found.merges:
        kept = next(c for c in found if c.where == m.kept)
        import re
        assert re.findall(r"\d+", question_key(kept.question)) == re.findall(
            r"\d+", question_key(m.question))


def test_sampling_by_novelty_and_random_with_a_seed():
    cands = [Candidate(q, "f", n) for n, q in enumerate(
        ["how long must my password be", "gift card expiry", "parental leave", "vpn setup",
         "expense limit"], 1)]
    golden = GoldenSet([GoldenItem("q1", "How long must my password be?", answerable=False),
                        GoldenItem("q2", "gift-card expiry", answerable=False)])
    assert [c.question for c in sample_candidates(cands, 2, golden=golden)] == [
        "parental leave", "vpn setup"]
    one = sample_candidates(cands, 3, by="random", seed=7)
    assert one == sample_candidates(cands, 3, by="random", seed=7)
    assert {c.question for c in sample_candidates(cands, None, by="random", seed=1)} == {
        c.question for c in cands}
    with pytest.raises(ValueError, match="by must be"):
        sample_candidates(cands, by="score")


def test_save_candidates_round_trips_as_jsonl(tmp_path):
    cand = Candidate("q?", "f.csv", 3, merged_from=("f.csv:9",), top_score=0.5)
    path = save_candidates(tmp_path / "c.jsonl", [cand])
    assert json.loads(path.read_text()) == {"question": "q?", "source": "real", "file": "f.csv",
                                            "line": 3, "merged_from": ["f.csv:9"],
                                            "top_score": 0.5, "score_kind": "similarity"}


def test_read_questions_lists_blank_entries(tmp_path):
    path = write(tmp_path / "q.txt", "a\n   \nb\n")
    assert [q if isinstance(q, str) else q.question for q in read_questions(path)] == [
        "a", f"{path}:2", "b"]


def test_the_questions_command_merges_samples_and_writes(tmp_path):
    import subprocess
    import sys

    log = write(tmp_path / "log.csv", "asked\nHow long must my password be?\n"
                "how long must my pasword be\ngift card expiry?\n")
    golden = tmp_path / "golden.jsonl"
    GoldenSet([GoldenItem("q1", "Gift card expiry", answerable=False)]).save(golden)
    out = tmp_path / "c.jsonl"
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-m", "workbench.cli", "questions", str(log),
                           "--field", "asked", "--golden", str(golden), "-o", str(out)],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert f"merged {log}:3 into {log}:2 (near" in done.stdout
    assert [json.loads(line)["question"] for line in out.read_text().splitlines()] == [
        "How long must my password be?"]
    bad = subprocess.run([sys.executable, "-m", "workbench.cli", "questions", str(log),
                          "-o", str(out)], capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert "field 'question': no column 'question'" in bad.stderr


CELLS = st.text(st.characters(blacklist_characters='",\r\n', blacklist_categories=("Cs",)),
                min_size=1, max_size=12).filter(str.strip)


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(CELLS, CELLS), min_size=1, max_size=8), data=st.data())
def test_a_quote_never_closed_is_refused_at_its_row(tmp_path_factory, rows, data):
    """A CSV of plain cells reads every row; the same CSV with a quote opened in one cell and
    never closed (the rest of the file would become that cell) is refused at that row."""
    folder = tmp_path_factory.mktemp("csv")
    lines = ["id,question", *(f"{a},{b}" for a, b in rows)]
    path = write(folder / "log.csv", "\n".join(lines) + "\n")
    assert len(read_questions(path)) == len(rows)
    row = data.draw(st.integers(0, len(rows) - 1))
    column = data.draw(st.integers(0, 1))
    cells = list(rows[row])
    cells[column] = '"' + cells[column]
    lines[row + 1] = ",".join(cells)
    write(path, "\n".join(lines) + "\n")
    with pytest.raises(InputError, match=rf"log\.csv:{row + 2}: .*never closed"):
        import_questions(path)
