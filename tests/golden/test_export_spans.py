"""The export's pre-annotations against the rule itself: a golden item's evidence is offered
in a passage exactly when it lies wholly inside it (both ends included: a span may start at
the passage's first character and end at its last), as passage offsets whose text is the
evidence's; the same spans in Label Studio tasks and Argilla records. And the task data
(``TASK_DATA``) is exactly what an export carries and what a flat row brings back."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import spans_of
from workbench.corpus import UNRESTRICTED, Corpus, Document, Span
from workbench.golden import Evidence, GoldenItem
from workbench.golden.exchange import to_argilla, to_label_studio
from workbench.golden.label_import import from_label_studio
from workbench.golden.tool_formats import ARGILLA_SETTINGS, TASK_DATA

TEXT = "Refunds 😀 within 30 days.\r\nGift cards last 5 years; ß e\u0301 退款."


@settings(max_examples=300)
@given(spans_of(TEXT), st.lists(spans_of(TEXT), min_size=1, max_size=4))
def test_evidence_inside_the_passage_is_offered_ends_included(passage, evidence):
    corpus = Corpus([Document("d", TEXT)])
    item = GoldenItem("q1", "How long?", evidence=tuple(
        Evidence("d", s, e, TEXT[s:e]) for s, e in evidence))
    ps, pe = passage
    passages = {"q1": [Span("d", ps, pe)]}
    want = sorted({(s - ps, e - ps) for s, e in evidence if ps <= s and e <= pe})
    (task,) = to_label_studio([item], passages, corpus, user_groups=UNRESTRICTED)
    got = [r["value"] for p in task.get("predictions", []) for r in p["result"]]
    assert sorted({(v["start"], v["end"]) for v in got}) == want
    assert all(v["text"] == TEXT[ps + v["start"]:ps + v["end"]] for v in got)
    (record,) = to_argilla([item], passages, corpus, user_groups=UNRESTRICTED)
    offered = [v for s in (record.get("suggestions") or {}).values() for v in s["value"]]
    assert sorted({(v["start"], v["end"]) for v in offered}) == want


@given(st.sampled_from(["lookup", "how-to", "uncategorised"]), st.sampled_from(["real", "owner"]))
def test_the_task_data_is_what_an_export_carries_and_what_comes_back(category, source):
    corpus = Corpus([Document("d", TEXT)])
    item = GoldenItem("q1", "How long?", evidence=(Evidence("d", 0, 7, TEXT[:7]),),
                      category=category, source=source)
    passages = {"q1": [Span("d", 0, 20)]}
    (task,) = to_label_studio([item], passages, corpus, user_groups=UNRESTRICTED)
    assert set(task["data"]) == set(TASK_DATA)
    (record,) = to_argilla([item], passages, corpus, user_groups=UNRESTRICTED)
    assert set(record["fields"]) | set(record["metadata"]) == set(TASK_DATA)
    assert {m["name"] for m in ARGILLA_SETTINGS["metadata"]} == set(record["metadata"])
    # one flat row per annotation (JSON_MIN) carries the task data and reads back whole
    row = {**task["data"], "id": 1, "annotator": 1,
           "label": [{"start": 0, "end": 7, "text": TEXT[:7], "labels": ["answer"]}]}
    (back,) = from_label_studio([row], corpus).golden
    assert (back.category, back.source, back.evidence) == (category, source, item.evidence)
