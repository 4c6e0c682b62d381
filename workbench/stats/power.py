"""How big a difference can n questions see? :func:`one_question`,
:func:`minimal_detectable_difference` and :func:`questions_needed` (normal approximation for
a paired two-sided test)."""

from __future__ import annotations

import math

from scipy import special

from workbench.io import WorkbenchError


def one_question(n: int) -> float:
    """What one question is worth in a mean over ``n`` questions: ``1 / n`` (0.02 at n=50)."""
    if n < 1:
        raise WorkbenchError(f"n must be >= 1, got {n}")
    return 1.0 / n


def _z_sum(alpha: float, power: float) -> float:
    if not 0.0 < alpha < 1.0:
        raise WorkbenchError(f"alpha must be in (0, 1), got {alpha}")
    if not 0.0 < power < 1.0:
        raise WorkbenchError(f"power must be in (0, 1), got {power}")
    return float(special.ndtri(1.0 - alpha / 2.0) + special.ndtri(power))


def _discordance(baseline_rate: float, paired_discordance: float | None) -> float:
    if paired_discordance is not None:
        if not paired_discordance > 0.0:
            raise WorkbenchError(f"paired_discordance must be > 0, got {paired_discordance}")
        return float(paired_discordance)
    if not 0.0 < baseline_rate < 1.0:
        raise WorkbenchError(f"baseline_rate must be in (0, 1), got {baseline_rate}")
    return 2.0 * baseline_rate * (1.0 - baseline_rate)


def minimal_detectable_difference(
    n: int,
    baseline_rate: float = 0.7,
    *,
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
        raise WorkbenchError(f"n must be >= 1, got {n}")
    z = _z_sum(alpha, power)
    return z * math.sqrt(_discordance(baseline_rate, paired_discordance) / n)


def questions_needed(
    difference: float,
    baseline_rate: float = 0.7,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    paired_discordance: float | None = None,
) -> int:
    """Golden-set size at which :func:`minimal_detectable_difference` falls to ``difference``:
    ``ceil((z_{1-alpha/2} + z_{power})^2 * d / difference^2)``, same conventions."""
    if not difference > 0.0:
        raise WorkbenchError(f"difference must be > 0, got {difference}")
    z = _z_sum(alpha, power)
    d = _discordance(baseline_rate, paired_discordance)
    return max(1, math.ceil(z * z * d / (difference * difference) - 1e-9))
