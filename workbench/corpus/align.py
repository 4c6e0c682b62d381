"""Fuzzy alignment of a passage in a text: the one rule for quotes and chunks that changed.

:func:`align` finds where ``needle`` best matches in ``haystack`` (both already in a normal
form the caller chose). rapidfuzz ``partial_ratio_alignment`` gives the place ``[a, b)``, as
long as the needle, so it cuts a passage that grew or shrank; :func:`refine` then takes the
whole passage, and promises exactly this:

* the reach: ``[a, b)`` widened to the needle's length where it is shorter (at the text's
  ends), then by half the needle's length on either side, then out to whole words;
* the passage: of those inside the reach that split no word (no letter or digit on both
  sides of an end), the one with the best full ``ratio``; on a tie the shortest (no more
  text than the score needs), then the earliest;
* the needle's final punctuation: when the needle ends with a mark (``.``) the passage does
  not end with, its end moves on to the next such mark on the same line within the reach.

The score is the ``ratio`` (0-100) of the passage returned. ``ambiguous`` says that another
passage outside it scores >= ``threshold`` as well (a repeated passage: nothing is guessed).
The cost grows with the needle (its reach), not with the haystack beyond rapidfuzz's scans.

Used by :mod:`~workbench.golden.reanchor` (drifted evidence quotes) and by the locator
(:mod:`~workbench.corpus.locate`: a production chunk extracted by another tool).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np
from rapidfuzz import fuzz

__all__ = ["ALIGN_THRESHOLD", "MIN_ALIGN_CHARS", "Alignment", "align", "edges", "refine"]

#: The default lowest score (rapidfuzz ratio, 0-100) of a passage taken as the same text.
ALIGN_THRESHOLD = 90.0
#: Needles shorter than this are never aligned (too easy to match by chance).
MIN_ALIGN_CHARS = 20
#: Above ``4 * _GRID`` starts left to look at, every ``_GRID``-th is looked at first.
_GRID = 8


@dataclass(frozen=True)
class Alignment:
    """The best passage ``haystack[start:end]`` for a needle, its ``score`` (0-100), and
    whether another passage outside it scores >= the threshold (``ambiguous``)."""

    score: float
    start: int
    end: int
    ambiguous: bool


def refine(quote: str, text: str, a: int, b: int) -> tuple[float, int, int]:
    """``(ratio, start, end)``: the passage of ``text`` for ``quote`` near the partial
    alignment ``[a, b)``, by the module doc's rule, exactly: the best full ratio among the
    passages of whole words in the reach; on a tie the shortest, then the earliest; then out
    to the quote's final punctuation. The ratio is that of the passage returned."""
    m = len(quote)
    reach = max(1, m // 2)
    lo = _cut(text, max(0, min(a, b - m) - reach), -1)
    hi = _cut(text, min(len(text), max(b, a + m) + reach), 1)
    start, end = _best(quote, text, lo, hi, a)
    last = quote[-1]
    if not last.isalnum() and not last.isspace() and text[end - 1] != last:
        stop = text.find(last, end, hi)
        if stop >= 0 and "\n" not in text[end:stop]:
            end = stop + 1
    return float(fuzz.ratio(quote, text[start:end])), start, end


def _splits(text: str, i: int) -> bool:
    """A cut at ``i`` splits a word (letters or digits on both sides)."""
    return 0 < i < len(text) and text[i - 1].isalnum() and text[i].isalnum()


def _cut(text: str, i: int, step: int) -> int:
    """``i`` moved by ``step`` (-1 or 1) until it splits no word."""
    while _splits(text, i):
        i += step
    return i


def _best(quote: str, text: str, lo: int, hi: int, near: int) -> tuple[int, int]:
    """The best passage ``[start, end)`` of ``text[lo:hi]`` splitting no word (:func:`refine`'s
    order), by branch and bound. The LCS of the quote with every passage from one start is
    one bit-parallel pass (:func:`_row`), the first from the start nearest ``near``; a start
    is passed over when no passage from it can score as well as the best found: bounded by
    the LCS with everything after the start, with everything before the end, and by the
    lengths (ends whose length cannot reach the first row's best are not looked at)."""
    m, window = len(quote), text[lo:hi]
    word = np.array([ch.isalnum() for ch in window], bool)
    cuts = lo + np.flatnonzero(np.concatenate([[True], ~(word[:-1] & word[1:]), [True]]))
    starts, ends = cuts[:-1], cuts[1:]
    masks = _masks(quote, window)
    after = _row(quote[::-1], _masks(quote, window[::-1]), 0, hi - lo)  # L(hi - k, hi)
    upto = _row(quote, masks, 0, hi - lo)  # L(lo, lo + k)
    best, key = -1.0, (0, 0)
    rows: dict[int, np.ndarray] = {}  # start index -> LCS with each end's passage (0 before)

    def look(i: int, keep: bool = False) -> None:
        nonlocal best, key
        s = int(starts[i])
        lengths = ends[i:] - s
        common = _row(quote, masks, s - lo, hi - s)[lengths]
        if keep:
            rows[i] = np.concatenate([np.zeros(i, np.int64), common])
        ratios = 2 * common / (m + lengths)
        j = int(np.argmax(ratios))  # the first of the best: the shortest
        here = (int(lengths[j]), s)
        if ratios[j] > best or (ratios[j] == best and here < key):
            best, key = float(ratios[j]), here

    first = int(np.argmin(np.abs(starts - near)))
    look(first, keep=True)
    cap = np.minimum(after[hi - starts], m)
    low = np.searchsorted(ends, starts + best * m / (2 - best), "left")
    longest = 2 * cap / best - m if best > 0 else np.full(len(starts), hi - lo)
    high = np.searchsorted(ends, starts + longest, "right")
    bound = np.full(len(starts), -1.0)
    for i in range(0, len(starts), 256):
        part = slice(i, i + 256)
        width = int((high[part] - low[part]).max(initial=0))
        if width <= 0:
            continue
        at = low[part, None] + np.arange(width)
        inside = at < high[part, None]
        e = ends[np.minimum(at, len(ends) - 1)]
        length = e - starts[part, None]
        common = np.minimum(np.minimum(cap[part, None], upto[e - lo]), length)
        bound[part] = np.where(inside, 2 * common / (m + length), -1.0).max(axis=1)
    bound[first] = -1.0
    left = [int(i) for i in np.flatnonzero(bound >= best)]
    if len(left) <= _GRID * 4:
        for i in sorted(left, key=lambda i: -bound[i]):
            if bound[i] < best:
                break
            look(i)
        return key[1], key[1] + key[0]
    # Many starts left (a low best: nothing aligns well): every _GRID-th first; a start
    # between two looked at gets nothing more in common than the passage from the one
    # before it, nor more than the one after it plus the characters between.
    for i in left[::_GRID] + left[-1:]:
        look(i, keep=True)
    known = sorted(rows)
    for i in left:
        if i in rows:
            continue
        place = bisect.bisect(known, i)
        earlier, later = known[place - 1], known[place]
        lengths = ends[i:] - starts[i]
        common = np.minimum(rows[earlier][i:],
                            rows[later][i:] + int(starts[later] - starts[i]))
        common = np.minimum(np.minimum(common, lengths), cap[i])
        if (2 * common / (m + lengths)).max() >= best:
            look(i)
    return key[1], key[1] + key[0]


def _masks(quote: str, pattern: str) -> dict[str, int]:
    """Bit ``j`` of ``masks[ch]`` is set where ``pattern[j] == ch``, for each character of the
    quote."""
    masks = {ch: 0 for ch in quote}
    for j, ch in enumerate(pattern):
        if ch in masks:
            masks[ch] |= 1 << j
    return masks


def _row(quote: str, masks: dict[str, int], shift: int, width: int) -> np.ndarray:
    """``row[k]``: the LCS of ``quote`` and the pattern's ``[shift, shift + k)``, for k in
    0..width (bit-parallel LCS, Hyyro 2004: a zero bit of ``v`` is a pattern position where
    the LCS grows)."""
    full = (1 << width) - 1
    shifted = {ch: mask >> shift for ch, mask in masks.items()}
    v = full
    for ch in quote:
        u = v & shifted[ch]
        v = ((v + u) | (v - u)) & full
    grows = np.frombuffer((~v & full).to_bytes((width + 7) // 8, "little"), np.uint8)
    row = np.zeros(width + 1, np.int64)
    np.cumsum(np.unpackbits(grows, bitorder="little", count=width), out=row[1:])
    return row


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
    score, a, b = refine(needle, haystack, best.dest_start, best.dest_end)
    others = (fuzz.partial_ratio(needle, part, score_cutoff=threshold)
              for part in (haystack[:a], haystack[b:]) if len(part) >= len(needle) // 2)
    return Alignment(score, a, b, any(s >= threshold for s in others))
