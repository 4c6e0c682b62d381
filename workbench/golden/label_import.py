"""Span labels back from Label Studio and Argilla, as the tools write them, into golden items.

Label Studio: every export that carries spans is read: JSON (tasks with
``annotations[].result[]``), JSON_MIN (one flat row per annotation: the task data, ``label:
[{start, end, text, labels}]``, ``answerable``, ``annotator``), CSV and TSV (the JSON_MIN
columns, nested values as JSON text). A file is CSV or TSV by its suffix (``.csv``, ``.tsv``;
Label Studio names both ``.csv``, so tabs in the header row make it TSV), else JSON; a decoded
list is JSON or JSON_MIN by its rows. Argilla: records in the
``Record.to_dict`` shape (``responses: {"spans": [{"value": [{start, end, label}],
"user_id"}]}``).

Offsets are the truth and the quote the check. A span's offsets index the passage that was
exported (``data.text``), counted in code points (``chars``) or UTF-16 code units (``utf16``:
what a browser counts; Label Studio's and Argilla's interfaces send these). Label Studio's
``value.text`` quote has each line break written as the two characters ``\\n``; that escaping
is undone before the check. ``offsets="auto"`` keeps the readings under which the span lies
in the passage (and slices out the quote, when there is one): one reading, or two giving the
same span, is the answer. Argilla spans carry no quote: when characters outside the Basic
Multilingual Plane precede a span, the two readings differ and the file's convention is the
one its unambiguous spans show (an offset inside a surrogate pair, or beyond the passage in
code points); a span the file cannot decide is refused naming ``offsets=``. A span is never
moved to where its quote happens to appear.

Labels are the configured ones (:data:`~workbench.golden.exchange.LABELS`); any other is
refused by name. A task that cannot be placed (unknown label, offsets that miss their quote,
a passage no longer in its document, a document not given) is reported with its id and
reason in :attr:`LabelImport.refused`, and its question is left out whole; every other
question imports. A file that is not an export at all raises
:class:`~workbench.io.InputError`.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from workbench.corpus import Document
from workbench.golden.golden_set import GoldenSet
from workbench.golden.items import SOURCES, Evidence, GoldenItem
from workbench.golden.tool_formats import ANSWERABLE, LABELS, TASK_DATA
from workbench.io import InputError, decode_json_file, is_int, read_text
from workbench.text import normalize_text

__all__ = ["OFFSETS", "LabelImport", "Refusal", "from_argilla", "from_label_studio"]

#: how span offsets count: ``auto`` (see the module doc), code points, UTF-16 code units
OFFSETS = ("auto", "chars", "utf16")
Offsets = Literal["auto", "chars", "utf16"]
_INT_DATA = ("start", "end", "rank")


@dataclass(frozen=True)
class Refusal:
    """A task or record that could not be placed: where (file: task id), its question's qid
    (None when unreadable) and why."""

    where: str
    qid: str | None
    reason: str

    def __str__(self) -> str:
        left = f" (question {self.qid!r} left out)" if self.qid else ""
        return f"{self.where}: {self.reason}{left}"


@dataclass(frozen=True)
class LabelImport:
    """What an import placed (``golden``) and what it could not (``refused``, one per
    task or record, in file order)."""

    golden: GoldenSet
    refused: tuple[Refusal, ...] = ()

    def __iter__(self) -> Iterator[GoldenItem]:
        """The placed items (``golden``), in file order."""
        return iter(self.golden)

    def report(self) -> str:
        """One line per refusal, after a count line."""
        head = f"{len(self.golden)} questions imported, {len(self.refused)} tasks refused"
        return "\n".join([head, *(f"  {r}" for r in self.refused)])


class _Refused(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# ----- offsets -------------------------------------------------------------------------------

def _utf16_to_code_points(text: str, offset: int) -> int | None:
    units = 0
    for i, ch in enumerate(text):
        if units == offset:
            return i
        units += 2 if ord(ch) > 0xFFFF else 1
    return len(text) if units == offset else None


def _readings(passage: str, start: int, end: int, offsets: Offsets
              ) -> dict[str, tuple[int, int]]:
    """The code-point spans ``[start, end)`` can be, by convention, inside ``passage``."""
    out: dict[str, tuple[int, int]] = {}
    if offsets in ("auto", "chars") and end <= len(passage):
        out["chars"] = (start, end)
    if offsets in ("auto", "utf16"):
        s, e = _utf16_to_code_points(passage, start), _utf16_to_code_points(passage, end)
        if s is not None and e is not None and e > s:
            out["utf16"] = (s, e)
    return out


def _escaped(text: str) -> str:
    """Label Studio's ``value.text``: each CR or LF written as the two characters ``\\n``."""
    return re.sub(r"[\r\n]", lambda _: "\\n", text)


def _checked_span(passage: str, start: Any, end: Any, quote: Any, offsets: Offsets
                  ) -> tuple[int, int] | dict[str, tuple[int, int]]:
    """The span, or (no quote, readings that differ) the readings to decide by the file."""
    if not all(is_int(x) for x in (start, end)) or \
            not 0 <= start < end:
        raise _Refused(f"span offsets [{start}, {end}) are not a range")
    readings = _readings(passage, start, end, offsets)
    if quote is not None:
        quote = normalize_text(str(quote))
        readings = {k: v for k, v in readings.items()
                    if quote in (passage[v[0]:v[1]], _escaped(passage[v[0]:v[1]]))}
    spans = set(readings.values())
    if len(spans) == 1:
        return spans.pop()
    if not spans:
        got = {k: passage[s:e] for k, (s, e) in _readings(passage, start, end, offsets).items()}
        shown = ", ".join(f"as {k} {v[:40]!r}" for k, v in got.items()) or "outside the passage"
        check = f"not its text {str(quote)[:40]!r}" if quote is not None else "no span"
        raise _Refused(f"span [{start}, {end}) reads {shown}: {check}; the passage changed or "
                       f"the offsets are wrong (offsets={offsets!r}); re-annotate it")
    if quote is not None:
        raise _Refused(_ambiguous(passage, readings, start, end))
    return readings


def _ambiguous(passage: str, readings: Mapping[str, tuple[int, int]], start: int, end: int
               ) -> str:
    shown = ", ".join(f"as {k} {passage[s:e][:40]!r}" for k, (s, e) in readings.items())
    return (f"span [{start}, {end}) follows characters outside the Basic Multilingual Plane and "
            f"reads {shown}; pass offsets='utf16' (a web interface's selections) or "
            "offsets='chars' (records written in Python)")


# ----- tasks ---------------------------------------------------------------------------------

@dataclass
class _Labels:
    question: str
    source: str
    category: str
    evidence: list[Evidence] = field(default_factory=list)
    must: list[str] = field(default_factory=list)
    unanswerable: bool = False


def _passage(data: Any, documents: Mapping[str, Document]
             ) -> tuple[str, Document, int, str, _Labels]:
    if not isinstance(data, dict):
        raise _Refused("has no task data object (qid, question, doc_id, start, text)")
    for key in ("qid", "question", "doc_id", "start", "text"):
        if key not in data:
            raise _Refused(f"field {key!r} is missing; export tasks with to_label_studio / "
                           "to_argilla, which carry it")
    doc = documents.get(str(data["doc_id"]))
    if doc is None:
        raise _Refused(f"document {data['doc_id']!r} is not in the documents given")
    text, base = normalize_text(str(data["text"])), data["start"]
    if not isinstance(base, int) or doc.text[base:base + len(text)] != text:
        found = doc.text.find(text)
        if found < 0 or doc.text.find(text, found + 1) >= 0:
            raise _Refused(f"the passage is no longer in document {doc.id!r} at {base} (nor "
                           "once elsewhere); re-export the task")
        base = found
    source = data.get("source") or "real"
    if source not in SOURCES:
        raise _Refused(f"source {source!r} is not one of {SOURCES}")
    labels = _Labels(normalize_text(str(data["question"])), str(source),
                     str(data.get("category") or "uncategorised"))
    return str(data["qid"]), doc, base, text, labels


def _label(labels: Any) -> str:
    names = labels if isinstance(labels, list) else [labels]
    unknown = [n for n in names if n not in LABELS]
    if unknown or len(names) != 1:
        raise _Refused(f"label {unknown or names} is not one of {list(LABELS)} (the labelling "
                       "config of exchange.LABEL_STUDIO_CONFIG / ARGILLA_SETTINGS); relabel it")
    return str(names[0])


def _place(lab: _Labels, doc: Document, base: int, label: str, s: int, e: int) -> None:
    ev = Evidence(doc.id, base + s, base + e, doc.text[base + s:base + e])
    if label == "must_mention":
        lab.must.append(ev.text)
    else:
        lab.evidence.append(ev)


def _collect(rows: Iterator[tuple[str, Any]], documents: Mapping[str, Document],
             read: Any) -> LabelImport:
    """Each ``(where, row)`` through ``read(row, doc, base, text, labels)``; refusals kept."""
    labelled: dict[str, _Labels] = {}
    refused: list[Refusal] = []
    bad: set[str] = set()
    for where, row in rows:
        qid = None
        try:
            data = row.get("data") if isinstance(row, dict) else None
            qid = str(data["qid"]) if isinstance(data, dict) and "qid" in data else None
            qid, doc, base, text, new = _passage(data, documents)
            read(row, doc, base, text, labelled.setdefault(qid, new), where)
        except _Refused as e:
            refused.append(Refusal(where, qid, e.reason))
            if qid is not None:
                bad.add(qid)
    items = []
    for qid, lab in labelled.items():
        evidence = tuple(sorted(set(lab.evidence), key=lambda e: (e.doc_id, e.start, e.end)))
        if qid in bad or (not evidence and not lab.unanswerable):
            continue
        if evidence and lab.unanswerable:
            refused.append(Refusal(f"question {qid!r}", qid, "has answer spans and is marked "
                                   "unanswerable; pick one"))
            continue
        items.append(GoldenItem(qid, lab.question, evidence=evidence,
                                answer_must_mention=tuple(dict.fromkeys(lab.must)),
                                category=lab.category, source=lab.source,
                                answerable=not lab.unanswerable))
    return LabelImport(GoldenSet(items), tuple(refused))


# ----- Label Studio --------------------------------------------------------------------------

def _min_row_to_task(row: Mapping[str, Any], where: str) -> dict[str, Any]:
    """A JSON_MIN / CSV / TSV row (one annotation) as a JSON task with that annotation."""
    def value(key: str) -> Any:
        v = row.get(key)
        if isinstance(v, str) and key not in ("question", "text", "qid", "doc_id"):
            if key in _INT_DATA and re.fullmatch(r"-?\d+", v):
                return int(v)
            if v.startswith(("[", "{")):
                try:
                    return json.loads(v)
                except ValueError:
                    raise InputError(where, "is not JSON", field=key) from None
        return v

    data = {k: value(k) for k in TASK_DATA if k in row}
    result: list[dict[str, Any]] = []
    spans = value("label")
    for span in spans if isinstance(spans, list) else []:
        if isinstance(span, dict):
            result.append({"type": "labels", "from_name": "label",
                           "value": {k: span.get(k) for k in ("start", "end", "text", "labels")}})
    choices = value(ANSWERABLE)
    if choices:
        result.append({"type": "choices", "from_name": ANSWERABLE,
                       "value": {"choices": choices if isinstance(choices, list)
                                 else [choices]}})
    annotations = [{"completed_by": row.get("annotator"), "result": result}] \
        if result or row.get("annotation_id") not in (None, "") else []
    return {"id": row.get("id"), "data": data, "annotations": annotations}


def _label_studio_tasks(export: str | Path | Sequence[Mapping[str, Any]]
                        ) -> tuple[str, list[Any]]:
    """The export as JSON tasks (``id``, ``data``, ``annotations``), by format."""
    if isinstance(export, str | Path):
        name, raw = str(export), read_text(export, "Label Studio export")
        suffix = Path(export).suffix.lower()
        if suffix in (".csv", ".tsv"):  # Label Studio names its TSV export .csv too
            tabs = "\t" in raw.partition("\n")[0]
            reader = csv.DictReader(io.StringIO(raw, newline=""), delimiter="\t" if tabs else ",")
            if not reader.fieldnames or "qid" not in reader.fieldnames:
                raise InputError(name, f"a Label Studio {'TSV' if tabs else 'CSV'} export has a "
                                 "header row with the task data columns (qid, question, text, "
                                 f"...); found {reader.fieldnames}")
            rows: list[Any] = list(reader)
        else:
            rows = decode_json_file(raw, export)
    else:
        name, rows = "<Label Studio export>", list(export)
    if not isinstance(rows, list):
        raise InputError(name, "a Label Studio export is a JSON list of tasks (JSON, JSON_MIN) "
                         "or a CSV / TSV file")
    tasks: dict[Any, dict[str, Any]] = {}
    out: list[Any] = []
    for n, row in enumerate(rows, start=1):
        if isinstance(row, dict) and "data" not in row and "qid" in row:
            task = _min_row_to_task(row, f"{name}: row {n}")
            key = task["id"] if task["id"] not in (None, "") else f"row {n}"
            if key in tasks:  # one row per annotation: the task's rows joined
                tasks[key]["annotations"] += task["annotations"]
                continue
            tasks[key] = task
            row = task
        out.append(row)
    return name, out


def _annotator(value: Any) -> str:
    if isinstance(value, dict):
        return str(value.get("email", value.get("id")))
    return str(value)


def from_label_studio(export: str | Path | Sequence[Mapping[str, Any]],
                      documents: Mapping[str, Document], *, annotator: str | int | None = None,
                      offsets: Offsets = "auto") -> LabelImport:
    """Golden items from a Label Studio export (JSON, JSON_MIN, CSV or TSV file, or the
    decoded list); see the module doc. ``annotator`` is the ``completed_by`` id or email
    (the ``annotator`` column of JSON_MIN / CSV) to read; ``offsets`` one of
    :data:`OFFSETS`."""
    name, tasks = _label_studio_tasks(export)

    def read(task: dict[str, Any], doc: Document, base: int, text: str, lab: _Labels,
             where: str) -> None:
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
                try:
                    label = _label(value.get("labels"))
                    span = _checked_span(text, value.get("start"), value.get("end"),
                                         value.get("text"), offsets)
                except _Refused as e:
                    raise _Refused(f"result {r}: {e.reason}") from None
                assert isinstance(span, tuple)  # a quote decides between readings
                _place(lab, doc, base, label, *span)

    def rows() -> Iterator[tuple[str, Any]]:
        for n, task in enumerate(tasks, start=1):
            ident = task.get("id", n) if isinstance(task, dict) else n
            yield f"{name}: task {ident}", task

    return _collect(rows(), documents, read)


# ----- Argilla -------------------------------------------------------------------------------

def _argilla_spans(rows: list[tuple[str, Any]], question: str, offsets: Offsets
                   ) -> tuple[str | None, set[str]]:
    """The convention the file's undecided spans are read in (None: none shown, or both),
    and the conventions its decided spans show."""
    shown: set[str] = set()
    for _, rec in rows:
        if not isinstance(rec, dict) or not isinstance(rec.get("fields"), dict):
            continue
        text = normalize_text(str(rec["fields"].get("text", "")))
        for r in (rec.get("responses") or {}).get(question) or []:
            for span in (r.get("value") or []) if isinstance(r, dict) else []:
                if not isinstance(span, dict):
                    continue
                s, e = span.get("start"), span.get("end")
                if isinstance(s, int) and isinstance(e, int) and 0 <= s < e:
                    readings = _readings(text, s, e, offsets)
                    if len(readings) == 1:
                        shown |= set(readings)
    return (next(iter(shown)) if len(shown) == 1 else None), shown


def from_argilla(records: str | Path | Sequence[Mapping[str, Any]],
                 documents: Mapping[str, Document], *, user_id: str | None = None,
                 question: str = "spans", offsets: Offsets = "auto") -> LabelImport:
    """Golden items from Argilla records (``Record.to_dict`` shape, a JSON file of them or
    the list); ``question`` names the SpanQuestion, ``user_id`` the labeller to read,
    ``offsets`` one of :data:`OFFSETS` (see the module doc)."""
    if isinstance(records, str | Path):
        name, rows = str(records), decode_json_file(read_text(records, "Argilla records"),
                                                    records)
    else:
        name, rows = "<Argilla records>", list(records)
    if not isinstance(rows, list):
        raise InputError(name, "Argilla records are a JSON list of Record.to_dict() objects")
    listed = [(f"{name}: record {rec.get('id', n) if isinstance(rec, dict) else n}",
               {**rec, "data": {**(rec.get("metadata") or {}), **rec["fields"]}}
               if isinstance(rec, dict) and isinstance(rec.get("fields"), dict) else rec)
              for n, rec in enumerate(rows, start=1)]
    convention, _ = _argilla_spans(listed, question, offsets)

    def mine(rec: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
        return [r for r in (rec.get("responses") or {}).get(key) or [] if isinstance(r, dict)
                and (user_id is None or str(r.get("user_id")) == str(user_id))]

    def read(rec: dict[str, Any], doc: Document, base: int, text: str, lab: _Labels,
             where: str) -> None:
        answers, flags = mine(rec, question), mine(rec, "answerable")
        people = sorted({str(r.get("user_id")) for r in [*answers, *flags]})
        if len(people) > 1:
            raise InputError(where, f"answered by users {people}: pass user_id= one of them")
        lab.unanswerable |= any(r.get("value") == "no" for r in flags)
        for r in answers:
            for s, span in enumerate(r.get("value") or [], start=1):
                if not isinstance(span, dict):
                    raise _Refused(f"span {s} is not {{start, end, label}}")
                try:
                    label = _label(span.get("label"))
                    got = _checked_span(text, span.get("start"), span.get("end"),
                                        span.get("text"), offsets)
                    if isinstance(got, dict):
                        if convention is None:
                            raise _Refused(_ambiguous(text, got, span["start"], span["end"]))
                        got = got[convention]
                except _Refused as e:
                    raise _Refused(f"span {s}: {e.reason}") from None
                _place(lab, doc, base, label, *got)

    return _collect(iter(listed), documents, read)
