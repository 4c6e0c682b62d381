"""The gate: the golden set as a CI check.

Owns the baseline file (:mod:`~workbench.gate.baseline`: the recorded pipeline config, the
golden set's hash and every question's value per metric, written atomically), the paired
regression check (:mod:`~workbench.gate.check`) with its verdict
(:mod:`~workbench.gate.result`), the upward-only ratchet (:mod:`~workbench.gate.ratchet`)
and the pytest plugin (:mod:`workbench.gate.pytest_plugin`; register it with
``pytest_plugins = ["workbench.gate.pytest_plugin"]``; it imports pytest, so it is not
imported here). ``workbench gate`` is :mod:`workbench.cli.gate`. The gate checks
Evaluations, it never builds them: a recorded config runs through
:func:`workbench.evaluation.evaluate_pipeline`; :func:`gate_config` and ``DEFAULTS`` (the
pipeline config a baseline records) belong to :mod:`workbench.evaluation.pipeline` and are
named here too.

Layer: may import :mod:`workbench.diagnose` and everything below it (in practice evaluation,
retrieval, chunking and golden).
"""

from __future__ import annotations

from workbench.evaluation.pipeline import DEFAULTS, gate_config
from workbench.gate.baseline import SCHEMA_VERSION, Baseline
from workbench.gate.check import BaselineRefused, check_gate
from workbench.gate.ratchet import update_baseline
from workbench.gate.result import GateResult, MetricCheck

__all__ = ["DEFAULTS", "SCHEMA_VERSION", "Baseline", "BaselineRefused", "GateResult",
           "MetricCheck", "check_gate", "gate_config", "update_baseline"]
