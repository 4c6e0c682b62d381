"""What stats added for the rest of the package: one- and two-sided exact McNemar and sign
tests against scipy's binomial test (and the gate's one-sided rule on them), Wilson's
interval against statsmodels, and the one rule for undefined resamples."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from workbench.stats import mcnemar_exact, percentile_bounds, sign_test, wilson

ALTERNATIVES = ["two-sided", "greater", "less"]


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 60), st.integers(0, 60), st.sampled_from(ALTERNATIVES))
def test_sign_test_is_scipys_binomial_test(b, c, alternative):
    got = sign_test(b, c, alternative)
    if b + c == 0:
        assert got == 1.0
        return
    want = sps.binomtest(b, b + c, 0.5, alternative=alternative).pvalue
    assert got == pytest.approx(want, rel=1e-9, abs=1e-15)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=40),
       st.sampled_from(ALTERNATIVES))
def test_mcnemar_is_the_sign_test_of_the_flips_in_either_direction(pairs, alternative):
    a = [float(x) for x, _ in pairs]
    b = [float(y) for _, y in pairs]
    res = mcnemar_exact(a, b, alternative)
    assert res.p_value == sign_test(res.b_only, res.a_only, alternative)
    opposite = {"greater": "less", "less": "greater", "two-sided": "two-sided"}[alternative]
    assert mcnemar_exact(b, a, opposite).p_value == pytest.approx(res.p_value)


def test_the_gates_one_sided_rule_five_falls_and_none_up():
    """The gate fails a 0/1 metric on ``P(gains <= observed)``: 5 questions down and none up
    is 0.5 ** 5 = 0.031 < 0.05, 4 down is 0.0625."""
    for lost, p in ((5, 0.5 ** 5), (4, 0.5 ** 4)):
        a = [1.0] * lost + [0.0, 1.0]
        b = [0.0] * lost + [0.0, 1.0]
        assert mcnemar_exact(a, b, "less").p_value == pytest.approx(p)
    with pytest.raises(ValueError, match="alternative"):
        sign_test(1, 2, "lower")  # type: ignore[arg-type]


@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.99])
def test_wilson_equals_statsmodels(confidence):
    proportion = pytest.importorskip("statsmodels.stats.proportion")
    for n in (1, 7, 50, 400):
        for k in sorted({0, 1, n // 3, n - 1, n}):
            want = proportion.proportion_confint(k, n, alpha=1 - confidence, method="wilson")
            assert wilson(k, n, confidence) == pytest.approx(want, abs=1e-12)


def test_undefined_resamples_count_at_both_ends():
    values = np.array([0.5] * 90 + [np.nan] * 10)
    assert percentile_bounds(values, 0.95) == (0.0, 1.0)  # 10% undefined: past each tail
    assert percentile_bounds(values, 0.95, undefined=(-1.0, 1.0)) == (-1.0, 1.0)
    few = np.array([0.5] * 99 + [np.nan])  # 1% undefined: inside both tails
    assert percentile_bounds(few, 0.95) == (0.5, 0.5)
    assert percentile_bounds(np.full(5, np.nan), 0.95) == (0.0, 1.0)
    with pytest.raises(ValueError, match="at least one resample"):
        percentile_bounds(np.array([]))
    assert not math.isnan(percentile_bounds(np.array([0.3]))[0])
