"""A real Phoenix server (the version pinned in phoenix.txt) receiving OpenInference traces
from the OpenTelemetry SDK; every export a Phoenix user makes (REST span list,
``phoenix.client`` spans, the OTLP JSON endpoint, the spans dataframe as JSON records and as
parquet) and the OTLP JSON file a collector writes read back by ``read_spans``: the same
questions, retrieved documents, scores and chronological order from each; the run log made
from them is scored by ``read_run`` against the documents the passages came from."""

from __future__ import annotations

import json
import math
import subprocess
from collections.abc import Iterator

import pytest

from tests.golden.tools.conftest import HERE, free_port, pinned, server, tool_bin
from workbench.chunking import RecursiveChunker, chunk_corpus
from workbench.evaluation.run_files import read_run
from workbench.golden.otel import read_spans, write_run_log

PROJECT = "workbench-tests"
EXPORTS = ("rest.json", "client.json", "otlpv1.json", "dataframe.json", "dataframe.parquet",
           "otlp.json")


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory) -> Iterator[str]:
    exe = tool_bin("phoenix", "phoenix")
    tmp = tmp_path_factory.mktemp("phoenix")
    port = free_port()
    env = {"PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(free_port()),
           "PHOENIX_HOST": "127.0.0.1", "PHOENIX_WORKING_DIR": str(tmp / "work"),
           "PHOENIX_TELEMETRY_ENABLED": "false"}
    with server([str(exe), "serve"], env, f"http://127.0.0.1:{port}/healthz", tmp,
                tmp / "log"):
        yield f"http://127.0.0.1:{port}"


def test_every_phoenix_export_gives_the_same_questions_documents_and_order(
        phoenix, handbook, tmp_path):
    corpus, golden = handbook
    chunks = chunk_corpus(RecursiveChunker(size=300, overlap=0), corpus)
    sent = [{"question": f"{item.question} 😀" if n % 3 == 0 else item.question,
             "documents": [{"id": c.id, "content": c.text, "score": round(0.9 - r / 7, 4)}
                           for r, c in enumerate(chunks[n * 3:n * 3 + 3])]}
            for n, item in enumerate(list(golden)[:12])]
    (tmp_path / "traces.json").write_text(json.dumps(sent, ensure_ascii=False), "utf-8")
    side = [str(tool_bin("phoenix", "python")), str(HERE / "phoenix_side.py")]
    subprocess.run([*side, "emit", phoenix, PROJECT, str(tmp_path / "traces.json"),
                    str(tmp_path / "otlp.json")], check=True, timeout=300)
    subprocess.run([*side, "export", phoenix, PROJECT, str(3 * len(sent)), str(tmp_path)],
                   check=True, timeout=300)
    assert (tmp_path / "version.txt").read_text() == pinned("phoenix", "arize-phoenix")
    for name in EXPORTS:
        got = read_spans(tmp_path / name)
        assert [t.question for t in got] == [s["question"] for s in sent], name
        for trace, want in zip(got, sent, strict=True):
            assert [(h["id"], h["text"]) for h in trace.hits] == [
                (d["id"], d["content"]) for d in want["documents"]], name
            assert all(math.isclose(h["score"], d["score"], rel_tol=1e-9)
                       for h, d in zip(trace.hits, want["documents"], strict=True)), name
        if name != "otlp.json":
            path = write_run_log(tmp_path / f"{name}.run.jsonl", got)
            run = read_run(path, corpus)
            assert [[h.chunk.text for h in run.hits[t.trace_id]] for t in got] == [
                [d["content"] for d in s["documents"]] for s in sent], name
