"""Repairing label drift: re-anchor each drifted evidence span by its quote.

An evidence span has drifted when its document no longer reads its quote at its offsets
(what :meth:`GoldenSet.problems` reports as label drift). :func:`reanchor` looks for the
quote in the current document, in order:

1. ``exact``: the quote as it is; applied when it occurs exactly once;
2. ``normalised``: case (NFKC + casefold) and whitespace runs folded on both sides, the
   match mapped back to exact offsets of the document; applied when unique;
3. ``fuzzy``: the folded quote aligned in the folded document
   (:func:`~workbench.corpus.align.align`: rapidfuzz's partial alignment refined to the whole
   passage; the score is the ``ratio`` of that passage, 0-100). Applied only when
   the score is >= ``threshold``, the match is unique (no second alignment outside it
   scores >= ``threshold``), the quote has
   at least :data:`MIN_FUZZY_CHARS` characters, the match begins with the quote's first word
   and ends with its last (an edit inside is repaired, one at an edge is reviewed: it may
   leave a new "not" just outside the span), and the match has the same facts as the
   quote: the same numbers and the same negations (:data:`NEGATIONS`): a changed number or an
   added "not" is a changed fact (the seed's "one policy stated twice").

Everything else goes to review, with the best suggestion when there is one. Nothing moves
silently: the report lists every drifted span (old -> new offsets, method, score, whether
applied, why not). An applied span takes the document's current text as its quote. The
repaired :class:`GoldenSet` keeps the spans under review as they were, so validation still
flags them; save it with :meth:`GoldenSet.save`.

Review: ``Labeller.for_review(report, corpus, path)`` (:mod:`workbench.widgets.labeller`)
opens each item under review at its suggestion; what a person saves there is a labelling
file, and :func:`apply_confirmed` puts those spans in place of the drifted ones.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import KW_ONLY, dataclass, replace
from typing import TYPE_CHECKING, Any

from workbench.corpus import Corpus, Document
from workbench.corpus.align import ALIGN_THRESHOLD, MIN_ALIGN_CHARS, align, edges
from workbench.golden.golden_set import GoldenSet
from workbench.golden.items import Evidence, GoldenItem
from workbench.io import WorkbenchError
from workbench.text import fold, frame_html

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "FUZZY_THRESHOLD",
    "MIN_FUZZY_CHARS",
    "NEGATIONS",
    "Folded",
    "ReanchorReport",
    "Reanchored",
    "apply_confirmed",
    "facts",
    "reanchor",
]

#: Default lowest fuzzy score (rapidfuzz ratio, 0-100) applied without review.
FUZZY_THRESHOLD = ALIGN_THRESHOLD
#: Quotes shorter than this are never applied from a fuzzy match (too easy to match by chance).
MIN_FUZZY_CHARS = MIN_ALIGN_CHARS
#: Words that turn a statement around; a fuzzy match must have the same ones as its quote
#: (with any ``...n't`` and the Han negations 不没無无非未别勿).
NEGATIONS = ("not", "no", "never", "none", "nor", "without", "except", "unless", "cannot",
             "không", "chưa", "chẳng")
_DIGITS = re.compile(r"\d+")
_NEGATION = re.compile(rf"\b(?:{'|'.join(NEGATIONS)})\b|\w+n't\b|[不没無无非未别勿]")


def facts(text: str) -> list[str]:
    """What a fuzzy match may not change: the numbers of ``text`` in order, then its
    negations in order (folded)."""
    folded = fold(text)
    return _DIGITS.findall(folded) + _NEGATION.findall(folded)


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
    _: KW_ONLY
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
    found = align(quote, folded.text, threshold)
    score, a, b, ambiguous = found.score, found.start, found.end, found.ambiguous
    if b <= a:
        return dict(method="none", score=0.0, applied=False, reason="the quote is gone")
    span = folded.span(a, b)
    while a < b and folded.text[a] == " ":
        a += 1
    while b > a and folded.text[b - 1] == " ":
        b -= 1
    same_facts = facts(quote) == facts(folded.text[a:b])
    same_edges = edges(quote) == edges(folded.text[a:b])
    reason = ("" if score >= threshold and not ambiguous and same_facts and same_edges
              and len(ev.text) >= MIN_FUZZY_CHARS else
              f"fuzzy score {score:.1f} < {threshold:g}" if score < threshold else
              "another passage matches as well" if ambiguous else
              "the numbers or negations differ from the quote's" if not same_facts else
              "the match does not begin and end as the quote does" if not same_edges else
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


def apply_confirmed(report: ReanchorReport, confirmed: Iterable[GoldenItem]) -> GoldenSet:
    """``report.golden`` with each reviewed item's drifted spans replaced by the spans a
    person confirmed (``confirmed``: items saved in the labeller, matched by qid), and its
    must-mention strings by theirs (a changed fact changes them); its other spans and fields,
    and every item not under review or not confirmed, stay as they are. An item
    confirmed as unanswerable (the documents no longer say it) becomes unanswerable. A
    confirmed item whose qid is not under review is refused: nothing moves that was not
    reviewed."""
    drifted: dict[str, set[int]] = {}
    for move in report.review:
        drifted.setdefault(move.qid, set()).add(move.index)
    by_qid = {item.qid: item for item in confirmed}
    stray = sorted(set(by_qid) - set(drifted))
    if stray:
        raise WorkbenchError(f"confirmed items {stray} are not under review in this report "
                         "(re-run reanchor on the current golden set and documents)")
    items = []
    for item in report.golden:
        person = by_qid.get(item.qid)
        if person is None:
            items.append(item)
        elif not person.answerable:
            items.append(replace(item, evidence=(), answerable=False,
                                 answer_must_mention=()))
        else:
            kept = [ev for i, ev in enumerate(item.evidence) if i not in drifted[item.qid]]
            items.append(replace(item, evidence=(*kept, *person.evidence),
                                 answer_must_mention=person.answer_must_mention))
    return GoldenSet(items, report.golden.path, report.golden.lines)
