"""The gate: the golden set as a CI check.

Owns the baseline file (:mod:`~workbench.gate.baseline`: the recorded pipeline config, the
golden set's hash and every question's value per metric, written atomically), the paired
regression check and the upward-only ratchet (:mod:`~workbench.gate.check`) and the pytest
plugin (:mod:`workbench.gate.pytest_plugin`; register it with
``pytest_plugins = ["workbench.gate.pytest_plugin"]``; it imports pytest, so it is not
imported here). ``workbench gate`` is :mod:`workbench.cli.gate`.

Layer: may import :mod:`workbench.diagnose` and everything below it (in practice evaluation,
retrieval, chunking and golden).
"""

from __future__ import annotations

from workbench.gate.baseline import DEFAULTS, SCHEMA_VERSION, Baseline, gate_config
from workbench.gate.check import (
    BaselineRefused,
    GateResult,
    MetricCheck,
    check_gate,
    evaluate_pipeline,
    evaluation_from_scores,
    update_baseline,
)

__all__ = ["DEFAULTS", "SCHEMA_VERSION", "Baseline", "BaselineRefused", "GateResult",
           "MetricCheck", "check_gate", "evaluate_pipeline", "evaluation_from_scores",
           "gate_config", "update_baseline"]
