"""Intervals for the mean of per-question values: :func:`mean_interval` (the one every summary
shows: Clopper-Pearson for 0/1 values, the percentile bootstrap otherwise),
:func:`clopper_pearson`, :func:`wilson`, :func:`bootstrap_ci`, :func:`paired_bootstrap_ci`,
:func:`percentile_bounds` (the one rule for resamples whose statistic is undefined);
:data:`SMALL_N`
(cells with fewer questions are marked as such), and the
input checks and conventions the other statistics modules share: :data:`TIE` (a paired
difference at or below it is a tie), :data:`BLOCK_ELEMENTS` (the size of a vectorised block
of resamples), :func:`paired_arrays`, :func:`check_resamples` and :func:`is_binary`.

Sources: Clopper and Pearson, "The use of confidence or fiducial limits illustrated in the
case of the binomial", Biometrika 26(4), 1934 (the exact interval from beta quantiles);
Wilson, "Probable inference, the law of succession, and statistical inference", JASA 22,
1927 (the score interval); Efron and Tibshirani, "An Introduction to the Bootstrap", Chapman
& Hall 1993, ch. 13 (the percentile interval)."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
from scipy import special

from workbench.io import WorkbenchError

__all__ = [
    "BLOCK_ELEMENTS",
    "SMALL_N",
    "TIE",
    "bootstrap_ci",
    "check_confidence",
    "check_resamples",
    "clopper_pearson",
    "is_binary",
    "is_small_sample",
    "mean_interval",
    "paired_arrays",
    "paired_bootstrap_ci",
    "percentile_bounds",
    "wilson",
]

#: Cells with fewer questions than this are marked "n < 10": any interval there is rough.
SMALL_N = 10


def is_small_sample(n: int) -> bool:
    """The one small-sample rule: ``n`` questions are too few for more than a rough interval
    when ``n < SMALL_N`` (so n = 10 is not small)."""
    return n < SMALL_N

#: ``|b - a|`` at or below this is a tie.
TIE = 1e-12
#: Elements per vectorised block of resamples (bounded memory for large resample counts).
BLOCK_ELEMENTS = 1 << 21


def _as_1d(values: Iterable[float] | np.ndarray, what: str) -> np.ndarray:
    x = np.asarray(list(values) if not isinstance(values, np.ndarray) else values, dtype=float)
    if x.ndim != 1:
        raise WorkbenchError(f"{what} must be one-dimensional, got shape {x.shape}")
    if x.size == 0:
        raise WorkbenchError(f"{what} is empty")
    if not np.all(np.isfinite(x)):
        raise WorkbenchError(f"{what} contains NaN or infinite values")
    return x


def paired_arrays(
    a: Iterable[float] | np.ndarray, b: Iterable[float] | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``a`` and ``b`` as float arrays of the same length: one-dimensional, non-empty and
    finite (ValueError otherwise). ``a[i]`` and ``b[i]`` are scores of the same question."""
    x, y = _as_1d(a, "a"), _as_1d(b, "b")
    if x.shape != y.shape:
        raise WorkbenchError(f"paired inputs differ in length: {x.size} vs {y.size}")
    return x, y


def check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise WorkbenchError(f"confidence must be in (0, 1), got {confidence}")


def check_resamples(resamples: int) -> None:
    """Refuse fewer than one resample."""
    if resamples < 1:
        raise WorkbenchError(f"resamples must be >= 1, got {resamples}")


def is_binary(x: np.ndarray) -> bool:
    """Whether every value is 0 or 1 (a 0/1 metric such as hit rate)."""
    return bool(np.all((x == 0.0) | (x == 1.0)))


def percentile_bounds(samples: np.ndarray, confidence: float = 0.95, *,
                      undefined: tuple[float, float] = (0.0, 1.0)) -> tuple[float, float]:
    """Percentile bounds of resampled statistics, with the one rule for a resample whose
    statistic is undefined (NaN): it says nothing, so it counts at ``undefined[0]`` (the low
    end of the statistic's range) for the lower bound and at ``undefined[1]`` for the upper
    one, and a handful of items never gives a narrow interval."""
    check_confidence(confidence)
    x = np.asarray(samples, dtype=float).ravel()
    if x.size == 0:
        raise WorkbenchError("percentile bounds need at least one resample")
    tail = (1.0 - confidence) / 2.0
    missing = np.isnan(x)
    low = float(np.quantile(np.where(missing, undefined[0], x), tail))
    high = float(np.quantile(np.where(missing, undefined[1], x), 1.0 - tail))
    return low, high


def bootstrap_ci(
    values: Iterable[float] | np.ndarray,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval for the mean of ``values``.

    Resamples the values with replacement ``resamples`` times (vectorised) and returns the
    ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of the resampled means. A single
    value gives a zero-width interval.
    """
    check_confidence(confidence)
    check_resamples(resamples)
    x = _as_1d(values, "values")
    n = x.size
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    step = max(1, BLOCK_ELEMENTS // n)
    for start in range(0, resamples, step):
        stop = min(resamples, start + step)
        idx = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = x[idx].mean(axis=1)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return float(low), float(high)


def paired_bootstrap_ci(
    a: Iterable[float] | np.ndarray,
    b: Iterable[float] | np.ndarray,
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval for the mean paired difference ``b - a``.

    Questions are resampled as pairs, so the correlation between the two configurations is
    kept. ``a[i]`` and ``b[i]`` must be scores of the same question.
    """
    x, y = paired_arrays(a, b)
    return bootstrap_ci(y - x, confidence=confidence, resamples=resamples, seed=seed)


def clopper_pearson(successes: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact (Clopper-Pearson) interval for a proportion: the beta quantiles
    ``B(a/2; x, n-x+1)`` and ``B(1-a/2; x+1, n-x)``, with 0 / 1 at the edges. ``successes``
    may be fractional (the sum of [0, 1] values), which gives a conservative interval."""
    check_confidence(confidence)
    if n < 1:
        raise WorkbenchError("an interval needs at least one value")
    if not 0.0 <= successes <= n:
        raise WorkbenchError(f"successes must lie in [0, {n}], got {successes}")
    tail = (1.0 - confidence) / 2.0
    # betaincinv(a, b, q) is the q-quantile of Beta(a, b)
    low = 0.0 if successes <= 0 else float(special.betaincinv(successes, n - successes + 1,
                                                                tail))
    high = 1.0 if successes >= n else float(special.betaincinv(successes + 1, n - successes,
                                                                 1.0 - tail))
    return low, high


def wilson(successes: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson's score interval for a proportion: the ``p`` with ``|p_hat - p| <= z sqrt(p (1 -
    p) / n)``, ``z`` the normal quantile of ``(1 + confidence) / 2``. Narrower than
    Clopper-Pearson and close to nominal on average, but not guaranteed (use
    :func:`clopper_pearson` where coverage must hold)."""
    check_confidence(confidence)
    if n < 1:
        raise WorkbenchError("an interval needs at least one value")
    if not 0.0 <= successes <= n:
        raise WorkbenchError(f"successes must lie in [0, {n}], got {successes}")
    z = float(special.ndtri(0.5 + confidence / 2.0))
    p, z2 = successes / n, z * z / n
    centre = (p + z2 / 2.0) / (1.0 + z2)
    half = z * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n)) / (1.0 + z2)
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_interval(values: Iterable[float] | np.ndarray, confidence: float = 0.95,
                  resamples: int = 2000, seed: int = 0) -> tuple[float, float, str]:
    """An interval for the mean of per-question values that stays honest at small n, and the
    method's name. 0/1 values: Clopper-Pearson (exact). Other values in [0, 1] whose sample
    has no spread (all equal, where a bootstrap collapses to a point): Clopper-Pearson of
    their sum, conservative because a [0, 1] value varies no more than a 0/1 one with the
    same mean. Anything else: the percentile bootstrap."""
    x = _as_1d(values, "values")
    if is_binary(x):
        return (*clopper_pearson(float(x.sum()), x.size, confidence), "clopper-pearson")
    if np.all(x == x[0]) and 0.0 <= x[0] <= 1.0:
        return (*clopper_pearson(float(x.sum()), x.size, confidence), "clopper-pearson (sum)")
    return (*bootstrap_ci(x, confidence, resamples, seed), "bootstrap")
