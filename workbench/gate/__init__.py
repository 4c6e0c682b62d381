"""The gate: the golden set as a CI check.

Owns the baseline file (:mod:`~workbench.gate.baseline`: the recorded pipeline config, the
golden set's hash and every question's value per metric, written atomically), the paired
regression check and the upward-only ratchet (:mod:`~workbench.gate.check`; the gate checks
Evaluations, it never builds them: a recorded config runs through
:func:`workbench.evaluation.evaluate_pipeline`, and :func:`gate_config` / ``DEFAULTS`` are
the pipeline config of :mod:`workbench.evaluation.pipeline`, named here too) and the pytest
plugin (:mod:`workbench.gate.pytest_plugin`; register it with
``pytest_plugins = ["workbench.gate.pytest_plugin"]``; it imports pytest, so it is not
imported here). ``workbench gate`` is :mod:`workbench.cli.gate`.

Layer: may import :mod:`workbench.diagnose` and everything below it (in practice evaluation,
retrieval, chunking and golden).
"""

from __future__ import annotations

from workbench.evaluation.pipeline import DEFAULTS, gate_config
from workbench.gate.baseline import SCHEMA_VERSION, Baseline
from workbench.gate.check import (
    BaselineRefused,
    GateResult,
    MetricCheck,
    check_gate,
    update_baseline,
)

__all__ = ["DEFAULTS", "SCHEMA_VERSION", "Baseline", "BaselineRefused", "GateResult",
           "MetricCheck", "check_gate", "gate_config", "update_baseline"]
