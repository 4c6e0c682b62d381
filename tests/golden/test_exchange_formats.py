"""Round trips through each tool's own format, over generated documents (emoji, astral Han,
CJK, combining marks, CRLF, tabs) and spans: written as the tool writes them (Label Studio's
JSON, JSON_MIN, CSV and TSV with UTF-16 or code-point offsets and ``\\n``-escaped quotes;
Argilla records in either convention; Phoenix's span shapes), read back: the same spans, or a
refusal that names the task. Never a different span."""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import spans_of
from workbench.corpus import Corpus, Document
from workbench.golden.label_import import from_argilla, from_label_studio
from workbench.golden.otel import read_spans
from workbench.text import normalize_text

PIECES = ["Refund", " ", "😀", "𠮷", "退款期限", "e\u0301", "\r\n", "\n", "\t", "Café", "🧾",
          "abc", "ß", "ab ab", "."]
texts = st.lists(st.sampled_from(PIECES), min_size=2, max_size=25).map(
    lambda p: normalize_text("".join(p)))


@st.composite
def labelled(draw):
    """A document and 1-4 answer spans in it (code-point offsets)."""
    text = draw(texts)
    spans = []
    for _ in range(draw(st.integers(1, 4))):
        spans.append(draw(spans_of(text)))
    return text, sorted(set(spans))


def _units(text: str, offset: int, unit: str) -> int:
    return offset if unit == "chars" else len(text[:offset].encode("utf-16-le")) // 2


def _data(text: str) -> dict:
    return {"qid": "q1", "question": "What?", "text": text, "doc_id": "d", "start": 0,
            "end": len(text), "rank": 1, "source": "real", "category": "c"}


def _ls_spans(text: str, spans, unit: str) -> list[dict]:
    return [{"start": _units(text, s, unit), "end": _units(text, e, unit),
             "text": re.sub(r"[\r\n]", lambda _: "\\n", text[s:e]), "labels": ["answer"]}
            for s, e in spans]


def _label_studio(fmt: str, text: str, spans, unit: str, tmp_path):
    """The export file Label Studio writes in ``fmt`` for one task annotated with ``spans``."""
    values = _ls_spans(text, spans, unit)
    if fmt == "JSON":
        rows = [{"id": 7, "annotations": [{"id": 1, "completed_by": 1, "was_cancelled": False,
                                           "result": [{"from_name": "label", "to_name": "text",
                                                       "type": "labels", "value": v}
                                                      for v in values]}],
                 "data": _data(text), "predictions": []}]
        path = tmp_path / "export.json"
        path.write_text(json.dumps(rows, ensure_ascii=False), "utf-8")
        return path
    row = {**_data(text), "id": 7, "label": values, "annotator": 1, "annotation_id": 1,
           "created_at": "2026-12-04T04:54:36Z", "lead_time": None}
    if fmt == "JSON_MIN":
        path = tmp_path / "export-min.json"
        path.write_text(json.dumps([row], ensure_ascii=False, indent=2), "utf-8")
        return path
    out = io.StringIO(newline="")
    writer = csv.writer(out, delimiter="," if fmt == "CSV" else "\t",
                        quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
    keys = sorted(row)
    writer.writerow(keys)
    writer.writerow([json.dumps(row[k], ensure_ascii=False) if isinstance(row[k], list)
                     else "" if row[k] is None else row[k] for k in keys])
    path = tmp_path / f"export-{fmt}.csv"  # Label Studio names both .csv
    path.write_bytes(out.getvalue().encode("utf-8"))
    return path


@settings(max_examples=60)
@given(case=labelled(), fmt=st.sampled_from(["JSON", "JSON_MIN", "CSV", "TSV"]),
       unit=st.sampled_from(["utf16", "chars"]))
def test_label_studio_formats_give_the_same_spans_or_name_the_task(case, fmt, unit,
                                                                   tmp_path_factory):
    text, spans = case
    corpus = Corpus([Document("d", text)])
    path = _label_studio(fmt, text, spans, unit, tmp_path_factory.mktemp("ls"))
    got = from_label_studio(path, corpus)
    if got.refused:
        assert not got.golden and [(r.where, r.qid) for r in got.refused] == [
            (f"{path}: task 7", "q1")]
        assert "offsets='utf16'" in got.refused[0].reason  # both readings fit the quote
        got = from_label_studio(path, corpus, offsets=unit)
    (item,) = got.golden
    assert [(e.start, e.end) for e in item.evidence] == spans
    assert all(text[e.start:e.end] == e.text for e in item.evidence)


@settings(max_examples=60)
@given(labelled(), st.sampled_from(["utf16", "chars"]))
def test_argilla_records_give_the_same_spans_or_name_the_option(case, unit):
    text, spans = case
    corpus = Corpus([Document("d", text)])
    data = _data(text)
    record = {"id": "r1", "fields": {"question": data.pop("question"), "text": data.pop("text")},
              "metadata": data, "responses": {"spans": [{"user_id": "u", "value": [
                  {"start": _units(text, s, unit), "end": _units(text, e, unit),
                   "label": "answer"} for s, e in spans]}]}}
    got = from_argilla([record], corpus)
    if got.refused:
        assert not got.golden and got.refused[0].where == "<Argilla records>: record r1"
        assert "offsets='utf16'" in got.refused[0].reason
    else:
        assert [(e.start, e.end) for e in got.golden[0].evidence] == spans
    declared = from_argilla([record], corpus, offsets=unit)  # type: ignore[arg-type]
    assert [(e.start, e.end) for e in declared.golden[0].evidence] == spans


traces = st.lists(st.tuples(texts, st.lists(texts, min_size=1, max_size=3)), min_size=1,
                  max_size=4)


def _phoenix(shape: str, sent, tmp_path):
    """The spans of ``sent`` ((question, documents) per trace) as Phoenix exports them."""
    spans = []
    for n, (question, docs) in enumerate(sent):
        t0 = 1_796_359_819_000_000_000 + n * 50_000_000
        trace = f"{n:032x}"
        docs_attrs = {f"retrieval.documents.{i}.document.{k}": v for i, d in enumerate(docs)
                      for k, v in (("id", f"c{n}-{i}"), ("content", d), ("score", 1 - i / 10))}
        for span_id, parent, kind, start, attrs in (
                (f"{n:015x}a", None, "CHAIN", t0, {"input.value": question}),
                (f"{n:015x}b", f"{n:015x}a", "RETRIEVER", t0 + 1000,
                 {"input.value": question, **docs_attrs})):
            spans.append((trace, span_id, parent, kind, start, attrs))
    if shape == "rest":  # newest first, span kind top-level
        body = {"data": [{"context": {"trace_id": tr, "span_id": sid}, "parent_id": par,
                          "span_kind": kind, "attributes": attrs,
                          "start_time": datetime.fromtimestamp(st_ / 1e9, UTC).isoformat()}
                         for tr, sid, par, kind, st_, attrs in reversed(spans)]}
    elif shape == "dataframe":  # DataFrame.to_json(orient="records"): epoch milliseconds
        body = [{"context.trace_id": tr, "context.span_id": sid, "parent_id": par,
                 "span_kind": kind, "start_time": st_ // 1_000_000,
                 "attributes.input.value": attrs["input.value"],
                 "attributes.retrieval.documents": [
                     {f"document.{k}": attrs[f"retrieval.documents.{i}.document.{k}"]
                      for k in ("id", "content", "score")}
                     for i in range(len(attrs) // 3)] or None}
                for tr, sid, par, kind, st_, attrs in reversed(spans)]
    else:  # OTLP: camel case from a collector, snake case with nulls from /spans/otlpv1
        def value(v):
            kind = "stringValue" if isinstance(v, str) else "doubleValue"
            if shape == "otlp":
                return {kind: v}
            snake = {k: None for k in ("string_value", "double_value", "int_value",
                                       "bool_value", "array_value")}
            return {**snake, re.sub(r"([A-Z])", lambda m: "_" + m[1].lower(), kind): v}
        ids = ("traceId", "spanId", "parentSpanId", "startTimeUnixNano") if shape == "otlp" \
            else ("trace_id", "span_id", "parent_span_id", "start_time_unix_nano")
        rows = [{ids[0]: tr, ids[1]: sid, ids[2]: par, ids[3]: str(st_), "attributes": [
            {"key": k, "value": value(v)} for k, v in
            {**attrs, "openinference.span.kind": kind}.items()]}
            for tr, sid, par, kind, st_, attrs in spans]
        body = ({"resourceSpans": [{"scopeSpans": [{"spans": rows}]}]} if shape == "otlp"
                else {"data": rows, "next_cursor": None})
    path = tmp_path / f"{shape}.json"
    path.write_text(json.dumps(body, ensure_ascii=False), "utf-8")
    return path


@settings(max_examples=40)
@given(sent=traces, shape=st.sampled_from(["rest", "dataframe", "otlp", "otlpv1"]))
def test_phoenix_shapes_give_the_same_questions_documents_and_order(sent, shape,
                                                                    tmp_path_factory):
    got = read_spans(_phoenix(shape, sent, tmp_path_factory.mktemp("px")))
    assert [t.question for t in got] == [" ".join(q.split()) or None for q, _ in sent]
    assert [[h["text"] for h in t.hits] for t in got] == [docs for _, docs in sent]
    assert [t.top_score for t in got] == [1.0] * len(sent)
