"""The CI gate: baseline, check, ratchet (see :mod:`workbench.gate.check`); the pytest plugin
is :mod:`workbench.gate.pytest_plugin`."""

from __future__ import annotations

from workbench.gate.baseline import DEFAULTS, SCHEMA_VERSION
from workbench.gate.check import (
    Baseline,
    BaselineRefused,
    GateResult,
    MetricCheck,
    check_gate,
    evaluate_pipeline,
    evaluation_from_scores,
    gate_config,
    update_baseline,
)

__all__ = ["DEFAULTS", "SCHEMA_VERSION", "Baseline", "BaselineRefused", "GateResult",
           "MetricCheck", "check_gate", "evaluate_pipeline", "evaluation_from_scores",
           "gate_config", "update_baseline"]
