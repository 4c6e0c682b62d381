"""Repairing label drift: re-anchoring evidence spans by their quote after documents change.
Edits of documents are generated (insertions before a span, inside it, deletion of it):
nothing moves silently, ambiguous matches and changed numbers go to review."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from workbench.corpus import Corpus, Document
from workbench.golden import Evidence, GoldenItem, GoldenSet
from workbench.golden.reanchor import Folded, facts, reanchor

QUOTE = "Passwords must be at least 14 characters long."


def one(doc_text: str, start: int, quote: str = QUOTE):
    golden = GoldenSet([GoldenItem("q1", "password length?",
                                   evidence=(Evidence("d", start, start + len(quote), quote),))])
    return reanchor(golden, Corpus([Document("d", doc_text)]))


def test_a_span_still_in_place_is_not_a_move():
    report = one(f"Intro. {QUOTE} Outro.", 7)
    assert report.moves == () and report.checked == 1 and report.reanchored == 0


def test_each_method_in_turn_and_the_report_lists_every_move():
    exact = one(f"New paragraph.\n\nIntro. {QUOTE}", 7)
    (m,) = exact.moves
    assert (m.method, m.applied, m.old_start, m.new_start) == ("exact", True, 7, 23)
    assert exact.golden[0].evidence[0] == Evidence("d", 23, 23 + len(QUOTE), QUOTE)
    # case and whitespace changed: mapped back to exact offsets of the new text
    text = "Intro. PASSWORDS must be  at least\n14 characters long. Outro."
    norm = one(text, 7)
    (m,) = norm.moves
    assert (m.method, m.applied) == ("normalised", True)
    assert text[m.new_start:m.new_end] == "PASSWORDS must be  at least\n14 characters long."
    assert norm.golden[0].evidence[0].text == m.new_text  # the quote follows the document
    assert norm.golden.problems(Corpus([Document("d", text)])) == []
    # a word changed: fuzzy, scored, applied above the threshold
    fuzzy = one("Intro. Passwords must always be at least 14 characters long. Outro.", 7)
    (m,) = fuzzy.moves
    assert m.method == "fuzzy" and m.applied and 90 <= m.score < 100
    # the whole grown passage, not a window cut to the quote's length
    assert m.new_text == "Passwords must always be at least 14 characters long."
    # an edit at an edge of the quote: suggested, not applied
    edge = one("Intro. Passwords must be at least 14 characters in length. Outro.", 7)
    assert not edge.moves[0].applied and "begin and end" in edge.moves[0].reason
    assert edge.moves[0].new_text.startswith("Passwords must be")
    late = one("Intro. Yes, not Passwords must be at least 14 characters long! Outro.", 7)
    assert not late.moves[0].applied
    assert "1 drifted: 1 re-anchored, 0 to review" in repr(fuzzy)
    assert list(fuzzy.table().columns[:3]) == ["qid", "index", "doc_id"]


def test_duplicates_changed_numbers_and_missing_documents_go_to_review():
    twice = one(f"{QUOTE} and again: {QUOTE}", 3)
    (m,) = twice.moves
    assert not m.applied and "2 times" in m.reason
    assert twice.golden[0].evidence[0].start == 3  # left as it was, still flagged
    changed = one("Intro. Passwords must be at least 16 characters long. Outro.", 7)
    (m,) = changed.moves
    assert m.method == "fuzzy" and not m.applied and "numbers or negations" in m.reason
    assert m.new_start == 7  # the suggestion a person confirms
    golden = GoldenSet([GoldenItem("q1", "x", evidence=(Evidence("gone", 0, 5, "hello"),))])
    (m,) = reanchor(golden, Corpus([Document("d", "hello")])).moves
    assert not m.applied and "not in the corpus" in m.reason
    negated = one("Intro. Passwords must not be at least 14 characters long. Outro.", 7)
    assert not negated.moves[0].applied and "negations" in negated.moves[0].reason
    assert facts("可以不退款, won't 14 days, không 3") == ["14", "3", "不", "won't", "không"]
    short = one("ab 14 cd", 0, quote="ab 14 ce")
    assert not short.moves[0].applied


def test_folded_maps_back_to_original_offsets():
    f = Folded("  Straße\u00a0 ＡＰＩ  ok ")
    assert f.text == "strasse api ok"
    start, end = f.span(f.text.index("api"), f.text.index("api") + 3)
    assert "  Straße\u00a0 ＡＰＩ  ok "[start:end] == "ＡＰＩ"


# ----- generated edits --------------------------------------------------------------------

filler = st.lists(st.sampled_from(["the", "policy", "applies", "to", "all", "staff", "and",
                                   "contractors", "in", "every", "office", "今天", "nghỉ", "of",
                                   "days", "return"]),
                  min_size=0, max_size=30).map(" ".join)
quote_words = st.lists(st.sampled_from(["Refunds", "are", "issued", "within", "fourteen",
                                        "business", "days", "of", "return", "receipt"]),
                       min_size=5, max_size=10, unique=True).map(" ".join)


def _doc(before: str, quote: str, after: str) -> tuple[str, int]:
    text = f"{before} {quote} {after}"
    return text, len(before) + 1


@settings(max_examples=80, deadline=None)
@given(filler, quote_words, filler, filler)
def test_an_insertion_before_the_span_re_anchors_exactly(before, quote, after, inserted):
    old, start = _doc(before, quote, after)
    assume(old.count(quote) == 1)
    new = f"{inserted}\n{old}"
    assume(new.count(quote) == 1)
    report = one(new, start, quote)
    (m,) = report.moves
    assert (m.method, m.applied, m.new_start) == ("exact", True, start + len(inserted) + 1)
    assert report.golden.problems(Corpus([Document("d", new)])) == []


@settings(max_examples=80, deadline=None)
@given(filler, quote_words, filler)
def test_deleting_the_span_never_yields_an_applied_anchor(before, quote, after):
    _, start = _doc(before, quote, after)
    new = f"{before} {after}"
    report = one(new, start, quote)
    (m,) = report.moves
    assert not m.applied
    assert report.golden[0].evidence[0].start == start  # not moved


@settings(max_examples=80, deadline=None)
@given(filler, quote_words, filler, st.data())
def test_an_insertion_inside_the_span_is_applied_over_it_or_reviewed(before, quote, after,
                                                                   data):
    old, start = _doc(before, quote, after)
    # an edit inserts words between words (a cut inside a word makes a new word)
    cut = data.draw(st.sampled_from([i + 1 for i, ch in enumerate(quote) if ch == " "]))
    inserted = data.draw(st.sampled_from(["not ", "usually ", "(see below) ", "X "]))
    new = old[:start + cut] + inserted + old[start + cut:]
    report = one(new, start, quote)
    (m,) = report.moves
    if m.applied:
        # the new span covers the edited passage: it overlaps where the quote now lies
        assert m.new_start is not None and m.new_end is not None
        assert m.new_start < start + len(quote) + len(inserted) and m.new_end > start
        assert m.score >= 90
        assert new[m.new_start:m.new_end] == m.new_text
        assert inserted.strip() in m.new_text  # the grown passage, not a cut of it
        assert "not" not in inserted  # an added negation is a changed fact: review
    else:
        assert report.golden[0].evidence[0].start == start


@settings(max_examples=40, deadline=None)
@given(filler, quote_words, filler)
def test_a_duplicated_quote_always_goes_to_review(before, quote, after):
    old, start = _doc(before, quote, after)
    new = f"{old}\n{quote}. {before}\n{old}"
    report = one("X" + new, start, quote)
    assert [m.applied for m in report.moves] == [False]


def test_reanchoring_the_handbook_after_edits(handbook):
    corpus, golden = handbook
    edited = Corpus([Document(d.id, "Updated.\n\n" + d.text, d.title, d.metadata)
                     for d in corpus.documents])
    report = reanchor(golden, edited)
    spans = sum(len(i.evidence) for i in golden)
    assert report.checked == spans == len(report.moves)
    assert report.review == () and report.golden.problems(edited) == []


@pytest.mark.parametrize("seed", [0, 1])
def test_the_edited_handbook_is_never_re_anchored_to_a_wrong_place(seed, capsys):
    """benchmarks/bench_reanchor.py's edits: every applied move lands where the text went;
    changed numbers and deletions all go to review."""
    from tests.conftest import load_benchmark

    bench = load_benchmark("bench_reanchor")
    import sys
    argv, sys.argv = sys.argv, ["bench_reanchor", "--seed", str(seed)]
    try:
        bench.main()
    finally:
        sys.argv = argv
    out = capsys.readouterr().out
    rows = {line.split()[0]: [int(x) for x in line.split()[1:]] for line in out.splitlines()
            if line.split() and line.split()[0] in bench.ACTIONS}
    assert all(wrong == 0 for _, _, wrong, _ in rows.values()), out
    for act in ("change_number", "delete"):
        assert rows[act][0] == rows[act][3] > 0, out
    assert rows["insert_before"][0] == rows["insert_before"][1] > 0, out


@pytest.mark.parametrize("threshold", [80.0, 95.0])
def test_the_threshold_is_the_line_between_applied_and_review(threshold):
    report = reanchor(GoldenSet([GoldenItem("q", "x", evidence=(
        Evidence("d", 0, len(QUOTE), QUOTE),))]),
        Corpus([Document("d", "Passwords must be at least 14 chars long.")]),
        threshold=threshold)
    (m,) = report.moves
    assert 80 < m.score < 95 and m.applied == (m.score >= threshold)
