"""Label Studio and Argilla, both ways: candidate questions out as tasks, span labels back.

Both SDKs are heavy (label-studio-sdk pulls OpenCV and NLTK, argilla pulls ``datasets``) and
are clients of a server, so the published file formats are written and read by hand.

Out: one task / record per (question, retrieved passage) that the reader named by
``user_groups`` may read; a golden item whose evidence they may not read is left out.
``passages`` gives each question's passages (a callable ``question -> spans`` such as
``lambda q: [h.chunk for h in retriever.search(q, 5)]``, or a mapping ``qid -> spans``;
a :class:`~workbench.corpus.Chunk` or :class:`~workbench.corpus.Span`); the passage text
is cut from the document, so passage offsets map to document offsets by adding the
passage's ``start``.

* Label Studio: ``{"data": {"qid", "question", "text", "doc_id", "start", "end", "rank",
  "source", "category"}, "predictions": [...]}`` for the labelling config
  :data:`LABEL_STUDIO_CONFIG` (labels ``answer`` and ``must_mention`` over ``text``, a choice
  ``unanswerable``); a golden item's own evidence becomes a prediction (pre-annotation).
* Argilla (v2 ``Record.to_dict`` shape): ``{"id", "fields": {"question", "text"},
  "metadata": {...}, "suggestions": {"spans": {"value": [{"start", "end", "label"}]}}}`` for
  a dataset with text fields ``question`` and ``text``, a ``SpanQuestion`` ``spans`` on
  ``text`` (labels ``answer``, ``must_mention``) and a ``LabelQuestion`` ``answerable``
  (``yes``/``no``): :data:`ARGILLA_SETTINGS`.

Back: :mod:`~workbench.golden.label_import` reads what the tools export (every Label Studio
format that carries spans, Argilla records) into golden items with document offsets.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from workbench.corpus import Chunk, Document, Located
from workbench.corpus.reader import Reader, require_reader
from workbench.golden.candidates import Candidate
from workbench.golden.items import GoldenItem, can_read_item
from workbench.golden.label_import import LabelImport, from_argilla, from_label_studio
from workbench.golden.tool_formats import (
    ANSWERABLE,
    ARGILLA_SETTINGS,
    LABEL_STUDIO_CONFIG,
    LABELS,
    TASK_DATA,
)
from workbench.io import WorkbenchError, atomic_write_text, target_path

# the way back lives in label_import, re-exported here: this module is both directions' door
__all__ = ["ANSWERABLE", "ARGILLA_SETTINGS", "LABELS", "LABEL_STUDIO_CONFIG", "TASK_DATA",
           "LabelImport", "from_argilla", "from_label_studio", "qid_of", "to_argilla",
           "to_label_studio", "write_tasks"]

Question = Candidate | GoldenItem
Passages = Callable[[str], Iterable[Located]] | Mapping[str, Iterable[Located]]


def qid_of(question: Question) -> str:
    """The qid a question travels under: its own, else ``c-`` + 10 hex digits of the
    sha256 of its text (stable across exports)."""
    if question.qid:
        return question.qid
    return "c-" + hashlib.sha256(question.question.encode("utf-8")).hexdigest()[:10]


def _passages(questions: Iterable[Question], passages: Passages,
              documents: Mapping[str, Document], reader: Reader
              ) -> Iterable[tuple[Question, int, Document, Located]]:
    """Each question's passages that ``reader`` may read; a golden item whose facts they may
    not see (:func:`~workbench.golden.items.can_read_item`) is left out whole."""
    for q in questions:
        if isinstance(q, GoldenItem) and not can_read_item(reader.groups, q, None, documents):
            continue
        found = (passages(q.question) if callable(passages)
                 else passages.get(qid_of(q), ()))
        rank = 0
        for span in found:
            doc = documents.get(span.doc_id)
            if doc is None:
                raise WorkbenchError(f"passage {rank + 1} of {qid_of(q)!r}: document "
                                     f"{span.doc_id!r} is not in the documents given")
            if not (reader.can_read_chunk(span, doc) if isinstance(span, Chunk)
                    else reader.can_read(doc)):
                continue
            rank += 1
            yield q, rank, doc, span


def _meta(q: Question, rank: int, span: Located) -> dict[str, Any]:
    return {"qid": qid_of(q), "doc_id": span.doc_id, "start": span.start, "end": span.end,
            "rank": rank, "source": q.source,
            "category": q.category if isinstance(q, GoldenItem) else "uncategorised"}


def _own_spans(q: Question, span: Located) -> list[dict[str, Any]]:
    """A golden item's evidence inside the passage, as passage offsets."""
    if not isinstance(q, GoldenItem):
        return []
    return [{"start": e.start - span.start, "end": e.end - span.start, "label": "answer"}
            for e in q.evidence
            if e.doc_id == span.doc_id and span.start <= e.start and e.end <= span.end]


def to_label_studio(questions: Iterable[Question], passages: Passages,
                    documents: Mapping[str, Document], *,
                    user_groups: Reader | Iterable[str] | str | None = None
                    ) -> list[dict[str, Any]]:
    """Label Studio tasks, one per (question, passage) (see the module doc) that
    ``user_groups`` may read (:func:`~workbench.corpus.reader.require_reader`)."""
    reader = require_reader("to_label_studio", user_groups, documents=documents)
    tasks = []
    for q, rank, doc, span in _passages(questions, passages, documents, reader):
        text = doc.text[span.start:span.end]
        task: dict[str, Any] = {"data": {**_meta(q, rank, span), "question": q.question,
                                         "text": text}}
        own = _own_spans(q, span)
        if own:
            task["predictions"] = [{"model_version": "golden", "result": [
                {"from_name": "label", "to_name": "text", "type": "labels",
                 "value": {"start": s["start"], "end": s["end"],
                           "text": text[s["start"]:s["end"]], "labels": ["answer"]}}
                for s in own]}]
        tasks.append(task)
    return tasks


def to_argilla(questions: Iterable[Question], passages: Passages,
               documents: Mapping[str, Document], *,
               user_groups: Reader | Iterable[str] | str | None = None
               ) -> list[dict[str, Any]]:
    """Argilla records, one per (question, passage) (see the module doc) that
    ``user_groups`` may read (:func:`~workbench.corpus.reader.require_reader`)."""
    reader = require_reader("to_argilla", user_groups, documents=documents)
    records = []
    for q, rank, doc, span in _passages(questions, passages, documents, reader):
        record: dict[str, Any] = {
            "id": f"{qid_of(q)}@{span.doc_id}:{span.start}-{span.end}",
            "fields": {"question": q.question, "text": doc.text[span.start:span.end]},
            "metadata": _meta(q, rank, span)}
        own = _own_spans(q, span)
        if own:
            record["suggestions"] = {"spans": {"value": own, "agent": "golden"}}
        records.append(record)
    return records


def write_tasks(path: str | Path, tasks: Sequence[Mapping[str, Any]]) -> Path:
    """Write tasks or records to ``path`` as one JSON list (the file both tools import),
    atomically."""
    path = target_path(path, "write_tasks")
    atomic_write_text(path, json.dumps(list(tasks), ensure_ascii=False, indent=1) + "\n")
    return path
