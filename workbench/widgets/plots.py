"""Sweep plots: pure functions from results to plotly figures (they compute nothing new).

Every mean is drawn with its interval (error bars from ``Evaluation.by`` / ``summary``) and
hover text carries n. Figures render statically (``fig.to_html``) and in JupyterLab.

* :func:`metric_vs_param`: a metric against one parameter, coloured by another, optionally
  one panel per category; the parameters not shown are held fixed and named in the title;
* :func:`cost_quality`: cost against quality, the Pareto front (:func:`pareto_front`) drawn;
* :func:`category_heatmap`: configuration x category;
* :func:`topk_view`: raising k always raises hit rate: what it does to MRR and prompt tokens;
* :func:`rank_position`: where the first relevant chunk sits (from
  :func:`workbench.sweep.first_relevant_rank_table`), per category.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from workbench.evaluation import Evaluation
from workbench.metrics import at_k, parse_metric
from workbench.sweep import SweepResult

__all__ = ["category_heatmap", "cost_quality", "metric_vs_param", "pareto_front",
           "rank_position", "topk_view"]

BUCKET_COLOURS = {"1": "#1a9850", "2-3": "#91cf60", "4-5": "#d9ef8b", "6-10": "#fee08b",
                  "missing": "#bdbdbd"}
COST_LABELS = {"index_tokens": "index tokens (embedded/stored)", "chunks": "chunks",
               "cost_multiplier": "cost multiplier of overlap",
               "prompt_tokens_at_k": "mean prompt tokens of the top-k chunks"}


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(
        value, bool | np.bool_)


def _numeric(values: Sequence[Any]) -> bool:
    return all(_is_number(v) for v in values)


def _sort_key(value: Any) -> tuple[int, Any]:
    if _is_number(value):
        return (0, float(value))
    text = str(value)
    if text.endswith("%"):
        try:
            return (1, float(text[:-1]))
        except ValueError:
            pass
    return (2, text)


def _filter(frame: pd.DataFrame, where: Mapping[str, Any] | None) -> pd.DataFrame:
    for key, want in (where or {}).items():
        if key not in frame.columns:
            raise ValueError(f"cannot filter on {key!r}: not a column ({list(frame.columns)})")
        wanted = {str(v) for v in (want if isinstance(want, list | tuple | set) else [want])}
        frame = frame[frame[key].astype(str).isin(wanted)]
    if frame.empty:
        raise ValueError(f"no rows match {dict(where or {})}")
    return frame


def _param_text(value: Any) -> str:
    """A parameter value as a person reads it (1.0 -> 1, None -> none)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "none"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _errors(data: pd.DataFrame) -> dict[str, Any]:
    return {"type": "data", "symmetric": False, "array": (data["ci_high"] - data["mean"]).tolist(),
            "arrayminus": (data["mean"] - data["ci_low"]).tolist(), "thickness": 1}


def _points(ev: Evaluation, metric: str, category: str | None, facet: str | None,
            where: Mapping[str, Any] | None, confidence: float) -> pd.DataFrame:
    resolve = getattr(ev, "metric_name", None)  # a SweepResult maps recall@k -> recall@5
    if resolve is not None and metric not in ev.metrics:
        metric = resolve(metric)
    if metric not in ev.metrics:
        raise ValueError(f"metric {metric!r} is not in this evaluation: {ev.metrics}")
    frame = _filter(ev.frame[ev.frame["metric"] == metric], where)
    if category not in (None, "all"):
        frame = frame[frame["category"] == category]
        if frame.empty:
            raise ValueError(f"no questions in category {category!r}")
    sub = Evaluation(frame)
    return sub.by(facet, confidence) if facet else sub.summary(confidence)


def _held_values(ev: Evaluation, metric: str, shown: Sequence[str],
                 hold: Mapping[str, Any] | str | None = None,
                 where: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The parameters a plot of ``shown`` (x, colour, panel) must hold fixed, and their
    values: ``hold`` itself (a mapping), else those of the best configuration on ``metric``
    (``hold=None``): for a sweep, the leaderboard's (:meth:`SweepResult.best`, its tie rule
    included). Parameters that take one value only are not listed."""
    frame = _filter(ev.frame[ev.frame["metric"] == metric], where)
    hidden = [p for p in ev.params if p not in shown
              and frame[p].astype(str).nunique(dropna=False) > 1]
    if not hidden:
        return {}
    if isinstance(hold, Mapping):
        missing = [p for p in hidden if p not in hold]
        if missing:
            raise ValueError(f"give a value for {missing} too (they vary in this sweep): "
                             f"hold={{{', '.join(f'{p!r}: ...' for p in missing)}}}")
        return {p: hold[p] for p in hidden}
    if isinstance(ev, SweepResult) and set(where or {}) <= set(ev.grid_params):
        name = (ev.subset(**where) if where else ev).best(metric)
        best = frame[frame["system"] == name].iloc[0]
    else:
        summary = Evaluation(frame).summary()
        best = summary.sort_values("mean", ascending=False, kind="stable").iloc[0]
    return {p: best[p] for p in hidden}


def metric_vs_param(ev: Evaluation, metric: str, x: str, *, color: str | None = None,
                    facet: str | None = None, category: str | None = None,
                    where: Mapping[str, Any] | None = None,
                    hold: Mapping[str, Any] | str | None = None,
                    confidence: float = 0.95, held_by: str = "the values passed as hold"
                    ) -> go.Figure:
    """``metric`` (mean with its interval) against parameter ``x``, one line per value of
    ``color``, one panel per value of ``facet`` (e.g. ``"category"``). Every point is one
    configuration: the other parameters that vary are held fixed, at ``hold`` (a mapping)
    or, by default, at the values of the best configuration on ``metric``; the title says
    which (``held_by`` names where a ``hold`` mapping's values come from, in words).
    ``hold="best"`` instead plots, for each point, the best configuration over the
    other parameters, and says so. ``where`` keeps only rows with the given parameter
    values; ``category`` only that category's questions."""
    resolve = getattr(ev, "metric_name", None)  # a SweepResult maps recall@k -> recall@5
    if resolve is not None and metric not in ev.metrics:
        metric = resolve(metric)
    shown = [c for c in (x, color, facet) if c]
    for col in shown:
        if col != "category" and col not in ev.params:
            raise ValueError(f"{col!r} is not a parameter of this evaluation: {ev.params}")
    if metric not in ev.metrics:
        raise ValueError(f"metric {metric!r} is not in this evaluation: {ev.metrics}")
    note = ""
    if hold == "best":
        hidden = [p for p in ev.params if p not in shown]
        varying = [p for p in hidden if ev.frame[p].astype(str).nunique(dropna=False) > 1]
        if varying:
            note = f"each point: the best configuration over {', '.join(varying)}"
    else:
        held = _held_values(ev, metric, shown, hold, where)
        if held:
            where = {**dict(where or {}), **held}
            which = held_by if isinstance(hold, Mapping) else "the best configuration's"
            note = ", ".join(f"{p}={_param_text(v)}" for p, v in held.items()) + \
                f" held fixed ({which})"
    data = _points(ev, metric, category, facet, where, confidence)
    data = data[data[x].notna()]
    keys = [k for k in (facet, color, x) if k]
    best = (data.sort_values("mean", ascending=False, kind="stable")
            .groupby(keys, sort=False, dropna=False).head(1))
    panels = sorted(best[facet].unique(), key=_sort_key) if facet else [None]
    cols = min(len(panels), 3)
    rows = math.ceil(len(panels) / cols)
    titles = [f"{p} (n={int(best.loc[best[facet] == p, 'n'].max())})" for p in panels] \
        if facet else None
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=titles, shared_yaxes=True,
                        vertical_spacing=0.12 if rows > 1 else 0.1)
    numeric = _numeric(list(best[x]))
    order = sorted(best[x].unique(), key=_sort_key)
    colours = sorted(best[color].unique(), key=_sort_key) if color else [None]
    palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
               "#7f7f7f", "#bcbd22", "#17becf"]
    for i, panel in enumerate(panels):
        part = best if panel is None else best[best[facet] == panel]
        for j, value in enumerate(colours):
            line = part if value is None else part[part[color].astype(str) == str(value)]
            if line.empty:
                continue
            line = line.iloc[sorted(range(len(line)), key=lambda r: _sort_key(line[x].iloc[r]))]
            name = f"{color}={value}" if color else metric
            fig.add_trace(go.Scatter(
                x=line[x].tolist() if numeric else line[x].astype(str).tolist(),
                y=line["mean"].tolist(), error_y=_errors(line), mode="lines+markers", name=name,
                legendgroup=name, showlegend=i == 0, marker={"color": palette[j % len(palette)]},
                customdata=list(zip(line["system"], line["n"], line["ci_low"], line["ci_high"],
                                    strict=True)),
                hovertemplate=(f"{x}=%{{x}}<br>{metric}=%{{y:.3f}} [%{{customdata[2]:.3f}}, "
                               "%{customdata[3]:.3f}]<br>n=%{customdata[1]}<br>"
                               "%{customdata[0]}<extra></extra>")),
                row=i // cols + 1, col=i % cols + 1)
    if not numeric:
        fig.update_xaxes(type="category", categoryorder="array",
                         categoryarray=[str(v) for v in order])
    if facet:  # one scale for every panel, so panels compare at a glance
        fig.update_yaxes(range=[-0.03, 1.05])
    confidence_pct = f"{confidence:.0%}"
    fig.update_layout(
        title=f"{metric} vs {x}: mean and {confidence_pct} interval"
              + (f" ({category})" if category not in (None, "all") else "")
              + (f"<br><sup>{note}</sup>" if note else ""),
        yaxis_title=metric, xaxis_title=x, height=320 * rows + 80, template="plotly_white",
        legend_title=color or "")
    return fig


def pareto_front(cost: Sequence[float], quality: Sequence[float]) -> list[int]:
    """Indices of the points no other point beats: none has lower-or-equal cost and
    higher-or-equal quality with one of them strict. Ordered by cost (of identical points
    only the first is kept)."""
    if len(cost) != len(quality):
        raise ValueError("cost and quality differ in length")
    order = sorted(range(len(cost)), key=lambda i: (cost[i], -quality[i], i))
    front, best = [], -math.inf
    for i in order:
        if quality[i] > best:
            front.append(i)
            best = quality[i]
    return front


def cost_quality(result: SweepResult, metric: str | None = None, *, cost: str = "index_tokens",
                 color: str | None = None, category: str | None = None,
                 where: Mapping[str, Any] | None = None, confidence: float = 0.95) -> go.Figure:
    """Every configuration as a point (cost, mean ``metric`` with interval); the Pareto
    front (cheapest for its quality) drawn as a line. ``cost`` is a column of
    ``result.config_table``: index_tokens, chunks, cost_multiplier or prompt_tokens_at_k.
    ``where`` keeps only configurations with those parameter values (e.g. ``{"k": 5}``)."""
    if where:
        result = result.subset(**where)
    board = result.leaderboard(metric, category, confidence)
    metric = str(board["metric"].iloc[0])
    if cost not in board.columns:
        raise ValueError(f"cost {cost!r} is not a column of the sweep's configs: "
                         f"{[c for c in COST_LABELS if c in board.columns]}")
    board = board.assign(config=board.index)
    fig = go.Figure()
    groups = ([(str(v), board[board[color].astype(str) == str(v)])
               for v in sorted(board[color].unique(), key=_sort_key)] if color
              else [("configurations", board)])
    for name, part in groups:
        fig.add_trace(go.Scatter(
            x=part[cost].tolist(), y=part["mean"].tolist(), error_y=_errors(part),
            mode="markers", name=f"{color}={name}" if color else name,
            marker={"size": 9, "opacity": 0.75},
            customdata=list(zip(part["config"], part["n"], part["ci_low"], part["ci_high"],
                                strict=True)),
            hovertemplate=(f"%{{customdata[0]}}<br>{cost}=%{{x:,.0f}}<br>{metric}=%{{y:.3f}} "
                           "[%{customdata[2]:.3f}, %{customdata[3]:.3f}], n=%{customdata[1]}"
                           "<extra></extra>")))
    front = pareto_front(board[cost].tolist(), board["mean"].tolist())
    pts = board.iloc[front]
    fig.add_trace(go.Scatter(
        x=pts[cost].tolist(), y=pts["mean"].tolist(), mode="lines+markers", name="Pareto front",
        line={"color": "black", "dash": "dot"},
        marker={"size": 14, "symbol": "circle-open", "color": "black", "line": {"width": 2}},
        customdata=pts["config"].tolist(),
        hovertemplate="Pareto: %{customdata}<extra></extra>"))
    fig.update_layout(title=f"Cost vs {metric}: the dotted line is the Pareto front "
                            f"(nothing is both cheaper and better)",
                      xaxis_title=COST_LABELS.get(cost, cost), yaxis_title=metric,
                      template="plotly_white", height=460)
    return fig


def category_heatmap(ev: Evaluation, metric: str, confidence: float = 0.95,
                     max_configs: int | None = 40) -> go.Figure:
    """Mean ``metric`` per configuration (rows, best overall first) and category (columns,
    ``all`` first). Hover gives the interval and n; cells carry the mean."""
    overall = _points(ev, metric, None, None, None, confidence)
    per = _points(ev, metric, None, "category", None, confidence)
    order = overall.sort_values("mean", ascending=False, kind="stable")["system"].tolist()
    order = order[:max_configs] if max_configs else order
    cats = sorted(per["category"].unique())
    cells = {(r.system, r.category): r for r in per.itertuples()}
    whole = {r.system: r for r in overall.itertuples()}
    z, text, hover = [], [], []
    for system in order:
        row_z: list[float | None] = []
        row_t: list[str] = []
        row_h: list[str] = []
        for cat in ["all", *cats]:
            r = whole[system] if cat == "all" else cells.get((system, cat))
            if r is None:
                row_z.append(None)
                row_t.append("")
                row_h.append("")
                continue
            row_z.append(float(r.mean))  # type: ignore[arg-type]
            row_t.append(f"{r.mean:.2f}")
            row_h.append(f"{system}<br>{cat}: {r.mean:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}], "
                         f"n={r.n}")
        z.append(row_z)
        text.append(row_t)
        hover.append(row_h)
    sizes = per.groupby("category")["n"].max()
    columns = [f"all<br>n={int(overall['n'].max())}",
               *[f"{cat}<br>n={int(sizes[cat])}" for cat in cats]]
    fig = go.Figure(go.Heatmap(z=z, x=columns, y=order, text=text,
                               texttemplate="%{text}", customdata=hover,
                               hovertemplate="%{customdata}<extra></extra>",
                               colorscale="Greens", zmin=0, zmax=1,
                               colorbar={"title": metric}))
    fig.update_layout(title=f"{metric} per category (rows: configurations, best overall first)",
                      yaxis={"autorange": "reversed"}, template="plotly_white",
                      height=max(300, 26 * len(order) + 160))
    return fig


def topk_view(result: SweepResult, metrics: Sequence[str] | None = None,
              *, cost: str = "prompt_tokens_at_k", where: Mapping[str, Any] | None = None,
              confidence: float = 0.95) -> go.Figure:
    """How k trades quality for prompt size: ``metrics`` (default hit rate and MRR at k)
    against k, with the mean prompt tokens of the top-k chunks as bars on a second axis.
    Hit rate can only rise with k; MRR barely moves once the first relevant chunk is in;
    the prompt grows with every k. Other parameters are fixed by ``where`` (default: those
    of the best configuration on the first metric)."""
    if "k" not in result.params or result.config_table["k"].nunique() < 2:
        raise ValueError("this view needs a sweep over k (e.g. k: [1, 3, 5, 10])")
    names = list(metrics or [m for m in result.metrics
                             if parse_metric(at_k(m, 1)).kind in ("hit_rate", "mrr")]
                 ) or result.metrics[:2]
    if where is None:
        best = result.params_of(result.best(names[0]))
        where = {p: v for p, v in best.items() if p != "k" and v is not None}
    configs = _filter(result.config_table.assign(config=result.config_table.index), where)
    if configs["k"].nunique() != len(configs):
        raise ValueError(f"{where} leaves several configurations per k; fix more parameters")
    configs = configs.sort_values("k")
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(go.Bar(x=configs["k"].tolist(), y=configs[cost].tolist(),
                         name=COST_LABELS.get(cost, cost), opacity=0.3,
                         marker={"color": "#7f7f7f"},
                         hovertemplate="k=%{x}: %{y:,.0f} tokens<extra></extra>"),
                  secondary_y=True)
    summary = Evaluation(result.frame[result.frame["system"].isin(configs["config"])]) \
        .summary(confidence).set_index(["system", "metric"])
    for metric in names:
        rows = pd.DataFrame(summary.xs(metric, level="metric")).reindex(configs["config"])
        fig.add_trace(go.Scatter(
            x=configs["k"].tolist(), y=rows["mean"].tolist(), error_y=_errors(rows),
            mode="lines+markers", name=metric, customdata=rows["n"].tolist(),
            hovertemplate=f"k=%{{x}}: {metric}=%{{y:.3f}}, n=%{{customdata}}<extra></extra>"),
            secondary_y=False)
    fixed = ", ".join(f"{k}={v}" for k, v in where.items())
    fig.update_layout(title=f"Top-k: quality vs prompt cost ({fixed})", template="plotly_white",
                      xaxis={"title": "k (chunks the generator receives)", "type": "category"},
                      height=460, barmode="overlay",
                      legend={"orientation": "h", "y": -0.25, "x": 0})
    fig.update_yaxes(title_text="metric", range=[0, 1.05], secondary_y=False)
    fig.update_yaxes(title_text=COST_LABELS.get(cost, cost), secondary_y=True, showgrid=False)
    return fig


def rank_position(table: pd.DataFrame, title: str | None = None) -> go.Figure:
    """Stacked shares of questions by the rank of their first relevant chunk (1, 2-3, 4-5,
    6-10, missing), one bar per category (``all`` on top), count and n in the hover."""
    column = table.columns[0]
    cats = list(dict.fromkeys(table[column]))
    fig = go.Figure()
    for bucket in dict.fromkeys(table["bucket"]):
        part = table[table["bucket"] == bucket].set_index(column).reindex(cats)
        fig.add_trace(go.Bar(
            y=cats, x=part["share"].tolist(), orientation="h", name=f"rank {bucket}"
            if bucket != "missing" else "not retrieved", text=part["count"].tolist(),
            marker={"color": BUCKET_COLOURS.get(str(bucket), "#636efa")},
            customdata=list(zip(part["count"], part["n"], strict=True)),
            hovertemplate=(f"%{{y}}: rank {bucket}: %{{customdata[0]}} of %{{customdata[1]}} "
                           "questions (%{x:.0%})<extra></extra>")))
    system = table.attrs.get("system")
    fig.update_layout(barmode="stack", template="plotly_white",
                      title=title or "Rank of the first relevant chunk"
                      + (f": {system}" if system else ""),
                      xaxis={"title": "share of questions", "tickformat": ".0%",
                             "range": [0, 1]},
                      yaxis={"autorange": "reversed"}, height=max(300, 30 * len(cats) + 170),
                      legend={"orientation": "h", "traceorder": "normal", "y": 1.02, "x": 0,
                              "yanchor": "bottom"})
    return fig
