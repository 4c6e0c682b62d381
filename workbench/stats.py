"""Is a difference between two configurations larger than noise? Paired statistics for small
golden sets.

Golden sets are small (50-80 questions), so one question moves a mean by 1/n: 2 points at
n=50. Every comparison here is *paired*: both configurations answer the same questions, and
the per-question difference is what is analysed.

Conventions
    * ``a`` is the baseline and ``b`` the candidate; differences are always ``b - a``, so a
      positive ``delta`` means the candidate scores higher. Higher is assumed to be better
      (recall, hit rate, MRR, nDCG).
    * Per-question values are floats; a metric is *binary* when every value is 0 or 1
      (hit@k, success@k). Paired differences with ``|b - a| <= 1e-12`` count as ties.
    * "Points" are percentage points: a delta of 0.04 is 4 points.
    * Everything is a pure function of its inputs and ``seed``; results are reproducible.
      Questions are aligned by qid and sorted, so dict order never changes a result.

Tests
    * :func:`mcnemar_exact` for binary outcomes: only the questions whose outcome changed
      matter; under no difference each change is equally likely to go either way, so the
      count of gains is Binomial(changes, 1/2).
    * :func:`paired_permutation_test` for anything else: under no difference each per-question
      difference is equally likely to have either sign (sign-flip randomisation). For 0/1
      values its exact p-value equals McNemar's.
    * :func:`bootstrap_ci` / :func:`paired_bootstrap_ci`: percentile bootstrap intervals. They
      describe the size of an effect; the verdict comes from the test, not from the interval.
      At n around 50 the percentile interval is slightly narrow (coverage a little under the
      nominal level) and can exclude 0 when the exact test does not reject, e.g. 5 gains and
      0 losses: McNemar p = 0.0625.
    * :func:`holm` adjusts p-values when several candidates are compared with one baseline.

How big a difference can n questions see?
    :func:`minimal_detectable_difference` (normal approximation for a paired test)::

        MDD = (z_{1-alpha/2} + z_{power}) * sqrt(d / n)

    where ``d`` is the mean squared per-question difference ``E[(b - a)^2]``. For 0/1
    outcomes this is the *discordance*: the fraction of questions whose outcome differs
    between the two configurations. The default assumes two configurations that disagree as
    often as two independent systems with success rate p: ``d = 2 p (1 - p)`` (0.42 at
    p = 0.7). With alpha = 0.05 and 80 % power (z-sum 2.80) that gives 25.7 points at n=50,
    23.4 at n=60 and 18.2 at n=100. Closely related configurations disagree less; pass the
    observed discordance (:attr:`PairedComparison.discordance`) for a sharper figure, e.g.
    d = 0.2 gives 17.7 points at n=50. Either way it is far above the 2 points that one
    question is worth (:func:`one_question`): a difference of one or two questions is noise,
    and a CI tolerance below about 5 points at n=50 fails on noise alone.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal, TypeVar

import numpy as np
from scipy import special as _special

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "EXACT_MAX",
    "Flip",
    "McNemarResult",
    "PairedComparison",
    "bootstrap_ci",
    "compare_many",
    "compare_paired",
    "comparison_table",
    "holm",
    "mcnemar_exact",
    "minimal_detectable_difference",
    "one_question",
    "paired_bootstrap_ci",
    "paired_permutation_test",
    "questions_needed",
]

Alternative = Literal["two-sided", "greater", "less"]
K = TypeVar("K", bound=Hashable)

#: The permutation test enumerates all sign patterns up to this many non-zero differences.
EXACT_MAX = 16
_TIE = 1e-12  # |b - a| at or below this is a tie
_CHUNK = 1 << 21  # elements per vectorised block (bounded memory for large resample counts)


# --------------------------------------------------------------------------- helpers


def _as_1d(values: Iterable[float] | np.ndarray, what: str) -> np.ndarray:
    x = np.asarray(list(values) if not isinstance(values, np.ndarray) else values, dtype=float)
    if x.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional, got shape {x.shape}")
    if x.size == 0:
        raise ValueError(f"{what} is empty")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{what} contains NaN or infinite values")
    return x


def _paired(
    a: Iterable[float] | np.ndarray, b: Iterable[float] | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    x, y = _as_1d(a, "a"), _as_1d(b, "b")
    if x.shape != y.shape:
        raise ValueError(f"paired inputs differ in length: {x.size} vs {y.size}")
    return x, y


def _check_level(level: float) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")


def _check_resamples(resamples: int) -> None:
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")


def _is_binary(x: np.ndarray) -> bool:
    return bool(np.all((x == 0.0) | (x == 1.0)))


# ------------------------------------------------------------------------- intervals


def bootstrap_ci(
    values: Iterable[float] | np.ndarray,
    level: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval for the mean of ``values``.

    Resamples the values with replacement ``resamples`` times (vectorised) and returns the
    ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of the resampled means. A single
    value gives a zero-width interval.
    """
    _check_level(level)
    _check_resamples(resamples)
    x = _as_1d(values, "values")
    n = x.size
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    step = max(1, _CHUNK // n)
    for start in range(0, resamples, step):
        stop = min(resamples, start + step)
        idx = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = x[idx].mean(axis=1)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return float(low), float(high)


def paired_bootstrap_ci(
    a: Iterable[float] | np.ndarray,
    b: Iterable[float] | np.ndarray,
    level: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval for the mean paired difference ``b - a``.

    Questions are resampled as pairs, so the correlation between the two configurations is
    kept. ``a[i]`` and ``b[i]`` must be scores of the same question.
    """
    x, y = _paired(a, b)
    return bootstrap_ci(y - x, level=level, resamples=resamples, seed=seed)


# ----------------------------------------------------------------------------- tests


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
    if alternative not in ("two-sided", "greater", "less"):
        raise ValueError(
            f"alternative must be 'two-sided', 'greater' or 'less', not {alternative!r}"
        )
    _check_resamples(resamples)
    x, y = _paired(a, b)
    d = y - x
    d = d[np.abs(d) > _TIE]
    m = d.size
    if m == 0:
        return 1.0
    observed = float(d.sum())  # the sum orders sign patterns exactly as the mean does
    tol = 1e-9 * float(np.abs(d).sum())  # floating-point slack so exact ties count as ties
    if m <= EXACT_MAX:
        stat = _all_signs(m) @ d
        return _tail_count(stat, observed, alternative, tol) / stat.size
    rng = np.random.default_rng(seed)
    count = 0
    step = max(1, _CHUNK // m)
    for start in range(0, resamples, step):
        rows = min(resamples, start + step) - start
        signs = rng.integers(0, 2, size=(rows, m), dtype=np.int8) * np.int8(2) - np.int8(1)
        count += _tail_count(signs @ d, observed, alternative, tol)
    return (count + 1) / (resamples + 1)


@dataclass(frozen=True)
class McNemarResult:
    """Exact McNemar test on paired binary outcomes.

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
    if not _is_binary(x):
        raise ValueError(f"{what} must contain only 0/1 (or boolean) values")
    return x.astype(bool)


def mcnemar_exact(
    a_hits: Iterable[float] | np.ndarray, b_hits: Iterable[float] | np.ndarray
) -> McNemarResult:
    """Exact (binomial) McNemar test for paired 0/1 outcomes such as hit@k.

    With ``b = b_only`` and ``c = a_only``, the two-sided p-value is
    ``min(1, 2 * BinomCDF(min(b, c); b + c, 1/2))``, and 1 when ``b + c == 0``.
    """
    x, y = _paired(a_hits, b_hits)
    ha, hb = _binary(x, "a_hits"), _binary(y, "b_hits")
    b_only = int(np.count_nonzero(hb & ~ha))
    a_only = int(np.count_nonzero(ha & ~hb))
    total = b_only + a_only
    # bdtr(k, n, 1/2) is the binomial CDF P(X <= k)
    lower = float(_special.bdtr(min(b_only, a_only), total, 0.5)) if total else 0.5
    p = min(1.0, 2.0 * lower)
    return McNemarResult(b_only=b_only, a_only=a_only, p_value=p)


def holm(p_values: Sequence[float] | np.ndarray) -> list[float]:
    """Holm-Bonferroni step-down adjusted p-values, in the input order.

    Sorting the m p-values ascending, the i-th smallest (i = 0..m-1) becomes
    ``max_{j <= i} min(1, (m - j) * p_(j))``: monotone in the raw p-values and capped at 1.
    Reject hypothesis k at level alpha when ``adjusted[k] < alpha``; this controls the
    family-wise error rate without assumptions about dependence.
    """
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1:
        raise ValueError("p_values must be one-dimensional")
    if p.size == 0:
        return []
    if not np.all((p >= 0.0) & (p <= 1.0)):
        raise ValueError("p-values must lie in [0, 1]")
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return [float(v) for v in adjusted]


# --------------------------------------------------------------------- sample size


def one_question(n: int) -> float:
    """What one question is worth in a mean over ``n`` questions: ``1 / n`` (0.02 at n=50)."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    return 1.0 / n


def _z_sum(alpha: float, power: float) -> float:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must be in (0, 1), got {power}")
    return float(_special.ndtri(1.0 - alpha / 2.0) + _special.ndtri(power))


def _discordance(baseline_rate: float, paired_discordance: float | None) -> float:
    if paired_discordance is not None:
        if not paired_discordance > 0.0:
            raise ValueError(f"paired_discordance must be > 0, got {paired_discordance}")
        return float(paired_discordance)
    if not 0.0 < baseline_rate < 1.0:
        raise ValueError(f"baseline_rate must be in (0, 1), got {baseline_rate}")
    return 2.0 * baseline_rate * (1.0 - baseline_rate)


def minimal_detectable_difference(
    n: int,
    baseline_rate: float = 0.7,
    alpha: float = 0.05,
    power: float = 0.8,
    paired_discordance: float | None = None,
) -> float:
    """Smallest true difference (as a fraction; x100 for points) that a paired two-sided test
    on ``n`` questions detects with probability ``power`` at level ``alpha``.

    ``MDD = (z_{1-alpha/2} + z_{power}) * sqrt(d / n)``, the normal approximation to the
    paired test of a mean difference, with ``d = E[(b - a)^2]`` the mean squared per-question
    difference. For 0/1 outcomes ``d`` is the discordance, the fraction of questions whose
    outcome changes. ``paired_discordance=None`` uses ``d = 2 p (1 - p)`` with
    ``p = baseline_rate``: the discordance of two *independent* systems that both succeed with
    probability p. Configurations that share most of their pipeline disagree less; use the
    observed :attr:`PairedComparison.discordance` when you have one.

    Defaults (p = 0.7, d = 0.42, alpha = 0.05, power = 0.8): 0.257 at n=50, 0.234 at n=60,
    0.182 at n=100. A result above ``d`` (or above 1) means no difference is reliably
    detectable: for 0/1 outcomes the difference cannot exceed the discordance.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    z = _z_sum(alpha, power)
    return z * math.sqrt(_discordance(baseline_rate, paired_discordance) / n)


def questions_needed(
    difference: float,
    baseline_rate: float = 0.7,
    alpha: float = 0.05,
    power: float = 0.8,
    paired_discordance: float | None = None,
) -> int:
    """Golden-set size at which :func:`minimal_detectable_difference` falls to ``difference``:
    ``ceil((z_{1-alpha/2} + z_{power})^2 * d / difference^2)``, same conventions."""
    if not difference > 0.0:
        raise ValueError(f"difference must be > 0, got {difference}")
    z = _z_sum(alpha, power)
    d = _discordance(baseline_rate, paired_discordance)
    return max(1, math.ceil(z * z * d / (difference * difference) - 1e-9))


# ------------------------------------------------------------------------ comparison


@dataclass(frozen=True)
class Flip:
    """A question whose score changed: ``baseline`` -> ``candidate``."""

    qid: Hashable
    baseline: float
    candidate: float

    @property
    def delta(self) -> float:
        return self.candidate - self.baseline

    @property
    def direction(self) -> str:
        """``"gained"`` when the candidate scores higher on this question, else ``"lost"``."""
        return "gained" if self.candidate > self.baseline else "lost"


def _verdict(delta: float, p: float, alpha: float, n: int) -> str:
    if p < alpha and delta > 0:
        return "better"
    if p < alpha and delta < 0:
        return "worse"
    return f"can't tell with n={n}"


@dataclass(frozen=True)
class PairedComparison:
    """Baseline (a) vs candidate (b) on the same ``n`` questions.

    ``delta = mean_b - mean_a``; ``ci`` is the paired percentile bootstrap interval of delta
    at ``level``. ``test`` is ``"mcnemar-exact"`` (both sides 0/1) or ``"permutation"``
    (sign-flip). ``p_value`` is the raw two-sided p-value; ``p_adjusted`` is the value the
    verdict uses (equal to ``p_value`` unless a multiple-comparison correction was applied,
    named by ``correction``). ``verdict`` is ``"better"`` / ``"worse"`` when
    ``p_adjusted < alpha``, else ``"can't tell with n=<n>"``.

    ``wins`` / ``losses`` / ``ties`` count questions where the candidate scored higher / lower /
    the same. ``flipped`` lists the changed questions, biggest losses first, then gains.
    ``discordance`` is the mean squared per-question difference (for 0/1 outcomes the
    fraction of flipped questions), the ``paired_discordance`` of
    :func:`minimal_detectable_difference`.
    """

    n: int
    mean_a: float
    mean_b: float
    delta: float
    ci: tuple[float, float]
    p_value: float
    test: str
    wins: int
    losses: int
    ties: int
    flipped: tuple[Flip, ...]
    verdict: str
    alpha: float = 0.05
    level: float = 0.95
    p_adjusted: float = math.nan
    correction: str | None = None
    discordance: float = 0.0
    name: str = ""

    def __post_init__(self) -> None:
        if math.isnan(self.p_adjusted):
            object.__setattr__(self, "p_adjusted", self.p_value)

    @property
    def significant(self) -> bool:
        return self.p_adjusted < self.alpha

    @property
    def gained(self) -> tuple[Hashable, ...]:
        """Qids where the candidate scored higher."""
        return tuple(f.qid for f in self.flipped if f.direction == "gained")

    @property
    def lost(self) -> tuple[Hashable, ...]:
        """Qids where the candidate scored lower."""
        return tuple(f.qid for f in self.flipped if f.direction == "lost")

    def adjusted(self, p_adjusted: float, correction: str) -> PairedComparison:
        """A copy whose verdict uses a corrected p-value (e.g. from :func:`holm`)."""
        return replace(
            self,
            p_adjusted=float(p_adjusted),
            correction=correction,
            verdict=_verdict(self.delta, p_adjusted, self.alpha, self.n),
        )

    def summary(self) -> str:
        """One plain-words line, e.g. for a notebook or a CI log."""
        who = self.name or "candidate"
        low, high = self.ci
        p = f"p={self.p_value:.3g}"
        if self.correction:
            p += f" ({self.correction}-adjusted {self.p_adjusted:.3g})"
        return (
            f"{who}: {self.mean_b:.3f} vs baseline {self.mean_a:.3f} "
            f"({self.delta * 100:+.1f} points, {self.level:.0%} CI {low * 100:+.1f} to "
            f"{high * 100:+.1f}); {self.wins} up, {self.losses} down, {self.ties} unchanged; "
            f"{self.test} {p} -> {self.verdict}"
        )

    def to_dict(self) -> dict[str, object]:
        """Flat row for a table (``flipped`` as counts; see :attr:`gained` / :attr:`lost`)."""
        return {
            "name": self.name,
            "n": self.n,
            "baseline": self.mean_a,
            "candidate": self.mean_b,
            "delta": self.delta,
            "ci_low": self.ci[0],
            "ci_high": self.ci[1],
            "test": self.test,
            "p_value": self.p_value,
            "p_adjusted": self.p_adjusted,
            "wins": self.wins,
            "losses": self.losses,
            "ties": self.ties,
            "verdict": self.verdict,
        }


def _ordered(keys: Iterable[K]) -> list[K]:
    items = list(keys)
    try:
        return sorted(items)  # type: ignore[type-var]
    except TypeError:
        return sorted(items, key=repr)


def _describe(qids: Iterable[Hashable], limit: int = 10) -> str:
    items = _ordered(qids)
    shown = ", ".join(repr(q) for q in items[:limit])
    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return f"{len(items)} ({shown}{more})"


def _align(
    baseline: Mapping[K, float], candidate: Mapping[K, float]
) -> tuple[list[K], np.ndarray, np.ndarray]:
    only_a = set(baseline) - set(candidate)
    only_b = set(candidate) - set(baseline)
    if only_a or only_b:
        parts = []
        if only_a:
            parts.append(f"missing from candidate: {_describe(only_a)}")
        if only_b:
            parts.append(f"missing from baseline: {_describe(only_b)}")
        raise ValueError("baseline and candidate cover different questions; " + "; ".join(parts))
    qids = _ordered(baseline)
    if not qids:
        raise ValueError("no questions to compare")
    a = np.array([float(baseline[q]) for q in qids])
    b = np.array([float(candidate[q]) for q in qids])
    bad = [q for q, x, y in zip(qids, a, b, strict=True) if not (np.isfinite(x) and np.isfinite(y))]
    if bad:
        raise ValueError(f"non-finite scores for questions {_describe(bad)}")
    return qids, a, b


def compare_paired(
    baseline: Mapping[K, float],
    candidate: Mapping[K, float],
    binary: bool | None = None,
    alpha: float = 0.05,
    *,
    level: float = 0.95,
    resamples: int = 10_000,
    bootstrap_resamples: int = 2000,
    seed: int = 0,
    name: str = "",
) -> PairedComparison:
    """Compare per-question scores ``{qid: score}`` of a candidate against a baseline.

    Both mappings must cover the same qids (otherwise ``ValueError`` naming the missing
    ones). ``binary=None`` uses :func:`mcnemar_exact` when every score on both sides is 0 or
    1 and :func:`paired_permutation_test` (``resamples``, ``seed``) otherwise; ``True`` /
    ``False`` force the choice (``True`` requires 0/1 scores). The interval is
    :func:`paired_bootstrap_ci` with ``bootstrap_resamples``. See :class:`PairedComparison`.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    qids, a, b = _align(baseline, candidate)
    n = len(qids)
    d = b - a
    if binary is None:
        binary = _is_binary(a) and _is_binary(b)
    if binary:
        p = mcnemar_exact(a, b).p_value
        test = "mcnemar-exact"
    else:
        p = paired_permutation_test(a, b, resamples=resamples, seed=seed)
        test = "permutation"
    changed = np.abs(d) > _TIE
    flips = [Flip(q, float(x), float(y)) for q, x, y, c in zip(qids, a, b, changed, strict=True)
             if c]
    flips.sort(key=lambda f: f.delta)  # stable: qid order within equal deltas
    delta = float(b.mean() - a.mean())
    return PairedComparison(
        n=n,
        mean_a=float(a.mean()),
        mean_b=float(b.mean()),
        delta=delta,
        ci=paired_bootstrap_ci(a, b, level=level, resamples=bootstrap_resamples, seed=seed),
        p_value=p,
        test=test,
        wins=int(np.count_nonzero(changed & (d > 0))),
        losses=int(np.count_nonzero(changed & (d < 0))),
        ties=int(np.count_nonzero(~changed)),
        flipped=tuple(flips),
        verdict=_verdict(delta, p, alpha, n),
        alpha=alpha,
        level=level,
        discordance=float(np.mean(np.where(changed, d, 0.0) ** 2)),
        name=name,
    )


def compare_many(
    baseline: Mapping[K, float],
    candidates: Mapping[str, Mapping[K, float]],
    binary: bool | None = None,
    alpha: float = 0.05,
    *,
    level: float = 0.95,
    resamples: int = 10_000,
    bootstrap_resamples: int = 2000,
    seed: int = 0,
) -> list[PairedComparison]:
    """:func:`compare_paired` for each named candidate against one baseline, with the verdicts
    taken from Holm-adjusted p-values (:func:`holm`) over all candidates, so that trying many
    configurations does not manufacture a "better" by chance. Results keep the order of
    ``candidates``; :func:`comparison_table` turns them into a DataFrame."""
    results = [
        compare_paired(baseline, scores, binary=binary, alpha=alpha, level=level,
                       resamples=resamples, bootstrap_resamples=bootstrap_resamples,
                       seed=seed, name=str(name))
        for name, scores in candidates.items()
    ]
    adjusted = holm([r.p_value for r in results])
    return [r.adjusted(p, "holm") for r, p in zip(results, adjusted, strict=True)]


_TABLE_COLUMNS = [
    "name", "n", "baseline", "candidate", "delta", "ci_low", "ci_high", "test", "p_value",
    "p_adjusted", "wins", "losses", "ties", "verdict",
]


def comparison_table(comparisons: Iterable[PairedComparison]) -> pd.DataFrame:
    """One row per comparison (:meth:`PairedComparison.to_dict`), indexed by name."""
    import pandas as pd

    rows = [c.to_dict() for c in comparisons]
    return pd.DataFrame(rows, columns=_TABLE_COLUMNS).set_index("name")
