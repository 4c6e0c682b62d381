"""Realism scorer: a person scores a sample of synthetic questions 1-5 for realism and domain
fit, the few shots of :class:`~workbench.synthetic.realism.RealismJudge`.

One row per question (its text, kind and the quoted fact, as text, never HTML) with buttons
1-5. Readable state: ``scores`` (``{qid: score}``, only the questions scored so far), fed to
:func:`~workbench.synthetic.realism.filter_synthetic`. ``set_score(qid, score)`` scores
from Python (as a click does). :func:`realism_scorer_html` is the static form. Items are shown
to a reader (``documents=``, ``user_groups=``): one whose fact they may not read is left out
of the widget and withheld in the static form.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import ipywidgets as widgets

from workbench.corpus import Document
from workbench.corpus.reader import Reader, ReaderRequired, require_reader
from workbench.golden import GoldenItem, can_read_item
from workbench.text import escape_html
from workbench.widgets.keywords import refuse_unknown_keywords

__all__ = ["RealismScorer", "realism_scorer_html"]

SCORES = (1, 2, 3, 4, 5)
#: What stands for the question and fact of an item its reader may not see.
WITHHELD = "(withheld: its fact is in a document this reader may not read)"


def _visible(surface: str, items: Sequence[GoldenItem],
             documents: Mapping[str, Document] | None,
             user_groups: Reader | Iterable[str] | str | None) -> list[bool]:
    """Per item, whether its reader may see it (:func:`~workbench.golden.can_read_item`);
    facts are shown only against the corpus they quote."""
    if documents is None:
        if any(i.evidence for i in items):
            raise ReaderRequired(f"{surface}: pass documents= (the corpus the facts quote) so "
                                 "they are shown only to readers of their documents")
        return [True] * len(items)
    reader = require_reader(surface, user_groups, documents=documents)
    return [can_read_item(reader.groups, i, None, documents) for i in items]


def _row_html(item: GoldenItem, visible: bool = True) -> str:
    if not visible:
        return f"<i>{escape_html(WITHHELD)}</i> <small>({escape_html(item.qid)})</small>"
    fact = item.evidence[0].text if item.evidence else ""
    return (f"<b>{escape_html(item.question)}</b> <small>({escape_html(item.qid)}, "
            f"{escape_html(str(item.extra.get('kind', '-')))})</small><br>"
            f"<small>fact: {escape_html(fact[:200])}</small>")


def realism_scorer_html(items: Sequence[GoldenItem], scores: dict[str, int], *,
                        documents: Mapping[str, Document] | None = None,
                        user_groups: Reader | Iterable[str] | str | None = None) -> str:
    """Static form: each question with its score (blank when not scored yet); an item whose
    fact ``user_groups`` may not read (:func:`~workbench.corpus.reader.require_reader` over
    ``documents``, required when items quote facts) is withheld."""
    shown = _visible("realism_scorer_html", items, documents, user_groups)
    rows = "".join(f"<tr><td>{_row_html(i, v)}</td><td>{scores.get(i.qid, '')}</td></tr>"
                   for i, v in zip(items, shown, strict=True))
    return ("<table class='wb-realism'><tr><th>question</th><th>score 1-5</th></tr>"
            f"{rows}</table>")


@refuse_unknown_keywords
class RealismScorer(widgets.VBox):  # type: ignore[misc]  # ipywidgets ships no types
    """Score ``items`` 1-5 (1: no one would ask this; 5: a real question), as
    ``user_groups`` may see them (:func:`realism_scorer_html`); a withheld item cannot be
    scored."""

    def __init__(self, items: Sequence[GoldenItem], *,
                 documents: Mapping[str, Document] | None = None,
                 user_groups: Reader | Iterable[str] | str | None = None):
        shown = _visible("RealismScorer", items, documents, user_groups)
        self.items = [i for i, v in zip(items, shown, strict=True) if v]
        self.documents, self.reader = documents, user_groups
        if len({i.qid for i in self.items}) != len(self.items):
            raise ValueError("the items to score repeat a qid")
        self.buttons: dict[str, widgets.ToggleButtons] = {}
        rows = []
        for item in self.items:
            # the buttons keep their width (a long question never wraps "5" under "1")
            buttons = widgets.ToggleButtons(options=SCORES, value=None,
                                            style={"button_width": "32px"},
                                            layout=widgets.Layout(flex="0 0 auto",
                                                                  min_width="190px"))
            self.buttons[item.qid] = buttons
            text = widgets.HTML(_row_html(item), layout=widgets.Layout(flex="1 1 auto"))
            rows.append(widgets.HBox([buttons, text]))
        self.progress = widgets.HTML()
        for b in self.buttons.values():
            b.observe(lambda _change: self._update(), names="value")
        super().__init__([self.progress, *rows])
        self._update()

    @property
    def scores(self) -> dict[str, int]:
        return {q: int(b.value) for q, b in self.buttons.items() if b.value is not None}

    def set_score(self, qid: str, score: int) -> None:
        if qid not in self.buttons:
            raise KeyError(f"{qid!r} is not among the questions to score")
        if score not in SCORES:
            raise ValueError(f"a score is an integer 1-5, got {score!r}")
        self.buttons[qid].value = score

    def _update(self) -> None:
        self.progress.value = f"{len(self.scores)} of {len(self.items)} scored"

    def to_html(self) -> str:
        return realism_scorer_html(self.items, self.scores, documents=self.documents,
                                   user_groups=self.reader)
