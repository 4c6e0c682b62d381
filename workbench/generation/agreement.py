"""Agreement between two raters of the same items: Cohen's kappa, and a judge's 1-5
ratings against a person's.

* :func:`cohen_kappa`: unweighted (pass/fail verdicts:
  :func:`~workbench.generation.calibration.calibrate_judge`) or quadratic-weighted (ordered
  ratings), NaN when undefined.
* :func:`rating_agreement`: exact and within-one agreement with exact (Clopper-Pearson)
  intervals, quadratic-weighted kappa with a seeded bootstrap interval over items; a judge
  whose kappa interval does not clear 0 is not shown to beat chance. The realism judge is
  measured with it (:func:`~workbench.generation.synthetic_filter.realism_agreement`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.evaluation.stats import clopper_pearson
from workbench.evaluation.stats.intervals import check_resamples
from workbench.io import WorkbenchError

__all__ = ["RatingAgreement", "cohen_kappa", "rating_agreement"]


def _confusion(a: np.ndarray, b: np.ndarray, k: int) -> np.ndarray:
    """Counts of the pairs ``(a[i], b[i])`` (category indices below ``k``), as a k x k
    matrix; ``a`` and ``b`` may be 2-D (one row per resample: one matrix per row)."""
    codes = np.atleast_2d(a * k + b)
    rows = np.arange(codes.shape[0])[:, None] * k * k
    counts = np.bincount((codes + rows).ravel(), minlength=codes.shape[0] * k * k)
    return counts.reshape(codes.shape[0], k, k)


def _kappas(confusion: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``1 - sum(w * observed) / sum(w * expected)`` per confusion matrix (expected: the
    product of the two raters' marginals); NaN where the expected disagreement is 0 (both
    raters gave one and the same category to every item: kappa is undefined)."""
    n = confusion.sum(axis=(1, 2), keepdims=True)
    observed = confusion / n
    expected = observed.sum(axis=2, keepdims=True) * observed.sum(axis=1, keepdims=True)
    dis_o = (weights * observed).sum(axis=(1, 2))
    dis_e = (weights * expected).sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(dis_e > 1e-12, 1.0 - dis_o / dis_e, np.nan)


def _kappa_inputs(a: Sequence[Any], b: Sequence[Any], categories: Sequence[Any],
                  weights: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if weights not in ("none", "quadratic"):
        raise WorkbenchError(f"weights must be 'none' or 'quadratic', got {weights!r}")
    if len(a) != len(b) or not len(a):
        raise WorkbenchError(f"kappa needs two equally long, non-empty lists of ratings: got "
                             f"{len(a)} and {len(b)}")
    index = {c: i for i, c in enumerate(categories)}
    unknown = sorted({str(v) for v in [*a, *b] if v not in index})
    if unknown:
        raise WorkbenchError(f"ratings outside the categories {list(categories)}: {unknown[:5]}")
    k = len(categories)
    grid = np.arange(k)
    w = ((grid[:, None] - grid[None, :]) ** 2 / max(k - 1, 1) ** 2 if weights == "quadratic"
         else (grid[:, None] != grid[None, :]).astype(float))
    return (np.asarray([index[v] for v in a]), np.asarray([index[v] for v in b]), w)


def cohen_kappa(a: Sequence[Any], b: Sequence[Any], categories: Sequence[Any],
                weights: str = "none") -> float:
    """Cohen's kappa of two raters' ratings of the same items (``a[i]``, ``b[i]``) on the
    ordered ``categories``: ``1 - sum(w O) / sum(w E)`` with ``O`` the observed and ``E`` the
    chance (product of marginals) proportions; ``weights`` ``"none"`` (``w = 1`` off the
    diagonal: the classic ``(p_o - p_e) / (1 - p_e)``, Cohen 1960) or ``"quadratic"`` (``w =
    (i - j)^2 / (k - 1)^2``, Cohen 1968, "Weighted kappa", Psychol Bull 70:213-220). NaN when
    undefined (both raters used one and the same category throughout)."""
    x, y, w = _kappa_inputs(a, b, categories, weights)
    return float(_kappas(_confusion(x, y, len(categories)), w)[0])


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

    Kappa is left undefined (NaN) when the person used one category: agreement beyond chance
    needs something to agree on (one item, or all scored 4). The kappa interval resamples
    items with replacement (seeded); a resample in which kappa is undefined says nothing and
    is counted as 0 at the lower edge and 1 at the upper one, so a handful of items never
    gives a narrow interval.
    ``unreadable`` (judge replies without a rating, left out by the caller) is recorded."""
    check_resamples(resamples)
    x, y, w = _kappa_inputs(person, judged, categories, "quadratic")
    k, n = len(categories), x.size
    kappa = float(_kappas(_confusion(x, y, k), w)[0]) if np.unique(x).size > 1 else np.nan
    idx = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    boot = _kappas(_confusion(x[idx], y[idx], k), w)
    boot[(x[idx] == x[idx][:, :1]).all(axis=1)] = np.nan  # the person used one category
    tail = (1.0 - confidence) / 2.0
    low = float(np.quantile(np.where(np.isnan(boot), 0.0, boot), tail))
    high = float(np.quantile(np.where(np.isnan(boot), 1.0, boot), 1.0 - tail))
    if not np.isnan(kappa):
        low, high = min(low, kappa), max(high, kappa)
    exact, near = int((x == y).sum()), int((np.abs(x - y) <= 1).sum())  # adjacent categories
    return RatingAgreement(judge=judge, n=n, exact=exact / n,
                           exact_ci=clopper_pearson(exact, n, confidence),
                           within_one=near / n, within_one_ci=clopper_pearson(near, n, confidence),
                           kappa=kappa, kappa_ci=(low, high), resamples=resamples, seed=seed,
                           confidence=confidence, unreadable=unreadable)
