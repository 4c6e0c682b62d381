"""The user's question and retrieved documents out of OpenTelemetry / OpenInference trace
exports: OTLP files from collectors and Langfuse, and every export a Phoenix user makes.

Accepted shapes (one JSON document, JSONL with one per line, or a parquet file):

* OTLP JSON, as collectors and Langfuse export it:
  ``{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId", "spanId", "parentSpanId",
  "attributes": [{"key": "input.value", "value": {"stringValue": "..."}}]}]}]}]}``, and
  Phoenix's ``/v1/projects/{p}/spans/otlpv1`` (``{"data": [spans]}`` in snake case:
  ``trace_id``, ``parent_span_id``, ``start_time_unix_nano``, ``{"string_value": ...}``);
* a list of spans (or ``{"spans": [...]}`` / ``{"data": [...]}``), as Phoenix's REST span list
  (``GET /v1/projects/{p}/spans``) and ``phoenix.client``'s ``spans.get_spans()`` give them:
  ``{"context": {"trace_id", "span_id"}, "parent_id", "span_kind", "start_time",
  "attributes": {...}}``, attributes flat (``"input.value"``) or nested (``{"input": {"value":
  ...}}``), the span kind top-level or in ``openinference.span.kind``; a span or observation
  with a top-level ``input`` (Langfuse) reads it as ``input.value``;
* Phoenix's ``get_spans_dataframe()`` saved as JSON records (``to_json(orient="records")``)
  or as parquet (``.parquet``, read with pandas): one row per span, flat columns
  ``context.trace_id``, ``parent_id``, ``span_kind``, ``start_time``, ``attributes.input.value``,
  ``attributes.retrieval.documents`` (a list of ``{"document.id", ...}``).

One question per trace, traces in chronological order (the earliest start time of their
spans; file order where no span has one). With ``field`` (an attribute key such as
``user.query``) it is that attribute of the first span carrying it (the root first).
Otherwise: the root span's ``input.value``, else a RETRIEVER span's, else the last user
message of ``llm.input_messages``. A JSON input (``input.mime_type`` JSON, or text that is a
JSON object) gives its ``query``, ``question`` or ``input`` field, or its last user message.
OpenInference ``retrieval.documents`` of the RETRIEVER spans (in start order) become the hits
(``{"id", "text", "score"}``) and the best ``document.score`` (a similarity) the top score.
:func:`write_run_log` writes them as a run log that ``--run`` scores.
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

from workbench.io import (
    InputError,
    atomic_write_text,
    decode_json_file,
    decode_json_line,
    read_text,
    target_path,
)

__all__ = ["TraceQuestion", "flatten_attributes", "read_spans", "write_run_log"]

_MESSAGE = re.compile(r"llm\.input_messages\.(\d+)\.message\.(role|content)$")
_DOCUMENT = re.compile(r"retrieval\.documents\.(\d+)\.document\.(id|content|score)$")
_QUERY_KEYS = ("query", "question", "input")


@dataclass(frozen=True)
class TraceQuestion:
    """The question of one trace (None when the trace carries none), its 1-based position
    in the file, its trace id and its retrieved documents."""

    position: int
    trace_id: str | None
    question: str | None
    top_score: float | None = None
    _: KW_ONLY
    hits: tuple[Mapping[str, Any], ...] = field(default=(), hash=False)


def _otlp_value(value: Any) -> Any:
    """An OTLP AnyValue (camel case as in OTLP JSON, or snake case as Phoenix writes it)."""
    if not isinstance(value, dict):
        return value
    value = {re.sub(r"_([a-z])", lambda m: m[1].upper(), k): v for k, v in value.items()
             if v is not None}  # Phoenix writes every kind, the unused ones null
    for kind in ("stringValue", "boolValue", "doubleValue", "bytesValue"):
        if kind in value:
            return value[kind]
    if "intValue" in value:
        return int(value["intValue"])
    if "arrayValue" in value:
        return [_otlp_value(v) for v in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        return {kv.get("key"): _otlp_value(kv.get("value"))
                for kv in (value["kvlistValue"] or {}).get("values", [])}
    return None


def flatten_attributes(attributes: Any) -> dict[str, Any]:
    """Span attributes as one flat ``{dotted.key: scalar}`` mapping, from an OTLP key/value
    list or a (flat or nested) mapping; list elements get their index (``...messages.0...``)."""
    out: dict[str, Any] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(f"{prefix}.{k}" if prefix else str(k), v)
        elif isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
            for i, v in enumerate(value):
                walk(f"{prefix}.{i}", v)
        else:
            out[prefix] = value

    if isinstance(attributes, list):
        attributes = {kv.get("key"): _otlp_value(kv.get("value")) for kv in attributes
                      if isinstance(kv, dict)}
    if isinstance(attributes, dict):
        walk("", attributes)
    return out


def _spans(doc: Any) -> list[dict[str, Any]]:
    if isinstance(doc, dict) and ("resourceSpans" in doc or "resource_spans" in doc):
        return [s for rs in doc.get("resourceSpans", doc.get("resource_spans")) or []
                for ss in rs.get("scopeSpans", rs.get("scope_spans", []))
                for s in ss.get("spans", []) if isinstance(s, dict)]
    if isinstance(doc, dict):
        doc = doc.get("spans", doc.get("data", [doc]))
    return [s for s in doc if isinstance(s, dict)] if isinstance(doc, list) else []


def _ids(span: Mapping[str, Any]) -> tuple[str | None, str | None]:
    context = span["context"] if isinstance(span.get("context"), dict) else {}
    trace = span.get("traceId", span.get("trace_id", context.get(
        "trace_id", span.get("context.trace_id"))))
    parent = span.get("parentSpanId", span.get("parent_span_id", span.get("parent_id",
                      span.get("parentObservationId"))))
    return (str(trace) if trace else None), (str(parent) if parent else None)


def _start(span: Mapping[str, Any]) -> float | None:
    """The span's start in seconds since the epoch (nanoseconds, ISO text, or the epoch
    milliseconds of ``DataFrame.to_json``), None when it has none."""
    nanos = span.get("startTimeUnixNano", span.get("start_time_unix_nano"))
    if isinstance(nanos, int | str) and str(nanos).isdigit():
        return int(nanos) / 1e9
    when = span.get("start_time", span.get("startTime"))
    if isinstance(when, int | float) and not isinstance(when, bool):
        return when / 1e3
    if isinstance(when, str):
        try:
            return datetime.fromisoformat(when.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


def _attributes(span: Mapping[str, Any]) -> dict[str, Any]:
    """The span's attributes, flat; a dataframe row's ``attributes.*`` columns read as
    attributes, a top-level ``span_kind`` as ``openinference.span.kind``."""
    columns = {k[len("attributes."):]: v for k, v in span.items()
               if k.startswith("attributes.") and v is not None}
    attrs = flatten_attributes({**columns, **flatten_attributes(span.get("attributes", {}))})
    if "input" in span and "input.value" not in attrs:
        attrs["input.value"] = span["input"]
    kind = span.get("span_kind", span.get("spanKind"))
    if isinstance(kind, str) and "openinference.span.kind" not in attrs:
        attrs["openinference.span.kind"] = kind.upper()
    return attrs


def _from_json(text: str, where: str, name: str) -> str | None:
    try:
        value = json.loads(text)
    except ValueError:
        return text
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in _QUERY_KEYS:
            if isinstance(value.get(key), str):
                return str(value[key])
        value = value.get("messages", value)
    if isinstance(value, list):
        users = [m.get("content") for m in value if isinstance(m, dict)
                 and m.get("role") == "user" and isinstance(m.get("content"), str)]
        if users:
            return str(users[-1])
    raise InputError(where, "is JSON with no query, question, input or user message; pass "
                     "field= naming the attribute that holds the question", field=name)


def _input(attrs: Mapping[str, Any], where: str, name: str = "input.value") -> str | None:
    """The text of attribute ``name`` (JSON read as in the module doc; its mime type is
    ``<prefix>.mime_type``)."""
    value = attrs.get(name)
    if value is None or isinstance(value, dict | list):
        return _from_json(json.dumps(value), where, name) if value is not None else None
    text = str(value)
    mime = str(attrs.get(f"{name.rpartition('.')[0]}.mime_type", ""))
    if "json" in mime or text.lstrip().startswith(("{", "[")):
        return _from_json(text, where, name)
    return text


def _user_message(attrs: Mapping[str, Any]) -> str | None:
    messages: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        m = _MESSAGE.match(key)
        if m:
            messages.setdefault(int(m[1]), {})[m[2]] = value
    users = [m["content"] for _, m in sorted(messages.items())
             if m.get("role") == "user" and isinstance(m.get("content"), str)]
    return users[-1] if users else None


def _documents(attrs: Mapping[str, Any]) -> list[dict[str, Any]]:
    docs: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        m = _DOCUMENT.match(key)
        if m:
            docs.setdefault(int(m[1]), {})[{"content": "text"}.get(m[2], m[2])] = value
    return [d for _, d in sorted(docs.items())]


def _question(spans: list[tuple[dict[str, Any], bool]], name: str | None, where: str
              ) -> str | None:
    ordered = sorted(spans, key=lambda s: not s[1])  # the root first
    if name is not None:
        for attrs, _ in ordered:
            if attrs.get(name) is not None:
                return _input(attrs, where, name)
        return None
    for attrs, root in ordered:
        if root and (q := _input(attrs, where)):
            return q
    for attrs, _ in ordered:
        if attrs.get("openinference.span.kind") == "RETRIEVER" and (q := _input(attrs, where)):
            return q
    for attrs, _ in ordered:
        if q := _user_message(attrs):
            return q
    return None


def _load(path: Path) -> list[Any]:
    if path.suffix.lower() == ".parquet":
        try:  # pyarrow: fastparquet reads Phoenix's list-of-struct documents as None
            import pandas as pd
            frame = pd.read_parquet(path, engine="pyarrow")
        except ImportError as e:
            raise InputError(str(path), f"reading parquet needs pandas and pyarrow ({e}); "
                             "pip install pyarrow, or save the spans as JSON") from None
        except (OSError, ValueError) as e:
            raise InputError(str(path), f"is not a readable parquet file ({e})") from None
        return [json.loads(frame.to_json(orient="records", date_format="iso"))]
    text = read_text(path, "trace export")
    try:
        return [decode_json_file(text, path)]
    except InputError:
        lines = [(n, line) for n, line in enumerate(text.split("\n"), 1) if line.strip()]
        if len(lines) < 2:
            raise
        return [decode_json_line(line, f"{path}:{n}") for n, line in lines]


def read_spans(path: str | Path, field: str | None = None) -> list[TraceQuestion]:
    """One :class:`TraceQuestion` per trace of the export at ``path`` (see the module doc)."""
    path = Path(path)
    found: list[tuple[float, int, str, dict[str, Any], bool]] = []
    for doc in _load(path):
        for span in _spans(doc):
            trace, parent = _ids(span)
            n = len(found)
            start = _start(span)
            found.append((start if start is not None else float("inf"), n,
                          trace or f"<span {n}>", _attributes(span), parent is None))
    if not found:
        raise InputError(str(path), "no spans found: expected OTLP JSON (resourceSpans), a "
                         "list of spans with attributes, or a spans dataframe")
    traces: dict[str, list[tuple[dict[str, Any], bool]]] = {}
    for _, _, trace, attrs, root in sorted(found, key=lambda f: f[:2]):
        traces.setdefault(trace, []).append((attrs, root))
    out = []
    for position, (trace, spans) in enumerate(traces.items(), start=1):
        where = f"{path} (trace {position}: {trace})"
        question = _question(spans, field, where)
        docs = [d for attrs, _ in spans
                if attrs.get("openinference.span.kind") == "RETRIEVER"
                for d in _documents(attrs)][:100]
        scores = [float(d["score"]) for d in docs if isinstance(d.get("score"), int | float)]
        text = " ".join(question.split()) if question else None
        out.append(TraceQuestion(position, None if trace.startswith("<") else trace,
                                 text or None, max(scores) if scores else None,
                                 hits=tuple(MappingProxyType(d) for d in docs)))
    return out


def write_run_log(path: str | Path, traces: list[TraceQuestion]) -> Path:
    """Write the run log of ``traces`` to ``path`` (JSONL, atomically): one line per trace
    with a question, ``{"qid": trace id, "query", "hits": [{"id", "text", "score"}]}``, the
    retrieved documents in order, for ``--run`` (its hits are located in the corpus by their
    text)."""
    path = target_path(path, "write_run_log")
    lines = []
    for t in traces:
        if t.question is None:
            continue
        hits = [{k: v for k, v in (("id", h.get("id")), ("text", h.get("text")),
                                   ("score", h.get("score"))) if v is not None} for h in t.hits]
        lines.append(json.dumps({"qid": t.trace_id or f"trace-{t.position}",
                                 "query": t.question, "hits": hits}, ensure_ascii=False))
    atomic_write_text(path, "".join(f"{line}\n" for line in lines))
    return path
