"""The statistics modules' documented rules at their edges, each against the rule itself:
the quadratic kappa weights' formula, the small-sample cut, and ``questions_needed`` as the
smallest size whose minimal detectable difference reaches the asked one."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.stats import (
    SMALL_N,
    cohen_kappa,
    is_small_sample,
    minimal_detectable_difference,
    questions_needed,
)
from workbench.stats.kappa import kappa_weights


@given(st.integers(1, 12))
def test_kappa_weights_are_the_documented_formula(k):
    quadratic = kappa_weights(k, "quadratic")
    plain = kappa_weights(k, "none")
    for i in range(k):
        for j in range(k):
            assert quadratic[i, j] == (i - j) ** 2 / max(k - 1, 1) ** 2
            assert plain[i, j] == float(i != j)
    if k > 1:  # the farthest categories weigh 1, like a plain disagreement
        assert quadratic[0, k - 1] == quadratic[k - 1, 0] == 1.0


@given(st.lists(st.tuples(st.sampled_from("abcd"), st.sampled_from("abcde")), min_size=1,
                max_size=30))
def test_unweighted_kappa_needs_no_categories_whoever_used_a_label(pairs):
    """Without ``categories`` the labels of both raters are the categories: the same kappa as
    with every label listed (in any order), a label only one rater used included."""
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    listed = cohen_kappa(a, b, categories=sorted({*a, *b}, reverse=True))
    got = cohen_kappa(a, b)
    assert got == listed or (math.isnan(got) and math.isnan(listed)) \
        or math.isclose(got, listed, abs_tol=1e-12)


def test_small_sample_is_fewer_than_small_n():
    for n in range(3 * SMALL_N):
        assert is_small_sample(n) == (n < SMALL_N)


@settings(max_examples=300)
@given(n=st.integers(1, 5000), alpha=st.sampled_from([0.01, 0.05, 0.1]),
       power=st.sampled_from([0.8, 0.9]),
       disc=st.one_of(st.none(), st.floats(0.01, 1.0)),
       rate=st.floats(0.05, 0.95))
def test_questions_needed_is_the_smallest_n_that_detects_the_difference(n, alpha, power, disc,
                                                                          rate):
    kw = {"alpha": alpha, "power": power, "paired_discordance": disc}
    # the difference n questions detect exactly: n itself must be the answer
    difference = minimal_detectable_difference(n, rate, **kw)
    got = questions_needed(difference, rate, **kw)
    assert got == n
    # and any other difference: the smallest size whose MDD falls to it (within float error)
    other = difference * 1.37
    need = questions_needed(other, rate, **kw)
    assert minimal_detectable_difference(need, rate, **kw) <= other * (1 + 1e-12)
    assert need == 1 or minimal_detectable_difference(need - 1, rate, **kw) > other
