"""Fuzzy alignment of a passage in a text: the one rule for quotes and chunks that changed.

:func:`align` finds where ``needle`` best matches in ``haystack`` (both already in a normal
form the caller chose): rapidfuzz ``partial_ratio_alignment``, its ends then moved to the
best full ``ratio`` and out to whole words and the needle's final punctuation
(:func:`refine`). The score is the ``ratio`` (0-100) of that passage, so a passage that grew
or shrank by a word is matched whole. ``ambiguous`` says that another passage outside the
match scores >= ``threshold`` as well (a repeated passage: nothing is guessed).

Used by :mod:`~workbench.golden.reanchor` (drifted evidence quotes) and by the locator
(:mod:`~workbench.corpus.locate`: a production chunk extracted by another tool).
"""

from __future__ import annotations

from dataclasses import dataclass

from rapidfuzz import fuzz

__all__ = ["ALIGN_THRESHOLD", "MIN_ALIGN_CHARS", "Alignment", "align", "edges", "refine"]

#: The default lowest score (rapidfuzz ratio, 0-100) of a passage taken as the same text.
ALIGN_THRESHOLD = 90.0
#: Needles shorter than this are never aligned (too easy to match by chance).
MIN_ALIGN_CHARS = 20


@dataclass(frozen=True)
class Alignment:
    """The best passage ``haystack[start:end]`` for a needle, its ``score`` (0-100), and
    whether another passage outside it scores >= the threshold (``ambiguous``)."""

    score: float
    start: int
    end: int
    ambiguous: bool


def refine(quote: str, text: str, a: int, b: int) -> tuple[float, int, int]:
    """The window near ``[a, b)`` with the best full ``ratio`` to ``quote``: the partial
    alignment is as long as the quote, so it cuts a passage that grew or shrank. Each end is
    moved in turn (twice) within half the quote's length, then out to whole words
    (:func:`_snap`)."""
    reach = max(1, len(quote) // 2)
    lo, hi = max(0, a - reach), min(len(text), b + reach)
    score, a, b = fuzz.ratio(quote, text[a:b]), a, b
    for _ in range(2):
        for s in range(lo, b):
            if (r := fuzz.ratio(quote, text[s:b])) > score:
                score, a = r, s
        for e in range(a + 1, hi + 1):
            if (r := fuzz.ratio(quote, text[a:e])) > score:
                score, b = r, e
    return float(score), *_snap(quote, text, a, b, hi)


def _snap(quote: str, text: str, a: int, b: int, hi: int) -> tuple[int, int]:
    """Ends moved out to whole words; when the quote ends with punctuation (``.``) that the
    window lacks, the end moves on to the next one on the same line, within ``hi``."""
    while a > 0 and text[a - 1].isalnum() and text[a].isalnum():
        a -= 1
    while b < len(text) and text[b - 1].isalnum() and text[b].isalnum():
        b += 1
    last = quote[-1]
    if not last.isalnum() and not last.isspace() and text[b - 1] != last:
        stop = text.find(last, b, hi)
        if stop >= 0 and "\n" not in text[b:stop]:
            b = stop + 1
    return a, b


def edges(text: str) -> tuple[str, str]:
    """The first and last word (text without spaces: the first and last two characters)."""
    words = text.split()
    if len(words) > 1:
        return words[0], words[-1]
    return text[:2], text[-2:]


def align(needle: str, haystack: str, threshold: float = ALIGN_THRESHOLD) -> Alignment:
    """The best passage of ``haystack`` for ``needle`` (see the module doc); a score of 0
    and an empty span when nothing aligns."""
    best = fuzz.partial_ratio_alignment(needle, haystack)
    if not needle or best is None or best.dest_end <= best.dest_start:
        return Alignment(0.0, 0, 0, False)
    _, a, b = refine(needle, haystack, best.dest_start, best.dest_end)
    score = float(fuzz.ratio(needle, haystack[a:b]))
    others = (fuzz.partial_ratio(needle, part, score_cutoff=threshold)
              for part in (haystack[:a], haystack[b:]) if len(part) >= len(needle) // 2)
    return Alignment(score, a, b, any(s >= threshold for s in others))
