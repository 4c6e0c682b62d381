"""Baseline vs candidate on the same questions: :func:`compare_paired` (a
:class:`PairedComparison` with its :class:`Flip` list), :func:`compare_many` (Holm-adjusted
verdicts over several candidates) and :func:`comparison_table`."""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import KW_ONLY, dataclass, replace
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from workbench.io import WorkbenchError
from workbench.stats.intervals import TIE, is_binary, paired_bootstrap_ci
from workbench.stats.significance import (
    format_p,
    holm,
    mcnemar_exact,
    paired_permutation_test,
)
from workbench.text.normalize import escape_html

if TYPE_CHECKING:
    import pandas as pd

K = TypeVar("K", bound=Hashable)


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
    at ``confidence``. ``test`` is ``"mcnemar-exact"`` (both sides 0/1) or ``"permutation"``
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
    _: KW_ONLY
    ci: tuple[float, float]
    p_value: float
    test: str
    wins: int
    losses: int
    ties: int
    flipped: tuple[Flip, ...]
    verdict: str
    alpha: float = 0.05
    confidence: float = 0.95
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
        p = format_p(self.p_value)
        if self.correction:
            p += f" ({self.correction}-adjusted: {format_p(self.p_adjusted)})"
        return (
            f"{who}: {self.mean_b:.3f} vs baseline {self.mean_a:.3f} "
            f"({self.delta * 100:+.1f} points, {self.confidence:.0%} CI {low * 100:+.1f} to "
            f"{high * 100:+.1f}); {self.wins} up, {self.losses} down, {self.ties} unchanged; "
            f"{self.test} {p} -> {self.verdict}"
        )

    def _repr_html_(self) -> str:
        return f"<p>{escape_html(self.summary())}</p>"

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
        raise WorkbenchError(
            "baseline and candidate cover different questions; " + "; ".join(parts))
    qids = _ordered(baseline)
    if not qids:
        raise WorkbenchError("no questions to compare")
    a = np.array([float(baseline[q]) for q in qids])
    b = np.array([float(candidate[q]) for q in qids])
    bad = [q for q, x, y in zip(qids, a, b, strict=True) if not (np.isfinite(x) and np.isfinite(y))]
    if bad:
        raise WorkbenchError(f"non-finite scores for questions {_describe(bad)}")
    return qids, a, b


def compare_paired(
    baseline: Mapping[K, float],
    candidate: Mapping[K, float],
    binary: bool | None = None,
    alpha: float = 0.05,
    *,
    confidence: float = 0.95,
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
        raise WorkbenchError(f"alpha must be in (0, 1), got {alpha}")
    qids, a, b = _align(baseline, candidate)
    n = len(qids)
    d = b - a
    if binary is None:
        binary = is_binary(a) and is_binary(b)
    if binary:
        p = mcnemar_exact(a, b).p_value
        test = "mcnemar-exact"
    else:
        p = paired_permutation_test(a, b, resamples=resamples, seed=seed)
        test = "permutation"
    changed = np.abs(d) > TIE
    flips = [Flip(q, float(x), float(y)) for q, x, y, c in zip(qids, a, b, changed, strict=True)
             if c]
    flips.sort(key=lambda f: f.delta)  # stable: qid order within equal deltas
    delta = float(b.mean() - a.mean())
    return PairedComparison(
        n=n,
        mean_a=float(a.mean()),
        mean_b=float(b.mean()),
        delta=delta,
        ci=paired_bootstrap_ci(a, b, confidence=confidence, resamples=bootstrap_resamples,
                               seed=seed),
        p_value=p,
        test=test,
        wins=int(np.count_nonzero(changed & (d > 0))),
        losses=int(np.count_nonzero(changed & (d < 0))),
        ties=int(np.count_nonzero(~changed)),
        flipped=tuple(flips),
        verdict=_verdict(delta, p, alpha, n),
        alpha=alpha,
        confidence=confidence,
        discordance=float(np.mean(np.where(changed, d, 0.0) ** 2)),
        name=name,
    )


def compare_many(
    baseline: Mapping[K, float],
    candidates: Mapping[str, Mapping[K, float]],
    binary: bool | None = None,
    alpha: float = 0.05,
    *,
    confidence: float = 0.95,
    resamples: int = 10_000,
    bootstrap_resamples: int = 2000,
    seed: int = 0,
) -> list[PairedComparison]:
    """:func:`compare_paired` for each named candidate against one baseline, with the verdicts
    taken from Holm-adjusted p-values (:func:`holm`) over all candidates, so that trying many
    configurations does not manufacture a "better" by chance. Results keep the order of
    ``candidates``; :func:`comparison_table` turns them into a DataFrame."""
    results = [
        compare_paired(baseline, scores, binary=binary, alpha=alpha, confidence=confidence,
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
