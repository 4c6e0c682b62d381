"""The one kappa (workbench.stats.kappa): by hand, equal to scikit-learn's wherever that is
defined (unweighted and quadratic), and the one documented answer, NaN, where it is not (no
items, or one and the same category from both raters), without a numpy warning."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.stats import cohen_kappa
from workbench.stats.kappa import UNDEFINED, kappa_codes, kappa_matrix, kappa_weights

sklearn_metrics = pytest.importorskip("sklearn.metrics")


def test_kappa_by_hand():
    # 2x2 table [[20, 5], [10, 15]] (Cohen's classic layout): p_o = 0.7, p_e = 0.5
    a = ["y"] * 25 + ["n"] * 25
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa(["a", "b"], ["b", "a"]) == -1.0
    assert cohen_kappa(["a", "b", "a"], ["a", "b", "a"]) == 1.0
    assert cohen_kappa([True] * 3 + [False], [True] * 4) == 0.0  # one rater constant: 0
    with pytest.raises(ValueError, match="3 labels against 2"):
        cohen_kappa([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="ordered categories"):
        cohen_kappa([1, 2], [2, 1], weights="quadratic")
    with pytest.raises(ValueError, match="weights must be"):
        cohen_kappa([1, 2], [2, 1], (1, 2), weights="linear")


@pytest.mark.parametrize("weights", ["none", "quadratic"])
@pytest.mark.parametrize(("a", "b"), [([], []), ([3], [3]), ([2, 2, 2], [2, 2, 2])])
def test_undefined_kappa_is_nan_without_a_warning(a, b, weights):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cohen_kappa(a, b, (1, 2, 3), weights) is UNDEFINED or math.isnan(
            cohen_kappa(a, b, (1, 2, 3), weights))
        x, y, k = kappa_codes(a, b, (1, 2, 3))
        assert np.isnan(kappa_matrix(x, y, k, kappa_weights(k, weights))).all()


LABELS = st.lists(st.tuples(st.integers(1, 4), st.integers(1, 4)), max_size=30)


@settings(max_examples=200, deadline=None)
@given(LABELS, st.sampled_from(["none", "quadratic"]))
def test_kappa_is_sklearns_where_defined_and_nan_exactly_where_not(pairs, weights):
    a, b = [p for p, _ in pairs], [q for _, q in pairs]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy warning reaches the user
        ours = cohen_kappa(a, b, (1, 2, 3, 4), weights)
    undefined = not pairs or (len(set(a)) == len(set(b)) == 1 and a[0] == b[0])
    assert math.isnan(ours) == undefined
    if undefined:
        return
    assert -1.0 - 1e-12 <= ours <= 1.0 + 1e-12
    theirs = sklearn_metrics.cohen_kappa_score(
        a, b, labels=[1, 2, 3, 4], weights=None if weights == "none" else "quadratic")
    assert ours == pytest.approx(theirs, abs=1e-9)
    swapped = cohen_kappa(b, a, (1, 2, 3, 4), weights)
    assert swapped == pytest.approx(ours, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)), min_size=1, max_size=20),
       st.integers(1, 6))
def test_the_matrix_form_is_the_kappa_of_each_row(pairs, rows):
    """kappa_matrix on stacked resamples equals cohen_kappa on each resample."""
    x = np.array([p for p, _ in pairs])
    y = np.array([q for _, q in pairs])
    idx = np.random.default_rng(rows).integers(0, len(pairs), size=(rows, len(pairs)))
    for weights in ("none", "quadratic"):
        got = kappa_matrix(x[idx], y[idx], 3, kappa_weights(3, weights))
        want = [cohen_kappa(list(x[i]), list(y[i]), (0, 1, 2), weights) for i in idx]
        np.testing.assert_allclose(got, want, equal_nan=True, atol=1e-12)
