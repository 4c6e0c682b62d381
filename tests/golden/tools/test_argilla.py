"""Argilla's own SDK (the version pinned in phoenix.txt; its server needs Elasticsearch, so its
classes are used without one): ``rg.Settings.from_json`` loads ARGILLA_SETTINGS (span labels,
overlapping on, typed metadata); our records go through ``rg.Record.from_dict`` and
``to_dict`` with responses as its web interface sends them (UTF-16 offsets: the frontend's
span-selection takes JavaScript string offsets) and as a Python script writes them (code
points), and import back exact, or refused naming ``offsets=``, never shifted."""

from __future__ import annotations

import json
import subprocess

from tests.golden.tools.conftest import HERE, pinned, tool_bin
from tests.golden.tools.labelled import expected, sent, utf16
from workbench.corpus import UNRESTRICTED
from workbench.golden.exchange import ARGILLA_SETTINGS, to_argilla
from workbench.golden.label_import import from_argilla

USER = "7d1b0b2a-2f56-4a2c-8b61-0d9b1c0c4d11"


def _through_sdk(records, tmp_path, name):
    (tmp_path / "settings.json").write_text(json.dumps(ARGILLA_SETTINGS), "utf-8")
    (tmp_path / f"{name}.in.json").write_text(json.dumps(records, ensure_ascii=False), "utf-8")
    subprocess.run([str(tool_bin("phoenix", "python")), str(HERE / "phoenix_side.py"),
                    "argilla", str(tmp_path / "settings.json"), str(tmp_path / f"{name}.in.json"),
                    str(tmp_path / f"{name}.out.json")], check=True, timeout=300,
                   env={"ARGILLA_API_KEY": "offline", "PATH": "/usr/bin:/bin"})
    out = json.loads((tmp_path / f"{name}.out.json").read_text("utf-8"))
    assert out["version"] == pinned("phoenix", "argilla")
    assert out["metadata"] == {
        "qid": "TermsMetadataProperty", "doc_id": "TermsMetadataProperty",
        "start": "IntegerMetadataProperty", "end": "IntegerMetadataProperty",
        "rank": "IntegerMetadataProperty", "source": "TermsMetadataProperty",
        "category": "TermsMetadataProperty"}
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(out["records"], ensure_ascii=False), "utf-8")
    return path


def _answered(records, marks, unit):
    """Each record with the labeller's spans as ``responses`` (offsets counted by ``unit``)."""
    for rec in records:
        text, qid = rec["fields"]["text"], rec["metadata"]["qid"]
        spans = []
        for m in marks:
            at = text.find(m.quote)
            if m.qid == qid and at >= 0 and m.label != "Other":
                start, end = at, at + len(m.quote)
                if unit == "utf16":
                    start, end = utf16(text[:start]), utf16(text[:end])
                spans.append({"start": start, "end": end, "label": m.label})
        rec["responses"] = {"spans": [{"value": spans, "user_id": USER}]} if spans else {}
        if qid == "u4":
            rec["responses"]["answerable"] = [{"value": "no", "user_id": USER}]
    return records


def _back(got):
    return {i.qid: ([(e.doc_id, e.start, e.end) for e in i.evidence],
                    list(i.answer_must_mention)) for i in got.golden if i.answerable}


def test_argilla_sdk_loads_the_settings_and_spans_come_back_by_convention(handbook, tmp_path):
    documents, questions, passages, marks = sent(handbook)
    want = expected(documents, passages, [m for m in marks if m.label != "Other"])
    for unit in ("utf16", "chars"):
        records = _answered(to_argilla(questions, passages, documents,
                            user_groups=UNRESTRICTED), marks, unit)
        path = _through_sdk(records, tmp_path, unit)
        got = from_argilla(path, documents)
        # placed spans are exact; the rest refused naming the option, never shifted
        assert all(want[qid] == back for qid, back in _back(got).items()), unit
        assert {r.qid for r in got.refused} | set(_back(got)) == set(want), unit
        assert all("offsets='utf16'" in r.reason for r in got.refused), unit
        declared = from_argilla(path, documents, offsets=unit)
        assert _back(declared) == want and declared.refused == (), unit
        assert [i.qid for i in declared.golden if not i.answerable] == ["u4"]
    # the interface's offsets: the span that ends past the text in code points decides
    ui = from_argilla(tmp_path / "utf16.json", documents)
    assert _back(ui) == want and ui.refused == ()
    # without it the tricky document's spans are undecidable: refused, named
    only = [r for r in json.loads((tmp_path / "utf16.json").read_text("utf-8"))
            if r["metadata"]["qid"] in ("u2",)]
    got = from_argilla(only, documents)
    assert not got.golden and [r.qid for r in got.refused] == ["u2"]
    assert "offsets='utf16' (a web interface's selections)" in got.refused[0].reason
