"""The user's question out of OpenTelemetry / OpenInference trace exports (Phoenix, Langfuse).

Accepted shapes (one JSON document, or JSONL with one per line):

* OTLP JSON, as collectors and Langfuse export it:
  ``{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId", "spanId", "parentSpanId",
  "attributes": [{"key": "input.value", "value": {"stringValue": "..."}}]}]}]}]}``;
* a list of spans (or ``{"spans": [...]}`` / ``{"data": [...]}``), as Phoenix exports them:
  ``{"context": {"trace_id", "span_id"}, "parent_id", "attributes": {...}}``, attributes flat
  (``"input.value"``) or nested (``{"input": {"value": ...}}``); a span or observation with a
  top-level ``input`` (Langfuse) reads it as ``input.value``.

One question per trace, in the order traces first appear. With ``field`` (an attribute key
such as ``user.query``) it is that attribute of the first span carrying it (the root first).
Otherwise: the root span's ``input.value``, else a RETRIEVER span's, else the last user
message of ``llm.input_messages``. A JSON input (``input.mime_type`` JSON, or text that is a
JSON object) gives its ``query``, ``question`` or ``input`` field, or its last user message.
OpenInference ``retrieval.documents`` of the RETRIEVER span become the hits
(``{"id", "text", "score"}``) and the best ``document.score`` (a similarity) the top score.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from workbench.io import InputError, decode_json_file, decode_json_line, read_text

__all__ = ["TraceQuestion", "flatten_attributes", "read_spans"]

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
    hits: tuple[Mapping[str, Any], ...] = field(default=(), hash=False)


def _otlp_value(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    for kind in ("stringValue", "boolValue", "doubleValue", "bytesValue"):
        if kind in value:
            return value[kind]
    if "intValue" in value:
        return int(value["intValue"])
    if "arrayValue" in value:
        return [_otlp_value(v) for v in value["arrayValue"].get("values", [])]
    if "kvlistValue" in value:
        return {kv.get("key"): _otlp_value(kv.get("value"))
                for kv in value["kvlistValue"].get("values", [])}
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
    if isinstance(doc, dict) and "resourceSpans" in doc:
        return [s for rs in doc["resourceSpans"] or [] for ss in rs.get("scopeSpans", [])
                for s in ss.get("spans", []) if isinstance(s, dict)]
    if isinstance(doc, dict):
        doc = doc.get("spans", doc.get("data", [doc]))
    return [s for s in doc if isinstance(s, dict)] if isinstance(doc, list) else []


def _ids(span: Mapping[str, Any]) -> tuple[str | None, str | None]:
    context = span["context"] if isinstance(span.get("context"), dict) else {}
    trace = span.get("traceId", span.get("trace_id", context.get("trace_id")))
    parent = span.get("parentSpanId", span.get("parent_span_id", span.get("parent_id",
                      span.get("parentObservationId"))))
    return (str(trace) if trace else None), (str(parent) if parent else None)


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
    traces: dict[str, list[tuple[dict[str, Any], bool]]] = {}
    for doc in _load(path):
        for n, span in enumerate(_spans(doc)):
            trace, parent = _ids(span)
            attrs = flatten_attributes(span.get("attributes", {}))
            if "input" in span and "input.value" not in attrs:
                attrs["input.value"] = span["input"]
            traces.setdefault(trace or f"<span {n}>", []).append((attrs, parent is None))
    if not traces:
        raise InputError(str(path), "no spans found: expected OTLP JSON (resourceSpans) or a "
                         "list of spans with attributes")
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
                                 tuple(MappingProxyType(d) for d in docs)))
    return out
