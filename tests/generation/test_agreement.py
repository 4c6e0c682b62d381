"""A judge's ratings against a person's: weighted kappa (the stats kappa, as sklearn) and
agreement intervals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from workbench.generation.agreement import rating_agreement
from workbench.generation.calibration import calibrate_judge
from workbench.stats import clopper_pearson, cohen_kappa

RATINGS = st.integers(1, 5)
VARIED = st.lists(RATINGS, min_size=2, max_size=40).filter(lambda r: len(set(r)) > 1)


@settings(max_examples=80)
@given(VARIED)
def test_a_judge_that_copies_the_person_has_kappa_one(person):
    got = rating_agreement(person, person, resamples=300)
    assert got.kappa == pytest.approx(1.0)
    assert got.exact == got.within_one == 1.0
    assert got.exact_ci == clopper_pearson(len(person), len(person))


@settings(max_examples=80)
@given(VARIED, RATINGS)
def test_a_constant_judge_has_kappa_zero_and_is_not_above_chance(person, constant):
    got = rating_agreement(person, [constant] * len(person), resamples=300)
    assert got.kappa == pytest.approx(0.0, abs=1e-12)
    assert not got.better_than_chance


@pytest.mark.parametrize(("person", "judged"), [([3, 3, 3, 3], [3, 3, 3, 3]), ([5], [5])])
def test_kappa_is_undefined_when_both_used_one_and_the_same_category(person, judged):
    got = rating_agreement(person, judged, resamples=200)
    assert math.isnan(got.kappa) and not got.better_than_chance
    assert got.kappa_ci == (0.0, 1.0)  # nothing measured: the widest interval
    assert "kappa undefined" in got.summary()


@pytest.mark.parametrize(("person", "judged"), [([3, 3, 3, 3], [1, 5, 2, 4]), ([2], [4])])
def test_a_person_with_one_category_gives_kappa_zero_as_sklearn(person, judged):
    """The one convention (workbench.stats.kappa): only one rater constant is chance, 0."""
    got = rating_agreement(person, judged, resamples=200)
    assert got.kappa == 0.0 == cohen_kappa_score(person, judged, weights="quadratic",
                                                 labels=[1, 2, 3, 4, 5])
    assert got.kappa_ci[0] <= 0.0 and not got.better_than_chance


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(RATINGS, RATINGS), min_size=1, max_size=20))
def test_rating_agreement_reports_the_stats_kappa_without_warnings(pairs):
    """rating_agreement's kappa is cohen_kappa's (NaN included), and no resample, however
    degenerate, prints a numpy warning."""
    import warnings

    person, judged = [p for p, _ in pairs], [j for _, j in pairs]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = rating_agreement(person, judged, resamples=100)
    want = cohen_kappa(person, judged, (1, 2, 3, 4, 5), "quadratic")
    assert (math.isnan(got.kappa) and math.isnan(want)) or got.kappa == want
    low, high = got.kappa_ci
    assert low <= high and (math.isnan(want) or low <= want <= high)


@settings(max_examples=60)
@given(st.lists(st.tuples(RATINGS, RATINGS), min_size=2, max_size=40), st.randoms())
def test_permuting_items_changes_no_point_estimate(pairs, rnd):
    shuffled = list(pairs)
    rnd.shuffle(shuffled)
    a = rating_agreement([p for p, _ in pairs], [j for _, j in pairs], resamples=200)
    b = rating_agreement([p for p, _ in shuffled], [j for _, j in shuffled], resamples=200)
    assert a.n == b.n and a.exact == b.exact and a.within_one == b.within_one
    assert a.exact_ci == b.exact_ci and a.within_one_ci == b.within_one_ci
    assert (math.isnan(a.kappa) and math.isnan(b.kappa)) or a.kappa == pytest.approx(b.kappa)


@settings(max_examples=60)
@given(st.lists(st.tuples(RATINGS, RATINGS), min_size=2, max_size=40))
def test_calibrations_kappa_is_sklearns(pairs):
    person, judged = [p for p, _ in pairs], [j for _, j in pairs]
    human, verdict = [p >= 3 for p in person], [j >= 3 for j in judged]
    if 0 < sum(human) < len(human):
        assert calibrate_judge(human, verdict).kappa == pytest.approx(
            cohen_kappa_score(human, verdict), abs=1e-9)


@pytest.mark.parametrize("person", [[1, 3, 5], [2, 4, 5], [1, 2, 3]])
def test_three_items_never_give_a_narrow_interval(person):
    got = rating_agreement(person, person)
    assert got.kappa == pytest.approx(1.0)
    assert got.kappa_ci != (1.0, 1.0) and got.kappa_ci[0] <= 0.0
    assert not got.better_than_chance
    assert got.exact_ci[0] < 0.5  # three of three is weak evidence


def test_more_items_narrow_the_interval_and_the_seed_fixes_it():
    rng = np.random.default_rng(4)
    def noisy(n):
        person = rng.integers(1, 6, n)
        return person, np.clip(person + rng.integers(-1, 2, n), 1, 5)
    small, large = [rating_agreement(*noisy(n), seed=1) for n in (8, 400)]
    width = [a.kappa_ci[1] - a.kappa_ci[0] for a in (small, large)]
    assert width[1] < width[0] / 3
    assert large.better_than_chance and large.kappa_ci[0] <= large.kappa <= large.kappa_ci[1]
    p, j = noisy(30)
    assert rating_agreement(p, j, seed=5) == rating_agreement(p, j, seed=5)


def test_bad_ratings_are_refused():
    with pytest.raises(ValueError, match="outside the categories"):
        rating_agreement([1, 6], [1, 2])
    with pytest.raises(ValueError, match="2 labels against 1"):
        rating_agreement([1, 2], [1])
    with pytest.raises(ValueError, match="at least one item"):
        rating_agreement([], [])


@settings(max_examples=80)
@given(st.lists(st.tuples(RATINGS, RATINGS), min_size=1, max_size=3))
def test_a_handful_of_items_never_gives_a_narrow_kappa_interval(pairs):
    """One to three items, whatever they are (the same score throughout on one side
    included: its kappa is 0 by convention, but no resample of it measures agreement), give
    an interval that reaches chance and spans at least half of [0, 1]; never a judge shown
    to beat chance."""
    got = rating_agreement([p for p, _ in pairs], [j for _, j in pairs], resamples=300)
    low, high = got.kappa_ci
    assert low <= 0.0 and high - low >= 0.5 and not got.better_than_chance
