"""Metric table: metrics x categories for one configuration of an Evaluation, with n, 95%
intervals (Clopper-Pearson for 0/1 metrics, bootstrap otherwise), cells with fewer than 10
questions marked ``†``, and the relevance the numbers use.

``metric_table_html`` is the static form (for reports and tests); ``MetricTable`` is the
ipywidgets view with a configuration and a k dropdown, a sort column and order, and a colour
scale. The view only paints what ``Evaluation.by`` computed; with several configurations
(systems, or sweep parameters) it shows one at a time, never a mix.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import pandas as pd

from workbench.evaluation import INTERVAL_NOTE, SMALL_MARK, Evaluation, describe_relevance
from workbench.metrics import Metric, parse_metric
from workbench.text import escape_html
from workbench.widgets.keywords import refuse_unknown_keywords


def available_ks(ev: Evaluation) -> list[int]:
    """The cutoffs of the evaluation's metrics (the metrics registry reads the names)."""
    return sorted({k for m in ev.metrics if (k := parse_metric(m).k) is not None})


def shown_metrics(metrics: list[str], k: int | None) -> list[str]:
    """The metrics a table at cut-off ``k`` shows: those at ``k`` and those without one."""
    return [m for m in metrics if k is None or parse_metric(m).k in (k, None)]


def sort_at(sort_by: str, k: int | None, shown: list[str]) -> str | None:
    """The sort key ``sort_by`` at cut-off ``k``: itself when shown, else the same metric at
    ``k`` (``hit_rate@5`` -> ``hit_rate@3``) when shown, else None."""
    if sort_by in shown:
        return sort_by
    old = parse_metric(sort_by)
    same = Metric.of(old.kind, k).name if old.k is not None and k is not None else None
    return same if same in shown else None


def _colour(value: float) -> str:
    """White (0) to green (1) background, readable at both ends."""
    v = min(max(value, 0.0), 1.0)
    red, green, blue = int(255 - 120 * v), int(255 - 40 * v), int(255 - 120 * v)
    return f"background-color: rgb({red},{green},{blue})"


def one_config(ev: Evaluation, config: str | None = None) -> Evaluation:
    """The rows of one configuration (a label of ``ev.configs()``; default the first)."""
    configs = ev.configs()
    config = config or configs[0]
    if config not in configs:
        raise ValueError(f"unknown configuration {config!r}; choose one of {configs}")
    frame = ev.frame
    return Evaluation(frame[(ev.labels() == config).to_numpy()], ev.excluded)


def table_frame(ev: Evaluation, k: int | None = None, column: str = "category",
                system: str | None = None) -> pd.DataFrame:
    """Long rows (group, metric, relevance, mean, n, ci, small_n) for the metrics at cut-off
    ``k`` (plus those without a cut-off) of one configuration (``system``: a label of
    ``ev.configs()``, default the first), including an ``all`` row per metric."""
    sub = one_config(ev, system)
    keep = shown_metrics(sub.metrics, k)
    overall = sub.summary().assign(**{column: "all"})
    groups = sub.by(column)
    rows = pd.concat([overall, groups], ignore_index=True)
    return rows[rows["metric"].isin(keep)]


def metric_table_html(ev: Evaluation, k: int | None = None, *, column: str = "category",
                      sort_by: str | None = None, ascending: bool = True,
                      system: str | None = None, digits: int = 3) -> str:
    """Static HTML: one row per category (first row ``all``), one column per metric, each
    cell ``mean`` with its interval beneath, coloured by the mean; ``n`` per row."""
    rows = table_frame(ev, k, column, system)
    metrics = list(dict.fromkeys(rows["metric"]))
    groups = list(dict.fromkeys(rows[column]))
    means = rows.pivot_table(index=column, columns="metric", values="mean", sort=False)
    n = rows.groupby(column, sort=False)["n"].max()
    order = [g for g in groups if g != "all"]
    if sort_by in metrics:
        order = sorted(order, key=lambda g: (means.loc[g, sort_by], g), reverse=not ascending)
    elif sort_by in ("n", column):
        order = sorted(order, key=lambda g: (n[g] if sort_by == "n" else g),
                       reverse=not ascending)
    records: list[dict[Any, Any]] = rows.to_dict("records")
    cells = {(r[column], r["metric"]): r for r in records}
    head = "".join(f"<th>{escape_html(m)}</th>" for m in metrics)
    body = []
    for g in ["all", *order]:
        tds = []
        for m in metrics:
            r = cells.get((g, m))
            if r is None:
                tds.append("<td></td>")
                continue
            mark = SMALL_MARK if r["small_n"] else ""
            tds.append(f'<td style="{_colour(r["mean"])}">{r["mean"]:.{digits}f}{mark}<br>'
                       f'<small>[{r["ci_low"]:.{digits}f}, {r["ci_high"]:.{digits}f}]</small></td>')
        weight = ' style="font-weight:bold"' if g == "all" else ""
        body.append(f"<tr{weight}><th>{escape_html(str(g))}</th><td>{int(n[g])}</td>"
                    f"{''.join(tds)}</tr>")
    excluded = "; ".join(f"{len(v)} {escape_html(k)} excluded" for k, v in ev.excluded.items()
                         if v)
    judged = "; ".join(escape_html(f"{r}: {describe_relevance(r)}")
                       for r in dict.fromkeys(rows["relevance"]))
    config = system or ev.configs()[0]
    caption = (f"{escape_html(config)}: mean [{escape_html(INTERVAL_NOTE)}] per "
               f"{escape_html(column)}. Relevance: {judged}"
               + (f"; {excluded}" if excluded else ""))
    return (f'<table class="wb-metric-table"><caption>{caption}</caption>'
            f"<thead><tr><th>{escape_html(column)}</th><th>n</th>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>")


@refuse_unknown_keywords
class MetricTable(widgets.VBox):  # type: ignore[misc]  # ipywidgets ships no types
    """Interactive metric table. ``k``, ``sort_by`` and ``ascending`` are readable and
    settable from Python; the HTML repaints when any control changes."""

    def __init__(self, ev: Evaluation, column: str = "category", system: str | None = None):
        self.ev, self.column = ev, column
        systems = ev.configs()
        ks = available_ks(ev)
        options: list[tuple[str, int | None]] = [(str(k), k) for k in ks] or [("-", None)]
        self.k_select = widgets.Dropdown(options=options,
                                         value=5 if 5 in ks else options[0][1], description="k")
        self.system_select = widgets.Dropdown(options=systems, value=system or systems[0],
                                              description="config")
        self.sort_select = widgets.Dropdown(options=self._sort_options(), value=column,
                                            description="sort by")
        self.order = widgets.ToggleButtons(options=["ascending", "descending"],
                                           value="ascending")
        self.note = widgets.HTML()  # what a change of k did to the sort, in words
        self.view = widgets.HTML()
        self.errors = widgets.Output()
        self.k_select.observe(self._k_changed, names="value")
        for control in (self.system_select, self.sort_select, self.order):
            control.observe(self._repaint, names="value")
        super().__init__([widgets.HBox([self.system_select, self.k_select]),
                          widgets.HBox([self.sort_select, self.order]), self.note, self.view,
                          self.errors])
        self._repaint()

    def _sort_options(self) -> list[str]:
        return [self.column, "n", *shown_metrics(self.ev.metrics, self.k)]

    def _k_changed(self, _change: Any = None) -> None:
        """Offer the metrics shown at the new k; keep the sort on the same metric at it, or
        fall back to the group column, and say which."""
        old = self.sort_by
        options = self._sort_options()
        new = sort_at(old, self.k, options)
        self._holding = True
        try:
            self.sort_select.options = options
            self.sort_select.value = new or self.column
        finally:
            self._holding = False
        if new is None:
            self.note.value = (f"<small>{escape_html(old)} is not shown at k={self.k}: "
                               f"sorted by {escape_html(self.column)} instead</small>")
        elif new != old:
            self.note.value = (f"<small>sorted by {escape_html(new)}: the sort follows k "
                               f"(it was {escape_html(old)})</small>")
        self._repaint()

    @property
    def k(self) -> int | None:
        value: int | None = self.k_select.value
        return value

    @property
    def sort_by(self) -> str:
        return str(self.sort_select.value)

    def to_html(self) -> str:
        return metric_table_html(self.ev, self.k, column=self.column, sort_by=self.sort_by,
                                 ascending=self.order.value == "ascending",
                                 system=self.system_select.value)

    def _repaint(self, change: Any = None) -> None:
        if getattr(self, "_holding", False):
            return
        if change is not None and change.get("owner") is self.sort_select:
            self.note.value = ""  # the user chose the sort: nothing to explain
        with self.errors:
            self.view.value = self.to_html()
