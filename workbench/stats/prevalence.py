"""A rate measured through an imperfect judge: :func:`rogan_gladen` (the corrected rate) and
:func:`rogan_gladen_interval` (its interval, carrying the uncertainty of the judged rate and
of the sensitivity and specificity measured on a calibration set).

Sources: Rogan and Gladen 1978, "Estimating prevalence from the results of a screening
test", Am J Epidemiol 107:71-76; Lang and Reiczigel 2014, "Confidence limits for prevalence
of disease adjusted for estimated sensitivity and specificity", Prev Vet Med 113:13-22."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special

from workbench.io import WorkbenchError

__all__ = ["Count", "rogan_gladen", "rogan_gladen_interval"]

#: ``(successes, trials)``: scalars, or arrays of the same shape for many at once.
Count = tuple[Any, Any]


def rogan_gladen(p_judged: float | np.ndarray, sensitivity: float | np.ndarray,
                 specificity: float | np.ndarray) -> Any:
    """``(p_judged + spec - 1) / (sens + spec - 1)`` clipped to [0, 1], elementwise. Where
    ``sens + spec - 1 <= 0`` (a judge no better than chance) the rate is undefined: NaN,
    without a numpy warning."""
    p, se, sp = (np.asarray(v, dtype=float) for v in (p_judged, sensitivity, specificity))
    youden = se + sp - 1.0
    defined = youden > 0
    safe = np.where(defined, youden, 1.0)
    return np.where(defined, np.clip((p + sp - 1.0) / safe, 0.0, 1.0), np.nan)


def rogan_gladen_interval(judged: Count, sensitivity: Count, specificity: Count,
                          confidence: float = 0.95) -> tuple[Any, Any]:
    """Lang and Reiczigel's (2014) interval for the corrected rate, from three counts:
    ``judged`` = (passes, answers judged), ``sensitivity`` = (true positives, positives of the
    calibration set), ``specificity`` = (true negatives, negatives). Elementwise on arrays.

    The judged rate is adjusted as Agresti-Coull's (``z^2 / 2`` passes and fails added),
    sensitivity and specificity by one success and one failure each; the variance of the
    corrected rate is the delta method's over all three (so the calibration's uncertainty
    widens it), and the centre is shifted by their bias term. Bounds are clipped to [0, 1]
    and widened, where needed, to hold the plain :func:`rogan_gladen` estimate. Where the
    adjusted ``sens + spec - 1`` is not above 0 nothing is known: (0, 1).
    Its coverage, by simulation, is quoted in the README (tests/stats/test_prevalence.py)."""
    if not 0.0 < confidence < 1.0:
        raise WorkbenchError(f"confidence must be in (0, 1), got {confidence}")
    (k, n), (tp, pos), (tn, neg) = ((np.asarray(s, dtype=float), np.asarray(t, dtype=float))
                                    for s, t in (judged, sensitivity, specificity))
    for (s, t), what in (((k, n), "judged"), ((tp, pos), "sensitivity"),
                         ((tn, neg), "specificity")):
        if np.any(t < 1) or np.any(s < 0) or np.any(s > t):
            raise WorkbenchError(f"{what} must be (successes, trials) with 0 <= successes <= "
                                 "trials and trials >= 1")
    z = float(special.ndtri(0.5 + confidence / 2.0))
    n_ap, n_se, n_sp = n + z * z, pos + 2.0, neg + 2.0
    ap, se, sp = (k + z * z / 2.0) / n_ap, (tp + 1.0) / n_se, (tn + 1.0) / n_sp
    youden = se + sp - 1.0
    known = youden > 0
    j = np.where(known, youden, 1.0)
    rate = (ap + sp - 1.0) / j
    var_se, var_sp = se * (1.0 - se) / n_se, sp * (1.0 - sp) / n_sp
    sd = np.sqrt(ap * (1.0 - ap) / n_ap + var_se * rate ** 2 + var_sp * (1.0 - rate) ** 2) / j
    centre = rate + 2.0 * z * z * (rate * var_se - (1.0 - rate) * var_sp)
    plug_in = rogan_gladen(k / n, tp / pos, tn / neg)  # NaN at chance: fmin/fmax skip it
    low = np.fmin(np.where(known, np.clip(centre - z * sd, 0.0, 1.0), 0.0), plug_in)
    high = np.fmax(np.where(known, np.clip(centre + z * sd, 0.0, 1.0), 1.0), plug_in)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high
