"""Rogan-Gladen and Lang and Reiczigel's interval (workbench.stats.prevalence), and the
coverage of the corrected pass rate by simulation: judges with sensitivity and specificity
from 0.6 to 0.95, calibration sets of 20-200 answers drawn from the same answers as the
judged ones, 100-1000 judged answers, true pass rates 0.1-0.9. The simulated procedure is
the shipped one: its refusals and intervals are checked against ``corrected_pass_rate`` on
a sample of the simulated studies. ``-s`` prints the table the README quotes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from workbench.generation.calibration import calibrate_judge, corrected_pass_rate
from workbench.io import WorkbenchError
from workbench.stats import SMALL_N, rogan_gladen, rogan_gladen_interval

JUDGES = ((0.95, 0.9), (0.9, 0.95), (0.8, 0.7), (0.7, 0.8), (0.95, 0.6), (0.6, 0.95),
          (0.75, 0.75), (0.6, 0.6))
CALIBRATION = (20, 50, 100, 200)
JUDGED = (100, 1000)
RATES = (0.1, 0.3, 0.5, 0.7, 0.9)


def test_rogan_gladen_by_hand_and_at_chance():
    assert rogan_gladen(0.5, 0.9, 0.8) == pytest.approx(0.3 / 0.7)
    assert rogan_gladen(0.05, 0.9, 0.8) == 0.0 and rogan_gladen(0.99, 0.9, 0.8) == 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(rogan_gladen(0.5, 0.5, 0.5)) and np.isnan(rogan_gladen(0.5, 0.3, 0.6))
        assert rogan_gladen_interval((5, 10), (1, 4), (1, 4)) == (0.0, 1.0)


def test_the_issue_example_is_refused_and_its_interval_is_wide():
    """6 of 6 passes and 13 of 14 fails agree, 330 of 1000 judged pass: the old percentile
    bootstrap said 0.278 [0.133, 0.353]. Six passes are too few to know the sensitivity
    (exact interval [0.54, 1]), so the corrected rate is refused; the interval itself, asked
    for anyway, is half as wide again."""
    cal = calibrate_judge([True] * 6 + [False] * 14, [True] * 6 + [True] + [False] * 13)
    assert cal.better_than_chance
    with pytest.raises(WorkbenchError, match=f"fewer than {SMALL_N} on a side"):
        corrected_pass_rate(cal, [True] * 330 + [False] * 670)
    low, high = rogan_gladen_interval((330, 1000), (6, 6), (13, 14))
    assert low < 0.1 and high > 0.44 and high - low > 1.5 * (0.353 - 0.133)


def test_bad_counts_are_refused():
    for bad in (((5, 0), (1, 2), (1, 2)), ((5, 4), (1, 2), (1, 2)), ((1, 2), (-1, 2), (1, 2))):
        with pytest.raises(WorkbenchError, match="successes"):
            rogan_gladen_interval(*bad)
    with pytest.raises(WorkbenchError, match="confidence"):
        rogan_gladen_interval((1, 2), (1, 2), (1, 2), confidence=1.0)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 400), st.data())
def test_the_interval_holds_the_estimate_and_stays_in_the_unit_interval(n, data):
    k = data.draw(st.integers(0, n))
    pos, neg = data.draw(st.integers(1, 100)), data.draw(st.integers(1, 100))
    tp, tn = data.draw(st.integers(0, pos)), data.draw(st.integers(0, neg))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        low, high = rogan_gladen_interval((k, n), (tp, pos), (tn, neg))
        estimate = rogan_gladen(k / n, tp / pos, tn / neg)
    assert 0.0 <= low <= high <= 1.0
    if not np.isnan(estimate):
        assert low <= estimate <= high


def _clopper_pearson_low(successes: np.ndarray, n: np.ndarray) -> np.ndarray:
    return np.where(successes > 0,
                    special.betaincinv(np.maximum(successes, 1), n - successes + 1, 0.025), 0.0)


def simulate(reps: int, seed: int = 0):
    """Per cell (judge, calibration size, judged size, true rate): the coverage of the
    reported intervals, the fraction reported, and a sample of studies to check against the
    shipped function. Vectorised over the ``reps`` studies of a cell."""
    rng = np.random.default_rng(seed)
    cells, samples = [], []
    for se, sp in JUDGES:
        for m in CALIBRATION:
            for n in JUDGED:
                for rate in RATES:
                    pos = rng.binomial(m, rate, reps)
                    neg = m - pos
                    tp, tn = rng.binomial(pos, se), rng.binomial(neg, sp)
                    k = rng.binomial(n, rate * se + (1 - rate) * (1 - sp), reps)
                    p1, n1 = np.maximum(pos, 1), np.maximum(neg, 1)
                    chance = _clopper_pearson_low(tp, p1) + _clopper_pearson_low(tn, n1) <= 1.0
                    reported = ~chance & (pos >= SMALL_N) & (neg >= SMALL_N)
                    low, high = rogan_gladen_interval((k, np.full(reps, n)), (tp, p1), (tn, n1))
                    hit = (low <= rate) & (rate <= high)
                    cells.append({"se": se, "sp": sp, "m": m, "n": n, "rate": rate,
                                  "reported": float(reported.mean()),
                                  "coverage": float(hit[reported].mean()) if reported.any()
                                  else float("nan"),
                                  "wrong": float((reported & ~hit).mean())})
                    i = int(rng.integers(reps))
                    samples.append((int(pos[i]), int(tp[i]), int(tn[i]), m, int(k[i]), n,
                                    bool(reported[i]), float(low[i]), float(high[i])))
    return cells, samples


def table(cells) -> str:
    """Markdown: one row per judge and judged size, one column per calibration size; each
    cell the lowest coverage over the true rates where intervals are reported in at least
    10% of studies, and (in brackets) the share of studies reported, averaged over rates."""
    head = ("| judge Se/Sp | judged | " + " | ".join(f"calibrated on {m}" for m in CALIBRATION)
            + " |\n|---|---|" + "---|" * len(CALIBRATION))
    rows = [head]
    for se, sp in JUDGES:
        for n in JUDGED:
            out = []
            for m in CALIBRATION:
                group = [c for c in cells if (c["se"], c["sp"], c["m"], c["n"]) == (se, sp, m, n)]
                shown = [c["coverage"] for c in group if c["reported"] >= 0.1]
                share = np.mean([c["reported"] for c in group])
                out.append(f"{min(shown):.3f} ({share:.0%})" if shown else f"- ({share:.0%})")
            rows.append(f"| {se}/{sp} | {n} | " + " | ".join(out) + " |")
    return "\n".join(rows)


def _check(cells, samples):
    # the simulated procedure is the shipped one
    for pos, tp, tn, m, k, n, reported, low, high in samples:
        if pos in (0, m):
            continue
        human = [True] * pos + [False] * (m - pos)
        judged = [True] * tp + [False] * (pos - tp) + [False] * tn + [True] * (m - pos - tn)
        cal = calibrate_judge(human, judged)
        try:
            got = corrected_pass_rate(cal, [True] * k + [False] * (n - k))
        except WorkbenchError:
            assert not reported
            continue
        assert reported and got.ci == pytest.approx((low, high), abs=1e-12)
    worst = min(c["coverage"] for c in cells if c["reported"] >= 0.1)
    assert worst >= 0.93, table(cells)
    # where it rarely reports, it is rarely wrong: a false interval in at most 7% of studies
    assert max(c["wrong"] for c in cells) <= 0.07, table(cells)
    return worst


def test_the_corrected_interval_covers_wherever_it_reports(capsys):
    cells, samples = simulate(reps=2000)
    worst = _check(cells, samples)
    with capsys.disabled():
        print(f"\nworst coverage {worst:.3f} (2000 studies a cell)\n{table(cells)}")


@pytest.mark.slow
def test_the_corrected_interval_covers_with_many_studies(capsys):
    cells, samples = simulate(reps=20000, seed=1)
    worst = _check(cells, samples)
    with capsys.disabled():
        print(f"\nworst coverage {worst:.3f} (20000 studies a cell)\n{table(cells)}")
