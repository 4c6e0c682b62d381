"""The gate's verdict: :class:`MetricCheck` (one gated metric: means, the paired interval of
the change, the one-sided p-value, the questions that fell and rose, failed or not) and
:class:`GateResult` (every check, what was compared, and the report in words: the rule,
the smallest drop n can see, the questions that moved). :func:`~workbench.gate.check_gate`
computes it; this module only holds and says it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

import pandas as pd

from workbench.stats import one_question

__all__ = ["GateResult", "MetricCheck"]

#: A change of a mean smaller than this is no change (floating-point noise).
EPS = 1e-12


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
    _: KW_ONLY
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
        if self.delta < -EPS:
            return "within noise"
        return "improved" if self.delta > EPS else "unchanged"

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
    _: KW_ONLY
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
