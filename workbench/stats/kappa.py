"""Cohen's kappa, the one kappa: :func:`cohen_kappa` (unweighted or quadratic-weighted) and
:func:`kappa_matrix` (the same arithmetic on many confusion matrices at once, for resamples).

The undefined case has one answer everywhere (:data:`UNDEFINED`, NaN): no items, or both
raters gave one and the same category to every item (the chance disagreement is 0, so
agreement cannot be told from chance). One rater using one category while the other varies
is defined and gives 0, as sklearn's ``cohen_kappa_score`` does.

Sources: Cohen 1960, "A coefficient of agreement for nominal scales", Educ Psychol Meas
20:37-46; Cohen 1968, "Weighted kappa", Psychol Bull 70:213-220."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from workbench.io import WorkbenchError

__all__ = ["UNDEFINED", "WEIGHTS", "cohen_kappa", "kappa_codes", "kappa_matrix",
           "kappa_weights"]

#: What every kappa is where it is undefined (see the module doc).
UNDEFINED = float("nan")
#: ``"none"``: every disagreement weighs 1; ``"quadratic"``: ``(i - j)^2 / (k - 1)^2`` on the
#: ordered categories.
WEIGHTS = ("none", "quadratic")


def kappa_weights(k: int, weights: str = "none") -> np.ndarray:
    """The k x k disagreement weights (0 on the diagonal)."""
    if weights not in WEIGHTS:
        raise WorkbenchError(f"weights must be 'none' or 'quadratic', got {weights!r}")
    grid = np.arange(k, dtype=float)
    if weights == "quadratic":
        return np.asarray((grid[:, None] - grid[None, :]) ** 2 / max(k - 1, 1) ** 2,
                          dtype=float)
    return np.asarray(grid[:, None] != grid[None, :], dtype=float)


def kappa_codes(a: Sequence[Hashable], b: Sequence[Hashable],
                categories: Sequence[Hashable] | None = None
                ) -> tuple[np.ndarray, np.ndarray, int]:
    """The two raters' labels as category indices, and the number of categories.
    ``categories`` orders them (needed for weights); None takes the labels in order of
    first appearance. Different lengths, or a label outside ``categories``, are refused."""
    if len(a) != len(b):
        raise WorkbenchError(f"kappa: {len(a)} labels against {len(b)}")
    if categories is None:
        categories = list(dict.fromkeys([*a, *b]))
    index = {c: i for i, c in enumerate(categories)}
    unknown = sorted({str(v) for v in [*a, *b] if v not in index})
    if unknown:
        raise WorkbenchError(f"ratings outside the categories {list(categories)}: {unknown[:5]}")
    return (np.asarray([index[v] for v in a], dtype=np.int64),
            np.asarray([index[v] for v in b], dtype=np.int64), len(index))


def kappa_matrix(a: np.ndarray, b: np.ndarray, k: int, weights: np.ndarray) -> np.ndarray:
    """Kappa of each row of ``a`` against the same row of ``b`` (category indices below
    ``k``; 1-D inputs are one row), ``1 - sum(w O) / sum(w E)`` from integer counts:
    :data:`UNDEFINED` where a row is empty or its chance disagreement is 0. No numpy
    warning is raised."""
    a2, b2 = np.atleast_2d(a), np.atleast_2d(b)
    rows, n = a2.shape
    out = np.full(rows, UNDEFINED)
    if n == 0:
        return out
    offsets = np.arange(rows)[:, None] * k * k
    counts = np.bincount((a2 * k + b2 + offsets).ravel(), minlength=rows * k * k)
    confusion = counts.reshape(rows, k, k).astype(float)
    # n^2 * disagreement: observed n * sum(w C), chance sum(w * row totals x column totals)
    observed = n * (weights * confusion).sum(axis=(1, 2))
    chance = (weights * (confusion.sum(axis=2)[:, :, None]
                         * confusion.sum(axis=1)[:, None, :])).sum(axis=(1, 2))
    defined = chance > 0
    out[defined] = 1.0 - observed[defined] / chance[defined]
    return out


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable],
                categories: Sequence[Hashable] | None = None, weights: str = "none") -> float:
    """Cohen's kappa of two raters' labels on the same items (``a[i]``, ``b[i]``):
    ``1 - sum(w O) / sum(w E)`` with ``O`` the observed and ``E`` the chance (product of the
    marginals) proportions; ``weights="none"`` is the classic ``(p_o - p_e) / (1 - p_e)``.
    In [-1, 1]; :data:`UNDEFINED` (NaN) when there are no items or both raters used one and
    the same category throughout; 0 when only one rater used a single category.
    ``categories`` orders the labels (None: in order of first appearance; a weighted kappa
    needs them)."""
    if weights != "none" and categories is None:
        raise WorkbenchError("a weighted kappa needs the ordered categories")
    x, y, k = kappa_codes(a, b, categories)
    return float(kappa_matrix(x, y, k, kappa_weights(k, weights))[0])
