"""Traces: what happened to one question in one run, recorded and saved as JSONL.

A :class:`Trace` records one question in one run: the query, the ranked retrieved chunk ids
(with scores, offsets and the versions of their documents), the final context the model
actually received (labels ``P1..Pn``, and what was dropped and why), the model id, prompt
version, answer, citations (label -> chunk id), unknown citations, the grade and timing.
Traces hold ids and offsets only, never document text (that is re-read from the corpus when
shown), and never a chunk the user may not read: with ``user_groups`` set, only chunks that
passed the access check are recorded. Nor do they hold facts about evidence the user may not
read: when the golden item's evidence is not readable for the user
(:func:`~workbench.golden.can_read_item`; unknown counts as not readable), the grade keeps
only ``passed`` and ``method``, its details (the must-mention strings) are replaced by
:data:`WITHHELD`, and ``evidence_withheld`` is set. Each hit's document comes from its chunk
(never parsed out of the chunk id); a hit without a known chunk records ``doc_id`` "".

:func:`make_trace` builds a trace from the pieces of one answered question,
:func:`traces_from_result` one per question of a generation run, and :func:`trace_question`
reproduces one question end to end. :func:`save_traces` / :func:`load_traces` write and read
them (JSONL, one trace per line, written atomically under the file's lock; a bad line or
a field of the wrong type names ``file:line`` and the field).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, asdict, dataclass, field
from pathlib import Path
from typing import Any

from workbench.corpus import Chunk, Document, is_superseded
from workbench.corpus.reader import require_reader
from workbench.evaluation import Run
from workbench.generation.context import (
    RESTRICTED,
    AssembledContext,
    assemble_context,
    resolve_citations,
)
from workbench.generation.grading import Grade, grade_answer
from workbench.generation.oracle import GenerationResult
from workbench.generation.prompt import Answer, Generator
from workbench.golden import GoldenItem, can_read_item
from workbench.io import InputError, atomic_write_text, iter_jsonl, target_path
from workbench.retrieval import Hit, Retriever

SCHEMA = 1
WITHHELD = "evidence withheld: it is in documents this user may not read"


@dataclass(frozen=True)
class TraceHit:
    """One recorded retrieval: ``source`` is retrieval | expansion | oracle."""

    chunk_id: str
    rank: int
    score: float | None = None
    _: KW_ONLY
    doc_id: str = ""
    start: int | None = None
    end: int | None = None
    source: str = "retrieval"


@dataclass(frozen=True)
class TracePassage:
    label: str
    chunk_id: str
    _: KW_ONLY
    doc_id: str = ""
    start: int | None = None
    end: int | None = None


@dataclass(frozen=True)
class Trace:
    """What happened to one question in one run (ids and offsets only; see module doc)."""

    qid: str
    query: str
    _: KW_ONLY
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
    evidence_withheld: bool = False

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
        """Whether the recorded version of ``doc_id`` is superseded
        (:func:`workbench.corpus.is_superseded`)."""
        return is_superseded(self.doc_versions.get(doc_id, {}))

    def to_json(self) -> dict[str, Any]:
        row = asdict(self)
        row["dropped"] = [list(d) for d in self.dropped]
        return {"schema": SCHEMA, **row}

    @classmethod
    def from_json(cls, row: Any, where: str = "<trace>") -> Trace:
        """A trace from its JSON row; a missing or mistyped field raises
        :class:`~workbench.io.InputError` naming ``where`` and the field."""
        if not isinstance(row, dict):
            raise InputError(where, "each line must be a JSON object (one trace)")
        if row.get("schema", SCHEMA) != SCHEMA:
            raise InputError(where, f"is {row.get('schema')!r}; this version reads {SCHEMA}: "
                             "re-record the traces", field="schema")
        for name, (check, wanted) in _FIELDS.items():
            if name in row and not check(row[name]):
                raise InputError(where, f"must be {wanted}, not {row[name]!r:.60}", field=name)
        for name in ("qid", "query"):
            if name not in row:
                raise InputError(where, "is missing", field=name)
        known = {k: v for k, v in row.items() if k in cls.__dataclass_fields__}
        for name, kind in (("retrieved", TraceHit), ("context", TracePassage)):
            try:
                known[name] = tuple(kind(**entry) for entry in row.get(name) or ())
            except TypeError as exc:
                raise InputError(where, f"is malformed ({exc})", field=name) from None
        known["dropped"] = tuple((c, w) for c, w in row.get("dropped") or ())
        known["unknown_citations"] = tuple(row.get("unknown_citations") or ())
        if row.get("user_groups") is not None:
            known["user_groups"] = tuple(row["user_groups"])
        return cls(**known)


def _opt(kind: Any) -> Any:
    return lambda v: v is None or (isinstance(v, kind) and not isinstance(v, bool))


def _is(kind: Any) -> Any:
    return lambda v: isinstance(v, kind) and not isinstance(v, bool)


def _strs(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _str_map(v: Any) -> bool:
    return isinstance(v, dict) and all(isinstance(x, str) for x in v.values())


def _number_map(v: Any) -> bool:
    return isinstance(v, dict) and all(isinstance(x, int | float) and not isinstance(x, bool)
                                       for x in v.values())


def _records(**fields: Any) -> Any:
    """A list of objects whose listed fields (when present) pass their checks."""
    return lambda v: isinstance(v, list) and all(
        isinstance(x, dict) and all(check(x[k]) for k, check in fields.items() if k in x)
        for x in v)


def _grade(v: Any) -> bool:
    return v is None or (isinstance(v, dict) and (v.get("passed") is None
                                                  or isinstance(v.get("passed"), bool))
                         and isinstance(v.get("method", ""), str)
                         and isinstance(v.get("details", {}), dict))


_FIELDS: dict[str, tuple[Any, str]] = {
    "qid": (_is(str), "a string"),
    "query": (_is(str), "a string"),
    "mode": (_is(str), "a string"),
    "rewritten_query": (_opt(str), "a string or null"),
    "retrieved": (_records(chunk_id=_is(str), rank=_is(int), score=_opt(int | float),
                           doc_id=_is(str), start=_opt(int), end=_opt(int), source=_is(str)),
                  "a list of {chunk_id, rank, score, doc_id, start, end, source}"),
    "context": (_records(label=_is(str), chunk_id=_is(str), doc_id=_is(str), start=_opt(int),
                         end=_opt(int)), "a list of {label, chunk_id, doc_id, start, end}"),
    "dropped": (lambda v: isinstance(v, list) and all(
        isinstance(d, list) and len(d) == 2 and all(isinstance(x, str) for x in d) for d in v),
                "a list of [chunk_id, reason] pairs"),
    "budget_tokens": (_opt(int), "an integer or null"),
    "tokens_used": (_is(int), "an integer"),
    "user_groups": (lambda v: v is None or _strs(v),
                    "a list of group names or null (a single string would be read letter by "
                    "letter)"),
    "doc_versions": (lambda v: isinstance(v, dict) and all(isinstance(x, dict)
                                                           for x in v.values()),
                     "an object doc_id -> {version, status, ...}"),
    "prompt_version": (_is(str), "a string"),
    "model_id": (_is(str), "a string"),
    "answer": (_is(str), "a string"),
    "citations": (_str_map, "an object label -> chunk id"),
    "unknown_citations": (_strs, "a list of labels"),
    "grade": (_grade, "null or an object {passed: true|false|null, method, details}"),
    "error": (_opt(str), "a string or null"),
    "timing": (_number_map, "an object name -> seconds"),
    "category": (_is(str), "a string"),
    "system": (_is(str), "a string"),
    "evidence_withheld": (lambda v: isinstance(v, bool), "true or false"),
}


def _version(doc: Document) -> dict[str, Any]:
    keys = ("version", "status", "effective_date", "superseded_by")
    meta = {k: doc.metadata.get(k) for k in keys if doc.metadata.get(k) is not None}
    return {k: v if isinstance(v, str | int | float | bool) else str(v) for k, v in meta.items()}


def make_trace(qid: str, query: str, hits: Sequence[Hit | TraceHit | str],
               context: AssembledContext, *, answer: Answer | str, grade: Grade | None = None,
               mode: str = "live",
               chunks: Mapping[str, Chunk] | Sequence[Chunk] | None = None,
               corpus: Mapping[str, Document] | None = None, source: str = "retrieval",
               expanded: Sequence[str] = (), timing: Mapping[str, float] | None = None,
               rewritten_query: str | None = None, category: str = "",
               system: str = "", item: GoldenItem | None = None) -> Trace:
    """A trace from the pieces of one answered question. ``hits`` are Hits, TraceHits or
    chunk ids (best first; a hit's own rank is kept); ``expanded`` chunk ids added by
    expansion; ``answer`` an Answer or text; ``chunks`` give offsets and documents,
    ``corpus`` the document versions; ``item`` the golden item, which decides (with
    ``corpus``) whether a user's grade details are kept (see the module docstring)."""
    by_id = chunks if isinstance(chunks, Mapping) else {c.id: c for c in chunks or ()}
    groups = context.params.get("user_groups")
    readable = None
    if groups is not None:  # record only what passed the access check (fail closed)
        readable = set(context.chunk_ids) | {c for c, _ in context.dropped if c != RESTRICTED}

    def hit(cid: str, rank: int, score: float | None, src: str) -> TraceHit:
        c = by_id.get(cid)
        return TraceHit(cid, rank, score, doc_id=c.doc_id if c else "",
                        start=c.start if c else None, end=c.end if c else None, source=src)

    recorded = []
    for rank, h in enumerate(hits, start=1):
        if isinstance(h, str):
            h = TraceHit(h, rank)
        score = None if h.score is None else float(h.score)
        if readable is None or h.chunk_id in readable:
            recorded.append(hit(h.chunk_id, h.rank, score, source))
    recorded += [hit(c, 0, None, "expansion") for c in expanded
                 if readable is None or c in readable]
    passages = tuple(TracePassage(p.label, p.chunk_id, doc_id=p.doc_id,
                                  start=by_id[p.chunk_id].start if p.chunk_id in by_id else None,
                                  end=by_id[p.chunk_id].end if p.chunk_id in by_id else None)
                     for p in context.passages)
    docs = dict.fromkeys([*(h.doc_id for h in recorded if h.doc_id),
                          *(p.doc_id for p in passages)])
    versions = {d: _version(corpus[d]) for d in docs if corpus is not None and d in corpus}
    reply = Answer(answer) if isinstance(answer, str) else answer
    text = reply.text
    check = resolve_citations(text, context)
    withheld = groups is not None and not (item is not None and can_read_item(
        groups, item, by_id, corpus))
    g = grade
    details = {"withheld": WITHHELD} if withheld else (
        None if g is None else json.loads(json.dumps(dict(g.details), default=str)))
    grade_row = None if g is None else {"passed": g.passed, "method": g.method,
                                        "details": details}
    times = dict(timing or {})
    if reply.latency_s:
        times.setdefault("generation_s", float(reply.latency_s))
    return Trace(
        qid, query, mode=mode, rewritten_query=rewritten_query, retrieved=tuple(recorded),
        context=passages,
        dropped=tuple((str(c), str(w)) for c, w in context.dropped),
        budget_tokens=context.budget_tokens,
        tokens_used=context.tokens_used, user_groups=None if groups is None else tuple(groups),
        doc_versions=versions,
        prompt_version=reply.prompt_version if not isinstance(answer, str) else "",
        model_id=reply.model_id, answer=text,
        citations={lab: context.labels[lab] for lab in check.labels if lab in context.labels},
        unknown_citations=check.unknown, grade=grade_row, error=reply.error, timing=times,
        category=category, system=system, evidence_withheld=withheld)


def traces_from_result(result: GenerationResult, mode: str = "live", *,
                       golden: Iterable[GoldenItem] | None = None,
                       corpus: Mapping[str, Document] | None = None,
                       chunks: Sequence[Chunk] | None = None, run: Run | None = None,
                       system: str = "") -> list[Trace]:
    """One trace per question of a GenerationResult in ``mode``. The question text and the
    live hits' scores and ranks come from the result (``questions``, ``scores``, ``ranks``);
    ``golden`` (question text) and ``run`` (the retriever's Run: scores and search latency)
    override them where given. ``corpus`` supplies the document versions, ``chunks`` the
    offsets; for a result evaluated as a user, grade details are kept only for questions
    whose ``golden`` item and evidence the user may read."""
    questions = dict(result.questions)
    items = {i.qid: i for i in golden or ()}
    questions.update({q: i.question for q, i in items.items()})
    all_scores, all_ranks = result.scores, result.ranks
    cats = {str(r["qid"]): str(r["category"]) for r in result.frame.to_dict("records")}
    by_id = {c.id: c for c in chunks or ()}
    out = []
    for (qid, m), ctx in result.contexts.items():
        if m != mode:
            continue
        ids = result.retrieved.get(qid, ()) if m == "live" else result.gold.get(qid, ())
        hits: list[Hit | TraceHit | str] = list(ids)
        if m == "live" and (qid in all_scores or qid in all_ranks):
            scores = all_scores.get(qid) or (None,) * len(ids)
            ranks = all_ranks.get(qid) or range(1, len(ids) + 1)
            hits = [TraceHit(c, rank, score) for c, score, rank in zip(ids, scores, ranks,
                                                                       strict=True)]
        timing: dict[str, float] = {}
        if run is not None and qid in run.hits:
            scored = {h.chunk_id: h for h in run.hits[qid]}
            hits = [scored.get(c if isinstance(c, str) else c.chunk_id, c) for c in hits]
            if qid in run.latency_s:
                timing["retrieval_s"] = float(run.latency_s[qid])
        out.append(make_trace(qid, questions.get(qid, ""), hits, ctx, answer=result.answers[qid, m],
                              grade=result.grades.get((qid, m)), mode=m, chunks=by_id,
                              corpus=corpus,
                              source="retrieval" if m == "live" else "oracle", timing=timing,
                              category=cats.get(qid, ""), system=system or result.model_id,
                              item=items.get(qid)))
    return out


def trace_question(generator: Generator, retriever: Retriever, question: str,
                   chunks: Sequence[Chunk], *, documents: Mapping[str, Document], k: int = 5,
                   qid: str = "bug", item: GoldenItem | None = None,
                   corpus: Mapping[str, Document] | None = None,
                   rewritten_query: str | None = None, **assemble: Any) -> Trace:
    """Reproduce one question end to end (search, assemble, generate, grade against
    ``item`` if given) and return its trace. ``documents`` (required) is what the pipeline
    passes to context assembly; ``corpus`` (default: ``documents``) records the true versions.
    ``rewritten_query`` (a conversation's last turn rewritten, e.g. by
    :func:`~workbench.generation.evaluate_rewrites`) is what is searched for and answered,
    recorded beside the original ``question``.
    ``assemble`` takes user_groups (required where the corpus declares access:
    :func:`~workbench.corpus.reader.require_reader`), budget_tokens, count_tokens,
    include_superseded."""
    assemble["user_groups"] = require_reader("trace_question", assemble.get("user_groups"),
                                             documents=documents, chunks=chunks)
    asked = rewritten_query if rewritten_query is not None else question
    started = time.perf_counter()
    hits = retriever.search(asked, k)[:k]
    searched = time.perf_counter() - started
    ctx = assemble_context(hits, chunks, documents, **assemble)
    answer = generator.generate(asked, ctx)
    grade = grade_answer(item, answer, ctx) if item is not None else None
    return make_trace(item.qid if item else qid, question, hits, ctx, answer=answer, grade=grade,
                      chunks=chunks, corpus=corpus if corpus is not None else documents,
                      timing={"retrieval_s": searched}, rewritten_query=rewritten_query,
                      category=item.category if item else "", system=str(
                          getattr(retriever, "name", "")), item=item)


def save_traces(path: str | Path, traces: Iterable[Trace]) -> Path:
    """Write traces as JSONL, atomically and under the file's lock (temporary file, then
    rename; missing folders are made)."""
    path = target_path(path, "save_traces")
    text = "".join(json.dumps(t.to_json(), ensure_ascii=False, default=str) + "\n"
                   for t in traces)
    atomic_write_text(path, text, make_parents=True)
    return path


def load_traces(path: str | Path) -> list[Trace]:
    """Read a traces JSONL; a bad line raises ValueError naming ``file:line`` and field."""
    return [Trace.from_json(row, where) for where, row in iter_jsonl(path, "traces")]
