"""Labelling rules: values suggested whole in every script, "one fact stated twice" only for
two values of the same thing, one Candidate from import to saved item, undo of whatever was
last, and the throughput a session records."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.corpus import Corpus, Document
from workbench.golden import import_questions
from workbench.golden.labelling import (
    LabellingSession,
    make_item,
    span_warnings,
    suggest_must_mention,
)
from workbench.io import InputError

ROOT = Path(__file__).resolve().parents[2]

#: (script, filler words, units, joiner between number and unit)
SCRIPTS = [
    ("latin", ["submit", "receipts", "refund", "delivery", "the", "trip"],
     ["days", "weeks", "characters", "business days", "km", "items", "dollars"], " "),
    ("vietnamese", ["nhân", "viên", "được", "nghỉ", "phép", "mỗi"],
     ["ngày", "tháng", "đồng", "giờ"], " "),
    ("cyrillic", ["срок", "возврата", "составляет", "доставка"], ["дней", "км", "рублей"], " "),
    ("chinese", ["全长", "开通", "员工", "报销", "须在"],
     ["公里", "天", "个月", "元", "个工作日", "小时"], ""),
    ("japanese", ["報告", "費用", "期限", "以内"], ["円", "時間", "日", "週間"], ""),
    ("korean", ["환불", "기간", "이내", "배송"], ["일", "원", "개월"], ""),
]
NUMBERS = st.one_of(st.integers(1, 99_999).map(str),
                    st.tuples(st.integers(1, 999), st.integers(0, 9)).map(
                        lambda t: f"{t[0]}.{t[1]}"),
                    st.tuples(st.integers(1, 99), st.integers(0, 999)).map(
                        lambda t: f"{t[0]},{t[1]:03d}"))


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(SCRIPTS), NUMBERS, st.data())
def test_a_number_is_suggested_whole_with_its_unit_in_every_script(script, number, data):
    _, words, units, joiner = script
    unit = data.draw(st.sampled_from(units))
    before = data.draw(st.lists(st.sampled_from(words), min_size=1, max_size=4))
    after = data.draw(st.lists(st.sampled_from(words), max_size=3))
    space = " " if joiner else ""
    quantity = f"{number}{joiner}{unit}"
    text = space.join(before) + space + quantity + ("" if not after else
                                                    ", " + space.join(after)) + "."
    assert quantity in suggest_must_mention(text), text


@settings(max_examples=60, deadline=None)
@given(st.integers(1990, 2030), st.integers(1, 12), st.one_of(st.none(), st.integers(1, 28)),
       st.sampled_from(["于", "至", "截至"]), st.sampled_from(["年", "年度"]))
def test_dates_stay_whole(year, month, day, before, _):
    date = f"{year}年{month}月" + (f"{day}日" if day else "")
    assert date in suggest_must_mention(f"该线路{before}{date}开通。")


def test_the_issues_examples_and_names_with_versions():
    assert suggest_must_mention("全长364.6公里，于2005年6月开通。") == ["364.6公里", "2005年6月"]
    assert suggest_must_mention("Within 30 days of purchase.") == ["30 days"]
    assert suggest_must_mention("The Python 3 module directory is listed.") == ["Python 3"]
    assert suggest_must_mention("Phụ cấp 200.000 đồng, hạn 30 tháng 4.") == ["200.000 đồng",
                                                                             "30 tháng 4"]


SUBJECT = st.lists(st.sampled_from(["refunds", "issued", "returned", "parcel", "customer",
                                    "receipts", "travel", "submitted", "claims"]),
                   min_size=3, max_size=5, unique=True)


@settings(max_examples=80, deadline=None)
@given(SUBJECT, SUBJECT, st.integers(1, 60), st.integers(1, 60),
       st.sampled_from(["days", "weeks", "hours"]))
def test_one_fact_stated_twice_means_same_unit_same_subject_different_value(a, b, x, y, unit):
    one = " ".join(a[:2]) + f" within {x} {unit} " + " ".join(a[2:]) + "."
    two = " ".join(b[:2]) + f" within {y} {unit} " + " ".join(b[2:]) + "."
    corpus = Corpus([Document("one", one), Document("two", two)])
    warned = [w for w in span_warnings(corpus, [("one", 0, len(one))]) if "twice" in w]
    shared = len(set(a) & set(b))
    same = shared >= 3 and shared >= 0.7 * min(len(a), len(b))
    assert bool(warned) == (x != y and same), (one, two, warned)


def test_versions_and_numbers_without_units_are_not_facts():
    three = ("The Python 3 module directory is /usr/lib/python3/dist-packages and the "
             "Python 3 interpreter is python3.")
    two = ("The Python 2 module directory is /usr/lib/python2.7/dist-packages and the "
           "Python 2 interpreter is python2.")
    corpus = Corpus([Document("py3", three), Document("py2", two)])
    assert span_warnings(corpus, [("py3", 0, len(three))]) == []


CSV = ("question,user,time,session\n"
       "how long do refunds take,ana,2026-03-02T09:14:00Z,s1\n"
       "how long do refunds take?,bao,2026-03-02T09:15:00Z,s2\n"
       "what is the CEO's favourite colour,chi,2026-03-03T10:00:00Z,s3\n")
TEXT = "Refunds are issued within 14 days of the return. Boots cost $120."


def test_imported_candidates_are_what_the_session_takes_and_the_log_travels(tmp_path):
    log = tmp_path / "log.csv"
    log.write_text(CSV, encoding="utf-8")
    candidates = import_questions(log)
    corpus = Corpus([Document("en", TEXT)])
    for given_as in (candidates, candidates.items):
        path = tmp_path / f"golden-{type(given_as).__name__}.jsonl"
        session = LabellingSession(path, corpus, given_as)
        first, second = session.candidates
        assert first.qid and first.qid.startswith("c-") and second.logged["user"] == "chi"
        session.save(first.qid, [("en", 0, 48)], ["14 days"], "refunds",
                     labelling={"span": "suggested", "seconds": 3.5, "actions": 1})
        session.save(second.qid, answerable=False)
        rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
        assert rows[0]["source"] == "real" and rows[0]["source_file"] == str(log)
        assert (rows[0]["source_line"], rows[0]["source_user"], rows[0]["source_time"],
                rows[0]["source_session"]) == (2, "ana", "2026-03-02T09:14:00Z", "s1")
        assert rows[0]["labelling"] == {"span": "suggested", "seconds": 3.5, "actions": 1}
        assert rows[1]["source_user"] == "chi" and rows[1]["category"] == "uncategorised"


def test_the_documented_flow_import_sample_label_save_closes_on_a_golden_set(tmp_path):
    """README and notebook 09's flow, end to end on the one Candidate type: import a log,
    sample what the golden set lacks, label it in a session, and the saved file loads as a
    golden set that validates against the corpus, keeps where each question came from, and
    leaves nothing to sample on the next round."""
    from dataclasses import replace

    from workbench.golden import Candidate, GoldenSet, sample_candidates
    from workbench.golden.exchange import qid_of

    log = tmp_path / "log.csv"
    log.write_text(CSV, encoding="utf-8")
    corpus = Corpus([Document("en", TEXT)])
    path = tmp_path / "golden.jsonl"
    GoldenSet(()).save(path)
    picked = sample_candidates(import_questions(log), golden=GoldenSet.load(path))
    assert len(picked) == 2 and all(type(c) is Candidate for c in picked)
    session = LabellingSession(path, corpus, picked)
    assert session.candidates == [replace(c, qid=qid_of(c)) for c in picked]
    refunds, colour = session.candidates
    session.save(refunds.qid or "", [("en", 0, 48)], ["14 days"], "refunds")
    session.save(colour.qid or "", answerable=False)
    golden = GoldenSet.load(path)
    assert golden.problems(corpus) == []
    assert [(i.qid, i.question, i.source) for i in golden] == [
        (c.qid, c.question, "real") for c in session.candidates]
    assert [(i.extra["source_file"], i.extra["source_line"], i.extra["source_user"])
            for i in golden] == [(str(log), 2, "ana"), (str(log), 4, "chi")]
    first = golden.items[0]
    assert first.evidence[0].text == TEXT[:48] and first.answer_must_mention == ("14 days",)
    assert not golden.items[1].answerable
    assert sample_candidates(import_questions(log), golden=golden) == []


def test_a_saved_candidates_file_reads_back_into_the_session(tmp_path):
    from dataclasses import replace

    from workbench.golden import save_candidates
    from workbench.golden.exchange import qid_of
    from workbench.io import iter_jsonl

    log = tmp_path / "log.csv"
    log.write_text(CSV, encoding="utf-8")
    saved = save_candidates(tmp_path / "candidates.jsonl", import_questions(log))
    rows = [row for _, row in iter_jsonl(saved)]
    session = LabellingSession(tmp_path / "g.jsonl", Corpus([Document("en", TEXT)]), rows)
    assert session.candidates == [replace(c, qid=qid_of(c)) for c in import_questions(log)]
    first = session.candidates[0]
    item = session.save(first.qid or "", [("en", 0, 48)])
    assert item.extra["source_user"] == "ana" and item.extra["source_line"] == 2
    assert item.extra["source_session"] == "s1" and "source_logged" not in item.extra


def test_undo_takes_back_the_last_save_or_skip_whichever(tmp_path):
    corpus = Corpus([Document("en", TEXT)])
    path = tmp_path / "g.jsonl"
    s = LabellingSession(path, corpus, ["a?", "b?", "c?"])
    s.save("q001", [("en", 0, 48)])
    s.skip("q002")
    assert [c.qid for c in s.skipped_queue] == ["q002"] and s.pending[0].qid == "q003"
    assert s.undo() == "q002"                        # the skip, not the save before it
    assert "q001" in s.labelled and s.skipped_queue == [] and s.pending[0].qid == "q002"
    assert s.undo() == "q001" and path.read_text(encoding="utf-8") == ""
    with pytest.raises(InputError, match="nothing to undo"):
        s.undo()


def test_an_unanswerable_item_has_no_category():
    corpus = Corpus([Document("en", TEXT)])
    with pytest.raises(InputError, match="no category"):
        make_item(corpus, "q", "q?", category="security", answerable=False)
    assert make_item(corpus, "q", "q?", answerable=False).category == "uncategorised"


def test_throughput_from_what_saves_and_skips_recorded(tmp_path):
    corpus = Corpus([Document("en", TEXT)])
    s = LabellingSession(tmp_path / "g.jsonl", corpus, ["a?", "b?", "c?", "d?"])
    assert math.isnan(s.throughput().acceptance_rate)
    s.save("q001", [("en", 0, 48)], labelling={"span": "suggested", "seconds": 10,
                                                "actions": 1})
    s.save("q002", [("en", 49, 65)], labelling={"span": "edited", "seconds": 20, "actions": 3})
    s.save("q003", answerable=False, labelling={"seconds": 6, "actions": 1})
    s.skip("q004", {"seconds": 4, "actions": 1})
    t = s.throughput()
    assert (t.labelled, t.skipped, t.seconds) == (3, 1, 40.0)
    assert t.questions_per_hour == 3 * 3600 / 40 and t.median_actions == 1
    assert t.max_actions == 3 and t.answerable_actions == (1, 3)
    assert t.acceptance_rate == 0.5 and "270 questions/hour" in t.summary()


def _facts_sentence_by_sentence(doc_id, text):
    """The rule read plainly: every sentence searched for values, each with the content words
    around it (the oracle of facts, which reads only the sentences holding a digit)."""
    from itertools import pairwise

    from workbench.golden import labelling as lb

    out = []
    cuts = [0, *(m.end() for m in re.finditer(r"[.!?]+(?=\s)|[。！？；]|\n", text)), len(text)]
    for a, b in pairwise(cuts):
        sentence = text[a:b]
        words = lb._words(sentence)
        for m in re.finditer(lb._SUGGEST_PATTERN, sentence):
            if (m.lastgroup or "") not in lb._VALUES:
                continue
            value, unit = lb._unit(m.lastgroup or "", m.group(0))
            before = [w for at, w in words if at < m.start()][-lb._NEAR:]
            after = [w for at, w in words if at >= m.end()][:lb._NEAR]
            out.append((lb.Fact(doc_id, a + m.start(), a, m.group(0), value, unit, sentence),
                        frozenset(before + after)))
    return out


def _facts_with_subjects(doc_id, text):
    from workbench.golden.labelling import facts

    return [(f, f.subject) for f in facts(doc_id, text)]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["The", "refund", "window", "is", "30", "days", "3.5", "%",
                                 "$", "1,200", "leave", ".", "!", "?", "...", "\n", " ", "年",
                                 "30天", "٣", "tháng", "4", "일", "Python", "HR-12", "business",
                                 "Form", "W-4", "policy", "Section", "€", "£5", "¥", "₫",
                                 "。", "？", "；", "\u3000", "\t", "ＡＰＩ", "２０", "million"]),
                max_size=40),
       st.sampled_from([" ", ""]))
def test_facts_read_only_sentences_with_a_digit_find_every_value(words, sep):
    """Reading only the sentences that hold a digit, scanning only from a character a value
    can start with, and reading subjects when asked finds exactly the values (with their
    subjects) that searching every sentence from every character finds."""
    text = sep.join(words)
    assert _facts_with_subjects("d", text) == _facts_sentence_by_sentence("d", text)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from([*"aAfpsZ $€£¥₫0١２.,-#+%°天일ｆ\n", "form ", "policy ",
                                 "section ", "Form ", "Python ", "tháng ", " days", "W-4",
                                 "million", "HR"]), max_size=40).map("".join))
def test_the_guarded_pattern_finds_what_the_pattern_alone_finds(text):
    """suggest_must_mention and facts scan from a character a kind can start with: on any
    text, the same matches, with the same kinds, as trying the pattern at every character."""
    from workbench.golden import labelling as lb

    def found(rx):
        return [(m.span(), m.lastgroup) for m in rx.finditer(text)]

    assert found(lb._SUGGEST) == found(re.compile(lb._SUGGEST_PATTERN))


def test_facts_on_real_documents_equal_the_rule_read_plainly():
    """The handbook and, where present, every shared corpus in several scripts: the same
    values, places and subjects as the plain reading."""
    from workbench.corpus import load_folder

    texts = [d.text for d in load_folder(ROOT / "data" / "handbook" / "docs").values()]
    shared = ROOT.parent / "shared" / "datasets"
    for path in sorted((shared / "chroma_chunking_evaluation" / "corpora").glob("*.md")):
        texts.append(path.read_text(encoding="utf-8")[:200_000])
    for name in ("xquad", "cmrc2018"):
        for path in sorted((shared / name).glob("*.json")):
            data = json.loads(path.read_text(encoding="utf-8"))
            texts.extend(p["context"] for a in data["data"][:20] for p in a["paragraphs"])
    assert len(texts) > 37 or not shared.exists()
    for n, text in enumerate(texts):
        assert _facts_with_subjects(str(n), text) == _facts_sentence_by_sentence(str(n), text)
