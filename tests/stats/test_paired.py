"""Paired statistics for small golden sets (workbench.stats)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from workbench.stats import (
    EXACT_MAX,
    PairedComparison,
    bootstrap_ci,
    compare_many,
    compare_paired,
    comparison_table,
    format_p,
    holm,
    mcnemar_exact,
    minimal_detectable_difference,
    one_question,
    paired_bootstrap_ci,
    paired_permutation_test,
    questions_needed,
)


def _scipy_paired(a, b, n_resamples, alternative="two-sided", seed=1):
    def mean_diff(x, y, axis):
        return np.mean(y - x, axis=axis)

    res = sps.permutation_test(
        (np.asarray(a, float), np.asarray(b, float)),
        mean_diff,
        permutation_type="samples",
        vectorized=True,
        n_resamples=n_resamples,
        alternative=alternative,
        rng=np.random.default_rng(seed),
    )
    return float(res.pvalue)


def _fixed_scores(n=40, shift=0.03, seed=7):
    rng = np.random.default_rng(seed)
    a = np.round(rng.random(n), 3)
    b = np.round(np.clip(a + rng.normal(shift, 0.15, n), 0, 1), 3)
    return a, b


# ------------------------------------------------------------------ permutation test


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_permutation_matches_scipy_monte_carlo(alternative):
    a, b = _fixed_scores()
    assert np.count_nonzero(a != b) > EXACT_MAX  # Monte Carlo branch
    R = 20_000
    ours = paired_permutation_test(a, b, resamples=R, seed=0, alternative=alternative)
    theirs = _scipy_paired(a, b, n_resamples=R, alternative=alternative)
    # both are Monte Carlo estimates of the same p: allow 4 standard errors of the difference
    se = math.sqrt(2 * max(theirs, 1e-3) * (1 - theirs) / R)
    assert abs(ours - theirs) <= 4 * se + 2 / R
    if alternative == "two-sided":
        assert 0.02 < ours < 0.2  # the data were built to sit in the interesting range


def test_permutation_exact_matches_scipy_exact():
    a, b = _fixed_scores(n=12, shift=0.1, seed=3)
    # scipy enumerates all 2**12 pairings when n_resamples >= 2**n
    ours = paired_permutation_test(a, b)
    theirs = _scipy_paired(a, b, n_resamples=10**6)
    assert ours == pytest.approx(theirs, abs=1e-12)


def test_permutation_exact_matches_brute_force():
    a = [0.2, 0.5, 0.0, 1.0, 0.3, 0.7]
    b = [0.6, 0.5, 0.5, 0.9, 0.8, 1.0]  # one tie (0.5, 0.5)
    d = np.subtract(b, a)
    observed = d.mean()
    flips = [np.mean(np.array(s) * d) for s in itertools.product([-1, 1], repeat=d.size)]
    tol = 1e-12
    two = np.mean([abs(t) >= abs(observed) - tol for t in flips])
    greater = np.mean([t >= observed - tol for t in flips])
    less = np.mean([t <= observed + tol for t in flips])
    assert paired_permutation_test(a, b) == pytest.approx(two)
    assert paired_permutation_test(a, b, alternative="greater") == pytest.approx(greater)
    assert paired_permutation_test(a, b, alternative="less") == pytest.approx(less)
    assert two == pytest.approx(4 / 32)  # brute force over 6 signs: sanity of the example


def test_permutation_monte_carlo_has_plus_one_correction():
    a = np.zeros(40)
    b = np.ones(40)  # every sign flip gives a smaller |mean|: count = 0
    assert paired_permutation_test(a, b, resamples=999) == pytest.approx(1 / 1000)


def test_permutation_no_difference_and_validation():
    assert paired_permutation_test([0.3, 0.4], [0.3, 0.4]) == 1.0
    with pytest.raises(ValueError, match="length"):
        paired_permutation_test([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="alternative"):
        paired_permutation_test([1, 2], [2, 3], alternative="bigger")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="NaN"):
        paired_permutation_test([1, float("nan")], [2, 3])


def test_permutation_on_binary_equals_mcnemar():
    rng = np.random.default_rng(11)
    checked = 0
    for _ in range(100):
        a, b = rng.integers(0, 2, 50), rng.integers(0, 2, 50)
        a[:30] = b[:30]  # keep the discordant count within exact enumeration
        if np.count_nonzero(a != b) <= EXACT_MAX:
            assert paired_permutation_test(a, b) == pytest.approx(mcnemar_exact(a, b).p_value)
            checked += 1
    assert checked > 20


# ---------------------------------------------------------------------------- McNemar


def test_mcnemar_hand_counts_vs_binomtest():
    a = [0] * 9 + [1] * 2 + [1] * 30 + [0] * 19
    b = [1] * 9 + [0] * 2 + [1] * 30 + [0] * 19
    res = mcnemar_exact(a, b)
    assert (res.b_only, res.a_only, res.discordant) == (9, 2, 11)
    assert res.p_value == pytest.approx(0.0654296875)
    assert res.p_value == pytest.approx(sps.binomtest(9, 11, 0.5).pvalue)
    for b_only, a_only in [(10, 0), (3, 4), (0, 1), (12, 5), (7, 7)]:
        x = [0] * b_only + [1] * a_only
        y = [1] * b_only + [0] * a_only
        expected = sps.binomtest(b_only, b_only + a_only, 0.5).pvalue
        assert mcnemar_exact(x, y).p_value == pytest.approx(expected)


def test_mcnemar_no_discordant_pairs_and_validation():
    res = mcnemar_exact([1, 0, 1], [1, 0, 1])
    assert (res.b_only, res.a_only, res.p_value) == (0, 0, 1.0)
    assert mcnemar_exact([True, False], [False, True]).p_value == 1.0
    with pytest.raises(ValueError, match="0/1"):
        mcnemar_exact([0.5, 1], [1, 1])


# ------------------------------------------------------------------------------- Holm


def test_holm_hand_example():
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm([]) == []
    with pytest.raises(ValueError):
        holm([0.1, 1.5])


def test_holm_vs_statsmodels():
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    p = [0.001, 0.2, 0.04, 0.04, 0.015, 0.9, 0.03]
    expected = multitest.multipletests(p, method="holm")[1]
    assert holm(p) == pytest.approx(list(expected))


@given(st.lists(st.floats(0, 1), min_size=1, max_size=12))
def test_holm_properties(p):
    adj = holm(p)
    assert all(0 <= x <= 1 for x in adj)
    assert all(x >= raw - 1e-15 for x, raw in zip(adj, p, strict=True))
    order = np.argsort(p, kind="stable")
    assert np.all(np.diff(np.asarray(adj)[order]) >= -1e-15)  # monotone in the raw p-values


# -------------------------------------------------------------------------- bootstrap


def test_bootstrap_coverage_bernoulli():
    rng = np.random.default_rng(2024)
    sims, covered = 300, 0
    for i in range(sims):
        x = (rng.random(60) < 0.7).astype(float)
        low, high = bootstrap_ci(x, resamples=1000, seed=i)
        covered += low <= 0.7 <= high
    assert 0.90 <= covered / sims <= 0.98


def test_bootstrap_basics():
    assert bootstrap_ci([0.4]) == (0.4, 0.4)
    x = np.linspace(0, 1, 50)
    low, high = bootstrap_ci(x, seed=3)
    assert low < x.mean() < high
    assert bootstrap_ci(x, seed=3) == (low, high)  # seeded
    narrow = bootstrap_ci(x, confidence=0.5, seed=3)
    assert low < narrow[0] < narrow[1] < high
    with pytest.raises(ValueError, match="empty"):
        bootstrap_ci([])
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci(x, confidence=95)


def test_paired_bootstrap_uses_pairs():
    a = np.linspace(0, 1, 40)
    b = a + 0.1  # the same shift on every question: no spread in the difference
    assert paired_bootstrap_ci(a, b) == pytest.approx((0.1, 0.1))


# ------------------------------------------------------------------ detectable change


def test_mdd_formula_and_numbers():
    z = sps.norm.ppf(0.975) + sps.norm.ppf(0.8)
    for n in (50, 60, 100):
        assert minimal_detectable_difference(n) == pytest.approx(z * math.sqrt(0.42 / n))
    # documented magnitudes: 25.7 / 23.4 / 18.2 points with the independent-systems default
    assert minimal_detectable_difference(50) == pytest.approx(0.2568, abs=5e-4)
    assert minimal_detectable_difference(60) == pytest.approx(0.2344, abs=5e-4)
    assert minimal_detectable_difference(100) == pytest.approx(0.1816, abs=5e-4)
    assert minimal_detectable_difference(50, paired_discordance=0.2) == pytest.approx(
        0.1772, abs=5e-4
    )


def test_mdd_vs_one_question():
    assert one_question(50) == pytest.approx(0.02)  # one question is 2 points at n=50
    mdd = [minimal_detectable_difference(n) for n in (20, 50, 60, 100, 400)]
    assert all(x > y for x, y in itertools.pairwise(mdd))
    # far above one question, and above a 5-point CI tolerance, even for related configs
    assert minimal_detectable_difference(50) > 10 * one_question(50)
    assert minimal_detectable_difference(50, paired_discordance=0.1) > 0.05
    assert minimal_detectable_difference(50, power=0.9) > minimal_detectable_difference(50)
    assert minimal_detectable_difference(50, alpha=0.01) > minimal_detectable_difference(50)
    with pytest.raises(ValueError):
        minimal_detectable_difference(0)
    with pytest.raises(ValueError):
        minimal_detectable_difference(50, baseline_rate=1.0)


def test_questions_needed_inverts_mdd():
    for d in (0.05, 0.1, 0.2):
        n = questions_needed(d, paired_discordance=0.15)
        assert minimal_detectable_difference(n, paired_discordance=0.15) <= d
        assert minimal_detectable_difference(n - 1, paired_discordance=0.15) > d


def test_mdd_has_roughly_the_stated_power():
    """Simulate McNemar's exact test at the MDD: power should be close to the nominal 80 %."""
    rng = np.random.default_rng(5)
    n, disc = 100, 0.42
    delta = minimal_detectable_difference(n, paired_discordance=disc)
    probs = [(disc + delta) / 2, (disc - delta) / 2, 1 - disc]  # gained, lost, unchanged
    counts = rng.multinomial(n, probs, size=4000)
    gained, lost = counts[:, 0], counts[:, 1]
    p = np.minimum(1, 2 * sps.binom.cdf(np.minimum(gained, lost), gained + lost, 0.5))
    power = float(np.mean(p < 0.05))
    assert 0.7 < power < 0.9  # exact McNemar is slightly conservative (about 0.78)


# ------------------------------------------------------------------------- comparison


def _hits(n_hit, n=60, prefix="q"):
    return {f"{prefix}{i:02d}": float(i < n_hit) for i in range(n)}


def test_compare_regression_of_ten_questions_is_worse():
    base = _hits(42)  # 0.70
    cand = dict(base)
    for i in range(10):
        cand[f"q{i:02d}"] = 0.0  # ten questions lost
    res = compare_paired(base, cand)
    assert res.test == "mcnemar-exact"
    assert res.n == 60
    assert res.delta == pytest.approx(-10 / 60)
    assert res.p_value == pytest.approx(2 * 0.5**10)
    assert res.verdict == "worse"
    assert (res.wins, res.losses, res.ties) == (0, 10, 50)
    assert res.lost == tuple(f"q{i:02d}" for i in range(10))
    assert res.gained == ()
    assert res.ci[1] < 0
    assert res.discordance == pytest.approx(10 / 60)
    assert "worse" in res.summary()


def test_compare_one_question_wobble_cannot_tell():
    base = _hits(42)
    cand = dict(base)
    cand["q50"] = 1.0
    res = compare_paired(base, cand)
    assert res.verdict == "can't tell with n=60"
    assert res.p_value == 1.0
    assert res.gained == ("q50",) and res.lost == ()
    assert res.ci[0] <= 0 <= res.ci[1]


def test_compare_gain_is_better_and_flips_have_direction():
    base = _hits(30)
    cand = dict(base)
    for q in ("q40", "q41", "q42", "q43", "q44", "q45", "q46", "q47", "q48", "q49"):
        cand[q] = 1.0
    cand["q05"] = 0.0
    res = compare_paired(base, cand)
    assert res.verdict == "better"
    assert [(f.qid, f.direction) for f in res.flipped][:2] == [("q05", "lost"), ("q40", "gained")]
    assert len(res.flipped) == 11 == res.wins + res.losses
    assert res.p_value == pytest.approx(sps.binomtest(10, 11, 0.5).pvalue)


def test_compare_continuous_uses_permutation():
    a, b = _fixed_scores(n=60, shift=0.12, seed=1)
    base = {f"q{i}": float(x) for i, x in enumerate(a)}
    cand = {f"q{i}": float(y) for i, y in enumerate(b)}
    res = compare_paired(base, cand)
    assert res.test == "permutation"
    assert res.p_value == pytest.approx(paired_permutation_test(
        [base[q] for q in sorted(base)], [cand[q] for q in sorted(base)]))
    assert res.verdict == "better"
    forced = compare_paired(_hits(42), _hits(40), binary=False)
    assert forced.test == "permutation"
    with pytest.raises(ValueError, match="0/1"):
        compare_paired(base, cand, binary=True)


def test_compare_qid_mismatch_names_missing():
    base = _hits(42)
    cand = dict(base)
    del cand["q07"]
    cand["extra"] = 1.0
    with pytest.raises(ValueError, match=r"missing from candidate: 1 \('q07'\)") as err:
        compare_paired(base, cand)
    assert "missing from baseline: 1 ('extra')" in str(err.value)
    with pytest.raises(ValueError, match="no questions"):
        compare_paired({}, {})


def test_compare_is_independent_of_dict_order():
    a, b = _fixed_scores(n=30, seed=4)
    base = {f"q{i}": float(x) for i, x in enumerate(a)}
    cand = {f"q{i}": float(y) for i, y in reversed(list(enumerate(b)))}
    r1 = compare_paired(base, cand)
    r2 = compare_paired(dict(reversed(base.items())), cand)
    assert (r1.p_value, r1.ci) == (r2.p_value, r2.ci)


def test_compare_many_applies_holm():
    base = _hits(42)
    small = dict(base)
    for i in range(6):
        small[f"q{i:02d}"] = 0.0  # 6 lost: raw p = 0.03125, significant alone
    big = dict(base)
    for i in range(12):
        big[f"q{i:02d}"] = 0.0
    same = dict(base)
    results = compare_many(base, {"small": small, "big": big, "same": same})
    assert [r.name for r in results] == ["small", "big", "same"]
    assert compare_paired(base, small).verdict == "worse"
    raw = [r.p_value for r in results]
    assert [r.p_adjusted for r in results] == pytest.approx(holm(raw))
    assert [r.verdict for r in results] == ["can't tell with n=60", "worse", "can't tell with n=60"]
    assert all(r.correction == "holm" for r in results)
    table = comparison_table(results)
    assert list(table.index) == ["small", "big", "same"]
    assert table.loc["big", "verdict"] == "worse"
    assert table.loc["small", "p_adjusted"] == pytest.approx(results[0].p_adjusted)


def test_paired_comparison_default_adjusted_equals_raw():
    res = compare_paired(_hits(42), _hits(41))
    assert isinstance(res, PairedComparison)
    assert res.p_adjusted == res.p_value and res.correction is None


# ------------------------------------------------------------------------- properties

scores = st.lists(
    st.tuples(st.floats(0, 1, allow_nan=False), st.floats(0, 1, allow_nan=False)),
    min_size=1,
    max_size=40,
)
binary_pairs = st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=1, max_size=80)


@settings(max_examples=60, deadline=None)
@given(scores, st.sampled_from(["two-sided", "greater", "less"]))
def test_permutation_p_in_unit_interval(pairs, alternative):
    a, b = zip(*pairs, strict=True)
    p = paired_permutation_test(a, b, resamples=500, alternative=alternative)
    assert 0 < p <= 1


@settings(max_examples=60, deadline=None)
@given(binary_pairs)
def test_mcnemar_p_in_unit_interval_and_symmetric(pairs):
    a, b = zip(*pairs, strict=True)
    res, swapped = mcnemar_exact(a, b), mcnemar_exact(b, a)
    assert 0 < res.p_value <= 1
    assert (swapped.b_only, swapped.a_only) == (res.a_only, res.b_only)
    assert swapped.p_value == res.p_value


@settings(max_examples=40, deadline=None)
@given(st.one_of(scores, binary_pairs.map(lambda ps: [(float(x), float(y)) for x, y in ps])))
def test_swapping_flips_delta_and_keeps_p(pairs):
    base = {f"q{i}": x for i, (x, _) in enumerate(pairs)}
    cand = {f"q{i}": y for i, (_, y) in enumerate(pairs)}
    fwd = compare_paired(base, cand, resamples=500, bootstrap_resamples=200)
    back = compare_paired(cand, base, resamples=500, bootstrap_resamples=200)
    assert 0 < fwd.p_value <= 1
    assert back.delta == pytest.approx(-fwd.delta, abs=1e-12)
    assert back.p_value == pytest.approx(fwd.p_value)
    assert back.ci == pytest.approx((-fwd.ci[1], -fwd.ci[0]), abs=1e-9)
    assert (back.wins, back.losses, back.ties) == (fwd.losses, fwd.wins, fwd.ties)
    flipped = {"better": "worse", "worse": "better"}
    assert back.verdict == flipped.get(fwd.verdict, fwd.verdict)


@given(st.floats(min_value=0.0, max_value=1.0))
def test_format_p_never_prints_a_p_value_as_zero_or_in_scientific_notation(p: float) -> None:
    """``p < 0.001`` below a thousandth, three decimals otherwise: never ``p = 0.000`` (a
    p-value is never zero), never ``8e-06``, and the printed value rounds the true one."""
    text = format_p(p)
    assert "e" not in text and text != "p = 0.000"
    if p < 0.001:
        assert text == "p < 0.001"
    else:
        assert abs(float(text.removeprefix("p = ")) - p) <= 0.0005 + 1e-12


def test_a_comparison_shows_people_a_sentence_not_a_dataclass_repr() -> None:
    a = {i: 0.0 for i in range(40)}
    b = {i: 1.0 if i < 30 else 0.0 for i in range(40)}
    html = compare_paired(a, b, name="fixed")._repr_html_()
    assert html.startswith("<p>fixed: 0.750 vs baseline 0.000") and "p &lt; 0.001" in html
    assert "PairedComparison(" not in html and "0.7500000" not in html
    assert format_p(float("nan")) == "p = n/a"


@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_clopper_pearson_equals_statsmodels_beta_interval(confidence):
    """Clopper-Pearson (1934) is statsmodels' ``proportion_confint(method="beta")``: every
    count of every n up to 40, two-sided at the confidence given."""
    from workbench.stats import clopper_pearson

    proportion = pytest.importorskip("statsmodels.stats.proportion")
    for n in range(1, 41):
        for x in range(n + 1):
            low, high = proportion.proportion_confint(x, n, alpha=1 - confidence,
                                                      method="beta")
            got = clopper_pearson(x, n, confidence)
            assert got == pytest.approx((low, high), abs=1e-12), (x, n, confidence)
    assert clopper_pearson(2, 2) == pytest.approx((0.158114, 1.0), abs=1e-6)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 30), p=st.floats(0.01, 0.99))
def test_clopper_pearson_covers_at_least_the_confidence(n, p):
    """Exact coverage, summed over every outcome of Binomial(n, p): never below 95%, and the
    0/1 values' mean_interval is the same interval."""
    from workbench.stats import clopper_pearson, mean_interval

    covered = sum(sps.binom.pmf(x, n, p) for x in range(n + 1)
                  if clopper_pearson(x, n)[0] <= p <= clopper_pearson(x, n)[1])
    assert covered >= 0.95 - 1e-9
    values = [1.0] * (n // 2) + [0.0] * (n - n // 2)
    assert mean_interval(values)[:2] == clopper_pearson(n // 2, n)
