"""Run files: logged retrieval results, scored without re-running anything, and our runs
written for others.

A run JSONL holds one question per line::

    {"qid": "q001", "hits": [{"doc_id": "policy-refunds", "text": "You may request ..."},
                             {"doc_id": "policy-refunds", "start": 120, "end": 460},
                             {"chunk_id": "policy-refunds#3", "score": 0.71}]}

Each hit is ``{"chunk_id"}``, ``{"doc_id", "text"}`` or ``{"doc_id", "start", "end"}``, with
an optional ``"score"`` (every hit of a line has one, or none), the production id as
``"id"`` and ``"metadata"``. Optional line keys: ``"query"`` (the question as asked),
``"system"`` and ``"offsets"`` (the offsets' convention, which :func:`write_run` declares).
Hits are ranked by the rules of :class:`~workbench.retrieval.CallableRetriever`: the logged
order, duplicates kept, declared scores checked against it, ties by chunk id descending.
Text and offsets are located in the documents; the offsets' convention (characters or
bytes, 0- or 1-based, into the text or the raw files given as ``raw``) is read off the hit
texts, and texts cut by the logger are located by their prefix
(:mod:`~workbench.evaluation.run_log`). Any problem raises ``ValueError`` naming
``file:line`` (and the hit).

:func:`write_run` writes a :class:`~workbench.evaluation.run.Run` as that JSONL (chunk id,
document, offsets and score of every hit, so it reads back with the documents alone) or as a
TREC run file (trec_eval's order; a run that repeats a chunk cannot be one).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from workbench.corpus import (
    Chunk,
    Document,
    LocatedChunks,
    LocateError,
    Location,
    LocationReport,
    Locator,
)
from workbench.corpus.conventions import BODY, Convention
from workbench.evaluation.run import Run
from workbench.evaluation.run_log import LogLocator, LogReport, default_offsets, inspect_log
from workbench.io import InputError, WorkbenchError, atomic_write_text, iter_jsonl, target_path
from workbench.metrics.trec_files import trec_sorted, write_trec_run
from workbench.retrieval import CallableRetriever, Hit

__all__ = ["MAX_HITS", "RUN_FORMATS", "read_chunks", "read_log", "read_run", "write_run"]

RUN_FORMATS = ("jsonl", "trec")
#: The most hits one question of a run file may hold.
MAX_HITS = 10_000
_LINE_KEYS = frozenset({"qid", "hits", "query", "system", "offsets"})
_HIT_KEYS = frozenset({"chunk_id", "doc_id", "text", "start", "end", "score", "id", "metadata"})


def _line(where: str, row: Any) -> tuple[str, list[Any]]:
    if not isinstance(row, dict):
        raise WorkbenchError(f"{where}: each line must be a JSON object "
                         '{"qid": ..., "hits": [...]}')
    unknown = sorted(set(row) - _LINE_KEYS)
    if unknown:
        raise WorkbenchError(f"{where}: unknown field(s) {unknown}: a line has "
                         f"{', '.join(sorted(_LINE_KEYS))}")
    qid = row.get("qid")
    if not isinstance(qid, str) or not qid.strip() or qid != qid.strip():
        given = (f"is {type(qid).__name__} {json.dumps(qid)}" if qid is not None
                 and not isinstance(qid, str) else "is empty or padded")
        raise WorkbenchError(f"{where}: field 'qid' {given}: it must be a non-empty string "
                         "without surrounding spaces (quote it)")
    hits = row.get("hits")
    if not isinstance(hits, list):
        raise WorkbenchError(f"{where}: field 'hits' must be a list (empty when nothing was "
                         "retrieved)")
    if len(hits) > MAX_HITS:
        raise WorkbenchError(f"{where}: {len(hits):,} hits, over the limit of {MAX_HITS:,} per "
                         "question; log the top hits only")
    for n, hit in enumerate(hits, start=1):
        if not isinstance(hit, dict):
            raise WorkbenchError(f"{where}: hit {n} must be an object such as "
                             '{"doc_id": ..., "text": ...}')
        extra = sorted(set(hit) - _HIT_KEYS)
        if extra:
            raise WorkbenchError(f"{where}: hit {n} has unknown field(s) {extra}: a hit has "
                             f"{', '.join(sorted(_HIT_KEYS))}")
    return qid, hits


def read_run(path: str | Path,
             documents: Mapping[str, Document] | Iterable[Document] | Locator | None = None, *,
             chunks: Iterable[Chunk] | None = None, system: str | None = None,
             scores: str = "similarity", raw: Mapping[str, str] | None = None,
             unlocated: str = "raise", offsets: str | Convention | None = None,
             truncated: str = "auto", extend_to: Iterable[Chunk] | None = None) -> Run:
    """A logged run (see the module doc); :func:`read_log` with its report dropped."""
    return read_log(path, documents, chunks=chunks, system=system, scores=scores, raw=raw,
                    unlocated=unlocated, offsets=offsets, truncated=truncated,
                    extend_to=extend_to)[0]


def read_log(path: str | Path,
             documents: Mapping[str, Document] | Iterable[Document] | Locator | None = None, *,
             chunks: Iterable[Chunk] | None = None, system: str | None = None,
             scores: str = "similarity", raw: Mapping[str, str] | None = None,
             unlocated: str = "raise", offsets: str | Convention | None = None,
             truncated: str = "auto", extend_to: Iterable[Chunk] | None = None
             ) -> tuple[Run, LogReport]:
    """A logged run and what its hits said about themselves (:class:`LogReport`).
    ``documents`` locates text and offset hits; ``chunks`` resolves chunk-id hits (an id not
    among them is an error); ``raw`` (``{doc_id: raw file text}``, e.g.
    :func:`~workbench.corpus.raw_texts`) are the files that offsets may be into; ``offsets``
    is their convention (:func:`~workbench.corpus.conventions.parse_convention`; ``"auto"``
    detects it from the hit texts and refuses when they leave it open; default ``"raw"``
    when ``raw`` is given, else ``"auto"``); ``truncated="auto"`` detects texts the logger
    cut (:mod:`~workbench.corpus.truncation`), located by their prefix and extended to the
    chunk of ``extend_to`` (the production chunking) that starts there; ``scores`` declares
    what the scores are (``similarity``, ``distance`` or ``ignore``)."""
    path = Path(path)
    if path.is_dir():
        raise WorkbenchError(f"{path}: is a folder; give the run JSONL file")

    def lines() -> Iterator[tuple[str, Any, list[Any]]]:
        first: dict[str, str] = {}
        for where, row in iter_jsonl(path):
            qid, items = _line(where, row)
            if qid in first:
                raise WorkbenchError(f"{where}: qid {qid!r} is already on {first[qid]}: one line "
                                 "per question")
            first[qid] = where
            yield where, row, items

    locator: Locator | None = None
    report = LogReport(BODY)
    if documents is not None:
        docs = documents.documents if isinstance(documents, Locator) else documents
        files = {**(documents.raw if isinstance(documents, Locator) else {}), **(raw or {})}
        report = inspect_log(lines, docs, files=files, offsets=default_offsets(raw, offsets),
                             truncated=truncated, scores=scores)
        locator = LogLocator(docs, files=files, convention=report.convention,
                             truncation=report.truncation, extend_to=extend_to, report=report)
    ranker = CallableRetriever(lambda _query: [], system or path.stem, documents=locator,
                               chunks=chunks, scores=scores, unlocated=unlocated)
    hits: dict[str, tuple[Hit, ...]] = {}
    names: set[str] = set()
    for where, row, items in lines():
        if isinstance(row.get("system"), str):
            names.add(row["system"])
        hits[row["qid"]] = tuple(ranker.rank(items, None, where))
    if not hits:
        raise WorkbenchError(f"{path}: no lines: a run file has one JSON object per question")
    if not any(hits.values()):
        raise InputError(str(path), f"every one of the {len(hits)} question(s) has an empty hit "
                         "list, so there is nothing to score: check that the log records what "
                         "was retrieved (each line's hits, as text with doc_id, offsets or "
                         "chunk ids), or that the right file was given", field="hits")
    name = system or (names.pop() if len(names) == 1 else path.stem)
    renamed = {q: tuple(Hit(h.chunk_id, h.score, h.rank, name, details=h.details,
                            chunk=h.chunk) for h in hs)
               for q, hs in hits.items()}
    return Run(name, MappingProxyType(renamed)), report


def read_chunks(path: str | Path,
                documents: Mapping[str, Document] | Iterable[Document] | Locator
                ) -> LocatedChunks:
    """A production chunking as JSONL, one chunk a line: ``{"chunk_id" (or "id"), "doc_id",
    "start", "end"}`` and/or ``"text"`` (located as hits are), optional ``"metadata"``; the
    run JSONL of :func:`write_run` rows have this shape. Each becomes a :class:`Chunk` of
    ``documents`` (its text the document's at the located offsets), so ``{"chunk_id"}`` logs
    of that chunking can be scored; ``.report`` counts how each was located (exactly,
    normalised, aligned). A bad line raises InputError naming ``file:line``."""
    locator = documents if isinstance(documents, Locator) else Locator(documents)
    out: list[Chunk] = []
    seen: dict[str, str] = {}
    found_by: list[Location] = []
    for where, row in iter_jsonl(path, "chunks JSONL"):
        if not isinstance(row, dict):
            raise InputError(where, 'each line must be a JSON object {"chunk_id", "doc_id", '
                             '"start", "end"} or {"chunk_id", "doc_id", "text"}')
        cid = row.get("chunk_id", row.get("id"))
        if not isinstance(cid, str) or not cid:
            raise InputError(where, "a chunk needs its id (a non-empty string)", "chunk_id")
        if cid in seen:
            raise InputError(where, f"chunk id {cid!r} is already on {seen[cid]}; ids are "
                             "unique", "chunk_id")
        seen[cid] = where
        try:
            found = locator.locate(row.get("text"), row.get("doc_id"), row.get("start"),
                                   row.get("end"))
        except LocateError as exc:
            raise InputError(where, str(exc)) from None
        found_by.append(found)
        doc = locator.document(found.doc_id)
        meta = row.get("metadata")
        text = doc.text[found.start:found.end]
        out.append(Chunk(cid, found.doc_id, found.start, found.end, text=text, embed_text=text,
                         metadata=dict(meta) if isinstance(meta, dict) else {}))
    if not out:
        raise InputError(str(path), "no chunks: one JSON object per chunk")
    scores = [f.score for f in found_by if f.score is not None]
    return LocatedChunks(out, LocationReport(dict(Counter(f.how for f in found_by)), {},
                                             lowest_score=min(scores) if scores else None))


def _hit_row(hit: Hit, chunk: Chunk | None) -> dict[str, Any]:
    row: dict[str, Any] = {"chunk_id": hit.chunk_id}
    if chunk is not None and chunk.end > chunk.start:
        row.update(doc_id=chunk.doc_id, start=chunk.start, end=chunk.end)
    row["score"] = hit.score
    return row


def _documents_of(run: Run, by_id: Mapping[str, Chunk]) -> dict[str, str]:
    """chunk id -> document id for every hit of ``run``, from its chunk (never its id)."""
    out: dict[str, str] = {}
    for qid, hs in run.hits.items():
        for h in hs:
            chunk = h.chunk or by_id.get(h.chunk_id)
            if chunk is None:
                raise WorkbenchError(f"run {run.system!r}, question {qid!r}: hit {h.chunk_id!r} "
                                 "carries no chunk and is not among the chunks given: its "
                                 "document is unknown; pass chunks=...")
            out[h.chunk_id] = chunk.doc_id
    return out


def write_run(path: str | Path, run: Run, format: str | None = None,
              *, chunks: Iterable[Chunk] | None = None, tag: str | None = None,
              level: str = "chunk") -> Path:
    """Write ``run`` to ``path`` as a run JSONL or a TREC run file (``format``; by default
    ``trec`` for ``.trec`` / ``.txt`` / ``.run`` files, ``jsonl`` otherwise), atomically. ``chunks``
    supply the offsets of hits that do not carry their chunk.

    ``level="document"`` writes what document-level scoring ranks: each document where its
    best chunk ranks, by document id (a TREC run only). A TREC file is read back in
    trec_eval's order (score descending, then docno descending); where tied scores would
    reorder the ranking that was scored, the file gets scores ``n, n-1, ..., 1`` instead, so
    ``workbench trec`` scores the same ranking."""
    path = target_path(path, "write_run")
    if level not in ("chunk", "document"):
        raise WorkbenchError(f"level must be 'chunk' or 'document', not {level!r}")
    fmt = format or ("trec" if path.suffix in (".trec", ".txt", ".run") else "jsonl")
    if fmt not in RUN_FORMATS:
        raise WorkbenchError(f"format must be one of {', '.join(RUN_FORMATS)}, not {fmt!r}")
    if path.is_dir():
        raise WorkbenchError(f"{path}: is a folder; give the file to write")
    by_id = {c.id: c for c in chunks or ()}
    if level == "document":
        if fmt != "trec":
            raise WorkbenchError(f"{path}: a document-level run is written as a TREC run (.trec); "
                             "a run JSONL holds chunks")
        run = run.to_documents(_documents_of(run, by_id))
    if fmt == "trec":
        scored: dict[str, dict[str, float]] = {}
        for qid, hs in run.hits.items():
            seen: dict[str, float] = {}
            for h in hs:
                if h.chunk_id in seen:
                    raise WorkbenchError(f"run {run.system!r} returns {h.chunk_id!r} twice for "
                                     f"{qid!r}: a TREC run cannot hold a chunk twice; export "
                                     "it as .jsonl")
                seen[h.chunk_id] = h.score
            scored[qid] = seen
        name = tag or "".join(run.system.split()) or "workbench"
        if all(trec_sorted(seen) == list(seen) for seen in scored.values()):
            write_trec_run(path, scored, tag=name)
        else:  # tied scores trec_eval would reorder: write the ranking itself
            write_trec_run(path, {q: list(seen) for q, seen in scored.items()}, tag=name)
        return path
    lines = [json.dumps({"qid": qid, "system": run.system, "offsets": BODY.spec,
                         "hits": [_hit_row(h, h.chunk or by_id.get(h.chunk_id)) for h in hs]},
                        ensure_ascii=False) + "\n" for qid, hs in run.hits.items()]
    atomic_write_text(path, "".join(lines))
    return path
