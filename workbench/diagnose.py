"""Traces and evidence diagnosis: why did this question fail?

A :class:`Trace` records one question in one run: the query, the ranked retrieved chunk ids
(with scores, offsets and the versions of their documents), the final context the model
actually received (labels ``P1..Pn``, and what was dropped and why), the model id, prompt
version, answer, citations (label -> chunk id), unknown citations, the grade and timing.
Traces hold ids and offsets only, never document text (that is re-read from the corpus when
shown), and never a chunk the user may not read: with ``user_groups`` set, only chunks that
passed the access check are recorded.

:func:`diagnose` compares a trace with its golden item, evidence unit by evidence unit (an
evidence span, or a labelled chunk id), and names what broke:

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

import hashlib
import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.context import RESTRICTED, AssembledContext, assemble_context, resolve_citations
from workbench.corpus import Chunk, Document, Span
from workbench.golden import Evidence, GoldenItem, GoldenSet, atomic_write_text
from workbench.grading import grade_answer, missing_mentions, normalize

__all__ = ["FACT_STATUSES", "LABELS", "Diagnosis", "FactCheck", "Trace", "TraceHit",
           "TracePassage", "case_from_bug_report", "case_from_trace", "diagnose",
           "diagnosis_table", "load_traces", "make_trace", "save_traces", "trace_question",
           "traces_from_result"]

SCHEMA = 1
LABELS = {
    "retrieval_miss": "required evidence was never retrieved",
    "context_loss": "evidence was retrieved but is not in the context the model saw",
    "unrecorded_context": "the context holds a chunk that no recorded retrieval produced",
    "unknown_citation": "the answer cites a label that names no passage of the context",
    "superseded_source": "the answer rests on a superseded version of a document",
}
FACT_STATUSES = ("cited", "used_uncited", "cited_wrong_passage", "retrieved_unused",
                 "not_in_context", "not_retrieved")


@dataclass(frozen=True)
class TraceHit:
    """One recorded retrieval: ``source`` is retrieval | expansion | oracle."""

    chunk_id: str
    rank: int
    score: float | None = None
    doc_id: str = ""
    start: int | None = None
    end: int | None = None
    source: str = "retrieval"


@dataclass(frozen=True)
class TracePassage:
    label: str
    chunk_id: str
    doc_id: str = ""
    start: int | None = None
    end: int | None = None


@dataclass(frozen=True)
class Trace:
    """What happened to one question in one run (ids and offsets only; see module doc)."""

    qid: str
    query: str
    mode: str = "live"
    rewritten_query: str | None = None
    retrieved: tuple[TraceHit, ...] = ()
    context: tuple[TracePassage, ...] = ()
    dropped: tuple[tuple[str, str], ...] = ()
    budget_tokens: int | None = None
    tokens_used: int = 0
    user_groups: tuple[str, ...] | None = None
    doc_versions: Mapping[str, Mapping[str, Any]] = field(default_factory=dict, hash=False)
    prompt_version: str = ""
    model_id: str = ""
    answer: str = ""
    citations: Mapping[str, str] = field(default_factory=dict, hash=False)
    unknown_citations: tuple[str, ...] = ()
    grade: Mapping[str, Any] | None = field(default=None, hash=False)
    error: str | None = None
    timing: Mapping[str, float] = field(default_factory=dict, hash=False)
    category: str = ""
    system: str = ""

    @property
    def retrieved_ids(self) -> list[str]:
        return [h.chunk_id for h in self.retrieved]

    @property
    def context_ids(self) -> list[str]:
        return [p.chunk_id for p in self.context]

    @property
    def labels(self) -> dict[str, str]:
        return {p.label: p.chunk_id for p in self.context}

    @property
    def passed(self) -> bool | None:
        return None if self.grade is None else self.grade.get("passed")

    def drop_reason(self, chunk_id: str) -> str | None:
        return next((why for cid, why in self.dropped if cid == chunk_id), None)

    def is_superseded(self, doc_id: str) -> bool:
        meta = self.doc_versions.get(doc_id, {})
        return meta.get("status") == "superseded" or bool(meta.get("superseded_by"))

    def to_json(self) -> dict[str, Any]:
        row = asdict(self)
        row["dropped"] = [list(d) for d in self.dropped]
        return {"schema": SCHEMA, **row}

    @classmethod
    def from_json(cls, row: Any, where: str = "<trace>") -> Trace:
        if not isinstance(row, dict):
            raise ValueError(f"{where}: each line must be a JSON object (one trace)")
        for name in ("qid", "query"):
            if not isinstance(row.get(name), str):
                raise ValueError(f"{where}: field {name!r} is missing or not a string")
        if row.get("schema", SCHEMA) != SCHEMA:
            raise ValueError(f"{where}: field 'schema' is {row.get('schema')!r}; this version "
                             f"reads {SCHEMA}: re-record the traces")
        known = {k: v for k, v in row.items() if k in cls.__dataclass_fields__}
        try:
            known["retrieved"] = tuple(TraceHit(**h) for h in row.get("retrieved") or ())
            known["context"] = tuple(TracePassage(**p) for p in row.get("context") or ())
            known["dropped"] = tuple((str(c), str(w)) for c, w in row.get("dropped") or ())
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: field 'retrieved'/'context'/'dropped' is malformed "
                             f"({exc})") from None
        known["unknown_citations"] = tuple(row.get("unknown_citations") or ())
        if row.get("user_groups") is not None:
            known["user_groups"] = tuple(row["user_groups"])
        return cls(**known)


def _version(doc: Document) -> dict[str, Any]:
    keys = ("version", "status", "effective_date", "superseded_by")
    meta = {k: doc.metadata.get(k) for k in keys if doc.metadata.get(k) is not None}
    return {k: v if isinstance(v, str | int | float | bool) else str(v) for k, v in meta.items()}


def make_trace(qid: str, query: str, hits: Sequence[Any], context: AssembledContext,
               answer: Any, grade: Any = None, *, mode: str = "live",
               chunks: Mapping[str, Chunk] | Sequence[Chunk] | None = None,
               corpus: Mapping[str, Document] | None = None, source: str = "retrieval",
               expanded: Sequence[str] = (), timing: Mapping[str, float] | None = None,
               rewritten_query: str | None = None, category: str = "",
               system: str = "") -> Trace:
    """A trace from the pieces of one answered question. ``hits`` are Hits or chunk ids
    (best first); ``expanded`` chunk ids added by expansion; ``answer`` an Answer or text;
    ``chunks`` give offsets, ``corpus`` the document versions."""
    by_id = chunks if isinstance(chunks, Mapping) else {c.id: c for c in chunks or ()}
    groups = context.params.get("user_groups")
    readable = None
    if groups is not None:  # record only what passed the access check (fail closed)
        readable = set(context.chunk_ids) | {c for c, _ in context.dropped if c != RESTRICTED}

    def hit(cid: str, rank: int, score: float | None, src: str) -> TraceHit:
        c = by_id.get(cid)
        return TraceHit(cid, rank, score, c.doc_id if c else cid.rsplit("#", 1)[0],
                        c.start if c else None, c.end if c else None, src)

    recorded = []
    for rank, h in enumerate(hits, start=1):
        cid = h if isinstance(h, str) else h.chunk_id
        raw = None if isinstance(h, str) else getattr(h, "score", None)
        score = None if raw is None else float(raw)
        if readable is None or cid in readable:
            recorded.append(hit(cid, getattr(h, "rank", rank), score, source))
    recorded += [hit(c, 0, None, "expansion") for c in expanded
                 if readable is None or c in readable]
    passages = tuple(TracePassage(p.label, p.chunk_id, p.doc_id,
                                  by_id[p.chunk_id].start if p.chunk_id in by_id else None,
                                  by_id[p.chunk_id].end if p.chunk_id in by_id else None)
                     for p in context.passages)
    docs = dict.fromkeys([*(h.doc_id for h in recorded), *(p.doc_id for p in passages)])
    versions = {d: _version(corpus[d]) for d in docs if corpus is not None and d in corpus}
    text = answer if isinstance(answer, str) else str(getattr(answer, "text", ""))
    check = resolve_citations(text, context)
    g = grade
    grade_row = None if g is None else {"passed": g.passed, "method": g.method,
                                        "details": json.loads(json.dumps(dict(g.details),
                                                                         default=str))}
    times = dict(timing or {})
    if not isinstance(answer, str) and getattr(answer, "latency_s", None):
        times.setdefault("generation_s", float(answer.latency_s))
    return Trace(
        qid, query, mode, rewritten_query, tuple(recorded), passages,
        tuple((str(c), str(w)) for c, w in context.dropped), context.budget_tokens,
        context.tokens_used, None if groups is None else tuple(groups), versions,
        str(getattr(answer, "prompt_version", "")), str(getattr(answer, "model_id", "")), text,
        {lab: context.labels[lab] for lab in check.labels if lab in context.labels},
        check.unknown, grade_row, getattr(answer, "error", None), times, category, system)


def traces_from_result(result: Any, mode: str = "live", *, golden: Any = None,
                       corpus: Mapping[str, Document] | None = None,
                       chunks: Sequence[Chunk] | None = None, run: Any = None,
                       system: str = "") -> list[Trace]:
    """One trace per question of a GenerationResult in ``mode``. The question text and the
    live hits' scores and ranks come from the result (``questions``, ``scores``, ``ranks``);
    ``golden`` (question text) and ``run`` (the retriever's Run: scores and search latency)
    override them where given. ``corpus`` supplies the document versions, ``chunks`` the
    offsets."""
    questions = dict(getattr(result, "questions", None) or {})
    if golden is not None:
        questions.update({i.qid: i.question for i in golden})
    all_scores = getattr(result, "scores", None) or {}
    all_ranks = getattr(result, "ranks", None) or {}
    cats = {str(r["qid"]): str(r["category"]) for r in result.frame.to_dict("records")}
    by_id = {c.id: c for c in chunks or ()}
    out = []
    for (qid, m), ctx in result.contexts.items():
        if m != mode:
            continue
        hits: list[Any] = list(result.retrieved.get(qid, []) if m == "live"
                               else result.gold.get(qid, []))
        if m == "live" and (qid in all_scores or qid in all_ranks):
            scores = all_scores.get(qid) or [None] * len(hits)
            ranks = all_ranks.get(qid) or range(1, len(hits) + 1)
            hits = [TraceHit(c, rank, score) for c, score, rank in zip(hits, scores, ranks,
                                                                       strict=True)]
        timing: dict[str, float] = {}
        if run is not None and qid in run.hits:
            scored = {h.chunk_id: h for h in run.hits[qid]}
            hits = [scored.get(getattr(c, "chunk_id", c), c) for c in hits]
            if qid in run.latency_s:
                timing["retrieval_s"] = float(run.latency_s[qid])
        out.append(make_trace(qid, questions.get(qid, ""), hits, ctx, result.answers[qid, m],
                              result.grades.get((qid, m)), mode=m, chunks=by_id, corpus=corpus,
                              source="retrieval" if m == "live" else "oracle", timing=timing,
                              category=cats.get(qid, ""), system=system or result.model_id))
    return out


def trace_question(question: str, retriever: Any, generator: Any, chunks: Sequence[Chunk],
                   documents: Mapping[str, Document] | None = None, *, k: int = 5,
                   qid: str = "bug", item: GoldenItem | None = None,
                   corpus: Mapping[str, Document] | None = None, **assemble: Any) -> Trace:
    """Reproduce one question end to end (search, assemble, generate, grade against
    ``item`` if given) and return its trace. ``documents`` is what the pipeline passes to
    context assembly; ``corpus`` (default: ``documents``) records the true versions.
    ``assemble`` takes user_groups, budget_tokens, count_tokens, include_superseded."""
    started = time.perf_counter()
    hits = retriever.search(question, k)[:k]
    searched = time.perf_counter() - started
    ctx = assemble_context(hits, chunks, documents, **assemble)
    answer = generator.generate(question, ctx)
    grade = grade_answer(item, answer, ctx) if item is not None else None
    return make_trace(item.qid if item else qid, question, hits, ctx, answer, grade,
                      chunks=chunks, corpus=corpus if corpus is not None else documents,
                      timing={"retrieval_s": searched},
                      category=item.category if item else "", system=str(
                          getattr(retriever, "name", "")))


def save_traces(path: str | Path, traces: Iterable[Trace]) -> Path:
    """Write traces as JSONL, atomically (temporary file, then rename)."""
    text = "".join(json.dumps(t.to_json(), ensure_ascii=False, default=str) + "\n"
                   for t in traces)
    atomic_write_text(path, text)
    return Path(path)


def load_traces(path: str | Path) -> list[Trace]:
    """Read a traces JSONL; a bad line raises ValueError naming ``file:line`` and field."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"{path}: traces file not found")
    out = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{lineno}: malformed JSON ({exc.msg}, column "
                             f"{exc.colno}); fix or delete the line") from None
        out.append(Trace.from_json(row, f"{path}:{lineno}"))
    return out


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


def _units(item: GoldenItem, chunks: Sequence[Chunk]) -> list[tuple[str, ...]]:
    if not item.answerable:
        return []
    if item.evidence:
        return [tuple(c.id for c in chunks if c.doc_id == ev.doc_id
                      and ev.overlap(c.start, c.end) > 0) for ev in item.evidence]
    return [(cid,) for cid in item.chunk_labels if item.relevance.get(cid, 1) > 0]


def _holds(text: str, fact: str) -> bool:
    return not missing_mentions(text, [fact])


def diagnose(trace: Trace, item: GoldenItem, chunks: Sequence[Chunk] | Mapping[str, Chunk],
             corpus: Mapping[str, Document] | None = None) -> Diagnosis:
    """Diagnose one trace against its golden item (see module doc). ``corpus`` is used for
    document versions the trace did not record."""
    chunk_list = list(chunks.values()) if isinstance(chunks, Mapping) else list(chunks)
    by_id = {c.id: c for c in chunk_list}
    units = _units(item, chunk_list)
    found, supplied = set(trace.retrieved_ids), set(trace.context_ids)
    evidence: dict[str, tuple[str, ...]] = {}
    missed = [u for u in units if not set(u) & found]
    lost = [u for u in units if set(u) & found and not set(u) & supplied]
    if missed:
        evidence["retrieval_miss"] = tuple(c for u in missed for c in (u or ("<no chunk>",)))
    if lost:
        evidence["context_loss"] = tuple(c for u in lost for c in u if c in found)
    if supplied - found:
        evidence["unrecorded_context"] = tuple(c for c in trace.context_ids if c not in found)
    unknown = [lab for lab in trace.unknown_citations if lab not in trace.labels]
    if unknown:
        evidence["unknown_citation"] = tuple(unknown)

    def superseded(cid: str) -> bool:
        doc = cid.rsplit("#", 1)[0]
        if doc in trace.doc_versions:
            return trace.is_superseded(doc)
        d = corpus.get(doc) if corpus is not None else None
        return d is not None and (not d.is_current or bool(d.metadata.get("superseded_by")))

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
                     tuple(facts), passed, tuple(units),
                     bool(len(missed) < len(units)) if units else None)


def _copied_from(trace: Trace, by_id: Mapping[str, Chunk]) -> list[str]:
    """For an uncited answer: the context passage that most of its words come from."""
    words = {t for t in normalize(trace.answer) if len(t) > 2 or t.isdigit()}
    best, share = None, 0.6
    for cid in trace.context_ids:
        if cid in by_id and words:
            s = len(words & set(normalize(by_id[cid].text))) / len(words)
            if s >= share:
                best, share = cid, s
    return [best] if best else []


def diagnosis_table(traces: Iterable[Trace], golden: GoldenSet | Sequence[GoldenItem],
                    chunks: Sequence[Chunk], corpus: Mapping[str, Document] | None = None
                    ) -> pd.DataFrame:
    """One row per trace: qid, mode, category, passed, labels, facts (status per fact)."""
    items = {i.qid: i for i in golden}
    rows = []
    for t in traces:
        if t.qid not in items:
            continue
        d = diagnose(t, items[t.qid], chunks, corpus)
        rows.append({"qid": t.qid, "mode": t.mode, "category": items[t.qid].category,
                     "passed": d.passed, "labels": list(d.labels),
                     "facts": {f.fact: f.status for f in d.facts}})
    return pd.DataFrame(rows, columns=["qid", "mode", "category", "passed", "labels", "facts"])


# ----------------------------------------------------------------------------- golden set

def case_from_bug_report(question: str, quotes: Sequence[tuple[str, str]],
                         must_mention: Sequence[str] = (), *, corpus: Mapping[str, Document],
                         qid: str | None = None, category: str = "uncategorised",
                         source: str = "real", answerable: bool = True,
                         **extra: Any) -> GoldenItem:
    """A golden item from a bug report: each ``(doc_id, quote)`` is located in the corpus
    with :meth:`Span.locate` (an absent or ambiguous quote is refused). Append it with
    :func:`workbench.golden.add_case`. ``qid`` defaults to ``real-`` + a hash of the
    question; ``extra`` fields (e.g. ``reported="2026-03-02"``) are kept."""
    evidence = []
    for doc_id, quote in quotes:
        doc = corpus.get(doc_id)
        if doc is None:
            raise ValueError(f"document {doc_id!r} is not in the corpus: quote evidence from "
                             "one of its documents")
        span = Span.locate(doc, quote)
        evidence.append(Evidence(span.doc_id, span.start, span.end, span.text_in(doc)))
    if answerable and not evidence:
        raise ValueError("an answerable case needs at least one (doc_id, quote) of evidence")
    digest = hashlib.sha1(question.strip().casefold().encode("utf-8")).hexdigest()[:8]
    return GoldenItem(qid or f"real-{digest}", question.strip(), evidence=tuple(evidence),
                      answer_must_mention=tuple(must_mention), category=category,
                      source=source, answerable=answerable, extra=dict(extra))


def case_from_trace(trace: Trace, quote: str, doc_id: str, *, corpus: Mapping[str, Document],
                    must_mention: Sequence[str] = (), category: str | None = None,
                    source: str = "real", qid: str | None = None, **extra: Any) -> GoldenItem:
    """A golden item for a traced question (its qid, query and, by default, category),
    its evidence located by ``quote``."""
    return case_from_bug_report(trace.query, [(doc_id, quote)], must_mention, corpus=corpus,
                                qid=qid or trace.qid,
                                category=category or trace.category or "uncategorised",
                                source=source, **extra)
