"""A judge's 1-5 ratings against a person's (the kappa itself is
:func:`workbench.stats.cohen_kappa`, the one kappa, NaN when undefined).

* :func:`rating_agreement`: exact and within-one agreement with exact (Clopper-Pearson)
  intervals, quadratic-weighted kappa with a seeded bootstrap interval over items; a judge
  whose kappa interval does not clear 0 is not shown to beat chance. The realism judge is
  measured with it (:func:`~workbench.synthetic.realism.realism_agreement`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass

import numpy as np

from workbench.io import WorkbenchError
from workbench.stats import clopper_pearson, percentile_bounds
from workbench.stats.intervals import check_resamples
from workbench.stats.kappa import kappa_codes, kappa_matrix, kappa_weights

__all__ = ["RatingAgreement", "rating_agreement"]


@dataclass(frozen=True)
class RatingAgreement:
    """A judge's ratings against a person's on ``n`` items: ``exact`` and ``within_one``
    agreement (exact Clopper-Pearson intervals), quadratic-weighted ``kappa`` (NaN when
    undefined) with a percentile bootstrap interval over items (``resamples``, ``seed``).
    ``within_one``: the ratings are the same or adjacent categories.
    ``better_than_chance`` when the kappa interval's lower bound is above 0."""

    judge: str
    n: int
    exact: float
    exact_ci: tuple[float, float]
    _: KW_ONLY
    within_one: float
    within_one_ci: tuple[float, float]
    kappa: float
    kappa_ci: tuple[float, float]
    resamples: int
    seed: int
    confidence: float = 0.95
    unreadable: int = 0

    @property
    def better_than_chance(self) -> bool:
        return bool(self.kappa_ci[0] > 0.0)

    def summary(self) -> str:
        kappa = "undefined" if np.isnan(self.kappa) else f"{self.kappa:.3f}"
        return (f"{self.judge or 'judge'} vs the person on {self.n} items: quadratic-weighted "
                f"kappa {kappa} [{self.kappa_ci[0]:.3f}, {self.kappa_ci[1]:.3f}], exact "
                f"agreement {self.exact:.3f} [{self.exact_ci[0]:.3f}, {self.exact_ci[1]:.3f}], "
                f"within one {self.within_one:.3f} [{self.within_one_ci[0]:.3f}, "
                f"{self.within_one_ci[1]:.3f}]" + (f"; {self.unreadable} unreadable replies "
                                                   "left out" if self.unreadable else ""))


def rating_agreement(person: Sequence[int], judged: Sequence[int], judge: str = "", *,
                     categories: Sequence[int] = (1, 2, 3, 4, 5), confidence: float = 0.95,
                     resamples: int = 2000, seed: int = 0,
                     unreadable: int = 0) -> RatingAgreement:
    """How well ``judged[i]`` agrees with ``person[i]`` (ratings on ordered ``categories``).

    Kappa is :func:`~workbench.stats.cohen_kappa`'s (quadratic weights): NaN when both used
    one and the same category, 0 when only the person did. The kappa interval resamples
    items with replacement (seeded); a resample in which kappa is undefined, or in which
    either side gave one score throughout (no agreement can be measured there), says nothing
    and counts as 0 (chance) at the lower edge and 1 at the upper one
    (:func:`~workbench.stats.percentile_bounds`), so a handful of items never gives a narrow
    interval. ``unreadable`` (judge replies without a rating, left out by the caller) is
    recorded."""
    check_resamples(resamples)
    if not len(person):
        raise WorkbenchError("rating agreement needs at least one item rated by both")
    x, y, k = kappa_codes(person, judged, categories)
    w = kappa_weights(k, "quadratic")
    n = x.size
    kappa = float(kappa_matrix(x, y, k, w)[0])
    idx = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    xs, ys = x[idx], y[idx]
    resampled = kappa_matrix(xs, ys, k, w)
    # a resample in which either side gave one score throughout measures no agreement (its
    # kappa is 0 or undefined by construction): it says nothing, like an undefined one
    one_score = (xs.min(axis=1) == xs.max(axis=1)) | (ys.min(axis=1) == ys.max(axis=1))
    low, high = percentile_bounds(np.where(one_score, np.nan, resampled), confidence,
                                  undefined=(0.0, 1.0))
    if not np.isnan(kappa):
        low, high = min(low, kappa), max(high, kappa)
    exact, near = int((x == y).sum()), int((np.abs(x - y) <= 1).sum())  # adjacent categories
    return RatingAgreement(judge=judge, n=n, exact=exact / n,
                           exact_ci=clopper_pearson(exact, n, confidence),
                           within_one=near / n, within_one_ci=clopper_pearson(near, n, confidence),
                           kappa=kappa, kappa_ci=(low, high), resamples=resamples, seed=seed,
                           confidence=confidence, unreadable=unreadable)
