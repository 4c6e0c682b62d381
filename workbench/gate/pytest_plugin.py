"""pytest plugin: the retrieval gate inside a project's own test suite.

Register it in the root ``conftest.py``::

    pytest_plugins = ["workbench.gate.pytest_plugin"]

then use the ``retrieval_gate`` fixture (or call :func:`assert_no_regression` anywhere)::

    def test_retrieval_did_not_regress(retrieval_gate):
        retrieval_gate.pipeline("evals/baseline.json")          # re-run the recorded pipeline

    def test_my_retriever(retrieval_gate):
        ev = wb.evaluate(wb.wrap(my_search), golden, chunks, k=5)
        retrieval_gate(ev, "evals/my_baseline.json", golden=golden)

A failing gate fails the test with the gate's report (metrics that regressed and the qids
that fell). ``pytest --workbench-update-baseline`` writes the baselines instead (ratchet:
upward only, see :func:`workbench.gate.update_baseline`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from workbench.evaluation import Evaluation
from workbench.evaluation.pipeline import evaluate_pipeline
from workbench.gate.baseline import Baseline
from workbench.gate.check import check_gate
from workbench.gate.ratchet import update_baseline
from workbench.gate.result import GateResult
from workbench.golden import GoldenSet

__all__ = ["GenerationGate", "RetrievalGate", "assert_no_regression", "generation_gate",
           "retrieval_gate"]


def assert_no_regression(evaluation: Evaluation, baseline_path: str | Path, *,
                         golden: GoldenSet | None = None, alpha: float = 0.05,
                         metrics: Sequence[str] | None = None,
                         allow_golden_change: bool = False) -> GateResult:
    """Gate ``evaluation`` against the baseline file; raise ``AssertionError`` carrying the
    report when a metric regressed, else return the :class:`GateResult`."""
    __tracebackhide__ = True
    result = check_gate(evaluation, Baseline.load(baseline_path), alpha, metrics,
                        golden=golden, allow_golden_change=allow_golden_change)
    if not result.passed:
        raise AssertionError(result.report())
    return result


class RetrievalGate:
    """What the ``retrieval_gate`` fixture gives: call it on an Evaluation, or run a
    baseline's recorded pipeline with :meth:`pipeline`. With ``update=True`` (the
    ``--workbench-update-baseline`` option) it ratchets the baseline instead of failing."""

    def __init__(self, update: bool = False, alpha: float = 0.05):
        self.update = update
        self.alpha = alpha

    def __call__(self, evaluation: Evaluation, baseline_path: str | Path, *,
                 golden: GoldenSet | None = None, config: Mapping[str, Any] | None = None,
                 metrics: Sequence[str] | None = None,
                 allow_golden_change: bool = False) -> GateResult | None:
        __tracebackhide__ = True
        path = Path(baseline_path)
        if self.update or not path.exists():
            if not self.update:
                pytest.fail(f"{path}: baseline not found; run pytest with "
                            "--workbench-update-baseline once to create it", pytrace=False)
            update_baseline(path, evaluation, dict(config or {}), golden,
                            golden_changed=allow_golden_change, metrics=metrics)
            return None
        result = check_gate(evaluation, Baseline.load(path), self.alpha, metrics,
                            golden=golden, allow_golden_change=allow_golden_change,
                            config=config)
        if not result.passed:
            pytest.fail(result.report(), pytrace=False)
        return result

    def pipeline(self, baseline_path: str | Path, allow_golden_change: bool = False,
                 **overrides: Any) -> GateResult | None:
        """Re-run the pipeline recorded in the baseline (options overridden by keyword,
        e.g. ``chunker="recursive:size=300"``) and gate it."""
        __tracebackhide__ = True
        base = Baseline.load(baseline_path)
        config = {**base.config, **overrides}
        evaluation, golden = evaluate_pipeline(config)
        return self(evaluation, baseline_path, golden=golden, config=config,
                    allow_golden_change=allow_golden_change)


class GenerationGate:
    """What the ``generation_gate`` fixture gives: ``generation_gate(generator, path)``
    re-runs the generation baseline's recorded pipeline with ``generator`` (answers cached)
    and gates answer accuracy (:mod:`workbench.gate.generation`); a changed pin fails the
    test with the change named. With ``update=True`` it ratchets the baseline instead."""

    def __init__(self, update: bool = False, alpha: float = 0.05):
        self.update = update
        self.alpha = alpha

    def __call__(self, generator: Any, baseline_path: str | Path, *, judge: Any = None,
                 cache: Any = None, **overrides: Any) -> GateResult | None:
        from workbench.gate.check import BaselineRefused
        from workbench.gate.generation import (
            check_generation_gate,
            evaluate_generation,
            update_generation_baseline,
        )

        __tracebackhide__ = True
        path = Path(baseline_path)
        if not path.exists() and not self.update:
            pytest.fail(f"{path}: generation baseline not found; run pytest with "
                        "--workbench-update-baseline once to create it", pytrace=False)
        config = {**(Baseline.load(path).config if path.exists() else {}), **overrides}
        ev, golden, recorded = evaluate_generation(generator, config, judge=judge, cache=cache)
        try:
            if self.update:
                update_generation_baseline(path, ev, recorded, golden)
                return None
            result = check_generation_gate(ev, path, recorded, golden, alpha=self.alpha)
        except BaselineRefused as exc:
            pytest.fail(str(exc), pytrace=False)
        if not result.passed:
            pytest.fail(result.report(), pytrace=False)
        return result


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("workbench", "RAG Workbench retrieval gate")
    group.addoption("--workbench-update-baseline", action="store_true", default=False,
                    dest="workbench_update_baseline",
                    help="write gate baselines instead of checking them (upward only)")
    group.addoption("--workbench-alpha", type=float, default=0.05, dest="workbench_alpha",
                    help="one-sided test level of the retrieval gate (default 0.05)")


@pytest.fixture
def retrieval_gate(request: pytest.FixtureRequest) -> RetrievalGate:
    """A :class:`RetrievalGate`: ``retrieval_gate(evaluation, "evals/baseline.json")``."""
    return RetrievalGate(bool(request.config.getoption("workbench_update_baseline", False)),
                         float(request.config.getoption("workbench_alpha", 0.05)))


@pytest.fixture
def generation_gate(request: pytest.FixtureRequest) -> GenerationGate:
    """A :class:`GenerationGate`: ``generation_gate(generator, "evals/generation.json")``."""
    return GenerationGate(bool(request.config.getoption("workbench_update_baseline", False)),
                          float(request.config.getoption("workbench_alpha", 0.05)))
