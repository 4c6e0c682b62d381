"""Repairing label drift: re-anchor each drifted evidence span by its quote.

An evidence span has drifted when its document no longer reads its quote at its offsets
(what :meth:`GoldenSet.problems` reports as label drift). :func:`reanchor` looks for the
quote in the current document, in order:

1. ``exact``: the quote as it is; applied when it occurs exactly once;
2. ``normalised``: case (NFKC + casefold) and whitespace runs folded on both sides, the
   match mapped back to exact offsets of the document; applied when unique;
3. ``fuzzy``: rapidfuzz ``partial_ratio_alignment`` of the folded quote in the folded
   document, with its score (0-100). Applied only when the score is >= ``threshold``, the
   match is unique (no second alignment outside it scores >= ``threshold``), the quote has
   at least :data:`MIN_FUZZY_CHARS` characters and the match has the same numbers as the
   quote (a changed number is a changed fact: the seed's "one policy stated twice").

Everything else goes to review, with the best suggestion when there is one. Nothing moves
silently: the report lists every drifted span (old -> new offsets, method, score, whether
applied, why not). An applied span takes the document's current text as its quote. The
repaired :class:`GoldenSet` keeps the spans under review as they were, so validation still
flags them; save it with :meth:`GoldenSet.save`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from rapidfuzz import fuzz

from workbench.corpus import Corpus, Document
from workbench.golden.golden_set import GoldenSet
from workbench.golden.items import Evidence
from workbench.text import fold, frame_html

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FUZZY_THRESHOLD", "MIN_FUZZY_CHARS", "Folded", "ReanchorReport", "Reanchored",
           "reanchor"]

#: Default lowest fuzzy score (rapidfuzz partial ratio, 0-100) applied without review.
FUZZY_THRESHOLD = 90.0
#: Quotes shorter than this are never applied from a fuzzy match (too easy to match by chance).
MIN_FUZZY_CHARS = 20
_DIGITS = re.compile(r"\d+")


class Folded:
    """A text folded for comparison (NFKC + casefold per character, whitespace runs -> one
    space) with the map back: ``starts[i]`` is the original offset that folded character
    ``i`` came from."""

    def __init__(self, text: str):
        chars: list[str] = []
        starts: list[int] = []
        space = False
        for i, ch in enumerate(text):
            if ch.isspace():
                if not space and chars:
                    chars.append(" ")
                    starts.append(i)
                space = True
                continue
            space = False
            for f in fold(ch):
                chars.append(f)
                starts.append(i)
        if chars and chars[-1] == " ":
            chars.pop()
            starts.pop()
        self.text = "".join(chars)
        self.starts = starts

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Original ``[start, end)`` of folded ``[start, end)`` (``end > start``)."""
        return self.starts[start], self.starts[end - 1] + 1


@dataclass(frozen=True)
class Reanchored:
    """One drifted span: where it was, where it is now (if found), how and whether applied."""

    qid: str
    index: int
    doc_id: str
    old_start: int
    old_end: int
    quote: str
    method: str  # exact | normalised | fuzzy | none
    score: float
    applied: bool
    new_start: int | None = None
    new_end: int | None = None
    new_text: str = ""
    reason: str = ""


@dataclass(frozen=True)
class ReanchorReport:
    """Every drifted span (:attr:`moves`), the repaired golden set, and the counts."""

    golden: GoldenSet
    moves: tuple[Reanchored, ...]
    checked: int

    @property
    def reanchored(self) -> int:
        return sum(m.applied for m in self.moves)

    @property
    def review(self) -> tuple[Reanchored, ...]:
        """The drifted spans a person must confirm (the best suggestion, if any, attached)."""
        return tuple(m for m in self.moves if not m.applied)

    def table(self) -> pd.DataFrame:
        """One row per drifted span (the fields of :class:`Reanchored`)."""
        import pandas as pd

        return pd.DataFrame([m.__dict__ for m in self.moves],
                            columns=list(Reanchored.__dataclass_fields__))

    def summary(self) -> str:
        return (f"{self.checked} evidence spans checked, {len(self.moves)} drifted: "
                f"{self.reanchored} re-anchored, {len(self.review)} to review")

    def __repr__(self) -> str:
        return f"ReanchorReport({self.summary()})"

    def _repr_html_(self) -> str:
        return f"<p>{self.summary()}</p>" + frame_html(self.table(), index=False)


def _occurrences(text: str, quote: str) -> list[int]:
    found, at = [], text.find(quote)
    while at >= 0:
        found.append(at)
        at = text.find(quote, at + 1)
    return found


def _fuzzy(folded: Folded, quote: str, threshold: float) -> tuple[float, int, int, bool]:
    """Best alignment (score, folded start, end) and whether another scores >= threshold."""
    best = fuzz.partial_ratio_alignment(quote, folded.text)
    if best is None or best.dest_end <= best.dest_start:
        return 0.0, 0, 0, False
    a, b = best.dest_start, best.dest_end
    others = (fuzz.partial_ratio(quote, part, score_cutoff=threshold)
              for part in (folded.text[:a], folded.text[b:]) if len(part) >= len(quote) // 2)
    return float(best.score), a, b, any(s >= threshold for s in others)


def _find(doc: Document, ev: Evidence, threshold: float) -> dict[str, Any]:
    exact = _occurrences(doc.text, ev.text)
    if len(exact) == 1:
        return dict(method="exact", score=100.0, applied=True, span=(exact[0],
                    exact[0] + len(ev.text)))
    if exact:
        return dict(method="exact", score=100.0, applied=False,
                    reason=f"the quote occurs {len(exact)} times: pick one")
    folded, quote = Folded(doc.text), Folded(ev.text).text
    if not quote:
        return dict(method="none", score=0.0, applied=False, reason="the quote is blank")
    norm = _occurrences(folded.text, quote)
    if len(norm) == 1:
        return dict(method="normalised", score=100.0, applied=True,
                    span=folded.span(norm[0], norm[0] + len(quote)))
    if norm:
        return dict(method="normalised", score=100.0, applied=False,
                    reason=f"the quote occurs {len(norm)} times (case/whitespace folded)")
    score, a, b, ambiguous = _fuzzy(folded, quote, threshold)
    if b <= a:
        return dict(method="none", score=0.0, applied=False, reason="the quote is gone")
    span = folded.span(a, b)
    same_numbers = _DIGITS.findall(quote) == _DIGITS.findall(folded.text[a:b])
    reason = ("" if score >= threshold and not ambiguous and same_numbers
              and len(ev.text) >= MIN_FUZZY_CHARS else
              f"fuzzy score {score:.1f} < {threshold:g}" if score < threshold else
              "another passage matches as well" if ambiguous else
              "the numbers differ from the quote's" if not same_numbers else
              f"the quote is shorter than {MIN_FUZZY_CHARS} characters")
    return dict(method="fuzzy", score=score, applied=not reason, span=span, reason=reason)


def reanchor(golden: GoldenSet, corpus: Corpus, threshold: float = FUZZY_THRESHOLD
             ) -> ReanchorReport:
    """Re-anchor every drifted evidence span of ``golden`` in ``corpus`` (see the module
    doc); ``threshold`` is the lowest fuzzy score applied without review. Spans without a
    quote cannot drift and are left alone; a document missing from the corpus is a review."""
    items = []
    moves: list[Reanchored] = []
    checked = 0
    for item in golden:
        evidence = list(item.evidence)
        for i, ev in enumerate(item.evidence):
            if not ev.text:
                continue
            checked += 1
            doc = corpus.get(ev.doc_id)
            if doc is not None and doc.text[ev.start:ev.end] == ev.text:
                continue
            base: dict[str, Any] = dict(qid=item.qid, index=i, doc_id=ev.doc_id, old_start=ev.start,
                        old_end=ev.end, quote=ev.text)
            if doc is None:
                moves.append(Reanchored(**base, method="none", score=0.0, applied=False,
                                        reason="the document is not in the corpus"))
                continue
            found = _find(doc, ev, threshold)
            span = found.pop("span", None)
            if span is not None:
                found.update(new_start=span[0], new_end=span[1],
                             new_text=doc.text[span[0]:span[1]])
            move = Reanchored(**base, **found)
            moves.append(move)
            if move.applied and move.new_start is not None and move.new_end is not None:
                evidence[i] = Evidence(ev.doc_id, move.new_start, move.new_end, move.new_text)
        items.append(replace(item, evidence=tuple(evidence)) if evidence != list(item.evidence)
                     else item)
    return ReanchorReport(GoldenSet(items, golden.path, golden.lines), tuple(moves), checked)
