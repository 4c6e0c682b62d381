"""The gate's check and ratchet: a paired regression check against a baseline file.

A *baseline* (JSON) records the pipeline config that produced it, the golden set's
``content_hash``, per-metric mean / n / interval and every question's value per metric.
:func:`check_gate` scores a new :class:`~workbench.evaluation.Evaluation` against it on the
same questions; :func:`update_baseline` writes a new baseline only when no gated metric
went down (the ratchet). Writes are atomic.

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

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workbench.evaluation import Evaluation
from workbench.evaluation.pipeline import PATH_KEYS
from workbench.gate.baseline import Baseline, metric_relevance, question_outcomes
from workbench.gate.history import append_changelog
from workbench.golden import GoldenSet
from workbench.io import FileStamp, InputError, WorkbenchError, locked
from workbench.stats import (
    compare_paired,
    holm,
    mcnemar_exact,
    minimal_detectable_difference,
    one_question,
    paired_permutation_test,
)

__all__ = ["BaselineRefused", "GateResult", "MetricCheck", "check_gate", "update_baseline"]

_EPS = 1e-12


class BaselineRefused(WorkbenchError):
    """The gate or the ratchet refuses: ``reason`` is ``"golden_changed"`` (acknowledge with
    ``allow_golden_change`` / ``golden_changed`` / ``--golden-changed``), ``"lower"`` (the
    ratchet only moves up; ``force=True``), ``"metrics"`` (a gated metric is missing) or
    ``"relevance"`` (the baseline's numbers were judged another way)."""

    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason


# ----------------------------------------------------------------------------- check


@dataclass(frozen=True)
class MetricCheck:
    """One gated metric: means on the compared questions, the paired 95% interval of the
    change (a bootstrap over questions: it describes the size, the test decides), the
    one-sided p-value of "the current pipeline is worse", the questions that fell / rose and
    whether it failed."""

    metric: str
    n: int
    baseline: float
    current: float
    test: str
    p_value: float
    p_adjusted: float
    lost: tuple[tuple[str, float, float], ...]
    gained: tuple[tuple[str, float, float], ...]
    min_drop: float
    mdd: float
    failed: bool
    delta_ci: tuple[float, float] = (float("nan"), float("nan"))

    @property
    def delta(self) -> float:
        return self.current - self.baseline

    @property
    def verdict(self) -> str:
        if self.failed:
            return "REGRESSED"
        if self.delta < -_EPS:
            return "within noise"
        return "improved" if self.delta > _EPS else "unchanged"

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "n": self.n, "baseline": self.baseline,
                "current": self.current, "delta": self.delta,
                "delta_ci_low": self.delta_ci[0], "delta_ci_high": self.delta_ci[1],
                "test": self.test,
                "p_one_sided": self.p_value, "p_adjusted": self.p_adjusted,
                "down": len(self.lost), "up": len(self.gained),
                "lost": [list(x) for x in self.lost], "gained": [list(x) for x in self.gained],
                "min_drop": self.min_drop, "mdd_80": self.mdd, "failed": self.failed,
                "verdict": self.verdict}


def _min_fall(alpha: float, tests: int = 1) -> int:
    """Fewest questions that must fall (none rising) for a one-sided ``p = 0.5 ** l`` below
    ``alpha`` (below ``alpha / tests`` for the smallest Holm-adjusted p-value)."""
    return max(1, math.floor(math.log2(tests / alpha)) + 1)


@dataclass(frozen=True)
class GateResult:
    """The verdict: ``passed``, one :class:`MetricCheck` per gated metric, the questions that
    regressed / improved, and what was compared (``report()`` says it in words)."""

    checks: tuple[MetricCheck, ...]
    alpha: float
    correction: str | None
    n: int
    golden_changed: bool = False
    only_in_baseline: tuple[str, ...] = ()
    only_in_current: tuple[str, ...] = ()
    config_changes: Mapping[str, tuple[Any, Any]] = field(default_factory=dict)
    baseline_created: str = ""
    categories: Mapping[str, str] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return not any(c.failed for c in self.checks)

    @property
    def min_questions_to_fail(self) -> int:
        """Fewest questions that must fall (none rising) before any metric can fail."""
        return _min_fall(self.alpha, len(self.checks) if self.correction else 1)

    @property
    def failed_metrics(self) -> list[str]:
        return [c.metric for c in self.checks if c.failed]

    def _moved(self, attr: str) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for c in self.checks:
            for q, _, _ in getattr(c, attr):
                out.setdefault(q, []).append(c.metric)
        return dict(sorted(out.items()))

    @property
    def regressed(self) -> dict[str, list[str]]:
        """qid -> the gated metrics on which that question's value fell."""
        return self._moved("lost")

    @property
    def improved(self) -> dict[str, list[str]]:
        """qid -> the gated metrics on which that question's value rose."""
        return self._moved("gained")

    def table(self) -> pd.DataFrame:
        cols = ["metric", "n", "baseline", "current", "delta", "delta_ci_low", "delta_ci_high",
                "down", "up", "test", "p_one_sided", "verdict"]
        return pd.DataFrame([c.to_dict() for c in self.checks], columns=cols).set_index("metric")

    def rule(self) -> str:
        corr = f", {self.correction}-adjusted over the {len(self.checks)} metrics" \
            if self.correction else ""
        return (f"a metric fails when its mean dropped by at least one question's worth "
                f"({one_question(max(self.n, 1)) * 100:.1f} points at n={self.n} for a metric "
                "scored 0 to 1 per question) and a "
                f"one-sided paired test on the same questions gives p < {self.alpha:g}{corr} "
                "(exact McNemar for 0/1 metrics, sign-flip permutation otherwise)")

    def report(self, limit: int = 20) -> str:
        head = "PASSED" if self.passed else (
            f"FAILED: {', '.join(self.failed_metrics)} regressed")
        lines = [f"Retrieval gate {head}", f"compared n={self.n} questions against the "
                 f"baseline{' of ' + self.baseline_created if self.baseline_created else ''}"]
        if self.golden_changed or self.only_in_baseline or self.only_in_current:
            lines.append(f"golden set changed (acknowledged): compared only the {self.n} "
                         f"questions in both; {len(self.only_in_baseline)} only in the "
                         f"baseline, {len(self.only_in_current)} new")
        for key, (old, new) in self.config_changes.items():
            lines.append(f"config change: {key}: {old} -> {new}")
        lines.append(f"{'metric':<16}{'baseline':>9}{'now':>8}{'change':>9}  down/up  "
                     f"{'p(worse)':>9}  verdict")
        for c in self.checks:
            lines.append(f"{c.metric:<16}{c.baseline:>9.3f}{c.current:>8.3f}"
                         f"{c.delta * 100:>+8.1f}p  {len(c.lost):>4}/{len(c.gained):<3} "
                         f"{c.p_adjusted:>9.3g}  {c.verdict}")
        for c in self.checks:
            if c.failed:
                shown = ", ".join(f"{q} ({a:.2f}->{b:.2f}, {self.categories.get(q, '?')})"
                                  for q, a, b in c.lost[:limit])
                more = f" and {len(c.lost) - limit} more" if len(c.lost) > limit else ""
                lines.append(f"regressed on {c.metric}: {shown}{more}")
        for name, moved in (("fell", self.regressed), ("rose", self.improved)):
            if moved:
                qids = list(moved)
                more = f" and {len(qids) - limit} more" if len(qids) > limit else ""
                lines.append(f"questions that {name} on any gated metric: {len(qids)} "
                             f"({', '.join(qids[:limit])}{more})")
        low = self.min_questions_to_fail
        mdd = ", ".join(f"{c.metric} {c.mdd * 100:.0f}" for c in self.checks)
        lines.append(f"what n={self.n} can see: one question = "
                     f"{one_question(max(self.n, 1)) * 100:.1f} points; a metric fails only "
                     f"when at least {low} questions fall (for a 0/1 metric "
                     f"{low / max(self.n, 1) * 100:.1f} points, none rising); drops caught "
                     f"with 80% power between unrelated pipelines: {mdd} points")
        lines.append(f"rule: {self.rule()}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.report()

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "alpha": self.alpha, "correction": self.correction,
                "n": self.n, "failed_metrics": self.failed_metrics,
                "metrics": [c.to_dict() for c in self.checks], "regressed": self.regressed,
                "improved": self.improved, "golden_changed": self.golden_changed,
                "only_in_baseline": list(self.only_in_baseline),
                "only_in_current": list(self.only_in_current),
                "config_changes": {k: list(v) for k, v in self.config_changes.items()},
                "baseline_created": self.baseline_created,
                "min_questions_to_fail": self.min_questions_to_fail, "rule": self.rule()}


def _one_sided(test: str, a: Mapping[str, float], b: Mapping[str, float]) -> float:
    """The one-sided p-value of a drop from ``a`` to ``b``: exact McNemar for 0/1 metrics,
    the sign-flip permutation test otherwise."""
    qids = list(a)
    x, y = np.array([a[q] for q in qids]), np.array([b[q] for q in qids])
    if test == "mcnemar-exact":
        return mcnemar_exact(x, y, alternative="less").p_value
    return paired_permutation_test(x, y, alternative="less")


def _golden_check(baseline: Baseline, golden: GoldenSet | None, qids: set[str],
                  allow: bool) -> bool:
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


def _relevance_check(base: Baseline, current: Evaluation, metrics: Sequence[str]) -> None:
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
    _relevance_check(base, current, gated)
    changed = _golden_check(base, golden, set(values), allow_golden_change)
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
        checks.append(MetricCheck(m, n, cmp.mean_a, cmp.mean_b, cmp.test, p, p, lost, gained,
                                  floor, mdd, failed=False, delta_ci=cmp.ci))
    adjusted = holm([c.p_value for c in checks]) if correction else [c.p_value for c in checks]
    checks = [replace(c, p_adjusted=pa, failed=c.delta < 0 and -c.delta >= c.min_drop - _EPS
                      and pa < alpha) for c, pa in zip(checks, adjusted, strict=True)]
    changes = {k: (base.config.get(k), v) for k, v in (config or {}).items()
               if k not in PATH_KEYS and k in base.config and base.config.get(k) != v}
    return GateResult(tuple(checks), alpha, correction, n, changed,
                      tuple(sorted(set(base.outcomes) - set(values))),
                      tuple(sorted(set(values) - set(base.outcomes))), changes, base.created,
                      {**base.categories, **cats})


# ----------------------------------------------------------------------------- ratchet


def update_baseline(path: str | Path, current: Evaluation, config: Mapping[str, Any],
                    golden: GoldenSet | None, *, force: bool = False,
                    golden_changed: bool = False, metrics: Sequence[str] | None = None
                    ) -> Baseline:
    """Write ``current`` as the baseline at ``path`` (atomically), ratcheting upward only.

    With an existing baseline it raises :class:`BaselineRefused` when the golden set changed
    and ``golden_changed`` is not given, or when any gated metric (default: every metric in
    the old baseline) has a lower mean on the questions both share or was judged with
    another relevance (e.g. another ``evidence_threshold``), unless ``force``. Every write
    appends its line to the changelog beside the baseline (:mod:`workbench.gate.history`)."""
    path = Path(path)
    new = Baseline.from_evaluation(current, config, golden)
    with locked(path):  # the ratchet compares with the file as it is when it writes
        return _ratchet(path, new, current, golden, force, golden_changed, metrics)


def _stamp_of(path: Path) -> FileStamp:
    """The stamp of the bytes of a file that does not load as a baseline (a forced ratchet
    replaces it, unless it changes meanwhile)."""
    try:
        return FileStamp.of(path.read_bytes())
    except OSError as exc:
        raise InputError(str(path), f"cannot read the baseline ({exc.strerror or exc})"
                         ) from None


def _ratchet(path: Path, new: Baseline, current: Evaluation, golden: GoldenSet | None,
             force: bool, golden_changed: bool, metrics: Sequence[str] | None) -> Baseline:
    old: Baseline | None = None
    seen: FileStamp | None = None  # what the file held when the ratchet read it
    if path.exists():
        try:
            old = Baseline.load(path)
            seen = old.stamp
        except InputError:
            if not force:
                raise
            seen = _stamp_of(path)
    if old is not None and not force:
        values, _ = question_outcomes(current)
        _golden_check(old, golden, set(values), golden_changed)
        common = sorted(set(values) & set(old.outcomes))
        gated = list(metrics or old.metrics)
        for m in gated:
            if m not in current.metrics:
                raise BaselineRefused(f"{path}: metric {m!r} is in the baseline but not in the "
                                      "new evaluation; score it too, or use force=True "
                                      "(--force) to drop it", "metrics")
        _relevance_check(old, current, gated)
        lower = []
        for m in gated:
            was = float(np.mean([old.outcomes[q][m] for q in common]))
            now = float(np.mean([values[q][m] for q in common]))
            if now < was - 1e-9:
                lower.append(f"{m} {was:.3f} -> {now:.3f}")
        if lower:
            raise BaselineRefused(
                f"{path}: refusing to lower the baseline ({'; '.join(lower)} on {len(common)} "
                "questions): the ratchet only moves up. Fix the regression, or use force=True "
                "(--force) if the drop is deliberate, and say why in the commit.", "lower")
    new.save(path, replacing=seen)
    append_changelog(path, old, new, forced=force)
    return Baseline.load(path)
