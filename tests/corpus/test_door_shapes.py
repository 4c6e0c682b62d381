"""Intent is never dropped, as generators: a document that names its readers
(``finance, managers``) or a restriction under any key, meta name, property or sidecar
name, in every format and every way in (front matter, documents JSONL, HTML ``<meta>``,
DOCX custom properties, sidecars in a folder and beside a single file, conversations JSONL,
production records of one or many parts), loads restricted to exactly those groups or is
refused; never public. Keys go through folding (case, separators, fullwidth and lookalike
letters) and synonyms; corpora are tried with no other document, a sibling that declares
access and a sibling that declares none. ``test_zz_counts`` prints the figures per format
(shapes tried / restricted / refused / public)."""

from __future__ import annotations

import json
import warnings
import zipfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.corpus.test_access_shapes import CANARY, _surface
from workbench.corpus import Corpus, load_corpus, load_documents, load_folder, load_jsonl
from workbench.corpus.conversations import load_conversations

GROUPS = {"finance", "managers"}
#: Words that name readers or a restriction (the rule's synonyms), as their parts.
SYNONYMS = [["acl"], ["acls"], ["access"], ["access", "list"], ["access", "rights"],
            ["restricted", "to"], ["restricted"], ["visible", "to"], ["visibility"],
            ["classification"], ["security", "classification"], ["audience"], ["groups"],
            ["allowed", "groups"], ["permissions"], ["readers"], ["roles"], ["sensitivity"],
            ["sensitivity", "label"], ["confidential"], ["confidentiality"], ["clearance"],
            ["entitlements"], ["privileges"], ["shared", "with"], ["authorized", "users"],
            ["tlp"], ["secret"], ["private"], ["embargo"], ["target", "audience"]]
LOOKALIKE = {"a": ["а", "α", "ａ"], "c": ["с", "ϲ", "ｃ"], "e": ["е", "ｅ"], "o": ["о", "ο"],
             "p": ["р", "ρ"], "i": ["і", "ι"], "l": ["ӏ", "ℓ", "ｌ"], "s": ["ѕ"], "x": ["х"]}
VALUES = ["finance, managers", ["finance", "managers"], ["finance, managers"], True,
          "confidential", "internal"]
COUNTS: dict[str, Counter[str]] = {}


@st.composite
def keys(draw: Any) -> str:
    """A synonym's parts joined by a separator, in a case, some letters swapped for
    fullwidth or lookalike ones."""
    parts = draw(st.sampled_from(SYNONYMS))
    case = draw(st.sampled_from(["lower", "upper", "title", "camel"]))
    if case == "camel":
        parts = [parts[0]] + [p.title() for p in parts[1:]]
    else:
        parts = [getattr(p, case)() for p in parts]
    key = draw(st.sampled_from(["_", "-", ".", " ", ""])).join(parts)
    swaps = draw(st.lists(st.booleans(), min_size=len(key), max_size=len(key)))
    return "".join(draw(st.sampled_from(LOOKALIKE[ch.lower()]))
                   if swap and ch.lower() in LOOKALIKE else ch
                   for ch, swap in zip(key, swaps, strict=True))


@st.composite
def acl_keys(draw: Any) -> str:
    """``acl`` itself through folding: a case, separators between its letters, fullwidth or
    lookalike letters (read as ``acl``, or refused)."""
    sep = draw(st.sampled_from(["", "", "_", "-", "."]))
    return sep.join(draw(st.sampled_from([ch, ch.upper(), *LOOKALIKE[ch]])) for ch in "acl")


#: Half the keys are ``acl`` through folding, half its synonyms.
KEYS = acl_keys() | keys()
SIBLINGS = st.sampled_from(["none", "declared", "undeclared"])


def _sibling_md(folder: Path, sibling: str) -> None:
    if sibling != "none":
        head = "---\nacl: public\n---\n" if sibling == "declared" else ""
        (folder / "canteen.md").write_text(f"{head}# Canteen\n\nLunch is at noon.\n",
                                           encoding="utf-8")


def _judge(fmt: str, load: Callable[[], Corpus], value: Any = "finance, managers") -> str:
    """``restricted`` (to exactly the groups, when the value names them), ``refused`` or
    ``public``, counted under ``fmt``; asserts it is never public."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            corpus = load()
    except ValueError as exc:
        assert "\n" not in str(exc) and ":" in str(exc)  # one line naming where
        outcome = "refused"
    else:
        doc = next(d for d in corpus.values() if CANARY in d.text)
        public = not doc.acl or "all" in doc.acl or CANARY in _surface(corpus, ["engineering"])
        outcome = "public" if public else "restricted"
        if outcome == "restricted" and value in VALUES[:3]:
            assert set(doc.acl) == GROUPS, doc.acl
    COUNTS.setdefault(fmt, Counter())[outcome] += 1
    assert outcome != "public", fmt
    return outcome


def _fresh(tmp: Path) -> Path:
    folder = tmp / "docs"
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    return folder


def _yaml(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


RUN = settings(max_examples=120, deadline=None, derandomize=True,
               suppress_health_check=[HealthCheck.function_scoped_fixture,
                                      HealthCheck.too_slow])


@RUN
@given(key=KEYS, value=st.sampled_from(VALUES), sibling=SIBLINGS,
       nested=st.booleans())
def test_front_matter(tmp_path_factory, key, value, sibling, nested):
    folder = _fresh(tmp_path_factory.mktemp("md"))
    line = f"meta:\n  {_yaml(key)}: {_yaml(value)}" if nested else f"{_yaml(key)}: {_yaml(value)}"
    (folder / "procurement.md").write_text(f"---\ntitle: Procurement\n{line}\n---\n{CANARY}.\n",
                                           encoding="utf-8")
    _sibling_md(folder, sibling)
    _judge("front matter", lambda: load_folder(folder), value)


@RUN
@given(key=KEYS, value=st.sampled_from(VALUES), sibling=SIBLINGS,
       place=st.sampled_from(["metadata", "top", "nested"]))
def test_documents_jsonl(tmp_path_factory, key, value, sibling, place):
    path = tmp_path_factory.mktemp("jsonl") / "docs.jsonl"
    row: dict[str, Any] = {"id": "procurement", "text": f"{CANARY}."}
    if place == "metadata":
        row["metadata"] = {key: value}
    elif place == "top":
        row[key] = value
    else:
        row["metadata"] = {"source": {"labels": [{key: value}]}}
    rows = [row]
    if sibling != "none":
        rows.append({"id": "canteen", "text": "Lunch.",
                     **({"metadata": {"acl": "public"}} if sibling == "declared" else {})})
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    _judge("documents JSONL", lambda: load_jsonl(path), value)


ATTRS = st.permutations(["name", "content", "decoy"])


@RUN
@given(key=KEYS, order=ATTRS,
       quote=st.sampled_from(['"', "'", ""]), where=st.sampled_from(["head", "body"]),
       attr=st.sampled_from(["name", "NAME", "property", "itemprop"]), sibling=SIBLINGS,
       single=st.booleans())
def test_html_meta(tmp_path_factory, key, order, quote, where, attr, sibling, single):
    folder = _fresh(tmp_path_factory.mktemp("html"))
    content = "finance,managers" if not quote else "finance, managers"
    parts = {"name": f"{attr}={quote}{key}{quote}" if quote or " " not in key
             else f'{attr}="{key}"',
             "content": f"content={quote}{content}{quote}",
             "decoy": f"data-content={quote}public{quote}"}
    tag = f"<meta {' '.join(parts[p] for p in order)}>"
    head, body = (tag, "") if where == "head" else ("", tag)
    (folder / "memo.html").write_text(f"<html><head><title>Memo</title>{head}</head><body>"
                                      f"{body}<p>{CANARY}.</p></body></html>", encoding="utf-8")
    _sibling_md(folder, sibling)
    load = (lambda: load_corpus(folder / "memo.html")) if single else (lambda: load_folder(folder))
    _judge("HTML meta", load)


def _docx(folder: Path, name: str, value: str) -> None:
    import docx

    d = docx.Document()
    d.add_paragraph(CANARY + ".")
    path = folder / "procurement.docx"
    d.save(str(path))
    row = (f'<property fmtid="{{D5CDD505-2E9C-101B-9397-08002B2CF9AE}}" pid="2" name="{name}">'
           f"<vt:lpwstr>{value}</vt:lpwstr></property>")
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr("docProps/custom.xml", '<?xml version="1.0"?><Properties xmlns="http://'
                    'schemas.openxmlformats.org/officeDocument/2006/custom-properties" xmlns:vt='
                    '"http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes">'
                    f"{row}</Properties>")


@settings(RUN, max_examples=60)
@given(key=KEYS, value=st.sampled_from(["finance, managers", "finance,managers",
                                          "Confidential", "true"]), sibling=SIBLINGS)
def test_docx_property(tmp_path_factory, key, value, sibling):
    folder = _fresh(tmp_path_factory.mktemp("docx"))
    _docx(folder, key, value)
    _sibling_md(folder, sibling)
    _judge("DOCX property", lambda: load_folder(folder), value.replace(",m", ", m"))


SIDECARS = ["{s}.meta.yaml"] * 4 + ["{s}.meta.yml", "{s}.META.YAML", "{S}.meta.yaml",
            "{s}.{x}.meta.yaml", "{s}.yaml", "{s}.yml", "{s}_meta.yaml", "{s}-meta.yaml",
            "{s}.metadata.yaml", "{s}.meta.json", "{s}.{x}.yaml", "{s}.Meta.Yaml",
            "{s}.meta", "{s} meta.yaml", "{s}.ｍｅｔａ.yaml"]


@settings(RUN, max_examples=80)
@given(name=st.sampled_from(SIDECARS), suffix=st.sampled_from(["html", "docx"]),
       key=KEYS, sibling=SIBLINGS,
       single=st.booleans())
def test_sidecar_names(tmp_path_factory, name, suffix, key, sibling, single):
    folder = _fresh(tmp_path_factory.mktemp("side"))
    if suffix == "html":
        (folder / "memo.html").write_text(f"<html><body><p>{CANARY}.</p></body></html>",
                                          encoding="utf-8")
    else:
        import docx

        d = docx.Document()
        d.add_paragraph(CANARY + ".")
        d.save(str(folder / "memo.docx"))
    side = name.format(s="memo", S="Memo", x=suffix)
    (folder / side).write_text(f"{_yaml(key)}: [finance, managers]\n", encoding="utf-8")
    _sibling_md(folder, sibling)
    doc = folder / f"memo.{suffix}"
    outcome = _judge("sidecar name",
                     (lambda: load_corpus(doc)) if single else (lambda: load_folder(folder)))
    if side != "memo.meta.yaml":
        assert outcome == "refused", side  # never ignored


@RUN
@given(n=st.integers(1, 4), data=st.data(), key=KEYS,
       value=st.sampled_from(VALUES[:3]), sibling=SIBLINGS)
def test_conversation_turns(tmp_path_factory, n, data, key, value, sibling):
    at = data.draw(st.integers(0, n - 1))
    rows = []
    for i in range(n):
        row: dict[str, Any] = {"conversation": "c1", "speaker": f"S{i}",
                               "text": CANARY if i == 0 else "ok"}
        if i == at:
            row["metadata"] = {key: value}
        elif data.draw(st.booleans()):
            row["metadata"] = {"product": "sync"}
        rows.append(row)
    if sibling != "none":
        rows.append({"conversation": "c2", "speaker": "A", "text": "Lunch.",
                     **({"metadata": {"acl": "public"}} if sibling == "declared" else {})})
    path = tmp_path_factory.mktemp("conv") / "chats.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    loader = data.draw(st.sampled_from([load_conversations, load_corpus]))
    _judge("conversations JSONL", lambda: loader(path), value)


class LangChainDoc:
    def __init__(self, text: str, metadata: dict[str, Any]) -> None:
        self.page_content, self.metadata, self.id = text, metadata, None


class LlamaNode:
    def __init__(self, text: str, metadata: dict[str, Any], n: int) -> None:
        self.text, self.metadata, self.node_id = text, metadata, f"node-{n}"
        self.ref_doc_id, self.start_char_idx = None, None

    def get_content(self) -> str:
        return self.text


@RUN
@given(n=st.integers(1, 4), data=st.data(), key=KEYS,
       value=st.sampled_from(VALUES[:3]), sibling=SIBLINGS,
       kind=st.sampled_from(["langchain", "llamaindex", "record", "chroma", "top-level"]))
def test_production_parts(n, data, key, value, sibling, kind):
    at = data.draw(st.integers(0, n - 1))
    items: list[Any] = []
    for i in range(n):
        meta: dict[str, Any] = {"source": "docs/procurement.pdf", "page": i}
        text = CANARY if i == 0 else f"Page {i + 1}."
        if i == at and kind != "top-level":
            meta[key] = value
        if kind == "langchain":
            items.append(LangChainDoc(text, meta))
        elif kind == "llamaindex":
            items.append(LlamaNode(text, meta, i))
        elif kind == "chroma":
            items.append({"id": f"p{i}", "document": text, "metadata": meta})
        else:
            items.append({"doc_id": "procurement", "text": text, "metadata": meta,
                          **({key: value} if i == at and kind == "top-level" else {})})
    if sibling != "none":
        items.append({"doc_id": "canteen", "text": "Lunch.",
                      "metadata": {"acl": "public"} if sibling == "declared" else {}})
    _judge("production parts", lambda: load_documents(items), value)


# The examples, each a positive or a refusal that the generators above contain.

def test_a_single_file_reads_its_sidecar_and_its_meta(tmp_path):
    secret = tmp_path / "secret.html"
    secret.write_text(f"<html><body><p>{CANARY}.</p></body></html>", encoding="utf-8")
    assert load_corpus(secret)["secret"].acl == ()  # nothing declared: public
    (tmp_path / "secret.meta.yaml").write_text("acl: finance, hr\n", encoding="utf-8")
    assert load_corpus(secret)["secret"].acl == ("finance", "hr")
    (tmp_path / "secret.meta.yaml").unlink()
    secret.write_text('<html><head><meta data-content="public" content="finance" name="acl">'
                      f"</head><body><p>{CANARY}.</p></body></html>", encoding="utf-8")
    assert load_corpus(secret)["secret"].acl == ("finance",)  # data-content is not content


def test_one_syntax_for_a_list_of_groups_in_every_format(tmp_path):
    (tmp_path / "a.md").write_text("---\nacl: finance, hr\n---\nText.\n", encoding="utf-8")
    (tmp_path / "b.html").write_text('<meta name="acl" content="finance, hr"><p>Text.</p>',
                                     encoding="utf-8")
    _docx(tmp_path, "acl", "finance, hr")
    jsonl = tmp_path / "docs.jsonl"
    jsonl.write_text(json.dumps({"id": "c", "text": "T", "metadata": {"acl": "finance, hr"}}),
                     encoding="utf-8")
    folder = load_folder(tmp_path)
    assert {d.id: d.acl for d in folder.values()} == dict.fromkeys(
        ["a", "b", "procurement"], ("finance", "hr"))
    assert load_jsonl(jsonl)["c"].acl == ("finance", "hr")
    (tmp_path / "a.md").write_text("---\nacl: finance,\n---\nText.\n", encoding="utf-8")
    try:
        load_folder(tmp_path)
    except ValueError as exc:
        assert "a.md:2: field 'acl'" in str(exc)
    else:
        raise AssertionError("an empty group between commas loaded")


def test_intent_without_acl_anywhere_is_refused(tmp_path):
    for line in ("restricted_to: [finance]", "visible_to: finance",
                 "classification: confidential", "restricted: true"):
        (tmp_path / "a.md").write_text(f"---\n{line}\n---\n{CANARY}.\n", encoding="utf-8")
        assert _judge("issue examples", lambda: load_folder(tmp_path)) == "refused", line


def test_a_turn_with_acl_after_one_without_restricts_the_conversation(tmp_path):
    path = tmp_path / "chats.jsonl"
    rows = [{"conversation": "c1", "speaker": "A", "text": CANARY},
            {"conversation": "c1", "speaker": "B", "text": "ok",
             "metadata": {"acl": ["finance", "managers"]}},
            {"conversation": "c2", "speaker": "A", "text": "Lunch.",
             "metadata": {"acl": "public"}}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert _judge("issue examples", lambda: load_corpus(path)) == "restricted"


def test_access_on_page_two_of_a_record_is_seen(tmp_path):
    for meta in ({"ACL": "finance, managers"}, {"groups": ["finance"]}):
        pages = [{"doc_id": "p", "text": CANARY, "metadata": {"page": 0}},
                 {"doc_id": "p", "text": "Two.", "metadata": {"page": 1, **meta}}]
        assert _judge("issue examples", lambda p=pages: load_documents(p)) != "public"
    pages = [{"doc_id": "p", "text": CANARY, "metadata": {"acl": "finance"}},
             {"doc_id": "p", "text": "Two.", "acl": "public", "metadata": {}}]
    assert _judge("issue examples", lambda: load_documents(pages)) == "refused"


def test_zz_counts(capsys):
    """The figures of the closing note: shapes tried / restricted / refused / public per
    format (public is 0 in each)."""
    with capsys.disabled():
        for fmt, counts in sorted(COUNTS.items()):
            print(f"\n{fmt}: {sum(counts.values())} tried, {counts['restricted']} restricted, "
                  f"{counts['refused']} refused, {counts['public']} public")
    assert all(c["public"] == 0 for c in COUNTS.values())
