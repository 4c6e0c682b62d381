"""Hit texts cut by the logger: detected across a log, located by their prefix.

A tracing tool often stores only the first N characters of each retrieved text, sometimes
with an ellipsis. Located as it is, such a text is either not found (the ellipsis is not in
the document) or found as a span of N characters where the production chunk was longer, so
evidence past the cut counts as not retrieved. :func:`detect_truncation` recognises the cut
from the log's texts alone:

* **marked**: at least ``MIN_CUT`` texts end with the same mark (``…``, ``...``, ``[...]``,
  ``[truncated]``) and none without it is longer than the longest marked one;
* **one length**: at least ``MIN_CUT`` texts, and at least ``MIN_SHARE`` of them, have the
  longest length N (none is longer), and either they are half of the texts or more, or most
  of them end inside a word while the shorter texts (whole chunks) mostly do not.

A fixed-size chunker makes texts of one length too; a cut is then *suspected*, and the only
thing it changes is that the text is located by its prefix and extended to the production
chunk that starts there when that chunking is known, which a whole chunk already is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["MARKS", "MIN_CUT", "MIN_SHARE", "Truncation", "detect_truncation"]

MARKS = ("[truncated]", "[...]", "…", "...")
MIN_CUT = 3
MIN_SHARE = 0.2


@dataclass(frozen=True)
class Truncation:
    """A log's texts cut at ``length`` characters (not counting ``mark``, "" when there is
    none); ``cut`` of its ``texts`` distinct texts are cut."""

    length: int
    mark: str
    cut: int
    texts: int

    def is_cut(self, text: str) -> bool:
        if self.mark:
            return text.endswith(self.mark) and len(text) - len(self.mark) <= self.length
        return len(text) == self.length

    def prefix(self, text: str) -> str:
        """What the logger kept of ``text`` (the mark removed)."""
        return text[: len(text) - len(self.mark)].rstrip() if self.mark else text

    def __str__(self) -> str:
        how = f"end with {self.mark!r}" if self.mark else f"are {self.length} characters long"
        return (f"{self.cut} of {self.texts} hit texts {how}: the logger cut them at "
                f"{self.length} characters")


def _mid_word(text: str) -> bool:
    return text[-1:].isalnum() and text[-2:-1].isalnum()


def detect_truncation(texts: Iterable[str]) -> Truncation | None:
    """The cut of a log's hit texts, or None (rules in the module doc)."""
    distinct = list(dict.fromkeys(t for t in texts if t and t.strip()))
    if not distinct:
        return None
    for mark in MARKS:
        marked = [t for t in distinct if t.endswith(mark)]
        if len(marked) < MIN_CUT:
            continue
        longest = max(len(t) - len(mark) for t in marked)
        plain = [t for t in distinct if not t.endswith(mark)]
        if all(len(t) <= longest for t in plain):
            return Truncation(longest, mark, len(marked), len(distinct))
    return _one_length(distinct)


def _one_length(texts: Sequence[str]) -> Truncation | None:
    lengths = Counter(len(t) for t in texts)
    longest = max(lengths)
    at = lengths[longest]
    if at < MIN_CUT or at < MIN_SHARE * len(texts):
        return None
    cut = [t for t in texts if len(t) == longest]
    whole = [t for t in texts if len(t) < longest]
    cut_share = sum(map(_mid_word, cut)) / len(cut)
    whole_share = sum(map(_mid_word, whole)) / len(whole) if whole else 0.0
    if at < 0.5 * len(texts) and (cut_share < 0.5 or cut_share <= whole_share):
        return None
    return Truncation(longest, "", at, len(texts))
