"""The gate's check: a paired regression check of an Evaluation against a baseline file.

A *baseline* (JSON) records the pipeline config that produced it, the golden set's
``content_hash``, per-metric mean / n / interval and every question's value per metric.
:func:`check_gate` scores a new :class:`~workbench.evaluation.Evaluation` against it on the
same questions and returns a :class:`~workbench.gate.result.GateResult`. Both the check and
the ratchet (:mod:`workbench.gate.ratchet`) refuse a baseline whose numbers are not
comparable (:class:`BaselineRefused`: another golden set, another relevance).

The rule (one gated metric; the gate fails when any metric fails). A metric fails when
    1. its mean dropped, and
    2. the drop is at least one question's worth: the metric's largest per-question value
       over n (``1 / n`` for 0/1 metrics, MRR, recall: 1.5 points at n=67), and
    3. a one-sided paired test on the same questions gives ``p < alpha`` (default 0.05):
       exact McNemar (binomial on the questions that flipped) for 0/1 metrics such as
       hit rate, sign-flip permutation for graded ones (recall, MRR, nDCG).
No fixed tolerance: a test on the flipped questions adapts to n and to how much the two
pipelines disagree. The smallest failing drop follows from the test: with ``g`` questions
up and ``l`` down, the best case is ``g = 0`` and ``p = 0.5 ** l``, so at least
``l = 5`` questions must fall at alpha 0.05 (7.5 points at n=67); a 1-2 question wobble
never fails. ``correction="holm"`` adjusts the p-values over the gated metrics
(family-wise error) at the cost of seeing less. The report also gives the 80%-power minimal
detectable difference (one-sided) so people know how large a drop the gate reliably sees.

The baseline record and its file live in :mod:`workbench.gate.baseline`; ``workbench gate`` is
:mod:`workbench.cli.gate`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from workbench.evaluation import Evaluation
from workbench.evaluation.pipeline import PATH_KEYS
from workbench.gate.baseline import Baseline, metric_relevance, question_outcomes
from workbench.gate.result import EPS, GateResult, MetricCheck
from workbench.golden import GoldenSet
from workbench.io import WorkbenchError
from workbench.stats import (
    compare_paired,
    holm,
    mcnemar_exact,
    minimal_detectable_difference,
    paired_permutation_test,
)

__all__ = ["BaselineRefused", "check_gate"]


class BaselineRefused(WorkbenchError):
    """The gate or the ratchet refuses: ``reason`` is ``"golden_changed"`` (acknowledge with
    ``allow_golden_change`` / ``golden_changed`` / ``--golden-changed``), ``"lower"`` (the
    ratchet only moves up; ``force=True``), ``"metrics"`` (a gated metric is missing) or
    ``"relevance"`` (the baseline's numbers were judged another way)."""

    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason


def _one_sided(test: str, a: Mapping[str, float], b: Mapping[str, float]) -> float:
    """The one-sided p-value of a drop from ``a`` to ``b``: exact McNemar for 0/1 metrics,
    the sign-flip permutation test otherwise."""
    qids = list(a)
    x, y = np.array([a[q] for q in qids]), np.array([b[q] for q in qids])
    if test == "mcnemar-exact":
        return mcnemar_exact(x, y, alternative="less").p_value
    return paired_permutation_test(x, y, alternative="less")


def refuse_golden_change(baseline: Baseline, golden: GoldenSet | None, qids: set[str],
                  allow: bool) -> bool:
    """Whether the golden set changed since ``baseline`` (its content hash, or the scored
    questions ``qids``); a change raises :class:`BaselineRefused` unless ``allow``."""
    changed_hash = (golden is not None and bool(baseline.golden_hash)
                    and golden.content_hash != baseline.golden_hash)
    changed = changed_hash or qids != set(baseline.outcomes)
    if changed and not allow:
        new, gone = len(qids - set(baseline.outcomes)), len(set(baseline.outcomes) - qids)
        why = (f"its content hash is {golden.content_hash[:12]}, the baseline's "
               f"{baseline.golden_hash[:12]}" if changed_hash and golden is not None else
               "the scored questions differ")
        raise BaselineRefused(
            f"the golden set changed since the baseline ({why}; {new} new, {gone} gone "
            "question(s)): numbers on different questions are not comparable. Acknowledge "
            "with --golden-changed (allow_golden_change=True) to compare the common "
            "questions, then ratchet a new baseline.", "golden_changed")
    return changed


def refuse_other_relevance(base: Baseline, current: Evaluation, metrics: Sequence[str]) -> None:
    """Numbers judged differently (evidence vs chunk ids, another threshold) never gate or
    ratchet each other; a metric of ``current`` that mixes kinds is refused."""
    try:
        now = metric_relevance(current)
    except ValueError as exc:
        raise BaselineRefused(str(exc), "relevance") from None
    for m in metrics:
        was = base.summary.get(m, {}).get("relevance")
        if was is not None and now.get(m) != was:
            raise BaselineRefused(
                f"metric {m!r}: the baseline was judged with relevance {was}, this evaluation "
                f"with {now.get(m)}; the numbers are not comparable. Re-create the baseline "
                "(--update-baseline --force) when the change is deliberate.", "relevance")


def check_gate(current: Evaluation, baseline: Baseline | str | Path, alpha: float = 0.05,
               metrics: Sequence[str] | None = None, *, golden: GoldenSet | None = None,
               allow_golden_change: bool = False, config: Mapping[str, Any] | None = None,
               min_drop: float | None = None, correction: str | None = None,
               power: float = 0.8) -> GateResult:
    """Gate ``current`` against ``baseline`` (see the module doc for the rule).

    ``metrics``: the gated metrics (default: all in the baseline). ``golden``: the golden
    set ``current`` was scored on; a content hash (or question set) other than the
    baseline's raises :class:`BaselineRefused` unless ``allow_golden_change``, which then
    compares the common questions. ``min_drop``: the smallest drop that may fail (default
    one question's worth, ``max per-question value / n``). ``correction="holm"`` adjusts
    the p-values over the gated metrics.
    ``config`` (the current pipeline's) only feeds the report's list of config changes."""
    if not 0.0 < alpha < 1.0:
        raise WorkbenchError(f"alpha must be in (0, 1), got {alpha}")
    if correction not in (None, "holm"):
        raise WorkbenchError(f"correction must be None or 'holm', not {correction!r}")
    base = baseline if isinstance(baseline, Baseline) else Baseline.load(baseline)
    values, cats = question_outcomes(current)
    gated = list(metrics or base.metrics)
    for m in gated:
        where = [w for w, src in (("baseline", base.metrics), ("evaluation", current.metrics))
                 if m not in src]
        if where:
            raise BaselineRefused(f"metric {m!r} is not in the {' or '.join(where)}; gate "
                                  f"one of {base.metrics}", "metrics")
    refuse_other_relevance(base, current, gated)
    changed = refuse_golden_change(base, golden, set(values), allow_golden_change)
    common = sorted(set(values) & set(base.outcomes))
    if not common:
        raise WorkbenchError("the evaluation and the baseline share no questions")
    n = len(common)
    checks = []
    for m in gated:
        a = {q: base.outcomes[q][m] for q in common}
        b = {q: values[q][m] for q in common}
        cmp = compare_paired(a, b, alpha=alpha, bootstrap_resamples=200)
        rate = min(max(cmp.mean_a, 0.05), 0.95)
        lost = tuple((str(f.qid), f.baseline, f.candidate) for f in cmp.flipped
                     if f.direction == "lost")
        gained = tuple((str(f.qid), f.baseline, f.candidate) for f in reversed(cmp.flipped)
                       if f.direction == "gained")
        p = _one_sided(cmp.test, a, b)
        # one question's worth on this metric: its largest per-question value, over n
        top = max([*a.values(), *b.values(), 0.0]) or 1.0
        floor = top / n if min_drop is None else float(min_drop)
        # discordance of two unrelated pipelines: E[(b - a)^2] = 2 Var (2p(1-p) for 0/1)
        var = float(np.var(list(a.values())))
        disc = 2 * var if var > 0 else 2 * rate * (1 - rate)
        mdd = minimal_detectable_difference(n, alpha=min(2 * alpha, 0.99), power=power,
                                            paired_discordance=disc)
        checks.append(MetricCheck(m, n, cmp.mean_a, cmp.mean_b, test=cmp.test, p_value=p,
                                  p_adjusted=p, lost=lost, gained=gained, min_drop=floor,
                                  mdd=mdd, failed=False, delta_ci=cmp.ci))
    adjusted = holm([c.p_value for c in checks]) if correction else [c.p_value for c in checks]
    checks = [replace(c, p_adjusted=pa, failed=c.delta < 0 and -c.delta >= c.min_drop - EPS
                      and pa < alpha) for c, pa in zip(checks, adjusted, strict=True)]
    changes = {k: (base.config.get(k), v) for k, v in (config or {}).items()
               if k not in PATH_KEYS and k in base.config and base.config.get(k) != v}
    return GateResult(tuple(checks), alpha, correction, n, golden_changed=changed,
                      only_in_baseline=tuple(sorted(set(base.outcomes) - set(values))),
                      only_in_current=tuple(sorted(set(values) - set(base.outcomes))),
                      config_changes=changes, baseline_created=base.created,
                      categories={**base.categories, **cats})
