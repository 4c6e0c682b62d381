"""Scoring: a retriever (searched here) or a ready Run against a golden set -> an Evaluation.

:func:`evaluate` checks what it is given (k, the golden items, the chunking the run
searched, every returned id among those chunks or carried by its hit), scores at chunk
level through :class:`~workbench.metrics.Relevance` (evidence spans, chunk-id labels) or at
document level (documents ranked where their best chunk ranks, trec_eval semantics), and
writes one row per question and metric with the relevance label that judged it. No question
is excluded because of how the corpus was chunked; unanswerable items are counted in
``excluded``.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from workbench.corpus import Chunk, ChunkTable, Document
from workbench.evaluation.evaluation import Evaluation, golden_items
from workbench.evaluation.run import Run
from workbench.golden import GoldenItem, GoldenSet
from workbench.io import WorkbenchError, WorkbenchWarning
from workbench.metrics import (
    DEFAULT_EVIDENCE_THRESHOLD,
    Metric,
    Relevance,
    default_metrics,
    parse_metric,
    relevance_label,
    score_queries,
)
from workbench.metrics.intervals import paused_gc
from workbench.retrieval import Retriever

__all__ = ["evaluate"]


def _check_k(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise WorkbenchError(f"k must be a positive integer (the number of chunks the generator "
                         f"receives), got {k!r}")
    return int(k)


def _chunk_map(given: ChunkTable | None, run: Run) -> ChunkTable | None:
    """The chunks the run is judged against: those given, plus any a hit carries."""
    carried = [h.chunk for hs in run.hits.values() for h in hs if h.chunk is not None]
    if not carried:
        return given
    return (given if given is not None else ChunkTable((), once=True)).with_carried(carried)


def _refuse_unknown(run: Run, by_id: ChunkTable) -> None:
    absent = by_id.unknown(h.chunk_id for hs in run.hits.values() for h in hs)
    unknown = list(dict.fromkeys(h.chunk_id for hs in run.hits.values() for h in hs
                                 if h.chunk_id in absent))
    if unknown:
        raise WorkbenchError(
            f"run {run.system!r} returned {len(unknown)} chunk id(s) that are not among the "
            f"{len(by_id)} chunks given (e.g. {unknown[0]!r}); they would all score as misses. "
            "Pass the chunks your retriever returns, or wrap it so its hits carry their "
            "chunks (workbench.retrieval.adapters)")


def _without_the_chunking(parsed: list[Metric], explicit: bool) -> list[Metric]:
    """Only the hits' own chunks are known (a production run, a log): metrics whose ideal or
    ceiling needs every chunk of the chunking (nDCG, PrecisionΩ) would be computed against
    the retrieved chunks alone and read too high. Refused when asked for, left out (with a
    warning) from the defaults."""
    partial = [m.name for m in parsed if m.spec.needs_chunking]
    if not partial:
        return parsed
    if explicit:
        raise WorkbenchError(f"{', '.join(partial)} need(s) the whole chunking (the ideal ranking "
                         "is the best the chunking allows), and only the retrieved chunks are "
                         "known: pass chunks=... (e.g. the production chunking, located with "
                         "workbench.retrieval.adapters), or leave these metrics out")
    warnings.warn(f"{', '.join(partial)} left out: only the retrieved chunks are known, and "
                  "the ideal ranking needs the whole chunking (pass chunks=...)", WorkbenchWarning,
                  stacklevel=3)
    return [m for m in parsed if not m.spec.needs_chunking]


def _judged_by_document(items: Sequence[GoldenItem], by_id: ChunkTable | None) -> bool:
    """True when the answerable items label whole documents (``relevant_doc_ids``), or their
    chunk-id labels name no chunk but do name documents (document qrels read as chunk ids):
    chunk-level scoring would score every question 0. Refuses a golden set that mixes
    document labels with other labels."""
    answerable = [i for i in items if i.answerable]
    by_doc = [i.qid for i in answerable if i.judged_by_document]
    if by_doc:
        if len(by_doc) < len(answerable):
            raise WorkbenchError(f"{len(by_doc)} golden item(s) label whole documents (e.g. "
                             f"{by_doc[0]!r}) and {len(answerable) - len(by_doc)} label chunks "
                             "or evidence: score the document-labelled ones apart, with "
                             "level='document'")
        return True
    if by_id is None:
        return False
    labels = {c for i in answerable if not i.evidence for c in i.chunk_labels}
    if not labels or len(by_id.unknown(labels)) < len(labels):
        return False
    return any(label in by_id.doc_ids for label in labels)


def evaluate(source: Retriever | Run, golden: GoldenSet | Iterable[GoldenItem],
             chunks: Sequence[Chunk] | ChunkTable | None = None, *,
             metrics: Sequence[str | Metric] | None = None, k: int = 5, level: str = "chunk",
             grade_threshold: int = 1,
             evidence_threshold: float = DEFAULT_EVIDENCE_THRESHOLD, system: str | None = None,
             params: Mapping[str, Any] | None = None, progress: bool = False,
             documents: Mapping[str, Document] | None = None,
             relevance: Relevance | None = None) -> Evaluation:
    """Score a retriever (searched here) or a ready Run against a golden set.

    ``chunks`` is the chunking the retriever searches (evidence items need it; every id the run
    returns must be among them, or be carried by its hit). It is read by :meth:`ChunkTable.of
    <workbench.corpus.ChunkTable.of>`: the list ``chunk_corpus`` returns keeps its table, so
    scoring it again costs what the questions hold, not the corpus; any other sequence is read
    for this call (each lookup a pass over the chunks at C speed). ``k`` is the number of chunks
    the generator receives; the default metrics are taken at k. ``level="document"`` ranks
    documents where their best chunk ranks, and k then counts documents (chunks are retrieved
    until k distinct documents are ranked). Chunk-id labels that name documents (BEIR qrels) are
    scored at document level automatically, with a warning. ``grade_threshold`` is the lowest
    relevant grade of chunk-id labels; ``evidence_threshold`` the share of a span's non-blank
    characters that makes it found. ``relevance`` reuses judgments already made for this golden
    set, chunking and thresholds (a sweep scores many configurations of one chunking); one made
    otherwise is refused.
    """
    k = _check_k(k)
    items = golden_items(golden)
    # one column per metric, however it was spelled (span_recall@5 is coverage@5)
    parsed = list({m.name: m for m in map(parse_metric, metrics or default_metrics(k))}.values())
    if level not in ("chunk", "document"):
        raise WorkbenchError(f"level must be 'chunk' or 'document', not {level!r}")
    if relevance is not None and (level == "document" or documents is not None):
        raise WorkbenchError("relevance=... is for chunk-level scoring and already holds the "
                         "evidence text: pass documents=... to Relevance, not to evaluate, and "
                         "leave relevance out at level='document'")
    depth = max([k, *[m.k or 0 for m in parsed]])
    given = None if chunks is None else ChunkTable.of(chunks)
    if level == "chunk" and not isinstance(source, Run) and given is not None:
        depth = min(depth, max(len(given.chunks), 1))  # nothing lies deeper than the corpus
    if level == "chunk" and _judged_by_document(items, given):
        warnings.warn("the golden set's labels name documents, not chunks (document qrels, "
                      "e.g. BEIR): scoring at document level, where k counts documents (pass "
                      "level='document' to say so)", WorkbenchWarning, stacklevel=2)
        level = "document"
    if isinstance(source, Run):
        run = source
    else:
        run = Run.from_retriever(source, items, depth, system=system, progress=progress,
                                 params=params,
                                 documents_of={c.id: c.doc_id for c in given.values()}
                                 if level == "document" and given is not None else None)
    if system:
        run = Run(system, run.hits, run.latency_s, run.params)
    # scoring's temporaries die by their reference counts: with the collector paused none is
    # promoted to the oldest generation, whose collection walks every chunk (0.46 s at 1M
    # chunks, once per ~5 evaluations otherwise)
    with paused_gc():
        by_id = _chunk_map(given, run)
        if by_id is not None:
            _refuse_unknown(run, by_id)
        if given is None and by_id is not None and level == "chunk" \
                and any(i.answerable and i.evidence for i in items):
            parsed = _without_the_chunking(parsed, explicit=metrics is not None)
        missing = [i.qid for i in items if i.answerable and i.qid not in run.hits]
        if missing:
            raise WorkbenchError(f"run {run.system!r} has no results for {len(missing)} golden "
                             f"question(s), e.g. {missing[:5]}; search every question")
        extra = dict(run.params) | dict(params or {})
        cats = {i.qid: (i.category, i.source) for i in items}
        if level == "document":
            if by_id is None:
                raise WorkbenchError("document-level scoring needs the chunks (chunks=...): the "
                                 "document of a chunk is taken from the chunk, never its id")
            spans_only = [m.name for m in parsed if not m.defined_for("document")]
            if spans_only:
                raise WorkbenchError(f"{', '.join(spans_only)}: coverage@k and the span_* metrics "
                                 "need evidence items scored at level='chunk'; documents have no "
                                 "spans, so leave them out at level='document'")
            frame, excluded = _score_documents(run, items, by_id, parsed, grade_threshold)
        else:
            if relevance is None:
                relevance = Relevance(items, by_id,
                                      evidence_threshold=evidence_threshold,
                                      grade_threshold=grade_threshold, documents=documents,
                                      chunking_complete=given is not None)
            else:
                _check_relevance(relevance, items, by_id, grade_threshold, evidence_threshold)
            scores = relevance.score(run.ranked(), parsed)
            rows = [(m.name, q, relevance.label(q), v) for m in parsed
                    for q, v in scores.values[m.name].items()]
            frame = pd.DataFrame(rows, columns=["metric", "qid", "relevance", "value"])
            excluded = {**relevance.excluded, **{r: list(q) for r, q in scores.excluded.items()}}
        frame.insert(0, "system", run.system)
        frame.insert(2, "category", [cats[q][0] for q in frame["qid"]])
        frame.insert(3, "source", [cats[q][1] for q in frame["qid"]])
        for key, value in extra.items():
            frame[key] = value
        frame = frame[[*Evaluation.COLUMNS, *extra]]
        return Evaluation(frame, excluded, {run.system: run})


def _check_relevance(relevance: Relevance, items: Sequence[GoldenItem],
                     by_id: Mapping[str, Chunk] | None, grade_threshold: int,
                     evidence_threshold: float) -> None:
    """Refuse judgments made for other thresholds, another chunking or other golden items."""
    if (relevance.grade_threshold, relevance.evidence_threshold) != (grade_threshold,
                                                                     float(evidence_threshold)):
        raise WorkbenchError(f"relevance=... was judged at grade_threshold="
                         f"{relevance.grade_threshold}, "
                         f"evidence_threshold={relevance.evidence_threshold:g}, and evaluate was "
                         f"asked for grade_threshold={grade_threshold}, evidence_threshold="
                         f"{evidence_threshold:g}: pass the same thresholds to both")
    index = relevance.index
    # judged of this very table: the same chunking (a table never changes); else compared
    if index is None or index.table is not by_id:
        where = None if by_id is None else {c.id: (c.doc_id, c.start, c.end)
                                            for c in by_id.values()}
        if where != (None if index is None else index.where):
            raise WorkbenchError("relevance=... was judged under another chunking than the chunks "
                         "given: build it from the same chunks (Relevance(golden, chunks))")
    judged = {q for reason in relevance.excluded.values() for q in reason} | set(relevance.qids)
    if {i.qid for i in items} != judged \
            or any(relevance.items[i.qid] != i for i in items if i.qid in relevance.items):
        raise WorkbenchError("relevance=... was judged for other golden items: build it from the "
                         "golden set you evaluate (Relevance(golden, chunks))")


def _score_documents(run: Run, items: Sequence[GoldenItem], by_id: Mapping[str, Chunk],
                     parsed: Sequence[Metric], grade_threshold: int
                     ) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    # the documents holding each answer, graded by their best labelled chunk; a label that
    # names no chunk names a document (document qrels read as chunk ids)
    qrels = {i.qid: i.doc_grades(by_id, labels_may_name_documents=True)
             for i in items if i.answerable}
    # every returned id is among the chunks (refused before): look up those alone
    ranked = run.to_documents({h.chunk_id: by_id[h.chunk_id].doc_id for hs in run.hits.values()
                               for h in hs}).ranked()
    scores = score_queries(qrels, ranked, parsed, grade_threshold=grade_threshold)
    label = relevance_label("document", grade_threshold)
    rows = [(name, q, label, float(v)) for name, values in scores.values.items()
            for q, v in zip(scores.qids, values, strict=True)]
    excluded = {"unanswerable": [i.qid for i in items if not i.answerable],
                "no_relevant_at_threshold": list(scores.excluded_no_relevant)}
    return pd.DataFrame(rows, columns=["metric", "qid", "relevance", "value"]), excluded
