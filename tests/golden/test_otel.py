"""The question of a trace when it is a conversation (golden/otel.py): traces with several user
messages among system, assistant and tool turns, numbered past 9 and written in any attribute
order, as OpenInference ``llm.input_messages`` attributes or as a JSON input's messages; the
question is the last user message by the reference (the highest-numbered turn whose role is
user), and traces come back in the order they started."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.golden.otel import read_spans

ROLES = st.sampled_from(["system", "user", "assistant", "tool", "user"])


@st.composite
def conversations(draw):
    """1-14 turns with at least one user turn; each turn's text names its number (and has a
    double space, which the question loses)."""
    roles = draw(st.lists(ROLES, min_size=1, max_size=14).filter(lambda r: "user" in r))
    return [(role, f"turn  {n} by {role}") for n, role in enumerate(roles)]


def _last_user(turns: list[tuple[str, str]]) -> str:
    n = max(i for i, (role, _) in enumerate(turns) if role == "user")
    return " ".join(turns[n][1].split())


def _attributes(turns, shape: str, order: list[int]) -> dict:
    if shape == "attributes":
        attrs = {}
        for i in order:  # the turns' attributes in any order
            attrs[f"llm.input_messages.{i}.message.role"] = turns[i][0]
            attrs[f"llm.input_messages.{i}.message.content"] = turns[i][1]
        return attrs
    messages = [{"role": role, "content": text} for role, text in turns]
    value = {"messages": messages} if shape == "json object" else messages
    return {"input.mime_type": "application/json", "input.value": json.dumps(value)}


def _otlp(trace: str, span: str, parent: str | None, start: int, attrs: dict) -> dict:
    out = {"traceId": trace, "spanId": span, "name": "llm",
           "startTimeUnixNano": str(start),
           "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()]}
    return out | ({"parentSpanId": parent} if parent else {})


@settings(max_examples=150)
@given(traces=st.lists(conversations(), min_size=1, max_size=4), data=st.data())
def test_the_question_is_the_last_user_message_of_each_trace(traces, data, tmp_path_factory):
    spans, want = [], {}
    starts = data.draw(st.permutations(range(len(traces))))
    for t, (turns, start) in enumerate(zip(traces, starts, strict=True)):
        shape = data.draw(st.sampled_from(["attributes", "json object", "json list"]))
        order = data.draw(st.permutations(range(len(turns))))
        attrs = {"openinference.span.kind": "LLM", **_attributes(turns, shape, order)}
        if shape == "attributes" and data.draw(st.booleans()):  # the turns on a child span
            spans.append(_otlp(f"t{t}", f"s{t}c", f"s{t}", 10 * start + 1, attrs))
            attrs = {"openinference.span.kind": "CHAIN"}
        spans.append(_otlp(f"t{t}", f"s{t}", None, 10 * start, attrs))
        want[start] = (f"t{t}", _last_user(turns))
    spans = data.draw(st.permutations(spans))  # file order is not start order
    path = tmp_path_factory.mktemp("otel") / "traces.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}),
                    encoding="utf-8")
    got = read_spans(path)
    assert [(q.trace_id, q.question) for q in got] == [want[s] for s in sorted(want)]
    assert [q.position for q in got] == list(range(1, len(traces) + 1))
