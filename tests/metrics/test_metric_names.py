"""Metric names are the registry's: every registered metric round-trips through its name at
several k, templates fill in to the same names, and a bad name is one MetricNameError."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.metrics import (
    DEFAULT_METRICS,
    KINDS,
    RELEVANCE_KINDS,
    Metric,
    MetricNameError,
    at_k,
    canonical_name,
    default_metrics,
    parse_metric,
    parse_relevance_label,
    relevance_label,
    trec_name,
)
from workbench.sweep.grid import check_value

CUT = [kind for kind, spec in KINDS.items() if spec.cutoff != "none"]
UNCUT = [kind for kind, spec in KINDS.items() if spec.cutoff != "required"]


@pytest.mark.parametrize("kind", CUT)
@pytest.mark.parametrize("k", [1, 2, 5, 10, 100, 1000])
def test_every_cut_metric_round_trips_at_k(kind, k):
    metric = Metric.of(kind, k)
    assert metric.name == f"{kind}@{k}"
    assert parse_metric(metric.name) == metric
    assert canonical_name(metric.name) == metric.name
    # the template of the kind, in each spelling, fills in to the same name
    for template in (f"{kind}@k", f"{kind}@K", f"{kind}@{{k}}", f" {kind}@k "):
        assert canonical_name(template) == f"{kind}@k"
        assert at_k(template, k) == metric.name
    try:  # and through trec_eval's name, where it has one
        assert parse_metric(trec_name(metric)) == metric
    except ValueError as exc:
        assert "no trec_eval equivalent" in str(exc)


@pytest.mark.parametrize("kind", UNCUT)
def test_every_uncut_metric_round_trips(kind):
    metric = Metric.of(kind)
    assert parse_metric(metric.name) == metric == parse_metric(canonical_name(metric.name))
    assert at_k(metric.name, 5) == metric.name  # a concrete name is not a template
    try:
        assert parse_metric(trec_name(metric)) == metric
    except ValueError as exc:
        assert "no trec_eval equivalent" in str(exc)


def test_aliases_and_trec_templates_read_as_the_canonical_name():
    assert canonical_name("R@k") == "recall@k" and at_k("P_{k}", 3) == "precision@3"
    assert canonical_name("map@k") == "ap@k" and canonical_name("recip_rank") == "mrr"
    assert at_k("span_recall@k", 4) == "coverage@4"


def test_the_default_metrics_are_templates_at_k():
    assert default_metrics(5) == ["recall@5", "precision@5", "hit_rate@5", "mrr@5", "ndcg@5"]
    assert [canonical_name(m) for m in DEFAULT_METRICS] == list(DEFAULT_METRICS)


BAD = ["recal@5", "recall", "recall@0", "recall@-1", "recall@k5", "recall@5.0", "r_precision@5",
       "r_precision@k", "span_precision_omega@k", "mrr{k}", "", "@5", "recall@@5", "P_0",
       "recall@{k}x", "ndcg_cut_k", "5@recall"]


@pytest.mark.parametrize("name", BAD)
def test_a_bad_name_is_one_clear_error(name):
    for read in (parse_metric, canonical_name, lambda n: at_k(n, 5)):
        with pytest.raises(MetricNameError) as caught:
            read(name)
        message = str(caught.value)
        assert "\n" not in message and message
        assert "valid forms" in message or "cutoff" in message
    assert check_value("metrics", name) is not None  # a sweep grid refuses it too


@given(st.text(alphabet="recalpmndgk@{}_0123456789 RP", max_size=14))
def test_any_string_is_a_name_or_a_metric_name_error(text):
    """Nothing but MetricNameError escapes; what is read is canonical and reads the same."""
    try:
        name = canonical_name(text)
    except MetricNameError:
        return
    assert canonical_name(name) == name
    assert at_k(name, 7) == at_k(text, 7)


def test_the_metric_table_reads_cutoffs_from_the_registry():
    from workbench.evaluation import Run, evaluate
    from workbench.golden import GoldenItem
    from workbench.widgets.metric_table import available_ks

    ev = evaluate(Run.from_ranked({"q1": ["a", "b"]}, "toy"),
                  [GoldenItem("q1", "?", relevant_chunk_ids=("b",))],
                  metrics=["R@2", "P_1", "recip_rank", "ndcg_cut_3"])
    assert ev.metrics == ["recall@2", "precision@1", "mrr", "ndcg@3"]
    assert available_ks(ev) == [1, 2, 3]


@pytest.mark.parametrize("kind", RELEVANCE_KINDS)
@pytest.mark.parametrize("threshold", [0.5, 0.75, 1, 2, 3])
def test_relevance_labels_round_trip(kind, threshold):
    label = relevance_label(kind, threshold)
    read_kind, read_threshold = parse_relevance_label(label)
    assert read_kind == kind and relevance_label(read_kind, read_threshold) == label


@pytest.mark.parametrize("label", ["evidence", "evidence>=", "chunk_id>=x", "graded>=1",
                                   "chunk_id>=1.5", "evidence>=0.750", " evidence>=0.75"])
def test_a_bad_relevance_label_is_refused(label):
    with pytest.raises(ValueError, match="not a relevance label"):
        parse_relevance_label(label)
