"""Span offsets at both ends of a passage, in every unit the tools write (code points and
UTF-16 code units), against a brute-force reference of the units: the passage sits inside a
longer document (text before and after it, astral characters on both sides), spans start at
the passage's first character and end at its last, and the import places each exactly where
the reference says, or refuses naming the task; never a different span."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import spans_of
from workbench.corpus import Corpus, Document
from workbench.golden.label_import import from_argilla, from_label_studio
from workbench.text import normalize_text

PIECES = ["Refund", " ", "😀", "𠮷", "退款", "e\u0301", "\r\n", "\n", "ab", "ß", "🧾", "."]
pieces = st.lists(st.sampled_from(PIECES), min_size=1, max_size=8).map("".join)


def _units(text: str, offset: int, unit: str) -> int:
    """Code point ``offset`` of ``text`` counted in ``unit``, one character at a time."""
    if unit == "chars":
        return offset
    return sum(2 if ord(ch) > 0xFFFF else 1 for ch in text[:offset])


@st.composite
def passages(draw):
    """A document of three parts (before, passage, after; before and after may be empty) and
    1-3 spans of the passage, one of them starting at its start or ending at its end or both."""
    before, passage, after = draw(st.lists(pieces, min_size=3, max_size=3))
    if draw(st.booleans()):
        before = ""
    if draw(st.booleans()):
        after = ""
    text = normalize_text(before + passage + after)
    base = len(normalize_text(before))
    passage = normalize_text(passage)
    if text[base:base + len(passage)] != passage or text.find(passage) != base:
        base = text.find(passage)  # normalising joined the parts or the passage repeats
    n = len(passage)
    ends = draw(st.sampled_from([(0, n), (0, draw(st.integers(1, n))),
                                 (draw(st.integers(0, n - 1)), n)]))
    spans = {ends}
    for _ in range(draw(st.integers(0, 2))):
        spans.add(draw(spans_of(passage)))
    return text, base, passage, sorted(spans)


def _astral_before(passage: str, spans) -> bool:
    """The two units read some offset differently: only then may ``auto`` refuse."""
    return any(_units(passage, x, "utf16") != x for span in spans for x in span)


def _task(passage: str, base: int, spans, unit: str) -> dict:
    values = [{"start": _units(passage, s, unit), "end": _units(passage, e, unit),
               "text": passage[s:e].replace("\r", "\\n").replace("\n", "\\n"),
               "labels": ["answer"]} for s, e in spans]
    return {"id": 7, "data": {"qid": "q1", "question": "What?", "text": passage,
                              "doc_id": "d", "start": base, "end": base + len(passage)},
            "annotations": [{"id": 1, "completed_by": 1, "result": [
                {"from_name": "label", "to_name": "text", "type": "labels", "value": v}
                for v in values]}]}


def _placed(got, text: str, base: int, spans, where: str) -> bool:
    """The spans placed exactly (True), or the task refused by name (False)."""
    if got.refused:
        assert not got.golden and [(r.where, r.qid) for r in got.refused] == [(where, "q1")]
        return False
    (item,) = got.golden
    assert [(e.start, e.end) for e in item.evidence] == [(base + s, base + e) for s, e in spans]
    assert all(text[e.start:e.end] == e.text for e in item.evidence)
    return True


@settings(max_examples=200)
@given(passages(), st.sampled_from(["utf16", "chars"]))
def test_label_studio_places_spans_at_both_ends_of_a_passage_in_either_unit(case, unit):
    text, base, passage, spans = case
    corpus = Corpus([Document("d", text)])
    task = _task(passage, base, spans, unit)
    where = "<Label Studio export>: task 7"
    assert _placed(from_label_studio([task], corpus, offsets=unit), text, base, spans, where)
    if not _placed(from_label_studio([task], corpus), text, base, spans, where):
        assert _astral_before(passage, spans)


@settings(max_examples=200)
@given(passages(), st.sampled_from(["utf16", "chars"]))
def test_argilla_places_spans_at_both_ends_of_a_passage_in_either_unit(case, unit):
    text, base, passage, spans = case
    corpus = Corpus([Document("d", text)])
    record = {"id": "r1", "fields": {"question": "What?", "text": passage},
              "metadata": {"qid": "q1", "doc_id": "d", "start": base,
                           "end": base + len(passage)},
              "responses": {"spans": [{"user_id": "u", "value": [
                  {"start": _units(passage, s, unit), "end": _units(passage, e, unit),
                   "label": "answer"} for s, e in spans]}]}}
    where = "<Argilla records>: record r1"
    assert _placed(from_argilla([record], corpus, offsets=unit), text, base, spans, where)
    if not _placed(from_argilla([record], corpus), text, base, spans, where):
        assert _astral_before(passage, spans)
