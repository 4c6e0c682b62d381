"""When a span counts as found, against exact rational arithmetic: thresholds drawn from the
whole range (0, 1], not a few round values, through the rule (needed_characters) and through
both scorers that use it (the array batch behind Relevance.score and trace_ranking behind
found_ranks).

The rule (metrics/evidence.py): a span of ``size`` non-blank characters is found once
``covered >= max(1, ceil(threshold * size))``, the product read as the decimal the user wrote.
For a threshold of k/1000 the oracle is therefore exact: ``covered * 1000 >= k * size`` and
``covered >= 1``. For any other float the convention is a guard of 1e-9 character against
float error: found iff ``covered >= 1`` and ``covered >= t * size - 1e-9`` with ``t`` the
float's exact value; only where ``t * size`` lies within 1e-12 of ``covered + 1e-9`` can
float rounding decide, and those draws are left out.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from workbench.corpus import Chunk
from workbench.golden import Evidence, GoldenItem
from workbench.metrics import Relevance, parse_metric
from workbench.metrics.evidence import needed_characters

GUARD = Fraction(1e-9)
FLOATS = st.floats(0.0, 1.0, exclude_min=True)


@st.composite
def decimal_cases(draw, largest=3000):
    """(size, k): the threshold k / 1000; half the draws put ``k * size / 1000`` on a whole
    number, where float error in the product decides the answer unless guarded."""
    k = draw(st.integers(1, 1000))
    step = 1000 // math.gcd(k, 1000)
    if draw(st.booleans()) or step > largest:
        return draw(st.integers(1, largest)), k
    return step * draw(st.integers(1, largest // step)), k


@st.composite
def float_cases(draw, largest=3000):
    """(size, t): t anywhere in (0, 1], or within 1e-12 to 1e-5 character of a whole number
    of characters, either side (the 1e-9 guard lies in that range)."""
    size = draw(st.integers(1, largest))
    if draw(st.booleans()):
        return size, draw(FLOATS)
    whole = draw(st.integers(0, size))
    t = (whole + draw(st.sampled_from([-1, 1])) * 10 ** draw(st.floats(-12, -5))) / size
    assume(0 < t <= 1)
    return size, t


def _found_decimal(covered: int, size: int, k: int) -> bool:
    return covered >= 1 and covered * 1000 >= k * size


def _found_float(covered: int, size: int, t: float) -> bool:
    return covered >= 1 and covered >= Fraction(t) * size - GUARD


def _decided(covered: int, size: int, t: float) -> bool:
    """False where float rounding of ``t * size`` may decide the comparison."""
    return abs(Fraction(t) * size - GUARD - covered) > Fraction(1, 10**12)


@settings(max_examples=1000)
@given(decimal_cases())
def test_needed_characters_is_exact_for_decimal_thresholds(case):
    size, k = case
    (n,) = needed_characters(np.asarray([size]), k / 1000).tolist()
    assert _found_decimal(n, size, k) and not _found_decimal(n - 1, size, k), (size, k, n)


@settings(max_examples=1000)
@given(float_cases())
def test_needed_characters_over_the_whole_range(case):
    size, t = case
    (n,) = needed_characters(np.asarray([size]), t).tolist()
    assume(_decided(n, size, t) and _decided(n - 1, size, t))
    assert _found_float(n, size, t) and not _found_float(n - 1, size, t), (size, t, n)


def _near(size: int, boundary: int) -> st.SearchStrategy[int]:
    """Covered characters in 1..size, most often one either side of the boundary."""
    near = sorted({min(size, max(1, boundary + d)) for d in (-1, 0, 1)})
    return st.one_of(st.sampled_from(near), st.integers(1, size))


def _scored(size: int, covered: int, threshold: float) -> tuple[float, list[float]]:
    """One span of ``size`` non-blank characters (a blank every seventh), a chunk holding the
    first ``covered`` of them and a chunk holding the rest: recall@1 of the first chunk alone,
    and the rank at which the ranking [first, rest] finds the span."""
    text, solid = "", 0
    while solid < size:
        text += " " if len(text) % 7 == 6 else "x"
        solid += text[-1] == "x"
    cut = next(i for i in range(len(text) + 1) if text[:i].count("x") == covered)
    chunks = [Chunk("d#0", "d", 0, cut, text=text[:cut]), Chunk("d#1", "d", cut, len(text),
                                                            text=text[cut:])]
    item = GoldenItem("q", "?", evidence=(Evidence("d", 0, len(text), text),))
    relevance = Relevance([item], [c for c in chunks if c.end > c.start],
                          evidence_threshold=threshold)
    recall = relevance.score({"q": ["d#0"]}, [parse_metric("recall@1")]).values["recall@1"]["q"]
    return recall, relevance.found_ranks("q", ["d#0", "d#1"])


@settings(max_examples=200)
@given(decimal_cases(largest=400), st.data())
def test_both_scorers_find_a_span_exactly_at_a_decimal_threshold(case, data):
    size, k = case
    covered = data.draw(_near(size, math.ceil(Fraction(k, 1000) * size)))
    recall, found = _scored(size, covered, k / 1000)
    want = _found_decimal(covered, size, k)
    assert recall == float(want) and found == [1.0 if want else 2.0], (size, covered, k)


@settings(max_examples=200)
@given(float_cases(largest=400), st.data())
def test_both_scorers_find_a_span_by_the_rule_at_any_threshold(case, data):
    size, t = case
    covered = data.draw(_near(size, math.ceil(Fraction(t) * size - GUARD)))
    assume(_decided(covered, size, t))
    recall, found = _scored(size, covered, t)
    want = _found_float(covered, size, t)
    assert recall == float(want) and found == [1.0 if want else 2.0], (size, covered, t)
