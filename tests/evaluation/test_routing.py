"""Router evaluation: hand-computed metrics, properties of the ranking view, the labelled set
and the CLI."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT
from workbench.evaluation.routing import (
    RoutingRequest,
    compare_routers,
    evaluate_router,
    load_costs,
    load_requests,
    load_routes,
)
from workbench.io import InputError

DATA = ROOT / "data" / "routing"
COSTS = {"s": 1.0, "m": 3.0, "l": 10.0}


def _reqs():
    return [RoutingRequest("a", "x", "q", frozenset({"m", "l"})),
            RoutingRequest("b", "x", "q", frozenset({"s", "m", "l"})),
            RoutingRequest("c", "y", "q", frozenset({"l"})),
            RoutingRequest("d", "y", "q", frozenset())]


def test_hand_computed_router_metrics():
    routes = {"a": ["s", "m", "l"], "b": ["m"], "c": ["s", "m", "l"], "d": ["s"]}
    ev = evaluate_router(_reqs(), routes, COSTS, k=2)
    f = ev.frame
    assert list(f["hit@1"].fillna(-1)) == [0.0, 1.0, 0.0, -1]
    assert list(f["mrr"].fillna(-1)) == pytest.approx([0.5, 1.0, 1 / 3, -1])
    # recall@2: a: m in top 2 of {m, l} -> 1/2; b: 1/3; c: 0
    assert list(f["recall@2"].fillna(-1)) == pytest.approx([0.5, 1 / 3, 0.0, -1])
    assert list(f["cost"]) == [1.0, 3.0, 1.0, 1.0]
    assert list(f["oracle_cost"].fillna(-1)) == [3.0, 1.0, 10.0, -1]
    assert list(f["overspend"].fillna(-1)) == [-1, 2.0, -1, -1]
    assert ev.baseline == "l"
    assert list(f["saved"]) == [9.0, 7.0, 9.0, 9.0]
    assert list(f["quality_lost"]) == [1.0, 0.0, 1.0, 0.0]
    s = ev.summary()
    # n is what the ranking metrics average over: d, which no model passes, is counted apart
    assert s.loc["all", "n"] == 3 and s.loc["all", "no model passes"] == 1
    assert s.loc["all", "hit@1"] == pytest.approx(1 / 3)
    for cat, row in s.iterrows():
        part = f if cat == "all" else f[f["category"] == cat]
        for metric in ("hit@1", "mrr", "recall@2"):
            assert row["n"] == part[metric].notna().sum()
        assert row["n"] + row["no model passes"] == len(part)
        assert row["cost"] == pytest.approx(part["cost"].mean())
    assert s.loc["all", "hit@1 low"] <= 1 / 3 <= s.loc["all", "hit@1 high"]
    assert s.loc["y", "mrr"] == pytest.approx(1 / 3)


def test_bad_routes_are_refused():
    with pytest.raises(ValueError, match="no route"):
        evaluate_router(_reqs(), {"a": ["s"]}, COSTS)
    with pytest.raises(ValueError, match="repeats"):
        evaluate_router(_reqs(), {q: ["s", "s"] for q in "abcd"}, COSTS)
    with pytest.raises(ValueError, match="no cost"):
        evaluate_router(_reqs(), {q: ["xl"] for q in "abcd"}, COSTS)


MODELS = ["m0", "m1", "m2", "m3", "m4"]


@st.composite
def labelled(draw):
    n = draw(st.integers(1, 8))
    reqs, routes = [], {}
    for i in range(n):
        passing = draw(st.sets(st.sampled_from(MODELS), min_size=1))
        order = draw(st.permutations(MODELS))
        reqs.append(RoutingRequest(f"r{i}", draw(st.sampled_from("xy")), "q", frozenset(passing)))
        routes[f"r{i}"] = list(order)
    return reqs, routes


@settings(max_examples=60, deadline=None)
@given(labelled(), st.randoms(use_true_random=False))
def test_ranking_properties(case, rnd):
    reqs, routes = case
    costs = {m: float(i + 1) for i, m in enumerate(MODELS)}
    # a router that puts a passing model first has hit@1 = 1 and mrr = 1
    first = {r.id: [min(r.passes)] + [m for m in routes[r.id] if m != min(r.passes)]
             for r in reqs}
    good = evaluate_router(reqs, first, costs)
    assert (good.frame["hit@1"] == 1.0).all() and (good.frame["mrr"] == 1.0).all()
    assert (good.frame["quality_lost"] <= 0).all()
    # permuting the non-passing models ranked below the first passing one (passing models
    # keep their ranks) changes nothing
    base = evaluate_router(reqs, routes, costs, k=len(MODELS))
    shuffled = {}
    for r in reqs:
        ranked = routes[r.id]
        pos = next(i for i, m in enumerate(ranked) if m in r.passes)
        tail = [m for m in ranked[pos + 1:] if m not in r.passes]
        rnd.shuffle(tail)
        it = iter(tail)
        shuffled[r.id] = ranked[:pos + 1] + [m if m in r.passes else next(it)
                                             for m in ranked[pos + 1:]]
    moved = evaluate_router(reqs, shuffled, costs, k=len(MODELS))
    for m in ("hit@1", "mrr", f"recall@{len(MODELS)}", "cost"):
        assert list(moved.frame[m]) == list(base.frame[m])


def test_labelled_set_and_two_routers():
    reqs = load_requests(DATA / "requests.jsonl")
    costs = load_costs(DATA / "models.json")
    assert len(reqs) == 30 and {r.category for r in reqs} == {"lookup", "reasoning", "code",
                                                             "summarise"}
    rules = evaluate_router(reqs, load_routes(DATA / "routes_rules.jsonl"), costs, name="rules")
    cheap = evaluate_router(reqs, load_routes(DATA / "routes_cheapest.jsonl"), costs,
                            name="cheapest")
    print("\n" + rules.summary().round(4).to_string())
    print(cheap.summary().round(4).to_string())
    cmp = compare_routers(cheap, rules)
    print(cmp)
    assert cmp.n == 29  # one request no model passes
    assert rules.summary().loc["all", "hit@1"] > cheap.summary().loc["all", "hit@1"]


def test_bad_request_file_names_line(tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_text('{"id": "a", "category": "x", "request": "q", "passes": ["m"]}\n'
                 '{"id": "b", "category": "x", "request": "q", "passes": "m"}\n')
    with pytest.raises(InputError, match=r"r.jsonl:2: field 'passes'"):
        load_requests(p)


def test_cli_route():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    files = [str(DATA / "routes_rules.jsonl"), "--models", str(DATA / "models.json")]
    cmd = [sys.executable, "-m", "workbench.cli", "route"]
    out = subprocess.run([*cmd, str(DATA / "requests.jsonl"), *files, "--compare",
                          str(DATA / "routes_cheapest.jsonl")],
                         capture_output=True, text=True, env=env, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "hit@1" in out.stdout and "summarise" in out.stdout and "mcnemar" in out.stdout
    bad = subprocess.run([*cmd, str(DATA / "missing.jsonl"), *files],
                         capture_output=True, text=True, env=env, cwd=ROOT)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "missing.jsonl" in bad.stderr
