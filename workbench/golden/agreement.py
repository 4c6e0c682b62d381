"""Two labellers, one answer: agreement between two golden sets on the same questions.

Questions are matched by ``qid`` (``match="qid"``) or by the question text folded as
:func:`~workbench.golden.candidates.question_key` does (``match="question"``); questions
only one labeller has are listed, never scored. Per question:

* ``span_jaccard`` / ``span_dice``: overlap of the evidence in characters, per document
  (a character of document X never matches one of document Y): Jaccard
  ``|A ∩ B| / |A ∪ B|`` and Dice ``2|A ∩ B| / (|A| + |B|)`` of the union of each labeller's
  ranges. Undefined (NaN) when neither gave evidence; 0 when only one did.
* ``same_documents``: the two sets of evidence documents are equal.
* ``must_mention_jaccard``: Jaccard of the must-mention strings (case-folded); NaN when
  neither gave any.
* ``answerable`` and ``category`` of each labeller.

Overall: observed agreement and Cohen's kappa for ``answerable`` and ``category``
(:func:`workbench.stats.cohen_kappa`: NaN when undefined, no questions or one and the same
label from both), and the mean of each per-question overlap over the questions where
it is defined (with that n). :meth:`Agreement.disagreements` puts the two labels of every
question that differs side by side, for adjudication (also as escaped HTML).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field, replace
from typing import TYPE_CHECKING

from workbench.corpus import Document
from workbench.corpus.reader import Reader, require_reader
from workbench.golden.candidates import question_key
from workbench.golden.golden_set import GoldenSet
from workbench.golden.items import Evidence, GoldenItem, can_read_item
from workbench.io import WorkbenchError
from workbench.stats import cohen_kappa
from workbench.text import escape_html, frame_html

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["WITHHELD", "Agreement", "agreement", "span_overlap"]

#: What stands for a question, quote or must-mention string its reader may not see.
WITHHELD = "(withheld)"


def _ranges(evidence: Sequence[Evidence]) -> dict[str, list[tuple[int, int]]]:
    out: dict[str, list[tuple[int, int]]] = {}
    for ev in sorted(evidence, key=lambda e: (e.doc_id, e.start)):
        spans = out.setdefault(ev.doc_id, [])
        if spans and ev.start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], ev.end))
        else:
            spans.append((ev.start, ev.end))
    return out


def span_overlap(a: Sequence[Evidence], b: Sequence[Evidence]) -> tuple[float, float]:
    """(Jaccard, Dice) of two labellers' evidence in characters, per document; NaN, NaN
    when neither has evidence."""
    ra, rb = _ranges(a), _ranges(b)
    size_a = sum(e - s for spans in ra.values() for s, e in spans)
    size_b = sum(e - s for spans in rb.values() for s, e in spans)
    if size_a + size_b == 0:
        return float("nan"), float("nan")
    inter = 0
    for doc, spans in ra.items():
        for s, e in spans:
            inter += sum(max(0, min(e, e2) - max(s, s2)) for s2, e2 in rb.get(doc, ()))
    return inter / (size_a + size_b - inter), 2 * inter / (size_a + size_b)


def _jaccard(a: Sequence[str], b: Sequence[str]) -> float:
    sa, sb = {x.casefold() for x in a}, {x.casefold() for x in b}
    return len(sa & sb) / len(sa | sb) if sa | sb else float("nan")


def _show(ev: Sequence[Evidence]) -> str:
    return "; ".join(f"{e.doc_id}[{e.start}:{e.end}] {e.text[:80]!r}" for e in ev) or "-"


@dataclass(frozen=True)
class Agreement:
    """Agreement of labellers ``names`` (see the module doc). Tables are copies."""

    names: tuple[str, str]
    frame: pd.DataFrame = field(repr=False, compare=False)
    pairs: tuple[tuple[GoldenItem, GoldenItem], ...] = field(repr=False, compare=False)
    _: KW_ONLY
    only_a: tuple[str, ...] = ()
    only_b: tuple[str, ...] = ()

    @property
    def per_question(self) -> pd.DataFrame:
        return self.frame.copy()

    @property
    def kappa_answerable(self) -> float:
        return cohen_kappa(list(self.frame["answerable_a"]), list(self.frame["answerable_b"]))

    @property
    def kappa_category(self) -> float:
        return cohen_kappa(list(self.frame["category_a"]), list(self.frame["category_b"]))

    def summary(self) -> pd.DataFrame:
        """``metric, value, n``: observed agreement and kappa for answerable and category,
        the mean overlaps over the questions where each is defined, the unmatched counts."""
        import pandas as pd

        f = self.frame
        rows: list[tuple[str, float, int]] = [
            ("answerable_agreement", float((f["answerable_a"] == f["answerable_b"]).mean())
             if len(f) else float("nan"), len(f)),
            ("answerable_kappa", self.kappa_answerable, len(f)),
            ("category_agreement", float((f["category_a"] == f["category_b"]).mean())
             if len(f) else float("nan"), len(f)),
            ("category_kappa", self.kappa_category, len(f)),
        ]
        for col in ("span_jaccard", "span_dice", "must_mention_jaccard"):
            values = f[col].dropna()
            rows.append((col, float(values.mean()) if len(values) else float("nan"),
                         len(values)))
        spans = f[f["span_jaccard"].notna()]
        rows.append(("same_documents", float(spans["same_documents"].mean()) if len(spans)
                     else float("nan"), len(spans)))
        rows += [(f"only_{self.names[0]}", float(len(self.only_a)), len(self.only_a)),
                 (f"only_{self.names[1]}", float(len(self.only_b)), len(self.only_b))]
        return pd.DataFrame(rows, columns=["metric", "value", "n"])

    def disagreements(self) -> pd.DataFrame:
        """Every matched question where the labels differ, the two labels side by side."""
        import pandas as pd

        a, b = self.names
        rows = []
        for (x, y), agree in zip(self.pairs, self.frame["agree"], strict=True):
            if agree:
                continue
            rows.append({"qid": x.qid, "question": x.question,
                         f"answerable ({a})": x.answerable, f"answerable ({b})": y.answerable,
                         f"category ({a})": x.category, f"category ({b})": y.category,
                         f"evidence ({a})": _show(x.evidence), f"evidence ({b})": _show(y.evidence),
                         f"must mention ({a})": "; ".join(x.answer_must_mention) or "-",
                         f"must mention ({b})": "; ".join(y.answer_must_mention) or "-"})
        return pd.DataFrame(rows, columns=["qid", "question",
                                           *[f"{k} ({n})" for k in ("answerable", "category",
                                                                    "evidence", "must mention")
                                             for n in (a, b)]])

    def to_html(self) -> str:
        """The summary and the disagreement table as HTML, every value escaped."""
        a, b = (escape_html(n) for n in self.names)
        table = self.disagreements()
        return (f"<h4>Agreement of {a} and {b}: {len(self.frame)} questions, "
                f"{len(table)} to adjudicate</h4>"
                + frame_html(self.summary(), index=False) + frame_html(table, index=False))

    def _repr_html_(self) -> str:
        return self.to_html()


def _keyed(golden: GoldenSet, match: str) -> dict[str, GoldenItem]:
    out: dict[str, GoldenItem] = {}
    for item in golden:
        key = item.qid if match == "qid" else question_key(item.question)
        if key in out:
            raise WorkbenchError(f"{golden.path or 'golden set'}: questions {out[key].qid!r} and "
                             f"{item.qid!r} read the same; match by qid instead")
        out[key] = item
    return out


def _withheld(item: GoldenItem) -> GoldenItem:
    """``item`` with its question, quotes and must-mention strings withheld (the numbers
    the agreement measures are kept: offsets, documents, category, answerable)."""
    evidence = tuple(Evidence(e.doc_id, e.start, e.end, WITHHELD) for e in item.evidence)
    return replace(item, question=WITHHELD, evidence=evidence,
                   answer_must_mention=tuple(WITHHELD for _ in item.answer_must_mention))


def agreement(a: GoldenSet, b: GoldenSet, *, match: str = "qid",
              names: tuple[str, str] = ("A", "B"),
              documents: Mapping[str, Document] | None = None,
              user_groups: Reader | Iterable[str] | str | None = None) -> Agreement:
    """Agreement of two labellers' golden sets ``a`` and ``b`` (see the module doc), in the
    order of ``a``. With ``documents`` (the corpus), its tables are for ``user_groups``
    (:func:`~workbench.corpus.reader.require_reader`): a pair in which either item's evidence
    is in a document they may not read (:func:`~workbench.golden.items.can_read_item`: the
    two labels' documents together, so the intersection of their access) shows no question,
    quote or must-mention string; its numbers stay."""
    import pandas as pd

    reader = require_reader("agreement", user_groups, documents=documents or {})

    if match not in ("qid", "question"):
        raise WorkbenchError(f"match must be 'qid' or 'question', not {match!r}")
    if len(set(names)) != 2:
        raise WorkbenchError(f"names must be two different names, not {names!r}")
    ka, kb = _keyed(a, match), _keyed(b, match)
    pairs = tuple((x, kb[k]) for k, x in ka.items() if k in kb)
    docs = documents or {}
    shown = tuple((x, y) if can_read_item(reader.groups, x, None, docs)
                  and can_read_item(reader.groups, y, None, docs)
                  else (_withheld(x), _withheld(y)) for x, y in pairs)
    rows = []
    for (x, y), (seen, _) in zip(pairs, shown, strict=True):
        jac, dice = span_overlap(x.evidence, y.evidence)
        must = _jaccard(x.answer_must_mention, y.answer_must_mention)
        same_docs = {e.doc_id for e in x.evidence} == {e.doc_id for e in y.evidence}
        agree = (x.answerable == y.answerable and x.category == y.category
                 and (jac != jac or jac == 1.0) and (must != must or must == 1.0))
        rows.append({"qid": x.qid, "question": seen.question, "answerable_a": x.answerable,
                     "answerable_b": y.answerable, "category_a": x.category,
                     "category_b": y.category, "span_jaccard": jac, "span_dice": dice,
                     "same_documents": same_docs, "must_mention_jaccard": must,
                     "agree": agree})
    frame = pd.DataFrame(rows, columns=["qid", "question", "answerable_a", "answerable_b",
                                        "category_a", "category_b", "span_jaccard",
                                        "span_dice", "same_documents", "must_mention_jaccard",
                                        "agree"])
    return Agreement(names, frame, shown,
                     only_a=tuple(x.qid for k, x in ka.items() if k not in kb),
                     only_b=tuple(y.qid for k, y in kb.items() if k not in ka))
