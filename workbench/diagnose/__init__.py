"""Diagnosis: traces, evidence diagnosis, golden-set growth and the 2x2 triage."""

from __future__ import annotations

from workbench.diagnose.diagnosis import (
    FACT_STATUSES,
    LABELS,
    SCHEMA,
    Diagnosis,
    FactCheck,
    Trace,
    TraceHit,
    TracePassage,
    case_from_bug_report,
    case_from_trace,
    diagnose,
    diagnosis_table,
    load_traces,
    make_trace,
    save_traces,
    trace_question,
    traces_from_result,
)
from workbench.diagnose.triage import QUADRANTS, Triage, quadrant, triage, triage_rows

__all__ = ["FACT_STATUSES", "LABELS", "QUADRANTS", "SCHEMA", "Diagnosis", "FactCheck", "Trace",
           "TraceHit", "TracePassage", "Triage", "case_from_bug_report", "case_from_trace",
           "diagnose", "diagnosis_table", "load_traces", "make_trace", "quadrant", "save_traces",
           "trace_question", "traces_from_result", "triage", "triage_rows"]
