"""The two tools' formats, as both directions read them: the span labels, the answerable
choice, the task data and the project settings to paste (Label Studio's labelling config,
Argilla's dataset settings). :mod:`~workbench.golden.exchange` writes tasks and records with
them, :mod:`~workbench.golden.label_import` reads the tools' exports back."""

from __future__ import annotations

from typing import Any

__all__ = ["ANSWERABLE", "ARGILLA_SETTINGS", "LABELS", "LABEL_STUDIO_CONFIG", "TASK_DATA"]

#: the span labels of both tools' configs: evidence, and a phrase the answer must mention
LABELS = ("answer", "must_mention")
#: the name of the answerable choice (Label Studio) / question (Argilla)
ANSWERABLE = "answerable"
#: the task data (Label Studio) / record fields and metadata (Argilla) an export carries
TASK_DATA = ("qid", "question", "text", "doc_id", "start", "end", "rank", "source", "category")

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


def _options(*values: str) -> list[dict[str, str]]:
    return [{"text": v, "value": v} for v in values]


#: The dataset settings in the form ``rg.Settings.from_json`` loads (Argilla 2.8): text fields
#: ``question`` and ``text``, the SpanQuestion ``spans`` over ``text`` with overlapping spans
#: allowed (a must-mention is marked inside its answer), the LabelQuestion ``answerable``,
#: typed metadata (terms and integers).
ARGILLA_SETTINGS: dict[str, Any] = {
    "guidelines": "Mark the passage's answer to the question as 'answer', and inside it the "
                  "phrases a correct answer must mention as 'must_mention'. If the passage "
                  "does not answer the question, answer 'no' to 'answerable'.",
    "fields": [{"name": name, "title": name.capitalize(), "required": True,
                "settings": {"type": "text", "use_markdown": False}}
               for name in ("question", "text")],
    "questions": [
        {"name": "spans", "title": "Evidence", "required": False,
         "settings": {"type": "span", "field": "text", "options": _options(*LABELS),
                      "allow_overlapping": True}},
        {"name": ANSWERABLE, "title": "Does the passage answer the question?",
         "required": False,
         "settings": {"type": "label_selection", "options": _options("yes", "no")}}],
    "metadata": [{"name": name, "settings": {"type": "integer" if name in ("start", "end",
                                                                             "rank")
                                              else "terms"}}
                 for name in TASK_DATA if name not in ("question", "text")],
    "allow_extra_metadata": False,
}

