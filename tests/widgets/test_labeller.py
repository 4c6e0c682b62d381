"""Labeller widget, driven from Python the way its view drives it (real BM25 and MiniLM)."""

from __future__ import annotations

import json

import pytest

from workbench.corpus import UNRESTRICTED, Corpus, Document
from workbench.golden import GoldenSet
from workbench.widgets.labeller import Labeller, labeller_html

QUESTIONS = [{"qid": "q1", "question": "how many days to submit travel receipts"},
             {"qid": "q2", "question": "年假有几天"}, "what is the CEO's favourite colour"]


@pytest.fixture
def corpus(handbook):
    docs, _ = handbook
    evil = Document("evil", "Safe text <script>window.pwned=1</script><img src=x onerror=alert(1)>")
    return Corpus([*docs.values(), evil])


def test_search_select_mark_save_writes_the_exact_line(corpus, tmp_path):
    path = tmp_path / "golden.jsonl"
    lab = Labeller(corpus, QUESTIONS, path, dense=False, user_groups=UNRESTRICTED)
    assert lab.current_qid == "q1" and lab.progress == "0 of 3 labelled, 0 skipped"
    lab.search("submit travel receipts days")
    assert lab.bm25_hits and lab.doc_id == lab.bm25_hits[0]["doc_id"]
    text = corpus["expenses-travel"].text
    start = text.index("Travel receipts must be submitted within 14 days")
    end = text.index(".", start) + 1
    lab.show_document("expenses-travel")
    lab.select(start, end)
    assert "14 days" in lab.suggestions
    assert any("expenses-travel-2024" in w for w in lab.warnings)  # one fact, two numbers
    lab.toggle_must_mention("14 days")
    lab.category = "expenses"
    lab.save()
    row = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert row["evidence"] == [{"doc_id": "expenses-travel", "start": start, "end": end,
                                "text": text[start:end]}]
    assert row["answer_must_mention"] == ["14 days"] and row["category"] == "expenses"
    assert lab.current_qid == "q2" and lab.progress == "1 of 3 labelled, 0 skipped"


def test_two_spans_unanswerable_skip_undo_and_restart(corpus, tmp_path):
    path = tmp_path / "golden.jsonl"
    lab = Labeller(corpus, QUESTIONS, path, dense=False, user_groups=UNRESTRICTED)
    lab.skip()
    zh = corpus["zh-leave-shanghai"].text
    lab.show_document("zh-leave-shanghai")
    lab.select(0, 5)
    lab.add_span()
    lab.select(6, 12)
    lab.save()
    assert len(GoldenSet.load(path).get("q2").evidence) == 2
    assert GoldenSet.load(path).get("q2").evidence[1].text == zh[6:12]
    lab.unanswerable()
    assert GoldenSet.load(path).get("q003").answerable is False
    lab.undo()
    assert lab.current_qid == "q003" and "q003" not in {i.qid for i in GoldenSet.load(path)}
    again = Labeller(corpus, QUESTIONS, path, dense=False, user_groups=UNRESTRICTED)
    assert again.progress == "1 of 3 labelled, 1 skipped" and again.current_qid == "q003"


def test_bad_save_is_a_status_not_a_write(corpus, tmp_path):
    path = tmp_path / "golden.jsonl"
    lab = Labeller(corpus, QUESTIONS, path, dense=False, user_groups=UNRESTRICTED)
    lab.selection = []
    lab.save()  # nothing selected
    assert "select the answer" in lab.status and path.read_text(encoding="utf-8") == ""


def test_dense_hits_from_the_packaged_minilm(corpus, tmp_path):
    lab = Labeller(corpus, QUESTIONS, tmp_path / "g.jsonl", user_groups=UNRESTRICTED)
    lab.search("how long do I have to hand in receipts after a trip")
    assert len(lab.dense_hits) == 5 and lab.dense_hits[0]["rank"] == 1


def test_static_form_escapes_document_text(corpus, tmp_path):
    path = tmp_path / "golden.jsonl"
    lab = Labeller(corpus, QUESTIONS, path, dense=False, user_groups=UNRESTRICTED)
    lab.show_document("evil")
    lab.select(0, len(corpus["evil"].text))
    lab.save()
    html = labeller_html(lab.session)
    assert "<script>" not in html and "&lt;script&gt;" in html and "<img" not in html
    assert "1 of 3 labelled" in lab._repr_html_()


def test_review_of_drifted_spans_opens_each_at_its_suggestion_and_applies_only_confirmed(
        tmp_path):
    """Re-anchoring leaves a changed number and an edge edit to review; the labeller opens
    each at its suggestion with the old quote said, a person confirms one, marks one gone, and
    apply_confirmed moves exactly those: the span that did not drift and the unreviewed items
    keep their offsets."""
    from workbench.golden import Evidence, GoldenItem, apply_confirmed, reanchor

    quote = "Passwords must be at least 14 characters long."
    still = "Rotate keys every 90 days."
    old = f"Intro. {quote} {still} Refunds take 30 days to arrive."
    new = (f"Intro. Passwords must be at least 14 characters in length. {still} "
           "Refunds take 45 days to arrive.")
    at = old.index(quote)
    refund = "Refunds take 30 days to arrive."
    golden = GoldenSet([
        GoldenItem("q1", "password length?", evidence=(
            Evidence("d", at, at + len(quote), quote),
            Evidence("d", old.index(still), old.index(still) + len(still), still)),
            answer_must_mention=("14 characters",), category="security"),
        GoldenItem("q2", "refund time?", evidence=(
            Evidence("d", old.index(refund), old.index(refund) + len(refund), refund),),
            answer_must_mention=("30 days",), category="refunds"),
        GoldenItem("q3", "untouched?", evidence=(Evidence("e", 0, 5, "Hello"),)),
    ])
    corpus = Corpus([Document("d", new), Document("e", "Hello world")])
    report = reanchor(golden, corpus)
    # the sentence that only moved is re-anchored exactly; the other two wait for a person
    assert {m.qid for m in report.review} == {"q1", "q2"} and report.reanchored == 1
    lab = Labeller.for_review(report, corpus, tmp_path / "confirmed.jsonl", dense=False,
                              user_groups=UNRESTRICTED)
    assert lab.current_qid == "q1" and lab.doc_id == "d" and lab.category == "security"
    assert lab.must_mention == ["14 characters"] and quote in lab.status
    suggested = new[lab.selection[1]:lab.selection[2]]
    assert suggested.startswith("Passwords must be at least 14 characters")
    lab.save()                              # the person confirms the suggestion
    assert lab.current_qid == "q2" and "30 days" in lab.status
    lab.unanswerable()                      # the 30-day rule is gone: 45 days is a new fact
    confirmed = GoldenSet.load(tmp_path / "confirmed.jsonl")
    repaired = apply_confirmed(report, confirmed)
    q1, q2, q3 = repaired
    assert [ev.text for ev in q1.evidence] == [still, suggested]
    assert all(corpus[ev.doc_id].text[ev.start:ev.end] == ev.text for ev in q1.evidence)
    assert not q2.answerable and q2.evidence == () and q3 == golden[2]
    assert repaired.problems(corpus) == []
    with pytest.raises(ValueError, match="not under review"):
        apply_confirmed(report, [GoldenItem("q3", "untouched?", evidence=(
            Evidence("e", 0, 5, "Hello"),))])


def test_a_labeller_reuses_bm25_built_for_the_same_chunking_or_the_retriever_given(corpus,
                                                                                   tmp_path):
    """A second labeller over the same corpus reuses the first one's BM25 (built once per
    chunking); ``retriever=`` searches with one already built."""
    from workbench.retrieval import Hit

    first = Labeller(corpus, QUESTIONS, tmp_path / "a.jsonl", dense=False, user_groups=UNRESTRICTED)
    second = Labeller(corpus, QUESTIONS, tmp_path / "b.jsonl", dense=False,
                      user_groups=UNRESTRICTED)
    assert second.bm25 is first.bm25
    other = Labeller(corpus, QUESTIONS, tmp_path / "c.jsonl", dense=False,
                     chunks=first.chunks[:-1], user_groups=UNRESTRICTED)
    assert other.bm25 is not first.bm25 and len(other.bm25.chunk_ids) == len(first.chunks) - 1
    class Given:
        name = "mine"

        def search(self, query, k):
            return [Hit(first.chunks[0].id, 1.0, 1)]

    given = Given()
    lab = Labeller(corpus, QUESTIONS, tmp_path / "d.jsonl", dense=False, retriever=given,
                   user_groups=UNRESTRICTED)
    assert lab.bm25 is given
    lab.search("anything")
    assert [h["chunk_id"] for h in lab.bm25_hits] == [first.chunks[0].id]


def test_each_question_opens_searched_with_the_answer_proposed_and_one_key_saves_it(
        corpus, tmp_path):
    path = tmp_path / "golden.jsonl"
    lab = Labeller(corpus, QUESTIONS, path, dense=False, user_groups=UNRESTRICTED)
    assert lab.query == QUESTIONS[0]["question"] and lab.bm25_hits
    assert all(h["score"] > 0 for h in lab.bm25_hits)
    doc, start, end = lab.selection
    assert lab.origin == "suggested" and lab.doc_id == doc
    assert "14 days" in corpus[doc].text[start:end]
    lab.save()
    row = json.loads(path.read_text(encoding="utf-8"))
    assert row["labelling"]["span"] == "suggested" and row["labelling"]["actions"] == 1
    assert row["category"] == "uncategorised" and row["evidence"][0]["start"] == start
    # the next question: its text searched, its hits shown, the old document gone
    assert lab.current_qid == "q2" and lab.query == "年假有几天" and lab.bm25_hits
    assert lab.doc_id != doc and lab.category == "" and lab.must_mention == []
    assert lab.session.throughput().acceptance_rate == 1.0


def test_grow_shrink_mark_a_must_mention_and_category_not_carried_over(corpus, tmp_path):
    path = tmp_path / "golden.jsonl"
    lab = Labeller(corpus, QUESTIONS, path, dense=False, user_groups=UNRESTRICTED)
    doc, start, end = lab.selection
    text = corpus[doc].text
    lab.grow("word", 1)
    assert lab.selection[2] > end and lab.origin == "edited"
    lab.grow("word", -1)
    assert lab.selection == [doc, start, end]
    lab.grow("sentence", 1)
    assert lab.selection[2] > end
    lab.grow("sentence", -1)
    assert lab.selection == [doc, start, end]
    at = text.index("14 days", start)
    lab.mark(at, at + len("14 days"))          # the mouse inside the answer marks
    assert lab.marked == [at, at + 7] and lab.selection == [doc, start, end]
    lab.mention_marked()
    assert lab.must_mention == ["14 days"]
    lab.set_category("expenses")
    lab.save()
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["answer_must_mention"] == ["14 days"] and saved["category"] == "expenses"
    assert saved["labelling"]["span"] == "edited" and saved["labelling"]["actions"] == 8
    assert lab.category == ""                   # nothing carried over
    lab.same_as_last()
    assert lab.category == "expenses"
    lab.mark(0, 4)                              # outside the answer: a new answer
    assert lab.selection[1:] == [0, 4] and lab.origin == "selected"


def test_skip_then_undo_brings_back_the_skip_not_the_previous_save(corpus, tmp_path):
    path = tmp_path / "golden.jsonl"
    lab = Labeller(corpus, QUESTIONS, path, dense=False, user_groups=UNRESTRICTED)
    lab.save()
    lab.skip()
    assert lab.skipped == ["q2"] and lab.current_qid == "q003"
    lab.undo()
    assert lab.current_qid == "q2" and lab.skipped == [] and "q1" in lab.session.labelled
    lab.skip()
    lab.unanswerable()
    assert lab.status == "all questions labelled or skipped"
    lab.open_skipped()
    assert lab.current_qid == "q2"
    lab.next_question("q1")                     # any question by its qid
    assert lab.current_qid == "q1" and lab.question == QUESTIONS[0]["question"]
    lab.next_question("q2")
    lab.grow("word", 1)
    lab.toggle_must_mention("x")
    lab.undo()
    lab.undo()                                  # edits come off one by one
    assert lab.must_mention == [] and lab.origin == "suggested"


def test_unknown_keywords_are_refused_by_name(corpus, tmp_path):
    with pytest.raises(TypeError, match="dence"):
        Labeller(corpus, QUESTIONS, tmp_path / "g.jsonl", dence=False,
                 user_groups=UNRESTRICTED)  # type: ignore[call-arg]


def test_the_dense_index_is_embedded_once_and_reused_by_the_next_session(tmp_path):
    from workbench.retrieval import EmbeddingCache

    corpus = Corpus([Document("a", "Refunds are issued within 14 days of the return."),
                     Document("b", "Boots cost $120 and ship within 2 days.")])
    first = EmbeddingCache(tmp_path / "cache")
    Labeller(corpus, ["refund time"], tmp_path / "g.jsonl", cache=first, user_groups=UNRESTRICTED)
    assert first.stats.misses >= 2
    again = EmbeddingCache(tmp_path / "cache")
    lab = Labeller(corpus, ["refund time"], tmp_path / "g.jsonl", cache=again,
                   user_groups=UNRESTRICTED)
    assert again.stats.misses == 0 and lab.dense_hits and lab.selection[0] == "a"


def test_the_keyboard_plan_through_the_python_api_saves_the_expected_lines(tmp_path):
    """The browser test's 12 questions (tests/widgets/labeller_plan.py), driven through the
    calls the view makes: the exact lines, and at most 4 actions for the median answerable
    question."""
    from statistics import median

    from tests.widgets.labeller_plan import expected_rows, run_in_python, saved_as_expected, write
    from workbench.corpus import load_folder
    from workbench.golden import import_questions

    docs, log = write(tmp_path)
    corpus = Corpus(load_folder(docs).values())
    path = tmp_path / "golden.jsonl"
    lab = Labeller(corpus, import_questions(log), path, dense=False)
    run_in_python(lab)
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    got = sorted((saved_as_expected(x) for x in lines), key=lambda r: r["qid"])
    assert got == expected_rows(corpus, log)
    answerable = [x["labelling"]["actions"] for x in lines if x["answerable"]]
    assert median(answerable) <= 4 and max(answerable) <= 8
    assert lab.session.throughput().acceptance_rate == 0.9
