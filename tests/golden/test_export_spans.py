"""The export's pre-annotations against the rule itself: a golden item's evidence is offered
in a passage exactly when it lies wholly inside it (both ends included: a span may start at
the passage's first character and end at its last), as passage offsets whose text is the
evidence's; the same spans in Label Studio tasks and Argilla records."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import spans_of
from workbench.corpus import UNRESTRICTED, Corpus, Document, Span
from workbench.golden import Evidence, GoldenItem
from workbench.golden.exchange import to_argilla, to_label_studio

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
