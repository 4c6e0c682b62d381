"""``workbench synth``: through the real local OpenAI-compatible server, backed by a scripted
question writer where the model's quality is not what is tested, and by the real offline
SmolLM2 where it is (slow)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import threading

import pytest

from tests.conftest import HANDBOOK, ROOT
from tests.local_server import SERVER_ENV, local_server
from workbench.cli import main
from workbench.cli.synth import rejected_path
from workbench.corpus import load_folder
from workbench.generation import ChatReply
from workbench.generation.server import ModelServer
from workbench.golden import GoldenSet
from workbench.synthetic import CopyingQuestionWriter

DOCS = str(HANDBOOK / "docs")


class ScriptedWriter:
    """The local server's model: the copying question writer, except that about one prompt
    in four (by the prompt's hash) gets a malformed answer, and while ``failing`` every call
    fails as a broken model would. Realism prompts are rated from ``ratings`` (question ->
    score), or ``constant`` when set."""

    model_id = "scripted-writer"
    max_new_tokens = 96

    def __init__(self):
        self.writer = CopyingQuestionWriter()
        self.calls, self.failing, self.ratings, self.constant = 0, False, {}, None

    def chat(self, messages, max_tokens=None):
        self.calls += 1
        prompt = messages[-1]["content"]
        if self.failing:
            return ChatReply(error="CUDA out of memory")
        if prompt.startswith("You rate questions"):
            question = prompt.rsplit("QUESTION: ", 1)[1].split("\n", 1)[0]
            return ChatReply(str(self.constant or self.ratings.get(question, 3)))
        digest = hashlib.sha256(prompt.encode()).digest()[0]
        if digest % 4 == 0:
            return ChatReply(["FACT: {broken", "Sure! Here is a question:", "", "ANSWER:"][
                digest % 16 // 4])
        return self.writer.chat(messages, max_tokens)


@pytest.fixture
def served():
    model = ScriptedWriter()
    server = ModelServer(("127.0.0.1", 0), model)  # type: ignore[arg-type]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", model
    server.shutdown()
    server.server_close()


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "cache"))


def synth(url, out, *extra):
    readers = () if "--readers" in extra else ("--readers", "all")  # everyone: public only
    return main(["synth", DOCS, "--out", str(out), "--llm-url", url, "--llm-model", "scripted",
                 "--chunker", "recursive:size=600", *readers, *extra])


def test_a_corpus_that_declares_access_needs_readers_named(served, tmp_path, capsys):
    url, model = served
    out = tmp_path / "syn.jsonl"
    assert main(["synth", DOCS, "--out", str(out), "--llm-url", url, "--n", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--readers" in err and "\n" not in err and model.calls == 0 and not out.exists()


def test_hard_items_borrow_only_from_documents_every_reader_of_their_target_may_read(
        served, tmp_path):
    url, model = served
    out = tmp_path / "syn.jsonl"
    assert synth(url, out, "--n", "12", "--hard", "--readers", "finance") == 0
    from workbench.chunking import parse_chunker
    from workbench.chunking.base import chunk_corpus

    docs = load_folder(HANDBOOK / "docs")
    by_id = {c.id: c for c in chunk_corpus(parse_chunker("recursive:size=600"), docs)}
    items, _ = outcomes(out)
    assert items and model.calls
    for item in items:
        target = docs[item["evidence"][0]["doc_id"]]
        assert not target.acl or {"finance", "all"} & set(target.acl)
        for d in item.get("distractors", ()):
            doc = docs[by_id[d["chunk_id"]].doc_id]
            if doc.acl and "all" not in doc.acl:  # restricted: only for a target as narrow
                assert "all" not in target.acl and set(target.acl) <= set(doc.acl), d


def outcomes(out):
    items = [json.loads(line) for line in out.read_text().splitlines()]
    rejected = [json.loads(line) for line in rejected_path(out).read_text().splitlines()]
    return items, rejected


def test_every_target_is_kept_with_a_located_span_or_rejected_with_a_reason(served, tmp_path,
                                                                            capsys):
    url, _ = served
    out = tmp_path / "syn.jsonl"
    assert synth(url, out, "--n", "16", "--hard") == 0
    printed = capsys.readouterr().out
    assert "16 target chunks" in printed and "synthetic-fact-hard-v1" in printed
    items, rejected = outcomes(out)
    golden = GoldenSet.load(out)
    docs = load_folder(HANDBOOK / "docs")
    assert golden.problems(docs) == []  # every kept span is located in its document
    assert items and rejected and any("FACT" in r["reason"] for r in rejected)
    targets = {i["target_chunk"] for i in items} | {r["chunk_id"] for r in rejected}
    assert len(targets) == 16
    easy = {(i["target_chunk"]) for i in items if i["kind"] == "easy"} | {
        r["chunk_id"] for r in rejected if r["kind"] == "easy"}
    assert easy == targets  # each target has exactly one easy outcome ...
    keys = [(i["target_chunk"], i["kind"]) for i in items] + [
        (r["chunk_id"], r["kind"]) for r in rejected]
    assert len(keys) == len(set(keys))  # ... and no outcome is written twice
    for item in golden:
        ev = item.evidence[0]
        assert docs[ev.doc_id].text[ev.start:ev.end] == ev.text
        assert item.source == "synthetic" and item.extra["prompt_version"]
        assert item.extra["model_id"] == "scripted"
        assert item.extra["chunker"] == "recursive:size=600"
    for row in rejected:
        assert row["reason"] and row["model_id"] == "scripted" and row["prompt_version"]
    assert f"{len(items)} items" in printed and f"{len(rejected)} rejected" in printed


def test_a_rerun_continues_and_never_duplicates_or_loses_items(served, tmp_path, capsys):
    url, model = served
    out, whole = tmp_path / "syn.jsonl", tmp_path / "whole.jsonl"
    assert synth(url, whole, "--n", "12", "--hard", "--cache", str(tmp_path / "c1")) == 0
    assert synth(url, out, "--n", "5", "--hard") == 0
    assert synth(url, out, "--n", "12", "--hard") == 0
    first, second = outcomes(whole), outcomes(out)
    assert sorted(i["qid"] for i in first[0]) == sorted(i["qid"] for i in second[0])
    assert sorted((r["chunk_id"], r["kind"]) for r in first[1]) == sorted(
        (r["chunk_id"], r["kind"]) for r in second[1])
    calls = model.calls
    capsys.readouterr()
    assert synth(url, out, "--n", "12", "--hard") == 0  # all done: nothing asked, nothing added
    assert model.calls == calls and "0 to generate" in capsys.readouterr().out
    assert outcomes(out) == second


def test_model_errors_are_recorded_then_retried_and_replaced(served, tmp_path, capsys):
    url, model = served
    out = tmp_path / "syn.jsonl"
    model.failing = True
    assert synth(url, out, "--n", "3", "--timeout", "5") == 1  # every reply failed
    assert "every reply failed" in capsys.readouterr().out
    items, rejected = outcomes(out) if out.exists() else ([], outcomes_rejected(out))
    assert not items and len(rejected) == 3
    assert all(r["reason"].startswith("model error") and "CUDA" in r["reason"] for r in rejected)
    model.failing = False
    assert synth(url, out, "--n", "3") == 0
    items, rejected = outcomes(out)
    assert not any(r["reason"].startswith("model error") for r in rejected)
    assert len(items) + len(rejected) == 3


def outcomes_rejected(out):
    return [json.loads(line) for line in rejected_path(out).read_text().splitlines()]


def test_two_runs_at_once_write_each_item_once(served, tmp_path):
    url, _ = served
    out = tmp_path / "syn.jsonl"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "workbench.cli", "synth", DOCS, "--out", str(out), "--llm-url",
           url, "--llm-model", "scripted", "--chunker", "recursive:size=600", "--n", "10",
           "--readers", "all"]
    procs = [subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for _ in range(2)]
    for p in procs:
        assert p.wait(timeout=300) == 0, p.stdout.read() if p.stdout else ""
    items, rejected = outcomes(out)
    qids = [i["qid"] for i in items]
    assert len(qids) == len(set(qids))
    keys = [(r["chunk_id"], r["kind"]) for r in rejected]
    assert len(keys) == len(set(keys)) and len(items) + len(rejected) == 10


def test_another_model_or_a_bad_file_is_one_line_exit_2(served, tmp_path, capsys):
    url, _ = served
    out = tmp_path / "syn.jsonl"
    assert synth(url, out, "--n", "2") == 0
    capsys.readouterr()
    assert main(["synth", DOCS, "--out", str(out), "--llm-url", url, "--llm-model", "other",
                 "--chunker", "recursive:size=600", "--n", "2", "--readers", "all"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "model_id='scripted'" in err and "--out" in err
    assert synth(url, out, "--n", "2", "--chunker", "fixed:size=300") == 2
    assert "chunker" in capsys.readouterr().err
    assert synth(url, tmp_path / "syn.txt") == 2
    assert ".jsonl" in capsys.readouterr().err
    (tmp_path / "bad.jsonl").write_text('{"qid": "x"\n')
    assert synth(url, tmp_path / "bad.jsonl", "--n", "2") == 2
    assert "bad.jsonl:1" in capsys.readouterr().err


def _scored(out, tmp_path, n):
    golden = GoldenSet.load(out)
    scores = {i.qid: 1 + k % 5 for k, i in enumerate(golden.items[:n])}
    path = tmp_path / "scores.jsonl"
    path.write_text("".join(json.dumps({"qid": q, "score": s}) + "\n"
                            for q, s in scores.items()))
    return golden, scores, path


def test_judge_with_a_persons_scores_filters_or_refuses_a_chance_judge(served, tmp_path,
                                                                       capsys):
    url, model = served
    out = tmp_path / "syn.jsonl"
    assert synth(url, out, "--n", "30", "--hard") == 0
    golden, scores, path = _scored(out, tmp_path, 12)
    assert len(scores) == 12 < len(golden)
    model.ratings = {i.question: scores.get(i.qid, 4) for i in golden}  # agrees with the person
    capsys.readouterr()
    assert synth(url, out, "--n", "30", "--hard", "--judge-with", str(path)) == 0
    printed = capsys.readouterr().out
    assert "quadratic-weighted kappa 1.000" in printed and "on 12 items" in printed
    kept = GoldenSet.load(tmp_path / "syn.kept.jsonl")
    table = [json.loads(line) for line in (tmp_path / "syn.realism.jsonl").read_text()
             .splitlines()]
    assert len(table) == len(golden)
    assert {i.qid for i in kept} == {r["qid"] for r in table if r["kept"]}
    assert all(i.extra["realism"] >= 3 for i in kept)
    model.constant = 3  # a judge that always says 3 is no better than chance
    assert synth(url, out, "--n", "30", "--hard", "--judge-with", str(path)) == 2
    captured = capsys.readouterr()
    assert re.search(r"kappa -?0\.000", captured.out)
    assert "not shown to beat chance" in captured.err and len(captured.err.splitlines()) == 1
    path.write_text('{"qid": "nope", "score": 4}\n')
    assert synth(url, out, "--n", "30", "--judge-with", str(path)) == 2
    assert "not in" in capsys.readouterr().err
    path.write_text(json.dumps({"qid": golden.items[0].qid, "score": 9}) + "\n")
    assert synth(url, out, "--n", "30", "--judge-with", str(path)) == 2
    assert "score" in capsys.readouterr().err


# ----------------------------------------------------------------------------- real model

@pytest.mark.slow
def test_the_real_offline_model_through_the_real_local_server(tmp_path):
    with local_server(max_new_tokens=96) as url:
        out = tmp_path / "real.jsonl"
        done = subprocess.run([sys.executable, "-m", "workbench.cli", "synth", DOCS, "--out",
                               str(out), "--llm-url", url, "--llm-model", "SmolLM2",
                               "--chunker", "recursive:size=600", "--n", "3", "--hard",
                               "--readers", "all"],
                              cwd=ROOT, env=SERVER_ENV, capture_output=True, text=True,
                              timeout=900)
        assert done.returncode in (0, 1), done.stderr
        rejected = outcomes_rejected(out)
        items = list(GoldenSet.load(out)) if out.exists() else []
        docs = load_folder(HANDBOOK / "docs")
        for item in items:  # kept: a located span
            ev = item.evidence[0]
            assert docs[ev.doc_id].text[ev.start:ev.end] == ev.text
        assert all(r["reason"] and r["model_id"] == "SmolLM2" for r in rejected)
        easy = {i.extra["target_chunk"] for i in items if i.extra["kind"] == "easy"} | {
            r["chunk_id"] for r in rejected if r["kind"] == "easy"}
        assert len(easy) == 3  # every target answered: kept or rejected with a reason
