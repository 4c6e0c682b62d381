"""Labelling: selections become validated golden items; sessions survive restarts and rivals."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import spans_of
from workbench.corpus import UNRESTRICTED, Corpus, Document, ReaderRequired, admit
from workbench.golden import GoldenSet
from workbench.golden.labelling import (
    LabellingSession,
    make_item,
    span_warnings,
    suggest_must_mention,
)
from workbench.io import InputError

TEXTS = {
    "en": "Refunds are issued within 14 days of the return. Boots cost $120.",
    "vi": "Nhân viên được nghỉ phép 12 ngày mỗi năm. Đơn xin nghỉ gửi trước 3 ngày.",
    "zh": "员工每年享有带薪年假十五天。报销须在30天内提交，超过期限不予受理。",
}


def _corpus(**extra: Document) -> Corpus:
    docs = [Document(k, v) for k, v in TEXTS.items()]
    return Corpus([*docs, *extra.values()])


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(TEXTS)), st.data())
def test_any_selection_round_trips_to_exact_offsets_and_quote(tmp_path_factory, doc_id, data):
    text = TEXTS[doc_id]
    start, end = data.draw(spans_of(text))
    corpus = _corpus()
    item = make_item(corpus, "q1", "a question", [(doc_id, start, end)], user_groups=UNRESTRICTED)
    ev = item.evidence[0]
    assert (ev.doc_id, ev.start, ev.end, ev.text) == (doc_id, start, end, text[start:end])
    path = tmp_path_factory.mktemp("g") / "golden.jsonl"
    session = LabellingSession(path, corpus, [{"qid": "q1", "question": "a question"}],
                               user_groups=UNRESTRICTED)
    session.save("q1", [(doc_id, start, end)])
    back = GoldenSet.load(path).get("q1").evidence[0]
    assert (back.start, back.end, back.text) == (start, end, text[start:end])
    assert corpus[doc_id].text[back.start:back.end] == back.text


@given(st.text(min_size=1, max_size=40))
def test_arbitrary_unicode_document_selection_is_exact(text):
    corpus = Corpus([Document("d", text)])
    item = make_item(corpus, "q", "q?", [("d", 0, len(text))], user_groups=UNRESTRICTED)
    assert item.evidence[0].text == text


@pytest.mark.parametrize("sel", [("en", -1, 3), ("en", 3, 3), ("en", 0, 10_000), ("nope", 0, 1)])
def test_bad_selections_are_refused(sel):
    with pytest.raises(InputError):
        make_item(_corpus(), "q", "q?", [sel], user_groups=UNRESTRICTED)


def test_must_mention_must_be_in_the_span_and_answerable_needs_evidence():
    corpus = _corpus()
    with pytest.raises(InputError, match="must-mention '\\$120'"):
        make_item(corpus, "q", "q?", [("en", 0, 48)], must_mention=["$120"],
                  user_groups=UNRESTRICTED)
    item = make_item(corpus, "q", "q?", [("en", 0, 48), ("en", 49, 65)], must_mention=["$120"],
                     user_groups=UNRESTRICTED)
    assert len(item.evidence) == 2
    with pytest.raises(InputError, match="unanswerable"):
        make_item(corpus, "q", "q?", [], user_groups=UNRESTRICTED)
    assert make_item(corpus, "q", "q?", [], answerable=False,
                     user_groups=UNRESTRICTED).answerable is False


def test_suggestions_find_numbers_durations_money_codes_and_forms():
    got = suggest_must_mention("Claim on Form W-4 within 14 days; code EXP-7; up to $1,200; "
                               "25% off; 3 items")
    assert got == ["Form W-4", "14 days", "EXP-7", "$1,200", "25%", "3 items"]
    assert "12 ngày" in suggest_must_mention(TEXTS["vi"])
    assert "30天" in suggest_must_mention(TEXTS["zh"])


def test_warnings_superseded_and_one_fact_two_numbers_and_unreadable_refused():
    old = Document("old", "Refunds are issued within 30 days of the return.",
                   metadata={"status": "superseded", "superseded_by": "en"})
    secret = admit("secret", "Salary bands are confidential.", "", {"acl": ["hr"]})
    corpus = _corpus(old=old, secret=secret)
    warned = span_warnings(corpus, [("en", 0, 48)], user_groups=UNRESTRICTED)
    assert len(warned) == 1 and "'old'" in warned[0] and "'30 days'" in warned[0]
    assert "superseded by 'en'" in span_warnings(corpus, [("old", 0, 10)],
                                                 user_groups=UNRESTRICTED)[0]
    with pytest.raises(InputError, match="'secret' is not readable by this labeller"):
        span_warnings(corpus, [("secret", 0, 6)], user_groups=["staff"])  # refused, not warned
    assert not span_warnings(corpus, [("secret", 0, 6)], user_groups=["hr"])
    with pytest.raises(ReaderRequired, match="span_warnings: 'secret' declares access"):
        span_warnings(corpus, [("en", 0, 48)])
    assert not span_warnings(corpus, [("en", 49, 65)],
                             user_groups=UNRESTRICTED)  # a number with no twin


def test_session_reloads_progress_skips_undo_and_two_labellers(tmp_path):
    corpus = _corpus()
    path = tmp_path / "golden.jsonl"
    qs = ["how long for a refund", "how many leave days", "who is the CEO"]
    a = LabellingSession(path, corpus, qs, user_groups=UNRESTRICTED)
    b = LabellingSession(path, corpus, qs, user_groups=UNRESTRICTED)
    a.save("q001", [("en", 0, 48)], must_mention=["14 days"], category="lookup")
    b.save("q002", [("vi", 0, 41)], category="leave")
    b.skip("q003")
    again = LabellingSession(path, corpus, qs, user_groups=UNRESTRICTED)
    assert again.progress == "2 of 3 labelled, 1 skipped"
    assert again.categories == ["leave", "lookup"] and again.pending == []
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(x)["qid"] for x in lines] == ["q001", "q002"]
    assert a.undo() == "q001"
    assert [json.loads(x)["qid"] for x in path.read_text(encoding="utf-8").splitlines()] == ["q002"]
    with pytest.raises(InputError, match="nothing to undo"):
        a.undo()
    with pytest.raises(InputError, match="already exists"):
        a.save("q002", [("vi", 0, 5)])


def test_a_broken_skips_file_is_one_clear_line(tmp_path):
    path = tmp_path / "golden.jsonl"
    LabellingSession(path, _corpus(), ["q"], user_groups=UNRESTRICTED).skip("q001")
    (tmp_path / "golden.jsonl.skips.jsonl").write_text('{"qid": "q001"}\n[1]\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"skips\.jsonl:2"):
        LabellingSession(path, _corpus(), ["q"], user_groups=UNRESTRICTED)
