import pytest

from workbench.evaluation import Run, evaluate
from workbench.golden import GoldenItem, GoldenSet
from workbench.widgets.metric_table import MetricTable, available_ks, metric_table_html

GOLDEN = GoldenSet([
    GoldenItem("q1", "a", relevant_chunk_ids=("r#3",), category="lookup"),
    GoldenItem("q2", "b", relevant_chunk_ids=("l#0",), category="lookup"),
    GoldenItem("q3", "c", relevant_chunk_ids=("v#2",), category="<b>colloquial</b>"),
])
RUN = Run.from_ranked({"q1": ["s#1", "r#3"], "q2": ["l#0"], "q3": ["x#1", "y#2"]}, "toy")
EV = evaluate(RUN, GOLDEN, metrics=["recall@1", "recall@3", "mrr", "hit_rate@3"])


def test_static_table_has_n_intervals_colour_and_escapes():
    html = metric_table_html(EV, k=3)
    assert "recall@3" in html and "recall@1" not in html and "mrr" in html
    assert "<th>all</th><td>3</td>" in html and "background-color" in html
    assert "&lt;b&gt;colloquial&lt;/b&gt;" in html and "<b>colloquial" not in html
    assert "[" in html and "Clopper-Pearson for 0/1 metrics" in html
    assert "chunk_id&gt;=1" in html  # says which relevance the numbers use
    # n=3 and n=1 cells: marked as rough, and no [1.000, 1.000] interval on tiny n
    assert "†" in html and "[1.000, 1.000]" not in html


def test_sorting_by_metric():
    asc = metric_table_html(EV, k=3, sort_by="recall@3", ascending=True)
    desc = metric_table_html(EV, k=3, sort_by="recall@3", ascending=False)
    assert asc.index("colloquial") < asc.index(">lookup<")
    assert desc.index(">lookup<") < desc.index("colloquial")


def test_widget_state_readable_and_repaints():
    table = MetricTable(EV)
    assert available_ks(EV) == [1, 3] and table.k == 1
    table.k_select.value = 3
    assert table.k == 3 and "recall@3" in table.view.value and "recall@1" not in table.view.value
    table.sort_select.value = "mrr"
    table.order.value = "descending"
    assert table.sort_by == "mrr" and table.view.value == table.to_html()


def test_several_configurations_are_shown_one_at_a_time():
    """Two systems in one Evaluation: each cell is that configuration's own value, never the
    last configuration's, and sorting uses the shown configuration's means."""
    other = Run.from_ranked({"q1": ["r#3"], "q2": ["z#0"], "q3": ["v#2"]}, "other")
    both = EV + evaluate(other, GOLDEN, metrics=["recall@1", "recall@3", "mrr", "hit_rate@3"])
    toy = metric_table_html(both, k=1, system="toy")
    oth = metric_table_html(both, k=1, system="other")
    assert toy == metric_table_html(EV, k=1, system="toy")
    assert toy != oth and ">other:" in oth and ">toy:" in toy
    table = MetricTable(both)
    assert list(table.system_select.options) == ["toy", "other"]
    table.system_select.value = "other"
    assert table.view.value == table.to_html() and ">other:" in table.view.value
    with pytest.raises(ValueError, match="unknown configuration"):
        metric_table_html(both, system="nope")


def test_static_table_cells_are_the_evaluation_numbers():
    """Each cell shows the summary's own mean and interval for its group and metric, to three
    decimals: q1 and q2 (lookup) are found by rank 3 (2/2: Clopper-Pearson [0.158, 1.000]);
    q3 is not (0/1: [0.000, 0.975])."""
    import re

    html = metric_table_html(EV, k=3)
    header = re.findall(r"<th>(.*?)</th>", html.split("</thead>")[0])[2:]
    rows = {label: re.findall(r"<td[^>]*>(.*?)</td>", body)[1:]
            for label, body in re.findall(r"<tr[^>]*><th>(.*?)</th>(.*?)</tr>",
                                          html.split("<tbody>")[1])}
    by = EV.by("category")
    shown = 0
    for (group, metric), row in by.set_index(["category", "metric"]).iterrows():
        if metric not in header:
            continue
        label = group.replace("<", "&lt;").replace(">", "&gt;")
        cell = rows[label][header.index(metric)]
        assert cell == (f"{row['mean']:.3f}†<br><small>[{row['ci_low']:.3f}, "
                        f"{row['ci_high']:.3f}]</small>"), (group, metric, cell)
        shown += 1
    assert shown == 6
    assert rows["lookup"][header.index("recall@3")].startswith("1.000†<br><small>[0.158, 1.000]")
    assert "[0.000, 0.975]" in rows["&lt;b&gt;colloquial&lt;/b&gt;"][header.index("recall@3")]


def test_every_view_of_an_evaluation_shows_bidi_controls_and_escapes_tags():
    """One escape for every HTML view: a category with a tag and a right-to-left override."""
    hostile = "<img src=x onerror=alert(1)>\u202eevil"
    golden = GoldenSet([GoldenItem("q1", "a", relevant_chunk_ids=("r#3",), category=hostile)])
    ev = evaluate(Run.from_ranked({"q1": ["r#3"]}, "toy"), golden, metrics=["recall@1"])
    for html in (metric_table_html(ev, k=1, column="category"), ev._repr_html_()):
        assert "<img" not in html and "\u202e" not in html
    assert "[U+202E]evil" in metric_table_html(ev, k=1, column="category")


def _order(html: str) -> list[str]:
    import re

    return re.findall(r"<tr[^>]*><th>(.*?)</th>", html.split("<tbody>")[1])


def test_sort_follows_k_and_offers_only_the_shown_metrics():
    """Sorted by hit_rate@3, k set to 1: the sort moves to the same metric at 1 when the
    table shows it, else falls back to the group column, and the note says which; the sort
    list only ever offers metrics the table shows."""
    golden = GoldenSet([*GOLDEN, GoldenItem("q4", "d", relevant_chunk_ids=("w#0",),
                                            category="zeta")])
    run = Run.from_ranked({"q1": ["r#3"], "q2": ["a#0", "b#0", "l#0"], "q3": ["x#1"],
                           "q4": ["w#0"]}, "toy")
    ev = evaluate(run, golden, metrics=["recall@1", "recall@3", "mrr", "hit_rate@3"])
    table = MetricTable(ev)
    table.k_select.value = 3
    assert set(table.sort_select.options) == {"category", "n", "recall@3", "hit_rate@3", "mrr"}
    table.sort_select.value = "recall@3"
    table.order.value = "descending"
    assert table.note.value == ""
    table.k_select.value = 1
    assert table.sort_by == "recall@1" and "the sort follows k" in table.note.value
    assert set(table.sort_select.options) == {"category", "n", "recall@1", "mrr"}
    assert table.view.value == table.to_html()
    assert _order(table.view.value) == _order(metric_table_html(
        ev, k=1, sort_by="recall@1", ascending=False))
    # recall@1: lookup 0.5, zeta 1.0, colloquial 0.0 -> descending: zeta, lookup, colloquial
    assert _order(table.view.value) == ["all", "zeta", "lookup", "&lt;b&gt;colloquial&lt;/b&gt;"]
    table.k_select.value = 3
    table.sort_select.value = "hit_rate@3"
    table.k_select.value = 1  # no hit_rate@1: back to the group column, said in words
    assert table.sort_by == "category" and "hit_rate@3 is not shown at k=1" in table.note.value
    assert table.view.value == table.to_html()
    table.sort_select.value = "mrr"  # the user's own choice clears the note
    assert table.note.value == "" and table.sort_by == "mrr"
    table.k_select.value = 3
    assert table.sort_by == "mrr" and table.note.value == ""
