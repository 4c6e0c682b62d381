"""Sweep plots and the sweep explorer, on a hand-made SweepResult (exact, no retrieval)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from workbench.evaluation import Run
from workbench.sweep import SweepResult, first_relevant_rank_table
from workbench.widgets.plots import (
    category_heatmap,
    cost_quality,
    metric_vs_param,
    pareto_front,
    rank_position,
    topk_view,
)
from workbench.widgets.sweep_explorer import SweepExplorer

QIDS = [f"q{i}" for i in range(8)]
CATS = ["lookup"] * 4 + ["table"] * 4


def make_result() -> SweepResult:
    """size {200, 400} x overlap {0, 50} x k {1, 5}: hit rate rises with size and k; one
    question per category flips with overlap. Cost: index tokens grow with overlap."""
    frames, rows, runs = [], [], {}
    for size, overlap, k in itertools.product([200, 400], [0, 50], [1, 5]):
        name = f"size={size} overlap={overlap} k={k}"
        hits = np.zeros(8)
        hits[: 2 + (size == 400) * 2 + (k == 5) * 2] = 1
        if overlap:
            hits[[3, 7]] = 1
        mrr = hits / np.where(np.arange(8) % 2 == 0, 1, 2)
        for metric, values in (("hit_rate@k", hits), ("mrr@k", mrr)):
            frames.append(pd.DataFrame({
                "system": name, "qid": QIDS, "category": CATS, "source": "owner",
                "relevance": "evidence>=0.75", "metric": metric, "value": values,
                "size": size, "overlap": overlap, "retriever": "bm25", "k": k}))
        rows.append({"config": name, "size": size, "overlap": overlap, "retriever": "bm25",
                     "k": k, "spec": f"fixed:size={size},overlap={overlap},unit=chars",
                     "retriever_name": "bm25", "k_value": k, "chunks": 10_000 // size,
                     "index_tokens": 1000 + overlap * 10 + (400 - size),
                     "cost_multiplier": 1 + overlap / size, "split_rate": 0.1,
                     "prompt_tokens_at_k": size / 4 * k, "embedded": 0, "reused": 0})
        runs[name] = Run.from_ranked({q: [f"{q}#{r}" for r in range(6)] for q in QIDS},
                                     system=name)
    found = {name: {q: i % 6 + 1 for i, q in enumerate(QIDS)} for name in runs}
    return SweepResult(pd.concat(frames, ignore_index=True), {}, runs,
                       pd.DataFrame(rows).set_index("config"), found_rank=found)


@pytest.fixture(scope="module")
def result() -> SweepResult:
    return make_result()


def test_pareto_front_hand_case():
    cost = [1, 2, 3, 4, 5, 2, 3]
    quality = [0.5, 0.4, 0.7, 0.7, 0.9, 0.6, 0.7]
    # 1: beaten by 0 (cheaper and better); 3 by 2 (same quality, cheaper); 6 ties 2 exactly
    assert pareto_front(cost, quality) == [0, 5, 2, 4]
    assert pareto_front([], []) == []
    with pytest.raises(ValueError):
        pareto_front([1], [])


def test_metric_vs_param_traces_and_error_bars(result):
    fig = metric_vs_param(result, "hit_rate@k", "size", color="overlap", where={"k": 5})
    assert isinstance(fig, go.Figure)
    assert [t.name for t in fig.data] == ["overlap=0", "overlap=50"]
    first = fig.data[0]
    assert list(first.x) == [200, 400]
    assert list(first.y) == pytest.approx([4 / 8, 6 / 8])
    assert len(first.error_y.array) == 2 and all(v >= 0 for v in first.error_y.array)
    assert first.customdata[0][0] == "size=200 overlap=0 k=5"
    faceted = metric_vs_param(result, "hit_rate@k", "size", color="overlap", facet="category")
    assert len(faceted.data) == 4  # two categories x two colours
    assert [a.text for a in faceted.layout.annotations] == ["lookup (n=4)", "table (n=4)"]
    # overlap and k not shown: held at the best configuration's values (overlap=50, k=5)
    best = metric_vs_param(result, "hit_rate@k", "size")
    assert list(best.data[0].y) == pytest.approx([5 / 8, 7 / 8])
    assert [c[0] for c in best.data[0].customdata] == ["size=200 overlap=50 k=5",
                                                       "size=400 overlap=50 k=5"]
    assert "overlap=50, k=5 held fixed (the best configuration's)" in best.layout.title.text
    one_cat = metric_vs_param(result, "hit_rate@k", "overlap", category="table")
    assert list(one_cat.data[0].x) == ["0", "50"] or list(one_cat.data[0].x) == [0, 50]
    with pytest.raises(ValueError, match="not in this sweep"):
        metric_vs_param(result, "recall@k", "size")


def test_cost_quality_highlights_the_pareto_front(result):
    fig = cost_quality(result, "hit_rate@k", cost="index_tokens")
    assert [t.name for t in fig.data] == ["configurations", "Pareto front"]
    board = result.leaderboard("hit_rate@k")
    front = [board.index[i] for i in pareto_front(board["index_tokens"].tolist(),
                                                   board["mean"].tolist())]
    assert list(fig.data[1].customdata) == front
    # by hand: the cheapest config (size 400, no overlap, k=5: 1000 tokens, 6/8) dominates
    # everything except the overlap one with a higher hit rate
    assert front == ["size=400 overlap=0 k=5", "size=400 overlap=50 k=5"]
    coloured = cost_quality(result, "hit_rate@k", color="overlap")
    assert [t.name for t in coloured.data] == ["overlap=0", "overlap=50", "Pareto front"]
    with pytest.raises(ValueError, match="cost 'dollars'"):
        cost_quality(result, "hit_rate@k", cost="dollars")


def test_category_heatmap_shape(result):
    fig = category_heatmap(result, "hit_rate@k")
    heat = fig.data[0]
    assert list(heat.x) == ["all<br>n=8", "lookup<br>n=4", "table<br>n=4"]
    assert len(heat.y) == 8 and heat.y[0] == "size=400 overlap=50 k=5"
    assert heat.z[0] == pytest.approx([7 / 8, 1.0, 3 / 4])


def test_topk_view_shows_quality_and_prompt_cost(result):
    fig = topk_view(result)
    assert [t.name for t in fig.data][1:] == ["hit_rate@k", "mrr@k"]
    bars, hit = fig.data[0], fig.data[1]
    assert isinstance(bars, go.Bar) and list(bars.y) == [100.0, 500.0]
    assert list(hit.y) == pytest.approx([5 / 8, 7 / 8])  # best config: size 400, overlap 50
    assert "size=400, overlap=50" in fig.layout.title.text
    with pytest.raises(ValueError, match="several configurations per k"):
        topk_view(result, where={"size": 400})


def test_rank_position_from_the_table(result):
    table = first_relevant_rank_table(result, "size=200 overlap=0 k=1")
    all_rows = table[table["category"] == "all"].set_index("bucket")["count"]
    # relevant chunk of q_i is q_i#(i % 6): ranks 1,2,...,6,1,2
    assert all_rows.to_dict() == {"1": 2, "2-3": 3, "4-5": 2, "6-10": 1, "missing": 0}
    fig = rank_position(table)
    assert [t.name for t in fig.data] == ["rank 1", "rank 2-3", "rank 4-5", "rank 6-10",
                                          "not retrieved"]
    assert list(fig.data[0].y) == ["all", "lookup", "table"]
    assert fig.layout.barmode == "stack"
    assert "size=200 overlap=0 k=1" in fig.layout.title.text


def test_explorer_selection_controls_and_static_form(result):
    ex = SweepExplorer(result)
    assert ex.x_select.value == "size" and ex.color_select.value == "overlap"
    assert ex.selected_config == result.best("hit_rate@k")
    assert isinstance(ex.figure, go.FigureWidget) and ex.figure.data[-1].name == "selected"
    ex.metric_select.value = "mrr@k"
    assert ex.figure.layout.yaxis.title.text == "mrr@k"
    ex.category_select.value = "table"
    assert "(table)" in ex.figure.layout.title.text
    ex.select("size=200 overlap=0 k=1")
    assert ex.selected_params == {"size": 200, "overlap": 0, "retriever": "bm25", "k": 1}
    # the held parameters are said in words: where their values come from, how to change them
    assert ("k=1 held fixed (the selected configuration's; click a point to change)"
            in ex.figure.layout.title.text)
    assert "(given)" not in ex.figure.layout.title.text
    assert ex.selected_config in ex.details_html()

    class Points:
        point_inds = (1,)

    trace = ex.figure.data[0]
    ex._clicked(trace, Points(), None)
    assert ex.selected_config == trace.customdata[1][0]
    html = ex.to_html()
    assert "cdn.plot.ly" in html and "wb-sweep-config" in html
    assert "cdn.plot.ly" not in ex.to_html(include_plotlyjs=False)
    with pytest.raises(ValueError, match="unknown configuration"):
        ex.select("nope")


def test_explorer_callback_errors_go_to_the_output(result, monkeypatch):
    import ipywidgets.widgets.widget_output as wo

    shown = []

    class FakeShell:
        def showtraceback(self, exc_tuple, tb_offset=None):
            shown.append(exc_tuple[1])

    ex = SweepExplorer(result)
    monkeypatch.setattr(wo, "get_ipython", lambda: FakeShell())
    monkeypatch.setattr(ex, "build_figure", lambda: (_ for _ in ()).throw(RuntimeError("boom")))
    ex.x_select.value = "overlap"  # the observer fails inside the Output, not in the caller
    assert [str(e) for e in shown] == ["boom"]


def test_plots_on_a_real_sweep(handbook):
    from workbench.sweep import run_sweep

    corpus, golden = handbook
    docs = [corpus[d] for d in ("expenses-travel", "remote-work", "pricing-plans")]
    items = [i for i in golden if i.evidence and all(e.doc_id in {d.id for d in docs}
                                                     for e in i.evidence)]
    from workbench.golden import GoldenSet

    res = run_sweep({"size": [300, 600], "overlap": [0, "20%"], "k": [1, 3]},
                    GoldenSet(items), docs, progress=False)
    for fig in (metric_vs_param(res, "hit_rate@k", "size", color="overlap", facet="category"),
                cost_quality(res, "recall@k"), category_heatmap(res, "ndcg@k"), topk_view(res),
                rank_position(first_relevant_rank_table(res, res.best("mrr@k")))):
        assert isinstance(fig, go.Figure) and fig.data
        assert fig.to_html(include_plotlyjs=False)


def test_metric_vs_param_never_mixes_hidden_parameters_silently(result):
    """8 configurations, x=size, colour=overlap: k varies too. Each curve is one k (held at
    the best configuration's), never the best over k; the title says so."""
    fig = metric_vs_param(result, "hit_rate@k", "size", color="overlap")
    names = [c[0] for t in fig.data for c in t.customdata]
    assert len(names) == 4 and all(n.endswith("k=5") for n in names)
    assert "k=5 held fixed" in fig.layout.title.text
    held = metric_vs_param(result, "hit_rate@k", "size", color="overlap", hold={"k": 1})
    assert all(c[0].endswith("k=1") for t in held.data for c in t.customdata)
    assert "k=1 held fixed (the values passed as hold)" in held.layout.title.text
    with pytest.raises(ValueError, match="give a value for"):
        metric_vs_param(result, "hit_rate@k", "size", hold={"overlap": 0})
    # the old view, asked for by name, says what it is
    best = metric_vs_param(result, "hit_rate@k", "size", color="overlap", hold="best")
    assert "each point: the best configuration over k" in best.layout.title.text
    # with every hidden parameter fixed by `where`, nothing is held and nothing is said
    fixed = metric_vs_param(result, "hit_rate@k", "size", color="overlap", where={"k": 1})
    assert "held fixed" not in fixed.layout.title.text


def test_explorer_ring_sits_on_its_own_curve(result):
    """Selecting a k=1 configuration redraws the curves at k=1: the ring is a plotted point."""
    ex = SweepExplorer(result, metric="hit_rate@k", x="size", color="overlap")
    ex.select("size=200 overlap=50 k=1")
    ring = next(t for t in ex.figure.data if t.name == "selected")
    points = {(x, y) for t in ex.figure.data if t.name != "selected"
              for x, y in zip(t.x, t.y, strict=True)}
    assert (ring.x[0], ring.y[0]) in points
    assert "k=1 held fixed" in ex.figure.layout.title.text


def test_the_held_configuration_is_the_leaderboards_best_on_a_tie():
    """Two configurations tie on the metric; the leaderboard (SweepResult.best) breaks the tie
    by the smaller index, so the plot holds that one's overlap, not the first in table order."""
    frames, rows = [], []
    for overlap, tokens in ((0, 2000), (50, 1000)):
        name = f"size=200 overlap={overlap}"
        frames.append(pd.DataFrame({
            "system": name, "qid": QIDS, "category": CATS, "source": "owner",
            "relevance": "evidence>=0.75", "metric": "hit_rate@5", "value": [1.0, 0.0] * 4,
            "size": 200, "overlap": overlap, "retriever": "bm25", "k": 5}))
        rows.append({"config": name, "size": 200, "overlap": overlap, "retriever": "bm25",
                     "k": 5, "spec": f"fixed:size=200,overlap={overlap},unit=chars",
                     "retriever_name": "bm25", "k_value": 5, "chunks": 50,
                     "index_tokens": tokens, "cost_multiplier": 1 + overlap / 200,
                     "split_rate": 0.1, "prompt_tokens_at_k": 250, "embedded": 0, "reused": 0})
    tied = SweepResult(pd.concat(frames, ignore_index=True), {}, {},
                       pd.DataFrame(rows).set_index("config"))
    assert tied.best("hit_rate@5") == "size=200 overlap=50"
    fig = metric_vs_param(tied, "hit_rate@5", "size")
    assert "overlap=50 held fixed (the best configuration's)" in fig.layout.title.text
    assert [c[0] for t in fig.data for c in t.customdata] == ["size=200 overlap=50"]
