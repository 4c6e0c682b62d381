"""Fuzzy alignment (corpus/align.py) against exhaustive search over every passage of small
texts: the needle's words from a small alphabet (so windows tie), filler from letters the
needle never uses, copies touching the text's start and end (the end range), and a second
copy, exact or scoring exactly the threshold (ties in the ambiguity rule)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz

from workbench.corpus.align import ALIGN_THRESHOLD, align, refine

WORDS = st.sampled_from(["ab", "ba", "abc", "c", "cab", "bb", "a"])
FILLER = st.lists(st.sampled_from(["xy", "yx", "x", "yyx", "xxy"]), max_size=3)


def _whole_words(text: str, i: int) -> bool:
    """A cut at ``i`` splits no word."""
    return i in (0, len(text)) or not (text[i - 1].isalnum() and text[i].isalnum())


def _best(needle: str, text: str) -> float:
    """The best ratio of any passage of ``text`` that splits no word."""
    cuts = [i for i in range(len(text) + 1) if _whole_words(text, i)]
    return max(fuzz.ratio(needle, text[a:b]) for a in cuts for b in cuts if b > a)


def _occurrences(needle: str, text: str) -> list[int]:
    return [i for i in range(len(text)) if text.startswith(needle, i)]


@st.composite
def one_copy(draw):
    """A needle of 5-9 words and a text holding it once: as is, or grown or shrunk by a word
    at its first or last word, with 0-3 filler words either side (often none: the copy is at
    the text's start or end)."""
    words = draw(st.lists(WORDS, min_size=5, max_size=9))
    copy = list(words)
    at = draw(st.sampled_from([0, -1]))
    edit = draw(st.sampled_from(["none", "grown", "shrunk"]))
    if edit == "grown":
        copy.insert(0 if at == 0 else len(copy), draw(WORDS))
    elif edit == "shrunk":
        del copy[at]
    return " ".join(words), " ".join([*draw(FILLER), *copy, *draw(FILLER)])


@settings(max_examples=300)
@given(one_copy())
def test_one_copy_is_aligned_to_the_best_passage_of_whole_words(case):
    needle, text = case
    got = align(needle, text)
    assert 0 <= got.start < got.end <= len(text)
    assert _whole_words(text, got.start) and _whole_words(text, got.end), got
    assert got.score == fuzz.ratio(needle, text[got.start:got.end])
    assert got.score == _best(needle, text), (got, text[got.start:got.end])
    assert not got.ambiguous


def _needle_of_20(words: list[str]) -> str:
    """Exactly 20 characters, ending on a letter: two substituted letters score exactly 90."""
    text = " ".join(words)[:20]
    return text[:-1] + "a" if text[-1] == " " else text


@st.composite
def two_copies(draw):
    """A 20-character needle, an exact copy of it and a second passage: another exact copy,
    or a copy with two letters changed to ``z`` (ratio exactly 90, the threshold), filler
    around, either order."""
    needle = _needle_of_20(draw(st.lists(WORDS, min_size=10, max_size=12)))
    other = needle
    if draw(st.booleans()):
        letters = [i for i, ch in enumerate(needle) if ch != " "]
        i, j = draw(st.lists(st.sampled_from(letters), min_size=2, max_size=2, unique=True))
        other = "".join("z" if k in (i, j) else ch for k, ch in enumerate(needle))
    first, second = (needle, other) if draw(st.booleans()) else (other, needle)
    parts = [*draw(FILLER), first, *draw(FILLER), "xy", second, *draw(FILLER)]
    return needle, other, " ".join(parts)


@settings(max_examples=200)
@given(two_copies())
def test_a_second_passage_at_or_above_the_threshold_makes_it_ambiguous(case):
    needle, other, text = case
    got = align(needle, text)
    copies = _occurrences(needle, text)
    assert got.score == 100.0
    assert got.start in copies and got.end == got.start + len(needle), got
    assert fuzz.ratio(needle, other) >= ALIGN_THRESHOLD  # exactly 90 or 100: a tie at worst
    assert got.ambiguous, (needle, other, text)


@settings(max_examples=100)
@given(st.lists(WORDS, min_size=10, max_size=12), FILLER, FILLER)
def test_a_single_exact_copy_is_found_whole_and_not_ambiguous(words, pre, post):
    """A single exact copy: found whole, and nothing else in the text passes the threshold."""
    needle = _needle_of_20(words)
    text = " ".join([*pre, needle, *post])
    got = align(needle, text)
    (copy,) = _occurrences(needle, text)
    assert (got.score, got.start, got.end, got.ambiguous) == (100.0, copy, copy + 20, False)


@st.composite
def cut_windows(draw):
    """A text holding the quote once (filler on neither, one or both sides) and a window of
    the quote's copy cut short at either end by up to half the quote's length (as the partial
    alignment is at the text's ends)."""
    quote = " ".join(draw(st.lists(WORDS, min_size=4, max_size=9)))
    pre, post = draw(FILLER), draw(FILLER)
    start = len(" ".join([*pre, ""])) if pre else 0
    text = " ".join([*pre, quote, *post])
    reach = len(quote) // 2
    cut_a, cut_b = draw(st.integers(0, reach)), draw(st.integers(0, reach))
    if cut_a + cut_b >= len(quote):
        cut_b = len(quote) - cut_a - 1
    return quote, text, start, start + cut_a, start + len(quote) - cut_b


@settings(max_examples=300)
@given(cut_windows())
def test_refine_moves_a_cut_window_out_to_the_whole_copy_up_to_the_texts_ends(case):
    """The only passage scoring 100 is the copy (exhaustive search says so): refine finds it
    from any window within reach, whether the copy touches the text's start or end or not."""
    quote, text, start, a, b = case
    assert _occurrences(quote, text) == [start]
    assert [(i, j) for i in range(len(text)) for j in range(i + 1, len(text) + 1)
            if fuzz.ratio(quote, text[i:j]) == 100.0] == [(start, start + len(quote))]
    assert refine(quote, text, a, b) == (100.0, start, start + len(quote))


@settings(max_examples=30)
@given(st.lists(WORDS, min_size=2, max_size=5), st.lists(WORDS, min_size=2, max_size=7))
def test_refine_from_any_window_splits_no_word(quote_words, text_words):
    """Exhaustively over every window of a small text, the text's first and last word
    included: the ends refine returns are whole words, inside the text."""
    quote, text = " ".join(quote_words), " ".join(text_words)
    for a in range(len(text)):
        for b in range(a + 1, len(text) + 1):
            _, start, end = refine(quote, text, a, b)
            assert _whole_words(text, start) and _whole_words(text, end), (a, b, start, end)
            assert 0 <= start < end <= len(text)
