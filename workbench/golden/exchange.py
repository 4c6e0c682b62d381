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

Back: Label Studio's JSON export (tasks with ``annotations[].result[]`` items of type
``labels``, ``value: {start, end, text, labels}``) and Argilla records with ``responses``
(``{"spans": [{"value": [{"start", "end", "label"}], "user_id"}]}``). Each span is placed in
its document at ``passage start + offset`` (code points; Argilla's offsets are read as
code points) and checked against the text: when the text
differs (Label Studio's browser counts UTF-16 code units), the UTF-16 reading, then the
quote inside the passage, then the quote in the whole document (unique) are tried; a span
that cannot be located raises :class:`~workbench.io.InputError` naming the task. A
question with ``answer`` spans becomes an answerable item; one marked unanswerable, an
unanswerable item; one with neither is left out (it was not labelled). With several
labellers, ``annotator`` / ``user_id`` picks one (two imports give two golden sets for
:func:`~workbench.golden.agreement.agreement`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.corpus import Chunk, Document, Located
from workbench.corpus.reader import Reader, require_reader
from workbench.golden.candidates import Candidate
from workbench.golden.golden_set import GoldenSet
from workbench.golden.items import SOURCES, Evidence, GoldenItem, can_read_item
from workbench.io import (
    InputError,
    WorkbenchError,
    atomic_write_text,
    decode_json_file,
    read_text,
    target_path,
)
from workbench.text import normalize_text

__all__ = ["ARGILLA_SETTINGS", "LABEL_STUDIO_CONFIG", "from_argilla", "from_label_studio",
           "qid_of", "to_argilla", "to_label_studio", "write_tasks"]

LABEL_STUDIO_CONFIG = """<View>
  <Header value="$question"/>
  <Labels name="label" toName="text">
    <Label value="answer"/>
    <Label value="must_mention"/>
  </Labels>
  <Text name="text" value="$text"/>
  <Choices name="answerable" toName="text" choice="single">
    <Choice value="unanswerable"/>
  </Choices>
</View>"""

ARGILLA_SETTINGS: dict[str, Any] = {
    "fields": [{"name": "question", "type": "text"}, {"name": "text", "type": "text"}],
    "questions": [{"name": "spans", "type": "span", "field": "text",
                   "labels": ["answer", "must_mention"]},
                  {"name": "answerable", "type": "label_selection", "labels": ["yes", "no"],
                   "required": False}],
    "metadata": ["qid", "doc_id", "start", "end", "rank", "source", "category"],
}


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


# ----- import --------------------------------------------------------------------------------

@dataclass
class _Labels:
    question: str
    source: str
    category: str
    evidence: list[Evidence] = field(default_factory=list)
    must: list[str] = field(default_factory=list)
    unanswerable: bool = False
    where: str = ""


def _load(export: str | Path | Sequence[Mapping[str, Any]], what: str
          ) -> tuple[str, list[Any]]:
    if isinstance(export, str | Path):
        rows = decode_json_file(read_text(export, what), export)
        name = str(export)
    else:
        rows, name = list(export), f"<{what}>"
    if not isinstance(rows, list):
        raise InputError(name, f"a {what} is a JSON list of tasks or records")
    return name, rows


def _utf16_to_code_points(text: str, offset: int) -> int | None:
    units = 0
    for i, ch in enumerate(text):
        if units == offset:
            return i
        units += 2 if ord(ch) > 0xFFFF else 1
    return len(text) if units == offset else None


def _locate(doc: Document, base: int, passage: str, start: Any, end: Any, quote: str | None,
            where: str) -> Evidence:
    """The evidence of passage offsets ``[start, end)`` in ``doc`` (see the module doc)."""
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in (start, end)) or \
            not 0 <= start < end:
        raise InputError(where, f"span offsets [{start}, {end}) are not a range", field="value")
    quote = normalize_text(quote) if quote is not None else None
    tries = [(start, end)]
    s16, e16 = _utf16_to_code_points(passage, start), _utf16_to_code_points(passage, end)
    if s16 is not None and e16 is not None and e16 > s16:
        tries.append((s16, e16))
    for s, e in tries:
        if e <= len(passage) and (quote is None or passage[s:e] == quote) \
                and doc.text[base + s:base + e] == passage[s:e]:
            return Evidence(doc.id, base + s, base + e, passage[s:e])
    if quote:
        for text, offset in ((passage, base), (doc.text, 0)):
            first = text.find(quote)
            if first >= 0 and text.find(quote, first + 1) < 0 \
                    and doc.text[offset + first:offset + first + len(quote)] == quote:
                return Evidence(doc.id, offset + first, offset + first + len(quote), quote)
    shown = quote if quote is not None else passage[start:end]
    raise InputError(where, f"span {shown[:60]!r} cannot be located in document {doc.id!r} "
                     "(the passage or the document changed since export); re-annotate it")


def _passage(data: Any, documents: Mapping[str, Document], where: str
             ) -> tuple[str, Document, int, str, _Labels]:
    if not isinstance(data, dict):
        raise InputError(where, "has no task data object")
    for key in ("qid", "question", "doc_id", "start", "text"):
        if key not in data:
            raise InputError(where, "is missing; export tasks with to_label_studio / "
                             "to_argilla, which carry it", field=key)
    doc = documents.get(data["doc_id"])
    if doc is None:
        raise InputError(where, f"document {data['doc_id']!r} is not in the documents given",
                         field="doc_id")
    text, base = normalize_text(str(data["text"])), data["start"]
    if not isinstance(base, int) or doc.text[base:base + len(text)] != text:
        found = doc.text.find(text)
        if found < 0 or doc.text.find(text, found + 1) >= 0:
            raise InputError(where, f"the passage is no longer in document {doc.id!r} at "
                             f"{base} (nor once elsewhere); re-export the task", field="text")
        base = found
    if data.get("source", "real") not in SOURCES:
        raise InputError(where, f"{data['source']!r} is not one of {SOURCES}", field="source")
    labels = _Labels(normalize_text(str(data["question"])), str(data.get("source", "real")),
                     str(data.get("category") or "uncategorised"), where=where)
    return str(data["qid"]), doc, base, text, labels


def _golden(labelled: Mapping[str, _Labels]) -> GoldenSet:
    items = []
    for qid, lab in labelled.items():
        evidence = tuple(sorted(set(lab.evidence), key=lambda e: (e.doc_id, e.start, e.end)))
        if evidence and lab.unanswerable:
            raise InputError(lab.where, f"question {qid!r} has answer spans and is marked "
                             "unanswerable; pick one")
        if not evidence and not lab.unanswerable:
            continue
        items.append(GoldenItem(qid, lab.question, evidence=evidence,
                                answer_must_mention=tuple(dict.fromkeys(lab.must)),
                                category=lab.category, source=lab.source,
                                answerable=not lab.unanswerable))
    return GoldenSet(items)


def _annotator(value: Any) -> str:
    if isinstance(value, dict):
        return str(value.get("email", value.get("id")))
    return str(value)


def from_label_studio(export: str | Path | Sequence[Mapping[str, Any]],
                      documents: Mapping[str, Document], *, annotator: str | int | None = None
                      ) -> GoldenSet:
    """Golden items from a Label Studio JSON export (a file or the decoded list); see the
    module doc. ``annotator`` is the ``completed_by`` id or email to read."""
    name, tasks = _load(export, "Label Studio export")
    labelled: dict[str, _Labels] = {}
    for n, task in enumerate(tasks, start=1):
        where = f"{name}: task {task.get('id', n) if isinstance(task, dict) else n}"
        if not isinstance(task, dict):
            raise InputError(where, "each task must be an object")
        qid, doc, base, text, new = _passage(task.get("data"), documents, where)
        lab = labelled.setdefault(qid, new)
        done = [a for a in task.get("annotations") or [] if isinstance(a, dict)
                and not a.get("was_cancelled")]
        if annotator is not None:
            done = [a for a in done if _annotator(a.get("completed_by")) == str(annotator)]
        people = sorted({_annotator(a.get("completed_by")) for a in done})
        if len(people) > 1:
            raise InputError(where, f"annotated by {people}: pass annotator= one of them")
        for a in done:
            for r, result in enumerate(a.get("result") or [], start=1):
                value = result.get("value") if isinstance(result, dict) else None
                if not isinstance(value, dict):
                    continue
                if result.get("type") == "choices":
                    lab.unanswerable |= "unanswerable" in (value.get("choices") or [])
                    continue
                if result.get("type") != "labels":
                    continue
                ev = _locate(doc, base, text, value.get("start"), value.get("end"),
                             value.get("text"), f"{where} result {r}")
                if "must_mention" in (value.get("labels") or []):
                    lab.must.append(ev.text)
                else:
                    lab.evidence.append(ev)
    return _golden(labelled)


def from_argilla(records: str | Path | Sequence[Mapping[str, Any]],
                 documents: Mapping[str, Document], *, user_id: str | None = None,
                 question: str = "spans") -> GoldenSet:
    """Golden items from Argilla records (``Record.to_dict`` shape, a JSON file of them or
    the list); ``question`` names the SpanQuestion, ``user_id`` the labeller to read."""
    name, rows = _load(records, "Argilla records file")
    labelled: dict[str, _Labels] = {}
    for n, rec in enumerate(rows, start=1):
        where = f"{name}: record {rec.get('id', n) if isinstance(rec, dict) else n}"
        if not isinstance(rec, dict) or not isinstance(rec.get("fields"), dict):
            raise InputError(where, "a record is an object with fields and metadata")
        data = {**(rec.get("metadata") or {}), **rec["fields"]}
        qid, doc, base, text, new = _passage(data, documents, where)
        lab = labelled.setdefault(qid, new)
        responses = rec.get("responses") or {}
        answers = [r for r in responses.get(question) or [] if isinstance(r, dict)
                   and (user_id is None or str(r.get("user_id")) == str(user_id))]
        flags = [r for r in responses.get("answerable") or [] if isinstance(r, dict)
                 and (user_id is None or str(r.get("user_id")) == str(user_id))]
        people = sorted({str(r.get("user_id")) for r in [*answers, *flags]})
        if len(people) > 1:
            raise InputError(where, f"answered by users {people}: pass user_id= one of them")
        lab.unanswerable |= any(r.get("value") == "no" for r in flags)
        for r in answers:
            for s, span in enumerate(r.get("value") or [], start=1):
                if not isinstance(span, dict):
                    raise InputError(where, "a span response is {start, end, label}",
                                     field=question)
                ev = _locate(doc, base, text, span.get("start"), span.get("end"), None,
                             f"{where} span {s}")
                if span.get("label") == "must_mention":
                    lab.must.append(ev.text)
                else:
                    lab.evidence.append(ev)
    return _golden(labelled)
