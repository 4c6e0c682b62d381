"""Diagnosis: what happened to each question, and which half of the pipeline to fix.

Owns traces (:mod:`~workbench.diagnose.traces`: what one question went through, recorded as
ids and offsets, saved as JSONL), evidence diagnosis (:mod:`~workbench.diagnose.diagnosis`:
``retrieval_miss``, ``context_loss``, ... per question), the 2x2 triage of retrieval ok x
answer ok (:mod:`~workbench.diagnose.triage`) and golden-set growth from incidents
(:mod:`~workbench.diagnose.growth`).

Layer: may import :mod:`workbench.generation` and everything below it.
"""

from __future__ import annotations

from workbench.diagnose.diagnosis import (
    FACT_STATUSES,
    LABELS,
    Diagnosis,
    FactCheck,
    diagnose_trace,
    diagnosis_table,
    trace_relevance,
)
from workbench.diagnose.growth import case_from_bug_report, case_from_trace
from workbench.diagnose.traces import (
    SCHEMA,
    WITHHELD,
    Trace,
    TraceHit,
    TracePassage,
    load_traces,
    make_trace,
    save_traces,
    trace_question,
    traces_from_result,
)
from workbench.diagnose.triage import QUADRANTS, VERDICTS, Triage, quadrant, triage, triage_rows

__all__ = ["FACT_STATUSES", "LABELS", "QUADRANTS", "SCHEMA", "VERDICTS", "WITHHELD", "Diagnosis",
           "FactCheck", "Trace", "TraceHit", "TracePassage", "Triage", "case_from_bug_report",
           "case_from_trace", "diagnose_trace", "diagnosis_table", "load_traces", "make_trace",
           "quadrant", "save_traces", "trace_question", "trace_relevance", "traces_from_result",
           "triage", "triage_rows"]
