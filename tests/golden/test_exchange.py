"""Label Studio and Argilla, both ways: tasks and records in their published formats, span
annotations back into golden items with document offsets, round trips over the handbook, and a
clear error for a span that cannot be located."""

from __future__ import annotations

import json

import pytest

from workbench.chunking import RecursiveChunker, chunk_corpus
from workbench.corpus import UNRESTRICTED, Corpus, Document, Span
from workbench.golden import Evidence, GoldenItem, GoldenSet
from workbench.golden.candidates import Candidate
from workbench.golden.exchange import qid_of, to_argilla, to_label_studio, write_tasks
from workbench.golden.label_import import from_argilla, from_label_studio
from workbench.io import InputError


def _passages_holding_evidence(golden, chunks):
    """Each question's chunks that contain one of its evidence spans, plus one that does not."""
    out = {}
    for item in golden:
        holding = [c for c in chunks for e in item.evidence
                   if c.doc_id == e.doc_id and c.start <= e.start and e.end <= c.end]
        other = next(c for c in chunks if c not in holding)
        out[item.qid] = [*dict.fromkeys(holding), other]
    return out


def _annotate_label_studio(tasks, golden):
    """What a labeller does in Label Studio: select each evidence span in the passage. The
    export carries ids, the annotator, timings: Label Studio's JSON export format."""
    by_qid = {i.qid: i for i in golden}
    for n, task in enumerate(tasks, start=1):
        data = task["data"]
        task.update(id=n, project=3, created_at="2026-12-01T10:00:00Z")
        item = by_qid[data["qid"]]
        result = []
        for r, ev in enumerate(item.evidence):
            if ev.doc_id != data["doc_id"] or not (data["start"] <= ev.start
                                                   and ev.end <= data["end"]):
                continue
            s, e = ev.start - data["start"], ev.end - data["start"]
            result.append({"id": f"r{n}-{r}", "from_name": "label", "to_name": "text",
                           "type": "labels", "origin": "manual",
                           "value": {"start": s, "end": e, "text": data["text"][s:e],
                                     "labels": ["answer"]}})
            for must in item.answer_must_mention:
                at = data["text"].find(must, s, e)
                if at >= 0:
                    result.append({"id": f"m{n}-{r}", "from_name": "label", "to_name": "text",
                                   "type": "labels", "value": {
                                       "start": at, "end": at + len(must), "text": must,
                                       "labels": ["must_mention"]}})
        task["annotations"] = [{"id": 100 + n, "completed_by": 7, "result": result,
                                "was_cancelled": False, "ground_truth": False,
                                "lead_time": 12.5, "task": n}]
        task.pop("predictions", None)
    return tasks


@pytest.fixture(scope="module")
def labelled(handbook):
    corpus, golden = handbook
    chunks = chunk_corpus(RecursiveChunker(size=400, overlap=0), corpus)
    items = [i for i in golden if i.answerable and i.evidence][:12]
    items = [i for i in items if all(any(c.doc_id == e.doc_id and c.start <= e.start
                                         and e.end <= c.end for c in chunks)
                                     for e in i.evidence)]
    assert len(items) >= 8
    return corpus, GoldenSet(items), _passages_holding_evidence(items, chunks)


def test_label_studio_round_trip_gives_the_same_spans(labelled, tmp_path):
    corpus, golden, passages = labelled
    questions = [GoldenItem(i.qid, i.question, answerable=False, category=i.category,
                            source="real") for i in golden]
    tasks = to_label_studio(questions, passages, corpus, user_groups=UNRESTRICTED)
    assert {"qid", "question", "text", "doc_id", "start", "end", "rank"} <= set(tasks[0]["data"])
    path = write_tasks(tmp_path / "export.json", _annotate_label_studio(tasks, golden))
    back = from_label_studio(path, corpus).golden
    assert [i.qid for i in back] == [i.qid for i in golden]
    for got, want in zip(back, golden, strict=True):
        assert got.evidence == tuple(sorted(want.evidence, key=lambda e: (e.doc_id, e.start)))
        assert set(got.answer_must_mention) <= set(want.answer_must_mention)
        assert got.source == "real" and got.category == want.category
    assert sum(len(i.answer_must_mention) for i in back) >= len(back) // 2
    assert back.problems(corpus) == []


def test_label_studio_predictions_carry_existing_evidence(labelled):
    corpus, golden, passages = labelled
    tasks = to_label_studio(golden, passages, corpus, user_groups=UNRESTRICTED)
    pred = [t for t in tasks if "predictions" in t]
    assert pred and all(r["value"]["text"] == t["data"]["text"][r["value"]["start"]:
                                                              r["value"]["end"]]
                        for t in pred for r in t["predictions"][0]["result"])


def test_argilla_round_trip_gives_the_same_spans(labelled, tmp_path):
    corpus, golden, passages = labelled
    records = to_argilla([Candidate(i.question, "log.csv", n, qid=i.qid)
                          for n, i in enumerate(golden, 1)], passages, corpus,
                          user_groups=UNRESTRICTED)
    assert set(records[0]) == {"id", "fields", "metadata"}
    assert set(records[0]["fields"]) == {"question", "text"}
    by_qid = {i.qid: i for i in golden}
    for rec in records:  # Record.to_dict() shape after two people answered
        meta = rec["metadata"]
        spans = [{"start": e.start - meta["start"], "end": e.end - meta["start"],
                  "label": "answer"} for e in by_qid[meta["qid"]].evidence
                 if e.doc_id == meta["doc_id"] and meta["start"] <= e.start
                 and e.end <= meta["end"]]
        rec.update(suggestions={}, vectors={}, _server_id="0f6c")
        rec["responses"] = {"spans": [{"value": spans, "user_id": "u-ana"},
                                      {"value": spans[:1], "user_id": "u-ben"}]}
    path = tmp_path / "records.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    with pytest.raises(InputError, match=r"record .*: answered by users \['u-ana', 'u-ben'\]"):
        from_argilla(path, corpus)
    back = from_argilla(path, corpus, user_id="u-ana").golden
    assert [(i.qid, i.evidence) for i in back] == [
        (i.qid, tuple(sorted(i.evidence, key=lambda e: (e.doc_id, e.start)))) for i in golden]
    assert {i.source for i in back} == {"real"}


def test_offsets_counted_in_utf16_and_moved_passages_are_relocated():
    text = "Intro 𠀀𠀀 then: 退款期限是三十天。 More text."
    corpus = Corpus([Document("zh", text)])
    passage = Span("zh", 6, len(text))
    (task,) = to_label_studio([Candidate("退款期限?", "f.txt", 1)], {qid_of(
        Candidate("退款期限?", "f.txt", 1)): [passage]}, corpus, user_groups=UNRESTRICTED)
    ptext = task["data"]["text"]
    s = ptext.index("退款")
    quote = "退款期限是三十天"
    # the browser counted the two astral characters as two UTF-16 units each
    task["annotations"] = [{"completed_by": 1, "result": [{"type": "labels", "value": {
        "start": s + 2, "end": s + 2 + len(quote), "text": quote, "labels": ["answer"]}}]}]
    (item,) = from_label_studio([task], corpus).golden
    assert text[item.evidence[0].start:item.evidence[0].end] == quote
    # the document gained text before the passage: the passage is found again
    moved = Corpus([Document("zh", "New line.\n" + text)])
    (item,) = from_label_studio([task], moved).golden
    assert moved["zh"].text[item.evidence[0].start:item.evidence[0].end] == quote


def test_a_task_that_cannot_be_placed_is_reported_and_the_others_import():
    corpus = Corpus([Document("d", "Refunds within 30 days. Gift cards last 5 years.")])
    data = {"qid": "q1", "question": "refunds?", "doc_id": "d", "start": 0, "end": 23,
            "text": "Refunds within 30 days."}

    def task(ident, qid, start, end, quote, labels=("answer",), **changes):
        return {"id": ident, "data": {**data, "qid": qid, **changes}, "annotations": [
            {"completed_by": 1, "result": [{"type": "labels", "value": {
                "start": start, "end": end, "text": quote, "labels": list(labels)}}]}]}

    tasks = [task(9, "q1", 0, 7, "Returns"),  # the quote is the check: never moved
             task(10, "q2", 15, 22, "30 days"),
             task(11, "q3", 0, 7, "Refunds", text="Refunds within 14 days."),
             task(12, "q4", 0, 7, "Refunds", labels=("<script>",)),
             task(13, "q5", 0, 7, "Refunds", doc_id="nope"),
             task(14, "q6", 8, 14, "within", labels=("Other", "answer"))]
    got = from_label_studio(tasks, corpus)
    assert [i.qid for i in got.golden] == ["q2"]
    assert got.golden[0].evidence == (Evidence("d", 15, 22, "30 days"),)
    reasons = {r.where: r.reason for r in got.refused}
    assert set(reasons) == {f"<Label Studio export>: task {n}" for n in (9, 11, 12, 13, 14)}
    assert "reads as chars 'Refunds'" in reasons["<Label Studio export>: task 9"]
    assert "not its text 'Returns'" in reasons["<Label Studio export>: task 9"]
    assert "passage is no longer in document 'd'" in reasons["<Label Studio export>: task 11"]
    assert "label ['<script>'] is not one of" in reasons["<Label Studio export>: task 12"]
    assert "document 'nope' is not in" in reasons["<Label Studio export>: task 13"]
    assert "label ['Other'] is not one of" in reasons["<Label Studio export>: task 14"]
    assert "task 9: result 1: span [0, 7)" in got.report()
    assert "(question 'q1' left out)" in got.report()


def test_unanswerable_choice_several_annotators_and_unlabelled_questions():
    corpus = Corpus([Document("d", "Refunds within 30 days.")])
    data = {"qid": "q1", "question": "weather?", "doc_id": "d", "start": 0, "end": 23,
            "text": "Refunds within 30 days."}
    choice = {"type": "choices", "from_name": "answerable", "to_name": "text",
              "value": {"choices": ["unanswerable"]}}
    span = {"type": "labels", "value": {"start": 0, "end": 7, "text": "Refunds",
                                        "labels": ["answer"]}}
    tasks = [{"data": data, "annotations": [
        {"completed_by": {"id": 1, "email": "ana@x"}, "result": [choice]},
        {"completed_by": {"id": 2, "email": "ben@x"}, "result": [span]},
        {"completed_by": 3, "result": [span], "was_cancelled": True}]},
        {"data": {**data, "qid": "q2"}, "annotations": []}]
    with pytest.raises(InputError, match=r"annotated by \['ana@x', 'ben@x'\]"):
        from_label_studio(tasks, corpus)
    (ana,) = from_label_studio(tasks, corpus, annotator="ana@x").golden
    assert not ana.answerable and ana.evidence == ()
    (ben,) = from_label_studio(tasks, corpus, annotator="ben@x").golden
    assert ben.evidence == (Evidence("d", 0, 7, "Refunds"),)


def test_export_rows_of_one_task_join_and_a_file_that_is_no_export_is_an_error(tmp_path):
    corpus = Corpus([Document("d", "Refunds 😀 within 30 days.")])
    row = {"qid": "q1", "question": "refunds?", "doc_id": "d", "start": 0, "end": 25,
           "text": "Refunds 😀 within 30 days.", "id": 4, "annotation_id": 1, "annotator": 1,
           "label": [{"start": 18, "end": 25, "text": "30 days", "labels": ["answer"]}]}
    (item,) = from_label_studio([row], corpus).golden  # JSON_MIN, UTF-16 offsets
    assert item.evidence == (Evidence("d", 17, 24, "30 days"),)
    with pytest.raises(InputError, match=r"task 4: annotated by \['1', '2'\]"):
        from_label_studio([row, {**row, "annotator": 2, "annotation_id": 2}], corpus)
    bad = tmp_path / "export.csv"
    bad.write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"a Label Studio CSV export has a header row"):
        from_label_studio(bad, corpus)
    # an Argilla span that carries its text is checked against it, whatever the convention
    record = {"id": "r", "fields": {"question": "refunds?", "text": row["text"]},
              "metadata": {"qid": "q1", "doc_id": "d", "start": 0}, "responses": {"spans": [
                  {"user_id": "u", "value": [{"start": 17, "end": 24, "label": "answer",
                                              "text": "30 days"}]}]}}
    assert from_argilla([record], corpus).golden[0].evidence == item.evidence
    record["responses"]["spans"][0]["value"][0]["text"] = "within"
    (refusal,) = from_argilla([record], corpus).refused
    assert "not its text 'within'" in refusal.reason and refusal.qid == "q1"
