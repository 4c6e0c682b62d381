"""Evidence diagnosis: why did this question fail?

A :class:`~workbench.diagnose.traces.Trace` records one question in one run, ids and offsets
only (:mod:`workbench.diagnose.traces`).

:func:`diagnose_trace` compares a trace with its golden item, evidence unit by evidence unit (an
evidence span, or a labelled chunk id), and names what broke. A span counts as retrieved
when the recorded chunks together hold it (relevance as in
:class:`workbench.metrics.Relevance`, at the same coverage threshold as the metrics), so a
chunk that grazes a span by a few characters does not hide a miss:

* ``retrieval_miss``: required evidence never retrieved;
* ``context_loss``: retrieved, but not in the final context (cut by the budget, dropped);
* ``unrecorded_context``: in the context, but not among the recorded retrieval/expansion;
* ``unknown_citation``: the answer cites a label the context does not hold;
* ``superseded_source``: the answer cites (or, uncited, is copied from) a superseded document.

Each must-mention fact gets a status: ``cited`` (stated, citing a passage that holds it),
``used_uncited``, ``cited_wrong_passage``, ``retrieved_unused`` (in the context, answer lacks
it), ``not_in_context`` (retrieved, then dropped) or ``not_retrieved``. An empty label list
only says the ids line up; whether the answer is right is the grade's job.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field

import pandas as pd

from workbench.corpus import Chunk, Document, is_superseded
from workbench.diagnose.traces import Trace
from workbench.generation.grading import answer_tokens, grade_answer, missing_mentions
from workbench.golden import GoldenItem, GoldenSet
from workbench.io import WorkbenchError
from workbench.metrics import DEFAULT_EVIDENCE_THRESHOLD, DEFAULT_GRADE_THRESHOLD, Relevance

__all__ = ["FACT_STATUSES", "LABELS", "Diagnosis", "FactCheck", "diagnose_trace", "diagnosis_table",
           "trace_relevance"]

LABELS = {
    "retrieval_miss": "required evidence was never retrieved",
    "context_loss": "evidence was retrieved but is not in the context the model saw",
    "unrecorded_context": "the context holds a chunk that no recorded retrieval produced",
    "unknown_citation": "the answer cites a label that names no passage of the context",
    "superseded_source": "the answer rests on a superseded version of a document",
}
FACT_STATUSES = ("cited", "used_uncited", "cited_wrong_passage", "retrieved_unused",
                 "not_in_context", "not_retrieved")


# ----------------------------------------------------------------------------- diagnosis

@dataclass(frozen=True)
class FactCheck:
    """One must-mention fact: its status and the recorded chunks whose text holds it."""

    fact: str
    status: str
    chunk_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Diagnosis:
    """``labels`` (see :data:`LABELS`) with the ids behind each in ``evidence``; ``facts``
    per must-mention string; ``passed`` the grade; ``required`` the chunk ids holding each
    evidence unit under this chunking."""

    qid: str
    labels: tuple[str, ...]
    evidence: Mapping[str, tuple[str, ...]] = field(hash=False)
    facts: tuple[FactCheck, ...]
    _: KW_ONLY
    passed: bool | None
    required: tuple[tuple[str, ...], ...]
    retrieved_ok: bool | None = None

    @property
    def ids_ok(self) -> bool:
        return not self.labels

    def summary(self) -> str:
        parts = [f"{lab}: {', '.join(self.evidence.get(lab, ())) or '-'}" for lab in self.labels]
        bad = [f"{f.fact!r} {f.status}" for f in self.facts if f.status != "cited"]
        verdict = {True: "passed", False: "failed", None: "undecided"}[self.passed]
        return f"{self.qid} {verdict}; " + ("; ".join(parts + bad) or "ids line up")


def _holds(text: str, fact: str) -> bool:
    return not missing_mentions(text, [fact])


def trace_relevance(traces: Iterable[Trace], golden: Iterable[GoldenItem],
                    chunks: Sequence[Chunk] | Mapping[str, Chunk],
                    evidence_threshold: float = DEFAULT_EVIDENCE_THRESHOLD) -> Relevance:
    """One :class:`~workbench.metrics.Relevance` for the golden items that ``traces`` ask
    about, under ``chunks``: what :func:`diagnose_trace` builds per trace, built once for a
    loop of them (pass it as ``relevance=``)."""
    items = {i.qid: i for i in golden}
    asked = dict.fromkeys(t.qid for t in traces)
    chunk_list = list(chunks.values()) if isinstance(chunks, Mapping) else list(chunks)
    return Relevance([items[q] for q in asked if q in items], chunk_list,
                     evidence_threshold=evidence_threshold)


def _check_relevance(relevance: Relevance, item: GoldenItem, by_id: Mapping[str, Chunk],
                     evidence_threshold: float) -> None:
    """Refuse a prebuilt ``relevance`` that would judge ``item`` otherwise than
    ``Relevance([item], chunks, evidence_threshold)`` does."""
    where = "diagnose_trace(relevance=...)"
    fix = "build it with trace_relevance(traces, golden, chunks, evidence_threshold)"
    if relevance.evidence_threshold != float(evidence_threshold):
        raise WorkbenchError(f"{where}: built with evidence_threshold "
                         f"{relevance.evidence_threshold:g}, the diagnosis asks "
                         f"{float(evidence_threshold):g}; {fix}")
    if relevance.grade_threshold != DEFAULT_GRADE_THRESHOLD:
        raise WorkbenchError(f"{where}: built with grade threshold {relevance.grade_threshold}, "
                         f"the diagnosis judges at {DEFAULT_GRADE_THRESHOLD}; {fix}")
    known = item.qid in relevance.items or any(item.qid in q for q in relevance.excluded.values())
    if not known or relevance.items.get(item.qid, item) != item:
        raise WorkbenchError(f"{where}: it does not hold golden item {item.qid!r} as given; {fix}")
    index = relevance.index
    if index is None or len(index.where) != len(by_id) or any(
            index.where.get(cid) != (c.doc_id, c.start, c.end) for cid, c in by_id.items()):
        raise WorkbenchError(f"{where}: it was built over another chunking than the chunks "
                         f"given; {fix}")


def diagnose_trace(trace: Trace, item: GoldenItem,
                   chunks: Sequence[Chunk] | Mapping[str, Chunk],
                   corpus: Mapping[str, Document] | None = None,
                   *, evidence_threshold: float = DEFAULT_EVIDENCE_THRESHOLD,
                   relevance: Relevance | None = None) -> Diagnosis:
    """Diagnose one trace against its golden item (see module doc). ``corpus`` is used for
    document versions the trace did not record. ``relevance``: a prebuilt judgment of the
    golden items under ``chunks`` (:func:`trace_relevance`), so a loop over traces indexes
    the chunking once; it must match ``chunks``, ``item`` and ``evidence_threshold``."""
    chunk_list = list(chunks.values()) if isinstance(chunks, Mapping) else list(chunks)
    by_id = {c.id: c for c in chunk_list}
    if relevance is None:
        relevance = Relevance([item], chunk_list, evidence_threshold=evidence_threshold)
    else:
        _check_relevance(relevance, item, by_id, evidence_threshold)
    judged = item.qid in relevance.items
    units = relevance.unit_chunks(item.qid) if judged else []
    retrieved = relevance.found_ranks(item.qid, trace.retrieved_ids) if judged else []
    in_context = relevance.found_ranks(item.qid, trace.context_ids) if judged else []
    found = set(trace.retrieved_ids)
    supplied = set(trace.context_ids)
    evidence: dict[str, tuple[str, ...]] = {}
    missed = [u for u, r in zip(units, retrieved, strict=True) if r == float("inf")]
    lost = [u for u, r, c in zip(units, retrieved, in_context, strict=True)
            if r != float("inf") and c == float("inf")]
    if missed:
        evidence["retrieval_miss"] = tuple(c for u in missed for c in (u or ("<no chunk>",)))
    if lost:
        evidence["context_loss"] = tuple(c for u in lost for c in u if c in found)
    if supplied - found:
        evidence["unrecorded_context"] = tuple(c for c in trace.context_ids if c not in found)
    unknown = [lab for lab in trace.unknown_citations if lab not in trace.labels]
    if unknown:
        evidence["unknown_citation"] = tuple(unknown)

    recorded_doc = {p.chunk_id: p.doc_id for p in trace.context if p.doc_id}

    def superseded(cid: str) -> bool:  # the chunk's document: as recorded, else its chunk's
        doc = recorded_doc.get(cid) or (by_id[cid].doc_id if cid in by_id else None)
        if doc is None:
            return False
        if doc in trace.doc_versions:
            return trace.is_superseded(doc)
        d = corpus.get(doc) if corpus is not None else None
        return d is not None and is_superseded(d)

    cited = list(trace.citations.values())
    grounds = cited or _copied_from(trace, by_id)
    old = tuple(c for c in grounds if superseded(c))
    if old:
        evidence["superseded_source"] = old
    facts = []
    for fact in item.answer_must_mention:
        holders_ctx = [c for c in trace.context_ids if c in by_id and _holds(by_id[c].text, fact)]
        holders = [c for c in trace.retrieved_ids if c in by_id and _holds(by_id[c].text, fact)]
        if _holds(trace.answer, fact):
            status = ("cited" if set(cited) & set(holders_ctx) else
                      "cited_wrong_passage" if cited else "used_uncited")
        else:
            status = ("retrieved_unused" if holders_ctx else
                      "not_in_context" if holders else "not_retrieved")
        facts.append(FactCheck(fact, status, tuple(dict.fromkeys(holders_ctx + holders))))
    passed = trace.passed if trace.grade is not None else grade_answer(item, trace.answer).passed
    return Diagnosis(trace.qid, tuple(lab for lab in LABELS if lab in evidence), evidence,
                     tuple(facts), passed=passed, required=tuple(units),
                     retrieved_ok=relevance.retrieved_rank(item.qid,
                                                           trace.retrieved_ids) is not None
                     if units else None)


def _copied_from(trace: Trace, by_id: Mapping[str, Chunk]) -> list[str]:
    """For an uncited answer: the context passage that most of its words come from."""
    words = {t for t in answer_tokens(trace.answer) if len(t) > 2 or t.isdigit()}
    best, share = None, 0.6
    for cid in trace.context_ids:
        if cid in by_id and words:
            s = len(words & set(answer_tokens(by_id[cid].text))) / len(words)
            if s >= share:
                best, share = cid, s
    return [best] if best else []


def diagnosis_table(traces: Iterable[Trace], golden: GoldenSet | Sequence[GoldenItem],
                    chunks: Sequence[Chunk], corpus: Mapping[str, Document] | None = None,
                    *, evidence_threshold: float = DEFAULT_EVIDENCE_THRESHOLD) -> pd.DataFrame:
    """One row per trace: qid, mode, category, passed, labels, facts (status per fact)."""
    traces = list(traces)
    items = {i.qid: i for i in golden}
    relevance = trace_relevance(traces, items.values(), chunks, evidence_threshold)
    rows = []
    for t in traces:
        if t.qid not in items:
            continue
        d = diagnose_trace(t, items[t.qid], chunks, corpus, evidence_threshold=evidence_threshold,
                           relevance=relevance)
        rows.append({"qid": t.qid, "mode": t.mode, "category": items[t.qid].category,
                     "passed": d.passed, "labels": list(d.labels),
                     "facts": {f.fact: f.status for f in d.facts}})
    return pd.DataFrame(rows, columns=["qid", "mode", "category", "passed", "labels", "facts"])
