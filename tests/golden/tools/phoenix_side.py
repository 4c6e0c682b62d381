"""Run inside .venv-tools/phoenix (the tools' own SDKs), driven by the tests of this folder.

    emit URL PROJECT TRACES.json OTLP.json   OpenInference traces to Phoenix with the
                                             OpenTelemetry SDK, and the same spans as the
                                             OTLP JSON file a collector writes
    export URL PROJECT N OUTDIR              every export a Phoenix user makes, once its N
                                             spans are in: REST list, client spans, OTLP
                                             endpoint, dataframe as JSON records and parquet
    argilla SETTINGS.json RECORDS.json OUT.json   rg.Settings.from_json loads our settings;
                                             rg.Record.from_dict / to_dict round-trips records

TRACES.json: ``[{"question", "documents": [{"id", "content", "score"}]}]``, one trace each.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def emit(url: str, project: str, traces_path: str, otlp_path: str) -> None:
    from google.protobuf.json_format import MessageToDict
    from openinference.semconv.resource import ResourceAttributes
    from openinference.semconv.trace import OpenInferenceSpanKindValues, SpanAttributes
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    provider = TracerProvider(resource=Resource({ResourceAttributes.PROJECT_NAME: project}))
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(f"{url}/v1/traces")))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("workbench-tests")
    kind = SpanAttributes.OPENINFERENCE_SPAN_KIND
    for trace in json.loads(Path(traces_path).read_text(encoding="utf-8")):
        with tracer.start_as_current_span("rag") as root:
            root.set_attribute(kind, OpenInferenceSpanKindValues.CHAIN.value)
            root.set_attribute(SpanAttributes.INPUT_VALUE, trace["question"])
            with tracer.start_as_current_span("retrieve") as span:
                span.set_attribute(kind, OpenInferenceSpanKindValues.RETRIEVER.value)
                span.set_attribute(SpanAttributes.INPUT_VALUE, trace["question"])
                for i, doc in enumerate(trace["documents"]):
                    prefix = f"{SpanAttributes.RETRIEVAL_DOCUMENTS}.{i}.document"
                    span.set_attribute(f"{prefix}.id", doc["id"])
                    span.set_attribute(f"{prefix}.content", doc["content"])
                    span.set_attribute(f"{prefix}.score", doc["score"])
            with tracer.start_as_current_span("generate") as span:
                span.set_attribute(kind, OpenInferenceSpanKindValues.LLM.value)
                span.set_attribute("llm.input_messages.0.message.role", "user")
                span.set_attribute("llm.input_messages.0.message.content", trace["question"])
        time.sleep(0.01)  # distinct start times: the order is chronological
    provider.shutdown()
    otlp = MessageToDict(encode_spans(memory.get_finished_spans()))
    Path(otlp_path).write_text(json.dumps(otlp), encoding="utf-8")


def export(url: str, project: str, n: str, outdir: str) -> None:
    from importlib.metadata import version

    import httpx
    from phoenix.client import Client

    out = Path(outdir)
    deadline = time.monotonic() + 60
    while True:  # ingestion is asynchronous
        spans = httpx.get(f"{url}/v1/projects/{project}/spans", params={"limit": 1000}).json()
        if len(spans.get("data", [])) >= int(n) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    (out / "rest.json").write_text(json.dumps(spans), encoding="utf-8")
    otlp = httpx.get(f"{url}/v1/projects/{project}/spans/otlpv1", params={"limit": 1000})
    (out / "otlpv1.json").write_text(otlp.text, encoding="utf-8")
    client = Client(base_url=url)
    got = client.spans.get_spans(project_identifier=project, limit=1000)
    (out / "client.json").write_text(json.dumps(got, default=str), encoding="utf-8")
    frame = client.spans.get_spans_dataframe(project_identifier=project, limit=1000)
    frame.to_json(out / "dataframe.json", orient="records")
    frame.to_parquet(out / "dataframe.parquet")
    (out / "version.txt").write_text(version("arize-phoenix"), encoding="utf-8")


def argilla(settings_path: str, records_path: str, out_path: str) -> None:
    import argilla as rg
    from argilla._api._client import APIClient

    # Argilla's server needs Elasticsearch; its SDK classes are used without one (the
    # connection check is the only call they make at construction).
    APIClient._validate_connection = lambda self: None  # type: ignore[method-assign]
    settings = rg.Settings.from_json(settings_path)
    spans = settings.questions["spans"]
    assert spans.allow_overlapping and spans.labels == ["answer", "must_mention"], spans
    kinds = {m.name: type(m).__name__ for m in settings.metadata}
    records = [rg.Record.from_dict(r) for r in json.loads(Path(records_path).read_text("utf-8"))]
    Path(out_path).write_text(json.dumps({
        "version": rg.__version__, "metadata": kinds,
        "records": [r.to_dict() for r in records]}, default=str), encoding="utf-8")


if __name__ == "__main__":
    {"emit": emit, "export": export, "argilla": argilla}[sys.argv[1]](*sys.argv[2:])
