"""Position plot: accuracy by where the gold passage sits, beside a published curve.

``position_figure`` is the static form (a plotly Figure; renders in nbconvert reports and
is tested without a browser). ``PositionPlot`` is the ipywidgets view: the same figure as
a ``go.FigureWidget``; clicking a point selects that position (``selected_position``) and
lists the answers given there in an Output (text escaped). The view only paints what
:class:`~workbench.generation.position.PositionResult` computed.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from workbench.generation.position import PositionResult
from workbench.text import escape_html
from workbench.widgets.keywords import refuse_unknown_keywords

__all__ = ["PositionPlot", "position_figure", "reference_curves"]


def reference_curves(reference: Mapping[str, Any] | None) -> tuple[dict[str, dict[int, float]],
                                                                   int | None, str]:
    """Normalise a reference: the dict of
    :func:`~workbench.generation.nq_open.load_reference_curves` or a plain
    ``{name: {position: accuracy}}``. Returns curves, their N, and a source."""
    if not reference:
        return {}, None, ""
    if "curves" in reference:
        curves = {str(k): {int(p): float(a) for p, a in v.items()}
                  for k, v in reference["curves"].items()}
        return curves, reference.get("n_documents"), str(reference.get("source", ""))
    curves = {str(k): {int(p): float(a) for p, a in v.items()} for k, v in reference.items()}
    return curves, None, ""


def _own_trace(result: PositionResult) -> go.Scatter:
    s = result.summary()
    return go.Scatter(
        x=s["rank"], y=s["accuracy"], mode="lines+markers", name=f"{result.model_id} (this run)",
        error_y={"type": "data", "symmetric": False, "array": s["ci_high"] - s["accuracy"],
                 "arrayminus": s["accuracy"] - s["ci_low"]},
        customdata=s[["n", "ci_low", "ci_high"]].to_numpy(),
        hovertemplate=("gold at %{x}: accuracy %{y:.2f} [%{customdata[1]:.2f}, "
                       "%{customdata[2]:.2f}], n=%{customdata[0]}<extra></extra>"))


def position_figure(result: PositionResult, reference: Mapping[str, Any] | None = None,
                    title: str | None = None) -> go.Figure:
    """Accuracy (with 95% Clopper-Pearson error bars) against the gold passage's position
    (1 = first). With ``reference``, a second panel beside it shows the published curves
    (dashed), on their own x axis since their number of documents differs."""
    curves, n_ref, source = reference_curves(reference)
    # two short lines per panel title: a half-width panel has room for about 45 characters
    own_title = (f"This run: {escape_html(result.model_id)}<br>{result.n_positions} passages, "
                 f"n={result.n_questions} questions")
    if curves:
        ref_title = (f"Published: NQ-open<br>{n_ref} documents" if n_ref else "Reference")
        fig = make_subplots(rows=1, cols=2, subplot_titles=(own_title, ref_title),
                            shared_yaxes=True, horizontal_spacing=0.08)
        fig.add_trace(_own_trace(result), row=1, col=1)
        for name, curve in curves.items():
            xs = sorted(curve)
            fig.add_trace(go.Scatter(x=[p + 1 for p in xs], y=[curve[p] for p in xs],
                                     mode="lines+markers", name=f"{name} (published)",
                                     line={"dash": "dash"}), row=1, col=2)
        fig.update_xaxes(title_text="position of the gold passage (1 = first)", row=1, col=1,
                         dtick=1 if result.n_positions <= 10 else None)
        fig.update_xaxes(title_text="position of the gold document (1 = first)", row=1, col=2)
    else:
        fig = go.Figure(_own_trace(result))
        fig.update_xaxes(title_text="position of the gold passage (1 = first)",
                         dtick=1 if result.n_positions <= 10 else None)
        fig.update_layout(title=own_title)
    book = result.closed_book_accuracy()
    if book is not None:
        fig.add_hline(y=book, line_dash="dot", annotation_text=f"closed book {book:.2f}",
                      row=1 if curves else None, col=1 if curves else None)
    fig.update_yaxes(title_text="accuracy", range=[0, 1.05])
    if title:
        fig.update_layout(title={"text": escape_html(title), "y": 0.98, "yanchor": "top"})
    # the legend under the panels (beside them it squeezes both); the source whole, wrapped
    fig.update_layout(legend={"orientation": "h", "x": 0, "y": -0.22, "yanchor": "top"})
    note = "<br>".join(escape_html(line) for line in textwrap.wrap(source, 150))
    if note:
        fig.add_annotation(text=note, xref="paper", yref="paper", x=0, y=-0.42,
                           yanchor="top", showarrow=False, font={"size": 9}, align="left")
    fig.update_layout(height=560 if note else 500, margin={"t": 120, "b": 190 if note else 130})
    return fig


@refuse_unknown_keywords
class PositionPlot:
    """Interactive view: click a point to list the answers given at that position."""

    def __init__(self, result: PositionResult, reference: Mapping[str, Any] | None = None):
        import ipywidgets as widgets

        self.result = result
        self.selected_position: int | None = None
        self.figure = go.FigureWidget(position_figure(result, reference))
        self.output = widgets.Output()
        self.figure.data[0].on_click(self._on_click)
        self.widget = widgets.VBox([self.figure, self.output])

    def _on_click(self, _trace: Any, points: Any, _state: Any) -> None:
        with self.output:
            try:
                if not points.point_inds:
                    return
                self.select(int(points.xs[0]) - 1)
            except Exception as exc:  # callback errors must be seen
                print(f"position plot: {type(exc).__name__}: {exc}")

    def select(self, position: int) -> str:
        """Select a 0-based position; returns (and shows) the answers there as HTML."""
        from IPython.display import HTML, display

        self.selected_position = position
        rows = self.result.frame[self.result.frame["position"] == position]
        items = "".join(
            f"<li>{'✔' if r.passed else '✘'} <b>{escape_html(str(r.qid))}</b>: "
            f"{escape_html(str(r.answer)[:200])}</li>" for r in rows.itertuples())
        markup = f"<p>gold at position {position + 1}</p><ul>{items}</ul>"
        self.output.clear_output()
        with self.output:
            display(HTML(markup))
        return markup

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
