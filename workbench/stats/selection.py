"""The winner's curse: :func:`selection_bias`, how much of the best configuration's score is
expected from picking the best of several on the same questions."""

from __future__ import annotations

import numpy as np

from workbench.io import WorkbenchError

__all__ = ["selection_bias"]


def selection_bias(scores: np.ndarray, resamples: int = 1000, seed: int = 0) -> float:
    """Expected optimism of "pick the configuration with the best mean" on these questions:
    ``scores`` is configurations x questions (every configuration scored every question).

    The bootstrap of the whole selection procedure (Efron 1983, "Estimating the error rate
    of a prediction rule"; Tibshirani & Tibshirani 2009, "A bias correction for the minimum
    error rate in cross-validation", Ann. Appl. Stat., apply the same idea to tuning): for
    each resample of the questions (with replacement) the winner is re-picked on the
    resample, and its optimism is its mean on the resample minus its mean on all the
    questions (which stand in for the population). The estimate is the average optimism:
    how many points of the winner's score are expected from the choice alone. The average
    noise of all configurations in the same resample (zero in expectation) is subtracted as
    a control variate, so identical configurations, or one far ahead, give exactly 0. It is
    0 for a single configuration; ties go to the first configuration (as ``argmax``).
    """
    x = np.asarray(scores, dtype=float)
    if x.ndim != 2 or x.shape[1] == 0:
        raise WorkbenchError(f"scores must be configurations x questions, got shape {x.shape}")
    if resamples < 1:
        raise WorkbenchError(f"resamples must be >= 1, got {resamples}")
    if x.shape[0] == 1:
        return 0.0
    rng = np.random.default_rng(seed)
    full = x.mean(axis=1)
    total = 0.0
    n = x.shape[1]
    for start in range(0, resamples, 200):  # bounded memory: configs x 200 x n at a time
        idx = rng.integers(0, n, size=(min(200, resamples - start), n))
        means = x[:, idx].mean(axis=2)  # configs x resamples
        winners = means.argmax(axis=0)
        cols = np.arange(means.shape[1])
        drift = means - full[:, None]  # each configuration's resampling noise
        total += float((drift[winners, cols] - drift.mean(axis=0)).sum())
    return total / resamples
