"""Tests for workbench.metrics: trec_eval fixtures, worked examples, peers, properties."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import SHARED_DATASETS
from workbench.metrics import Metric, mean_scores, parse_metric, score_queries, trec_name
from workbench.metrics.trec_files import ranked_lists, read_trec_qrels, read_trec_run

DATASETS = SHARED_DATASETS
TREC_TESTS = DATASETS / "trec_eval_tests" / "test"


def _trec_fixture(*names: str) -> list[Path]:
    paths = [TREC_TESTS / n for n in names]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        pytest.skip(f"trec_eval fixtures not found ({', '.join(missing)}); see shared/datasets")
    return paths


def _read_trec_output(path: Path) -> dict[str, dict[str, float]]:
    """``measure <tab> qid <tab> value`` lines -> {qid: {measure: value}} (``all`` = mean)."""
    out: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        measure, qid, value = line.split()
        if measure != "runid" and not measure.startswith("relstring"):  # non-numeric lines
            out.setdefault(qid, {})[measure] = float(value)
    return out


# trec_eval measures we reproduce, in the form trec_eval names them.
OUR_TREC = ("map", "recip_rank", "Rprec", "ndcg")
CUT_FAMILIES = ("P", "recall", "ndcg_cut", "map_cut", "success")


def _comparable(measures: dict[str, float]) -> list[str]:
    return [
        m for m in measures
        if m in OUR_TREC or any(m.startswith(f + "_") and m[len(f) + 1:].isdigit()
                                for f in CUT_FAMILIES)
    ]


@pytest.mark.parametrize(
    ("qrels_name", "out_name", "threshold"),
    [("qrels.test", "out.test.aq", 1), ("qrels.rel_level", "out.test.aql", 2)],
)
def test_trec_eval_per_query_and_mean(qrels_name: str, out_name: str, threshold: int) -> None:
    qrels_p, run_p, out_p = _trec_fixture(qrels_name, "results.test", out_name)
    expected = _read_trec_output(out_p)
    measures = _comparable(expected["all"])
    # out.test.aq holds P_5..P_1000, recall_*, ndcg_cut_*, map_cut_*, success_1/5/10, ...
    assert {"map", "recip_rank", "P_5", "recall_10", "ndcg_cut_10", "success_5"} <= set(measures)
    scores = score_queries(
        read_trec_qrels(qrels_p), read_trec_run(run_p), measures, grade_threshold=threshold
    )
    assert scores.qids == sorted(q for q in expected if q != "all")
    assert scores.excluded_no_relevant == []
    assert expected["all"]["num_q"] == len(scores.qids)
    for m in measures:
        for qid, value in zip(scores.qids, scores.values[m], strict=True):
            assert value == pytest.approx(expected[qid][m], abs=5.1e-5), (m, qid)
        assert scores.values[m].mean() == pytest.approx(expected["all"][m], abs=5.1e-5), m


def test_trec_eval_all_line_matches_out_test_a() -> None:
    qrels_p, run_p, out_p = _trec_fixture("qrels.test", "results.test", "out.test.a")
    expected = _read_trec_output(out_p)["all"]
    got = mean_scores(read_trec_qrels(qrels_p), read_trec_run(run_p),
                      ["map", "recip_rank", "P_5", "P_10", "recall_10", "ndcg_cut_10"])
    for m, v in got.items():
        assert round(v, 4) == pytest.approx(expected[m], abs=1e-9), m
    # The fixture README's headline numbers.
    assert round(got["map"], 4) == 0.1785 and round(got["ndcg_cut_10"], 4) == 0.3016


def test_trec_eval_counts_no_relevant_query_we_exclude_it() -> None:
    """qrels.comment.test has 31 topics; 2024-36302 has no relevant document. trec_eval reports
    num_q = 31 and averages its zeros in; we exclude it and say so."""
    qrels_p, run_p, out_p = _trec_fixture(
        "qrels.comment.test", "results.comment.test", "out.comment.test"
    )
    expected = _read_trec_output(out_p)["all"]
    measures = ["map", "recip_rank", "Rprec", "P_5", "P_10", "P_100"]
    scores = score_queries(read_trec_qrels(qrels_p), read_trec_run(run_p), measures)
    assert scores.excluded_no_relevant == ["2024-36302"]
    assert expected["num_q"] == len(scores.qids) + 1 == 31
    for m in measures:
        trec_style = scores.values[m].sum() / expected["num_q"]
        assert trec_style == pytest.approx(expected[m], abs=5.1e-5), m


def test_trec_eval_ignores_comment_lines_and_hash_in_docno() -> None:
    plain, commented, run_p = _trec_fixture(
        "qrels.test", "qrels.test.with-comments", "results.test"
    )
    run = read_trec_run(run_p)
    a = mean_scores(read_trec_qrels(plain), run, ["map", "ndcg_cut_10"])
    b = mean_scores(read_trec_qrels(commented), run, ["map", "ndcg_cut_10"])
    assert a == pytest.approx(b)  # the judged doc CR#93E-1860 is grade 0 in both


# --- hand-computed examples -----------------------------------------------------------------

def _graded_query(retrieved: list[int], judged: list[int]) -> tuple[dict, dict]:
    """qrels/run for one query whose top ranks have grades ``retrieved``; ``judged`` holds every
    judged grade of the query (each retrieved grade must appear in it)."""
    pool = list(judged)
    qrels: dict[str, int] = {}
    docs: list[str] = []
    for rank, g in enumerate(retrieved, start=1):
        doc = f"doc-r{rank}"
        docs.append(doc)
        if g in pool and g > 0:
            pool.remove(g)
            qrels[doc] = g
    for i, g in enumerate(pool):
        if g > 0:
            qrels[f"doc-unretrieved{i}"] = g
    return qrels, docs


def test_seed_worked_example() -> None:
    judged, docs = _graded_query([0, 2, 0, 3, 1], [0, 2, 0, 3, 1, 2])
    qrels, run = {"q": judged}, {"q": docs}
    got = mean_scores(qrels, run, ["P@5", "recall@5", "mrr", "ndcg@5", "ndcg_retrieved@5"])
    assert got["P@5"] == pytest.approx(0.6)
    assert got["recall@5"] == pytest.approx(0.75)
    assert got["mrr"] == pytest.approx(0.5)
    dcg = 2 / math.log2(3) + 3 / math.log2(5) + 1 / math.log2(6)
    assert dcg == pytest.approx(2.9407, abs=1e-4)
    assert 3 + 2 / math.log2(3) + 1 / 2 == pytest.approx(4.7619, abs=1e-4)
    assert got["ndcg_retrieved@5"] == pytest.approx(0.6176, abs=1e-4)
    assert got["ndcg@5"] == pytest.approx(0.5166, abs=1e-4)
    strict = mean_scores(qrels, run, ["P@5", "recall@5", "ndcg@5"], grade_threshold=2)
    assert strict["P@5"] == pytest.approx(0.4)
    assert strict["recall@5"] == pytest.approx(2 / 3)
    assert strict["ndcg@5"] == pytest.approx(got["ndcg@5"])  # gains ignore the threshold


def test_ndcg_trap_retrieved_only_ideal_flatters_weak_ranking() -> None:
    x, x_docs = _graded_query([1, 1, 1, 0, 0], [1, 1, 1, 3])
    y, y_docs = _graded_query([0, 0, 0, 3, 0], [3, 1, 1, 1])
    scores = score_queries({"x": x, "y": y}, {"x": x_docs, "y": y_docs},
                           ["ndcg_retrieved@5", "ndcg@5"])
    assert scores.qids == ["x", "y"]
    np.testing.assert_allclose(scores.values["ndcg_retrieved@5"], [1.0, 0.4307], atol=1e-4)
    np.testing.assert_allclose(scores.values["ndcg@5"], [0.4671, 0.2832], atol=1e-4)


def test_recall_at_k_and_mrr_on_named_docs() -> None:
    qrels = {"q001": {"policy-refunds#3": 1, "policy-refunds#4": 0},
             "q002": {"a": 1}, "q003": {"b": 1}}
    run = {
        "q001": ["policy-shipping#1", "policy-refunds#3", "terms#7", "policy-refunds#4", "faq#2"],
        "q002": ["a", "x"], "q003": ["x", "y", "z"],
    }
    s = score_queries(qrels, run, ["recall@1", "recall@3", "recall@5", "mrr", "hit_rate@1"])
    assert s.qids == ["q001", "q002", "q003"]
    assert s.values["recall@1"][0] == 0 and s.values["hit_rate@1"][0] == 0
    assert s.values["recall@3"][0] == 1 and s.values["recall@5"][0] == 1
    np.testing.assert_allclose(s.values["mrr"], [0.5, 1.0, 0.0])
    assert s.mean()["mrr"] == pytest.approx(0.5)


def test_hit_rate_is_not_recall() -> None:
    qrels = {"q": {"a": 1, "b": 1, "c": 1, "d": 1}}
    got = mean_scores(qrels, {"q": ["a", "x", "y"]}, ["hit_rate@3", "recall@3", "P@3"])
    assert got == pytest.approx({"hit_rate@3": 1.0, "recall@3": 0.25, "P@3": 1 / 3})


def test_query_selection_rules() -> None:
    qrels = {"a": {"d1": 1}, "b": {"d1": 0, "d2": -1}, "c": {"d9": 2}, "e": {}}
    run = {"a": {"d1": 1.0}, "b": {"d1": 1.0}, "e": ["d1"], "z": ["d1"]}
    s = score_queries(qrels, run, ["P@1"])
    assert s.qids == ["a"]  # z: not judged; c: not retrieved
    assert s.excluded_no_relevant == ["b", "e"]
    assert s.missing_from_run == ["c"]
    z = score_queries(qrels, run, ["P@1", "mrr"], missing="zero")
    assert z.qids == ["a", "c"]
    np.testing.assert_allclose(z.values["mrr"], [1.0, 0.0])
    assert mean_scores(qrels, run, ["mrr"], missing="zero") == {"mrr": 0.5}
    empty = score_queries({"b": {"d": 0}}, {"b": ["d"]}, ["mrr"])
    assert empty.qids == [] and math.isnan(empty.mean()["mrr"])


def test_precision_divides_by_k_and_short_runs_are_padded() -> None:
    got = mean_scores({"q": {"a": 1, "b": 1}}, {"q": ["a"]},
                      ["P@10", "ap@10", "map", "r_precision", "ndcg@10", "ndcg"])
    assert got["P@10"] == pytest.approx(0.1)
    assert got["ap@10"] == got["map"] == pytest.approx(0.5)
    assert got["r_precision"] == pytest.approx(0.5)
    assert got["ndcg@10"] == got["ndcg"] == pytest.approx(1 / (1 + 1 / math.log2(3)))


def test_ties_follow_trec_eval_docno_descending() -> None:
    qrels = {"q": {"a": 1}}
    run = {"q": {"a": 1.0, "b": 1.0, "c": 1.0}}  # trec_eval ranks c, b, a
    assert mean_scores(qrels, run, ["mrr"]) == {"mrr": pytest.approx(1 / 3)}
    assert mean_scores({"q": {"c": 1}}, run, ["mrr"]) == {"mrr": 1.0}


def test_nan_scores_are_rejected() -> None:
    with pytest.raises(ValueError, match="NaN"):
        score_queries({"q": {"a": 1}}, {"q": {"a": 1.0, "b": math.nan}}, ["mrr"])


def test_duplicate_docs_keep_their_ranks() -> None:
    """k is what the generator receives: a repeat occupies a rank and counts nothing, so
    [a, a, b] at k=2 has found a only (never skipped to reach b)."""
    got = mean_scores({"q": {"a": 1, "b": 1}}, {"q": ["a", "a", "b"]},
                      ["recall@2", "P@2", "recall@3", "mrr"])
    assert got == {"recall@2": 0.5, "P@2": 0.5, "recall@3": 1.0, "mrr": 1.0}
    junk = mean_scores({"q": {"g": 1}}, {"q": ["j"] * 10 + ["g"]}, ["hit_rate@2", "mrr"])
    assert junk == {"hit_rate@2": 0.0, "mrr": pytest.approx(1 / 11)}


# --- names ------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "name", "trec"),
    [("recall@5", "recall@5", "recall_5"), ("precision@10", "precision@10", "P_10"),
     ("P@5", "precision@5", "P_5"), ("hit_rate@3", "hit_rate@3", "success_3"),
     ("hit@3", "hit_rate@3", "success_3"), ("mrr", "mrr", "recip_rank"),
     ("ndcg@10", "ndcg@10", "ndcg_cut_10"), ("map", "map", "map"), ("ap@10", "ap@10", "map_cut_10"),
     ("P_5", "precision@5", "P_5"), ("recall_10", "recall@10", "recall_10"),
     ("ndcg_cut_10", "ndcg@10", "ndcg_cut_10"), ("recip_rank", "mrr", "recip_rank"),
     ("success_5", "hit_rate@5", "success_5"), ("Rprec", "r_precision", "Rprec"),
     (" NDCG@10 ", "ndcg@10", "ndcg_cut_10")],
)
def test_parse_metric_and_trec_name(text: str, name: str, trec: str) -> None:
    m = parse_metric(text)
    assert m.name == name
    assert trec_name(m) == trec == trec_name(text)
    assert parse_metric(m) is m


def test_metrics_without_trec_eval_equivalent() -> None:
    for text in ("mrr@10", "ndcg_retrieved@5"):
        with pytest.raises(ValueError, match="no trec_eval equivalent"):
            trec_name(text)


@pytest.mark.parametrize("bad", ["recal@5", "precision", "ndcg@0", "P_x", "mrr@", "r_precision@3"])
def test_unknown_or_malformed_metric_names(bad: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_metric(bad)
    assert bad in str(err.value) or "cutoff" in str(err.value)


def test_unknown_metric_message_lists_valid_forms() -> None:
    with pytest.raises(ValueError, match=r"unknown metric 'recal@5'.*recall@k.*ndcg_cut_k"):
        score_queries({"q": {"a": 1}}, {"q": ["a"]}, ["recal@5"])


def test_result_keys_are_the_names_passed() -> None:
    s = score_queries({"q": {"a": 1}}, {"q": ["a"]}, ["P@1", Metric.of("recall", 1)])
    assert list(s.values) == ["P@1", "recall@1"]


def test_bad_threshold_and_missing_option() -> None:
    with pytest.raises(ValueError, match="threshold"):
        score_queries({"q": {"a": 1}}, {"q": ["a"]}, ["mrr"], grade_threshold=0)
    with pytest.raises(ValueError, match="missing"):
        score_queries({"q": {"a": 1}}, {"q": ["a"]}, ["mrr"], missing="drop")  # type: ignore[arg-type]


# --- differential tests against peers --------------------------------------------------------

def _random_inputs(seed: int, n_queries: int = 50, ties: bool = True) -> tuple[dict, dict]:
    rng = np.random.default_rng(seed)
    pool = [f"D{i:03d}" for i in range(120)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_queries):
        qid = f"q{q:02d}"
        judged = rng.choice(pool, size=int(rng.integers(1, 40)), replace=False)
        grades = rng.integers(0, 4, size=judged.size)
        grades[0] = max(int(grades[0]), 1)  # at least one relevant document
        qrels[qid] = {str(d): int(g) for d, g in zip(judged, grades, strict=True)}
        docs = rng.choice(pool, size=int(rng.integers(1, 60)), replace=False)
        scores = rng.integers(0, 8, size=docs.size) / 4 if ties else rng.random(docs.size)
        run[qid] = {str(d): float(s) for d, s in zip(docs, scores, strict=True)}
    return qrels, run


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_pytrec_eval_on_random_runs_with_ties(seed: int) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = _random_inputs(seed)
    measures = ["P_1", "P_5", "P_10", "P_100", "recall_5", "recall_20", "ndcg_cut_3",
                "ndcg_cut_10", "ndcg", "recip_rank", "map", "map_cut_10", "Rprec", "success_5"]
    for threshold in (1, 2):
        ours = score_queries(qrels, run, measures, grade_threshold=threshold)
        ev = pytrec_eval.RelevanceEvaluator(qrels, set(measures), relevance_level=threshold)
        ref = ev.evaluate(run)
        # pytrec_eval keeps queries without relevant documents (all zeros); we drop them.
        kept = [q for q in sorted(ref) if q not in ours.excluded_no_relevant]
        assert ours.qids == kept
        for m in measures:
            expected = np.array([ref[q][m] for q in kept])
            np.testing.assert_allclose(ours.values[m], expected, atol=1e-12, err_msg=m)


def test_no_relevant_zero_keeps_ndcg_gains_as_trec_eval_ignores_the_level() -> None:
    """trec_eval's -l leaves nDCG alone: a query with nothing at the threshold scores 0 on the
    thresholded metrics, and its nDCG still counts the grades."""
    s = score_queries({"q": {"a": 1}}, {"q": ["a"]}, ["ndcg", "ndcg@5", "ndcg_retrieved@5",
                                                      "P@5", "recall@5", "mrr", "map",
                                                      "r_precision", "hit_rate@5"],
                      grade_threshold=2, no_relevant="zero")
    assert s.qids == ["q"]
    assert {m: float(v[0]) for m, v in s.values.items()} == {
        "ndcg": 1.0, "ndcg@5": 1.0, "ndcg_retrieved@5": 1.0, "P@5": 0.0, "recall@5": 0.0,
        "mrr": 0.0, "map": 0.0, "r_precision": 0.0, "hit_rate@5": 0.0}


@pytest.mark.parametrize("seed", [0, 1])
def test_no_relevant_zero_matches_pytrec_eval_on_every_query(seed: int) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = _random_inputs(seed)
    measures = ["P_5", "recall_5", "ndcg_cut_10", "ndcg", "recip_rank", "map", "Rprec",
                "success_5"]
    for threshold in (2, 3):
        ours = score_queries(qrels, run, measures, grade_threshold=threshold, no_relevant="zero")
        ref = pytrec_eval.RelevanceEvaluator(qrels, set(measures),
                                             relevance_level=threshold).evaluate(run)
        assert ours.qids == sorted(ref)
        for m in measures:
            expected = np.array([ref[q][m] for q in ours.qids])
            np.testing.assert_allclose(ours.values[m], expected, atol=1e-12, err_msg=m)


def test_list_runs_equal_scored_runs() -> None:
    qrels, run = _random_inputs(7)
    metrics = ["P@5", "recall@10", "ndcg@10", "mrr", "map", "ndcg_retrieved@5", "r_precision"]
    a = score_queries(qrels, run, metrics)
    b = score_queries(qrels, ranked_lists(run), metrics)
    for m in metrics:
        np.testing.assert_array_equal(a.values[m], b.values[m])


def test_matches_ir_measures_per_query_for_rr_at_k_and_success() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    qrels, run = _random_inputs(3, ties=False)
    ours = score_queries(qrels, run, ["mrr@3", "mrr@10", "hit_rate@1", "hit_rate@5"])
    ref: dict[str, dict[str, float]] = {}
    wanted = [ir_measures.RR @ 3, ir_measures.RR @ 10, ir_measures.Success @ 1,
              ir_measures.Success @ 5]
    for row in ir_measures.iter_calc(wanted, qrels, run):
        ref.setdefault(row.query_id, {})[str(row.measure)] = row.value
    for ours_name, theirs in [("mrr@3", "RR@3"), ("mrr@10", "RR@10"),
                              ("hit_rate@1", "Success@1"), ("hit_rate@5", "Success@5")]:
        expected = [ref[q][theirs] for q in ours.qids]
        np.testing.assert_allclose(ours.values[ours_name], expected, atol=1e-12,
                                   err_msg=ours_name)


@pytest.mark.filterwarnings("ignore:unsafe cast")  # ranx's numba code
def test_matches_ranx_means_for_hit_rate_and_mrr_at_k() -> None:
    ranx = pytest.importorskip("ranx")
    qrels, run = _random_inputs(4, ties=False)
    names = ["hit_rate@1", "hit_rate@5", "mrr@3", "mrr@10", "ndcg@10", "precision@5"]
    ours = mean_scores(qrels, run, names)
    theirs = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), names)
    for n in names:
        assert ours[n] == pytest.approx(float(theirs[n]), abs=1e-9), n


# --- properties --------------------------------------------------------------------------------

DOCS = [f"d{i}" for i in range(12)]
ALL_METRICS = ["precision@1", "precision@3", "recall@1", "recall@3", "recall@5", "recall@20",
               "hit_rate@1", "hit_rate@3", "hit_rate@5", "hit_rate@20", "mrr", "mrr@3",
               "ndcg@3", "ndcg", "ndcg_retrieved@3", "map", "ap@3", "r_precision"]


@st.composite
def qrels_and_runs(draw: st.DrawFn) -> tuple[dict, dict, int]:
    n = draw(st.integers(1, 6))
    qrels, run = {}, {}
    for q in range(n):
        qrels[f"q{q}"] = draw(st.dictionaries(st.sampled_from(DOCS), st.integers(-1, 3),
                                              max_size=8))
        if draw(st.booleans()):
            run[f"q{q}"] = draw(st.lists(st.sampled_from(DOCS), max_size=10))
        else:
            run[f"q{q}"] = draw(st.dictionaries(
                st.sampled_from(DOCS), st.sampled_from([-math.inf, -1.0, 0.0, 0.5, 2.0, math.inf]),
                max_size=10))
    return qrels, run, draw(st.integers(1, 3))


@settings(max_examples=300, deadline=None)
@given(qrels_and_runs())
def test_properties(data: tuple[dict, dict, int]) -> None:
    qrels, run, threshold = data
    s = score_queries(qrels, run, ALL_METRICS, grade_threshold=threshold)
    no_rel = sorted(q for q in qrels if not any(g >= threshold for g in qrels[q].values()))
    assert s.excluded_no_relevant == no_rel
    assert s.qids == sorted(set(qrels) - set(no_rel))
    for m in ALL_METRICS:
        v = s.values[m]
        assert v.shape == (len(s.qids),)
        assert np.all((v >= 0) & (v <= 1 + 1e-12)), m
    for k in (1, 3, 5, 20):
        assert np.all(s.values[f"hit_rate@{k}"] >= s.values[f"recall@{k}"])
    assert np.all(np.diff(np.stack([s.values[f"recall@{k}"] for k in (1, 3, 5, 20)]), axis=0)
                  >= 0)
    ranked = ranked_lists(run)
    as_lists = score_queries(qrels, ranked, ALL_METRICS, grade_threshold=threshold)
    for m in ALL_METRICS:  # locating documents by score == sorting like trec_eval
        np.testing.assert_allclose(s.values[m], as_lists.values[m], rtol=0, atol=1e-12)
    for i, q in enumerate(s.qids):
        # a repeated document keeps its first rank; its repeats occupy ranks and count nothing
        top = ranked[q][:3]
        hits = sum(qrels[q].get(d, 0) >= threshold for j, d in enumerate(top) if d not in top[:j])
        assert s.values["precision@3"][i] * 3 == pytest.approx(hits)


@settings(max_examples=200, deadline=None)
@given(qrels_and_runs(), st.sets(st.sampled_from([f"q{q}" for q in range(6)])),
       st.sampled_from(["exclude", "zero"]))
def test_a_query_missing_from_the_run_scores_zero_or_is_left_out(data, dropped, no_relevant):
    """missing="zero" (trec_eval -c) scores every qrels query the run lacks 0 on every metric
    and every other query as missing="ignore" does; which queries are excluded for having
    nothing relevant follows the same threshold either way."""
    qrels, run, threshold = data
    run = {q: r for q, r in run.items() if q not in dropped}
    kw = {"grade_threshold": threshold, "no_relevant": no_relevant}
    ignore = score_queries(qrels, run, ALL_METRICS, **kw)
    zero = score_queries(qrels, run, ALL_METRICS, missing="zero", **kw)
    relevant = {q for q in qrels if any(g >= threshold for g in qrels[q].values())}
    scored = relevant if no_relevant == "exclude" else set(qrels)
    assert ignore.qids == sorted(scored & set(run)) and zero.qids == sorted(scored)
    assert zero.missing_from_run == ignore.missing_from_run == sorted(set(qrels) - set(run))
    assert zero.excluded_no_relevant == sorted(set(qrels) - scored)
    for m in ALL_METRICS:
        got = dict(zip(zero.qids, zero.values[m].tolist(), strict=True))
        want = dict(zip(ignore.qids, ignore.values[m].tolist(), strict=True))
        for q in zero.qids:
            assert got[q] == (want[q] if q in run else 0.0), m
