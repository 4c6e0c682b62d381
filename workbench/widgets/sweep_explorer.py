"""Sweep explorer: pick a metric, an x parameter, a colour and a category; see the sweep.

The view paints :func:`workbench.widgets.plots.metric_vs_param` into a ``go.FigureWidget``
(the parameters not plotted held at the selected configuration's values, named in the
title) and lists the configurations best first for the chosen metric and category. Clicking a
point (or picking from the list) selects a configuration, readable from Python as
``explorer.selected_config`` (its name, the Evaluation's system) and
``explorer.selected_params``. ``to_html()`` is the static form. Callback errors are shown in
the widget's ``Output`` rather than lost.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import plotly.graph_objects as go

from workbench.sweep import SweepResult
from workbench.text import escape_html
from workbench.widgets.keywords import refuse_unknown_keywords
from workbench.widgets.plots import metric_vs_param

NONE = "(none)"


@refuse_unknown_keywords
class SweepExplorer(widgets.VBox):  # type: ignore[misc]  # ipywidgets ships no types
    """Interactive view of a :class:`~workbench.sweep.SweepResult`."""

    def __init__(self, result: SweepResult, metric: str | None = None, *, x: str | None = None,
                 color: str | None = None, category: str = "all"):
        self.result = result
        table = result.config_table
        params = [p for p in result.grid_params
                  if table[p].dropna().astype(str).nunique() > 1] or result.grid_params
        numeric = [p for p in params if p in ("size", "overlap", "k")]
        x = x or (numeric[0] if numeric else params[0])
        others = [p for p in params if p != x]
        cats = sorted(result.frame["category"].unique())
        self.metric_select = widgets.Dropdown(options=result.metrics,
                                              value=metric or result.metrics[0],
                                              description="metric")
        self.x_select = widgets.Dropdown(options=params, value=x, description="x")
        self.color_select = widgets.Dropdown(
            options=[NONE, *params], value=color or (others[0] if others else NONE),
            description="colour")
        self.category_select = widgets.Dropdown(options=["all", *cats], value=category,
                                                description="category")
        self.config_select = widgets.Dropdown(options=[], description="config",
                                              layout=widgets.Layout(width="95%"))
        self.figure = go.FigureWidget()
        self.details = widgets.HTML()
        self.errors = widgets.Output()
        for control in (self.metric_select, self.x_select, self.color_select,
                        self.category_select):
            control.observe(self._repaint, names="value")
        self.config_select.observe(self._on_select, names="value")
        super().__init__([
            widgets.HBox([self.metric_select, self.category_select]),
            widgets.HBox([self.x_select, self.color_select]),
            self.figure, self.config_select, self.details, self.errors])
        self._repaint()

    # -- readable state -----------------------------------------------------------------

    @property
    def selected_config(self) -> str | None:
        """The selected configuration's name (a system of the sweep's Evaluation)."""
        value = self.config_select.value
        return str(value) if value is not None else None

    @property
    def selected_params(self) -> dict[str, Any]:
        config = self.selected_config
        return self.result.params_of(config) if config else {}

    def select(self, config: str) -> None:
        """Select a configuration by name (as clicking its point does)."""
        if config not in self.result.config_table.index:
            raise ValueError(f"unknown configuration {config!r}")
        self.config_select.value = config

    # -- painting -----------------------------------------------------------------------

    def build_figure(self) -> go.Figure:
        """The figure for the current controls (plain ``go.Figure``). The parameters not on
        the x axis or the colour are held at the selected configuration's values (the title
        says which), so the selected configuration is a point of its own curve, ringed."""
        x = self.x_select.value
        color = self.color_select.value
        color = None if color in (NONE, x) else color
        config = self.selected_config
        hold = None
        if config is not None:
            hold = {p: v for p, v in self.result.params_of(config).items()
                    if p not in (x, color)}
        fig = metric_vs_param(self.result, self.metric_select.value, x, color=color,
                              category=self.category_select.value, hold=hold,
                              held_by="the selected configuration's; click a point to change")
        if config is not None:
            for trace in fig.data:
                names = [row[0] for row in (trace.customdata or ())]
                if config in names:
                    i = names.index(config)
                    fig.add_trace(go.Scatter(
                        x=[trace.x[i]], y=[trace.y[i]], mode="markers", name="selected",
                        hoverinfo="skip", showlegend=True,
                        marker={"size": 18, "symbol": "circle-open", "color": "crimson",
                                "line": {"width": 3}}))
                    break
        return fig

    def _category(self) -> str | None:
        value = self.category_select.value
        return None if value == "all" else str(value)

    def _repaint(self, _change: Any = None) -> None:
        with self.errors:
            board = self.result.leaderboard(self.metric_select.value, self._category())
            options = [(f"{name}  {row['mean']:.3f} [{row['ci_low']:.3f}, "
                        f"{row['ci_high']:.3f}] n={int(row['n'])}"
                        + (f"  (selection alone: {row['selection_bias'] * 100:+.1f} pts)"
                           if i == 0 else ""), name)
                       for i, (name, row) in enumerate(board.iterrows())]
            current = self.config_select.value
            self.config_select.unobserve(self._on_select, names="value")
            self.config_select.options = options
            names = [value for _, value in options]
            self.config_select.value = current if current in names else names[0]
            self.config_select.observe(self._on_select, names="value")
            self._paint()

    def _on_select(self, _change: Any = None) -> None:
        with self.errors:
            self._paint()

    def _paint(self) -> None:
        fig = self.build_figure()
        with self.figure.batch_update():
            self.figure.data = ()
            self.figure.add_traces(list(fig.data))
            self.figure.layout = fig.layout
        for trace in self.figure.data:
            if trace.name != "selected":
                trace.on_click(self._clicked)
        self.details.value = self.details_html()

    def _clicked(self, trace: Any, points: Any, _state: Any) -> None:
        with self.errors:
            if points.point_inds:
                data = trace.customdata[points.point_inds[0]]
                self.select(str(data[0] if isinstance(data, list | tuple) else data))

    def winner_line(self) -> str:
        """The winner for the chosen metric and category, how many points of its score are
        expected from picking the best of these configurations alone (the leaderboard's
        ``selection_bias``), and, for a sweep with a held-out part (all categories), its
        held-out score."""
        metric = self.metric_select.value
        board = self.result.leaderboard(metric, self._category())
        top = board.iloc[0]
        line = (f"best of {len(board)} on {metric}: {board.index[0]} {top['mean']:.3f}; "
                f"expected from selection alone: {top['selection_bias'] * 100:+.1f} points")
        if self.result.holdout is not None and self._category() is None:
            c = self.result.confirm(metric)
            line += (f"; held-out {c.heldout_mean:.3f} [{c.heldout_ci[0]:.3f}, "
                     f"{c.heldout_ci[1]:.3f}] n={c.heldout_n}")
        return line

    def details_html(self) -> str:
        """The winner line (:meth:`winner_line`), then the selected configuration:
        parameters, chunker spec, cost and its score."""
        config = self.selected_config
        if config is None:
            return ""
        row = self.result.config_table.loc[[config]].iloc[0]
        board = self.result.leaderboard(self.metric_select.value, self._category())
        score = board.loc[[config]].iloc[0]
        cells = [("config", config), ("spec", row["spec"]),
                 (str(self.metric_select.value),
                  f"{score['mean']:.3f} [{score['ci_low']:.3f}, {score['ci_high']:.3f}], "
                  f"n={int(score['n'])}"),
                 ("chunks", f"{int(row['chunks']):,}"),
                 ("index tokens", f"{int(row['index_tokens']):,}"),
                 ("cost multiplier", f"{row['cost_multiplier']:.2f}"),
                 ("split rate", f"{row['split_rate']:.1%}"),
                 ("prompt tokens at k", f"{row['prompt_tokens_at_k']:.0f}"),
                 ("embedded / reused", f"{int(row['embedded'])} / {int(row['reused'])}")]
        body = "".join(f"<tr><th style='text-align:left'>{escape_html(k)}</th>"
                       f"<td>{escape_html(str(v))}</td></tr>" for k, v in cells)
        return (f'<p class="wb-sweep-winner">{escape_html(self.winner_line())}</p>'
                f'<table class="wb-sweep-config">{body}</table>')

    def to_html(self, include_plotlyjs: str | bool = "cdn") -> str:
        """Static form: the current figure (plotly.js from the CDN by default) and the
        selected configuration."""
        figure = self.build_figure().to_html(include_plotlyjs=include_plotlyjs,
                                              full_html=False)
        return f"<div>{figure}{self.details_html()}</div>"
