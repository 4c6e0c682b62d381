"""A real Label Studio server (the version pinned in labelstudio.txt, SQLite in a temporary
folder): our tasks imported through its API with our labelling config, annotated through the
API the way its interface writes results (UTF-16 offsets, line breaks in ``value.text``
written as ``\\n``), exported through its export API in every format that carries spans
(JSON, JSON_MIN, CSV, TSV), and imported back: every span exact, the one task with a label
outside the config refused by name, nothing else refused."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.golden.tools.conftest import TOOLS, free_port, pinned, server, tool_bin
from tests.golden.tools.labelled import Mark, expected, sent, utf16
from workbench.corpus import UNRESTRICTED
from workbench.golden.exchange import LABEL_STUDIO_CONFIG, to_label_studio
from workbench.golden.label_import import from_label_studio

# the user `make tools` made in the data folder it initialised (Makefile, the tools target)
USER, PASSWORD = "workbench@example.com", "workbench-tests"
TOKEN = "0123456789abcdef0123456789abcdef01234567"
TEMPLATE = TOOLS / "labelstudio-data"
FORMATS = {"JSON": "json", "JSON_MIN": "json", "CSV": "csv", "TSV": "csv"}  # its file names


@pytest.fixture(scope="module")
def label_studio(tmp_path_factory) -> Iterator[tuple[str, dict[str, str]]]:
    """The server's URL and the headers of its API. Its data folder is a copy of the one
    ``make tools`` initialised (``label-studio init``: the database migrated, the user made;
    minutes on a slow machine, once); legacy tokens are turned on as its settings page does
    (1.23 turns them off for a new organization)."""
    exe = tool_bin("labelstudio", "label-studio")
    if not (TEMPLATE / "label_studio.sqlite3").exists():
        pytest.skip(f"{TEMPLATE} not initialised: `make tools` makes it")
    tmp = tmp_path_factory.mktemp("label-studio")
    shutil.copytree(TEMPLATE, tmp / "data")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {"LABEL_STUDIO_BASE_DATA_DIR": str(tmp / "data"), "SENTRY_DSN": "",
           "FRONTEND_SENTRY_DSN": ""}
    with server([str(exe), "start", "--no-browser", "--port", str(port), "--host", base,
                 "--data-dir", str(tmp / "data")], env, f"{base}/health", tmp, tmp / "log"):
        web = requests.Session()
        web.get(f"{base}/user/login/", timeout=30)
        web.post(f"{base}/user/login/", timeout=30, headers={"Referer": f"{base}/user/login/"},
                 data={"email": USER, "password": PASSWORD,
                       "csrfmiddlewaretoken": web.cookies["csrftoken"]})
        r = web.post(f"{base}/api/jwt/settings", json={"legacy_api_tokens_enabled": True,
                                                        "api_tokens_enabled": True},
                     headers={"X-CSRFToken": web.cookies["csrftoken"], "Referer": base},
                     timeout=30)
        assert r.status_code == 200, r.text
        yield base, {"Authorization": f"Token {TOKEN}"}


def _api(method: str, url: str, headers: dict[str, str], **kw: Any) -> Any:
    r = requests.request(method, url, headers=headers, timeout=60, **kw)
    assert r.status_code in (200, 201), f"{method} {url}: {r.status_code} {r.text[:300]}"
    return r


def _results(data: dict[str, Any], marks: list[Mark], code_points: set[str]
             ) -> list[dict[str, Any]]:
    """What Label Studio's interface stores for these selections: offsets in UTF-16 code
    units of the passage (code points for the quotes in ``code_points``, as a script
    writes them), ``value.text`` with each line break written as ``\\n``."""
    text, out = data["text"], []
    for m in marks:
        at = text.find(m.quote)
        if m.qid != data["qid"] or at < 0:
            continue
        start, end = ((at, at + len(m.quote)) if m.quote in code_points else
                      (utf16(text[:at]), utf16(text[:at + len(m.quote)])))
        out.append({"from_name": "label", "to_name": "text", "type": "labels",
                    "value": {"start": start, "end": end, "labels": [m.label],
                              "text": re.sub(r"[\r\n]", lambda _: "\\n", m.quote)}})
    if data["qid"] == "u4":
        out.append({"from_name": "answerable", "to_name": "text", "type": "choices",
                    "value": {"choices": ["unanswerable"]}})
    return out


def test_label_studio_round_trip_in_every_export_format(label_studio, handbook, tmp_path):
    base, auth = label_studio
    version = _api("GET", f"{base}/api/version", auth).json()["release"]
    assert version == pinned("labelstudio", "label-studio")
    documents, questions, passages, marks = sent(handbook)
    tasks = to_label_studio(questions, passages, documents, user_groups=UNRESTRICTED)
    project = _api("POST", f"{base}/api/projects/", auth,
                   json={"title": "workbench golden", "label_config": LABEL_STUDIO_CONFIG}
                   ).json()["id"]
    _api("POST", f"{base}/api/projects/{project}/import", auth, json=tasks)
    stored = _api("GET", f"{base}/api/tasks/", auth,
                  params={"project": project, "page_size": 1000}).json()["tasks"]
    assert len(stored) == len(tasks)
    for task in stored:
        result = _results(task["data"], marks, code_points={"from delivery"})
        if result:
            _api("POST", f"{base}/api/tasks/{task['id']}/annotations/", auth,
                 json={"result": result})
    want = expected(documents, passages, marks)
    bad = [t["id"] for t in stored if t["data"]["qid"] == "u5"]
    for fmt, suffix in FORMATS.items():
        export = _api("GET", f"{base}/api/projects/{project}/export", auth,
                      params={"exportType": fmt})
        path = Path(tmp_path / f"export-{fmt}.{suffix}")
        path.write_bytes(export.content)
        got = from_label_studio(path, documents)
        back = {i.qid: ([(e.doc_id, e.start, e.end) for e in i.evidence],
                        list(i.answer_must_mention)) for i in got.golden if i.answerable}
        assert back == want, fmt
        assert [i.qid for i in got.golden if not i.answerable] == ["u4"], fmt
        assert [(r.where, r.qid) for r in got.refused] == [
            (f"{path}: task {t}", "u5") for t in bad], fmt
        assert "label ['Other'] is not one of" in got.refused[0].reason, fmt
        for item in got.golden:
            assert all(documents[e.doc_id].text[e.start:e.end] == e.text for e in item.evidence)
