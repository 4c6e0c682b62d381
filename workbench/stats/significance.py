"""Paired significance tests: :func:`paired_permutation_test` (sign-flip randomisation),
:func:`mcnemar_exact` (paired 0/1 outcomes) on top of :func:`sign_test` (two counts) and
:func:`holm` (multiple comparisons)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import special

from workbench.io import WorkbenchError
from workbench.stats.intervals import (
    BLOCK_ELEMENTS,
    TIE,
    check_resamples,
    is_binary,
    paired_arrays,
)

Alternative = Literal["two-sided", "greater", "less"]

#: The permutation test enumerates all sign patterns up to this many non-zero differences.
EXACT_MAX = 16


def _all_signs(m: int) -> np.ndarray:
    """All 2**m sign vectors as a (2**m, m) matrix of +-1."""
    codes = np.arange(1 << m, dtype=np.int64)[:, None]
    bits = (codes >> np.arange(m, dtype=np.int64)) & 1
    return (bits * 2 - 1).astype(np.int8)


def _tail_count(stat: np.ndarray, observed: float, alternative: str, tol: float) -> int:
    if alternative == "two-sided":
        hits = np.abs(stat) >= abs(observed) - tol
    elif alternative == "greater":
        hits = stat >= observed - tol
    else:
        hits = stat <= observed + tol
    return int(np.count_nonzero(hits))


def paired_permutation_test(
    a: Iterable[float] | np.ndarray,
    b: Iterable[float] | np.ndarray,
    *,
    resamples: int = 10_000,
    seed: int = 0,
    alternative: Alternative = "two-sided",
) -> float:
    """Sign-flip randomisation test of the mean paired difference ``b - a``.

    Under the null hypothesis of no difference, each per-question difference is as likely
    to be positive as negative. The statistic is the mean difference; ties (differences of
    at most 1e-12) carry no sign and are dropped.

    * ``alternative``: ``"two-sided"`` (|mean| at least as large as observed), ``"greater"``
      (candidate ``b`` better) or ``"less"`` (``b`` worse).
    * With at most :data:`EXACT_MAX` (16) non-zero differences every sign pattern is
      enumerated and the p-value is exact (``resamples`` and ``seed`` are unused).
    * Otherwise ``resamples`` random sign patterns are drawn and
      ``p = (count + 1) / (resamples + 1)``, which counts the observed pattern once, so the
      p-value is never 0.
    * No non-zero difference at all gives p = 1.

    For 0/1 outcomes the exact p-value equals :func:`mcnemar_exact`'s.
    """
    _check_alternative(alternative)
    check_resamples(resamples)
    x, y = paired_arrays(a, b)
    d = y - x
    d = d[np.abs(d) > TIE]
    m = d.size
    if m == 0:
        return 1.0
    observed = float(d.sum())  # the sum orders sign patterns exactly as the mean does
    tol = 1e-9 * float(np.abs(d).sum())  # floating-point slack so exact ties count as ties
    if m <= EXACT_MAX:
        stat = _all_signs(m) @ d
        return float(_tail_count(stat, observed, alternative, tol) / stat.size)
    rng = np.random.default_rng(seed)
    count = 0
    step = max(1, BLOCK_ELEMENTS // m)
    for start in range(0, resamples, step):
        rows = min(resamples, start + step) - start
        signs = rng.integers(0, 2, size=(rows, m), dtype=np.int8) * np.int8(2) - np.int8(1)
        count += _tail_count(signs @ d, observed, alternative, tol)
    return (count + 1) / (resamples + 1)


@dataclass(frozen=True)
class McNemarResult:
    """Exact McNemar test on paired binary outcomes (McNemar, Psychometrika 12(2), 1947; the
    exact form is the binomial test of ``b_only`` among the discordant pairs).

    ``b_only``: questions only the candidate (b) got right; ``a_only``: only the baseline (a)
    got right. Questions both got right or both got wrong carry no information.
    """

    b_only: int
    a_only: int
    p_value: float

    @property
    def discordant(self) -> int:
        """Number of questions whose outcome differs."""
        return self.b_only + self.a_only


def _binary(x: np.ndarray, what: str) -> np.ndarray:
    if not is_binary(x):
        raise WorkbenchError(f"{what} must contain only 0/1 (or boolean) values")
    return x.astype(bool)


def _check_alternative(alternative: str) -> None:
    if alternative not in ("two-sided", "greater", "less"):
        raise WorkbenchError(
            f"alternative must be 'two-sided', 'greater' or 'less', not {alternative!r}"
        )


def mcnemar_exact(
    a_hits: Iterable[float] | np.ndarray, b_hits: Iterable[float] | np.ndarray,
    alternative: Alternative = "two-sided",
) -> McNemarResult:
    """Exact (binomial) McNemar test for paired 0/1 outcomes such as hit@k: the sign test
    (:func:`sign_test`) of ``b_only`` against ``a_only``. ``alternative``: ``"two-sided"``
    (any difference), ``"greater"`` (the candidate b better) or ``"less"`` (b worse: the
    gate's one-sided test of a regression)."""
    x, y = paired_arrays(a_hits, b_hits)
    ha, hb = _binary(x, "a_hits"), _binary(y, "b_hits")
    b_only = int(np.count_nonzero(hb & ~ha))
    a_only = int(np.count_nonzero(ha & ~hb))
    return McNemarResult(b_only=b_only, a_only=a_only,
                         p_value=sign_test(b_only, a_only, alternative))


def sign_test(b: int, c: int, alternative: Alternative = "two-sided") -> float:
    """Exact sign test of two counts: under "no difference" each of the ``b + c`` events is
    equally likely to fall on either side, ``X ~ Binomial(b + c, 1/2)`` counts those on
    ``b``'s side. Two-sided ``p = min(1, 2 * P(X <= min(b, c)))``; ``"greater"`` (``b``
    larger) ``P(X >= b)``; ``"less"`` ``P(X <= b)``. 1 when there are no events. McNemar's
    test is this test on the discordant questions; triage uses it on retrieval vs
    generation failures."""
    _check_alternative(alternative)
    for name, value in (("b", b), ("c", c)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
            raise WorkbenchError(f"{name} must be a count (an integer >= 0), got {value!r}")
    b, c = int(b), int(c)
    total = b + c
    if not total:
        return 1.0
    # bdtr(k, n, 1/2) is the binomial CDF P(X <= k); P(X >= b) = P(X <= c) by symmetry
    if alternative == "less":
        return float(special.bdtr(b, total, 0.5))
    if alternative == "greater":
        return float(special.bdtr(c, total, 0.5))
    return min(1.0, 2.0 * float(special.bdtr(min(b, c), total, 0.5)))


def holm(p_values: Sequence[float] | np.ndarray) -> list[float]:
    """Holm-Bonferroni step-down adjusted p-values, in the input order.

    Sorting the m p-values ascending, the i-th smallest (i = 0..m-1) becomes
    ``max_{j <= i} min(1, (m - j) * p_(j))``: monotone in the raw p-values and capped at 1.
    Reject hypothesis k at level alpha when ``adjusted[k] < alpha``; this controls the
    family-wise error rate without assumptions about dependence.
    """
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1:
        raise WorkbenchError("p_values must be one-dimensional")
    if p.size == 0:
        return []
    if not np.all((p >= 0.0) & (p <= 1.0)):
        raise WorkbenchError("p-values must lie in [0, 1]")
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return [float(v) for v in adjusted]


def format_p(p: float) -> str:
    """A p-value as a person reads it: ``p < 0.001`` below a thousandth, else three decimals
    (``p = 0.042``); ``p = n/a`` for NaN (no question differed or nothing was tested)."""
    if math.isnan(p):
        return "p = n/a"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"
