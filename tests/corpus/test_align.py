"""Fuzzy alignment (corpus/align.py) against exhaustive search over every passage of small
texts: the needle's words from a small alphabet (so windows tie), filler from letters the
needle never uses, copies touching the text's start and end (the end range), and a second
copy, exact or scoring exactly the threshold (ties in the ambiguity rule). The module doc's
rule (reach, best ratio, shortest, earliest, final punctuation) is stated once here by brute
force (:func:`_rule`) and held for refine from any window and for align around rapidfuzz's
partial alignment, in texts of two letters where passages tie."""

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


def _reach(quote: str, text: str, a: int, b: int) -> tuple[int, int]:
    """The module doc's reach around ``[a, b)``: widened to the quote's length, then by half of
    it either side (inside the text), then out to whole words."""
    m, half = len(quote), max(1, len(quote) // 2)
    lo, hi = max(0, min(a, b - m) - half), min(len(text), max(b, a + m) + half)
    while not _whole_words(text, lo):
        lo -= 1
    while not _whole_words(text, hi):
        hi += 1
    return lo, hi


def _rule(quote: str, text: str, a: int, b: int) -> tuple[float, int, int]:
    """The module doc's rule by brute force: every passage of whole words in the reach, the
    best ratio, then the shortest, then the earliest; then out to the final punctuation."""
    lo, hi = _reach(quote, text, a, b)
    cuts = [i for i in range(lo, hi + 1) if _whole_words(text, i)]
    start, end = max(((s, e) for s in cuts for e in cuts if e > s),
                     key=lambda p: (fuzz.ratio(quote, text[p[0]:p[1]]), p[0] - p[1], -p[0]))
    last = quote[-1]
    if not last.isalnum() and not last.isspace() and text[end - 1] != last:
        stop = text.find(last, end, hi)
        if stop >= 0 and "\n" not in text[end:stop]:
            end = stop + 1
    return fuzz.ratio(quote, text[start:end]), start, end


TIE_WORDS = st.sampled_from(["a", "b", "ab", "ba", "aa", "a.", "b,"])
SEPARATORS = st.sampled_from([" ", " ", " ", "\n", ". "])


@st.composite
def texts(draw, min_words: int, max_words: int) -> str:
    """Words of two letters (some ending in ``.`` or ``,``) joined by spaces, line breaks and
    sentence ends: many passages tie, and the final-punctuation rule has marks to reach."""
    words = draw(st.lists(TIE_WORDS, min_size=min_words, max_size=max_words))
    seps = draw(st.lists(SEPARATORS, min_size=len(words), max_size=len(words)))
    return "".join(w + s for w, s in zip(words, seps, strict=True))[:-1]


@st.composite
def refine_cases(draw, quote_words: tuple[int, int] = (1, 4),
                 text_words: tuple[int, int] = (2, 12)):
    """A quote, a text and any window ``[a, b)`` of it (refine's input)."""
    quote = draw(texts(*quote_words))
    text = draw(texts(*text_words))
    a = draw(st.integers(0, len(text) - 1))
    return quote, text, a, draw(st.integers(a + 1, len(text)))


@settings(max_examples=400)
@given(refine_cases())
def test_refine_takes_the_best_shortest_earliest_passage_of_whole_words_in_the_reach(case):
    """The tie rule and the reach, against every passage of small texts: ties are common (two
    letters), and windows anywhere, the text's start and end included."""
    quote, text, a, b = case
    assert refine(quote, text, a, b) == _rule(quote, text, a, b)


@settings(max_examples=100)
@given(refine_cases((5, 15), (20, 50)))
def test_refine_is_exact_when_many_starts_score_alike(case):
    """Longer quotes in longer texts of two letters: the best scores low and many starts may
    hold it (refine then looks at every eighth start first and bounds the others by the rows
    either side, about half of these cases): still the rule's passage."""
    quote, text, a, b = case
    assert refine(quote, text, a, b) == _rule(quote, text, a, b)


@st.composite
def drifted(draw):
    """A needle and a text holding an edited copy of it (a word dropped, added or changed at
    any place, the ends included), with 0-3 filler words either side; or any text."""
    words = draw(st.lists(TIE_WORDS | WORDS, min_size=3, max_size=9))
    copy = list(words)
    at = draw(st.integers(0, len(copy) - 1))
    edit = draw(st.sampled_from(["drop", "add", "change", "none", "other"]))
    if edit == "drop":
        del copy[at]
    elif edit == "add":
        copy.insert(at + draw(st.integers(0, 1)), draw(WORDS))
    elif edit == "change":
        copy[at] = draw(WORDS)
    elif edit == "other":
        copy = draw(st.lists(TIE_WORDS | WORDS, min_size=1, max_size=9))
    return " ".join(words), " ".join([*draw(FILLER), *copy, *draw(FILLER)])


@settings(max_examples=400)
@given(drifted())
def test_align_keeps_the_promise_of_the_module_doc_around_rapidfuzzs_place(case):
    """align is refine's rule around rapidfuzz's partial alignment (the finding's
    ``align("bb c a c a", "bb c cab a c a")``, 77.8 where the reach holds 83.3, is one case)."""
    needle, text = case
    place = fuzz.partial_ratio_alignment(needle, text)
    assert place is not None and place.dest_end > place.dest_start
    got = align(needle, text)
    assert (got.score, got.start, got.end) == _rule(needle, text, place.dest_start,
                                                    place.dest_end)


def test_the_reviews_case_is_the_best_passage():
    got = align("bb c a c a", "bb c cab a c a")
    assert (got.score, got.start, got.end) == (fuzz.ratio("bb c a c a", "bb c cab a c a"), 0, 14)
