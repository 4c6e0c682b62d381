"""Deny by default, as a generator of shapes: a restricted document (the handbook's
procurement.md, ``acl: [finance, managers]``) has its declaration rewritten (line ends,
encodings, key spellings through NFKC and lookalike letters, header forms, JSONL nesting);
each rewrite either loads with the document restricted or is refused, never public. The
canary (a sentence of the document) is checked in an outsider's prompt (assemble_context);
a finance user sees it (positive control)."""

from __future__ import annotations

import itertools
import json
import re
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import HANDBOOK
from workbench.chunking import FixedChunker, chunk_corpus
from workbench.corpus import load_folder, load_jsonl
from workbench.corpus.access import fold_key
from workbench.generation import assemble_context

ORIGINAL = (HANDBOOK / "docs" / "procurement.md").read_text(encoding="utf-8")
HEAD, BODY = ORIGINAL.split("\n---\n", 1)
CANARY = "Buying merchandise for resale is covered by the Merchandising Buying Manual"
assert CANARY in BODY
FIELDS = "\n".join(line for line in HEAD.removeprefix("---\n").split("\n")
                   if not line.startswith("acl:"))
assert "acl" not in FIELDS
GROUPS = '["finance", "managers"]'

#: Spellings of the key, letter by letter: Latin, upper case, fullwidth, Cyrillic, Greek.
LETTERS = {"a": ["a", "A", "ａ", "а", "А", "α"], "c": ["c", "C", "ｃ", "с", "С", "ϲ"],
           "l": ["l", "L", "ｌ", "ӏ", "ℓ"]}
WORDS = ["acl", "acls", "groups", "access", "permissions", "Groups", "ACCESS"]
HEADERS = {  # form -> (key, line end) -> document text
    "yaml": lambda k, e: f"---{e}{FIELDS}{e}{k}: {GROUPS}{e}---{e}{BODY}",
    "quoted key after a comment": lambda k, e:
        f"---{e}{FIELDS}{e}# restricted{e}\"{k}\": {GROUPS}{e}---{e}{BODY}",
    "json front matter": lambda k, e: f'{{"title": "P", "{k}": {GROUPS}}}{e}{e}{BODY}',
    "preface line": lambda k, e: f"Internal policy{e}{k}: {GROUPS}{e}{BODY}",
    "preface then header": lambda k, e: f"Internal{e}---{e}{k}: {GROUPS}{e}---{e}{BODY}",
    "second header block": lambda k, e:
        f"---{e}{FIELDS}{e}---{e}---{e}{k}: {GROUPS}{e}---{e}{BODY}",
    "nested under meta": lambda k, e: f"---{e}meta:{e}  {k}: {GROUPS}{e}---{e}{BODY}",
    "list item": lambda k, e: f"---{e}- {k}: {GROUPS}{e}---{e}{BODY}",
    "toml": lambda k, e: f"+++{e}{k} = {GROUPS}{e}+++{e}{BODY}",
    "equals sign": lambda k, e: f"{k} = {GROUPS}{e}{e}{BODY}",
}
ENDS = ["\n", "\r\n", "\r", "\x85", "\u2028"]
ENCODINGS = ["utf-8", "utf-8-sig", "utf-16"]
PUBLIC_DOC = "---\nid: canteen\nacl: public\n---\n# Canteen\nLunch is at noon.\n"


def spellings() -> list[str]:
    letters = ["".join(p) for p in itertools.product(*(LETTERS[c] for c in "acl"))]
    return sorted({*letters[::7], "acl", "ACL", "ａｃｌ", "асl", "АСL", "Acl", *WORDS})


def _surface(corpus, groups: list[str]) -> str:
    chunks = chunk_corpus(FixedChunker(size=400, overlap=0), corpus)
    ctx = assemble_context([c.id for c in chunks], chunks, corpus, user_groups=groups)
    return "\n".join(p.render() for p in ctx.passages)


def _outcome(load, groups: list[str] = ["engineering"]) -> str:  # noqa: B006
    """``restricted``, ``refused`` or ``public`` (the canary reached the outsider)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            corpus = load()
    except ValueError as exc:
        assert "\n" not in str(exc) and ":" in str(exc)  # one line naming the file
        return "refused"
    doc = next((d for d in corpus.values() if CANARY in d.text), None)
    if doc is None:
        return "refused"  # the text did not load as a document at all
    if CANARY in _surface(corpus, groups) or not doc.acl or "all" in doc.acl:
        return "public"
    return "restricted"


def _folder(tmp: Path, text: str, encoding: str, sibling: bool) -> Path:
    folder = tmp / "docs"
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    (folder / "procurement.md").write_bytes(text.encode(encoding))
    if sibling:
        (folder / "canteen.md").write_text(PUBLIC_DOC, encoding="utf-8")
    return folder


JSONL_PLACES = {  # where the access key sits in a JSONL row
    "metadata": lambda k: {"metadata": {k: ["finance"]}},
    "top level": lambda k: {k: ["finance"]},
    "Metadata": lambda k: {"Metadata": {k: ["finance"]}},
    "meta": lambda k: {"meta": {k: ["finance"]}},
    "metadata.metadata": lambda k: {"metadata": {"metadata": {k: ["finance"]}}},
    "metadata list": lambda k: {"metadata": {"tags": [{k: ["finance"]}]}},
}


def _jsonl(tmp: Path, key: str, place: str, sibling: bool) -> Path:
    rows = [{"id": "procurement", "text": BODY, **JSONL_PLACES[place](key)}]
    if sibling:
        rows.append({"id": "canteen", "text": "Lunch is at noon.",
                     "metadata": {"acl": "public"}})
    path = tmp / "docs.jsonl"
    tmp.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    return path


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.sampled_from(spellings()), form=st.sampled_from(sorted(HEADERS)),
       end=st.sampled_from(ENDS), encoding=st.sampled_from(ENCODINGS), sibling=st.booleans())
def test_a_rewritten_declaration_is_restricted_or_refused(tmp_path_factory, key, form, end,
                                                          encoding, sibling):
    tmp = tmp_path_factory.mktemp("shape")
    folder = _folder(tmp, HEADERS[form](key, end), encoding, sibling)
    assert _outcome(lambda: load_folder(folder)) != "public", (key, form, end, encoding)


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.sampled_from(spellings()), place=st.sampled_from(sorted(JSONL_PLACES)),
       sibling=st.booleans())
def test_a_rewritten_jsonl_declaration_is_restricted_or_refused(tmp_path_factory, key, place,
                                                                sibling):
    path = _jsonl(tmp_path_factory.mktemp("jsonl"), key, place, sibling)
    assert _outcome(lambda: load_jsonl(path)) != "public", (key, place)


def test_the_plain_declaration_loads_restricted_and_a_member_sees_it(tmp_path):
    folder = _folder(tmp_path, HEADERS["yaml"]("acl", "\n"), "utf-8", True)
    assert _outcome(lambda: load_folder(folder)) == "restricted"
    corpus = load_folder(folder)
    assert CANARY in _surface(corpus, ["finance"])  # positive control: the check can fail
    assert CANARY not in _surface(corpus, ["engineering"])
    assert "Lunch is at noon" in _surface(corpus, ["engineering"])


def test_a_sibling_without_a_declaration_is_refused_and_required_mode(tmp_path):
    folder = _folder(tmp_path, HEADERS["yaml"]("acl", "\n"), "utf-8", False)
    (folder / "canteen.md").write_text("# Canteen\nLunch is at noon.\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"canteen\.md: field 'acl': declares no access"):
        load_folder(folder)
    (folder / "procurement.md").unlink()
    assert load_folder(folder)["canteen"].acl == ()  # no declarations at all: public
    with pytest.raises(ValueError, match="access is required"):
        load_folder(folder, access="required")


def test_a_sidecar_declares_access_for_an_extracted_file(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "memo.html").write_text(f"<html><body><p>{CANARY}.</p></body></html>",
                                      encoding="utf-8")
    (folder / "canteen.md").write_text(PUBLIC_DOC, encoding="utf-8")
    with pytest.raises(ValueError, match=r"memo\.html: field 'acl': declares no access"):
        load_folder(folder)
    (folder / "memo.meta.yaml").write_text("acl: [finance]\n", encoding="utf-8")
    corpus = load_folder(folder)
    assert corpus["memo"].acl == ("finance",)
    assert CANARY not in _surface(corpus, ["engineering"])
    assert CANARY in _surface(corpus, ["finance"])


def test_every_shape_counted(tmp_path, capsys):
    """The whole product of shapes, counted (the closing note's figures): public is 0."""
    counts = {"restricted": 0, "refused": 0, "public": 0}
    for n, (key, form, end, encoding, sibling) in enumerate(itertools.product(
            spellings(), sorted(HEADERS), ENDS, ENCODINGS, (False, True))):
        if n % 4:  # a quarter of the product keeps the test short; hypothesis covers the rest
            continue
        folder = _folder(tmp_path / str(n % 8), HEADERS[form](key, end), encoding, sibling)
        counts[_outcome(lambda f=folder: load_folder(f))] += 1
    for n, (key, place, sibling) in enumerate(itertools.product(
            spellings(), sorted(JSONL_PLACES), (False, True))):
        path = _jsonl(tmp_path / f"j{n % 8}", key, place, sibling)
        counts[_outcome(lambda p=path: load_jsonl(p))] += 1
    with capsys.disabled():
        print(f"\nACL shapes: {sum(counts.values())} tried, {counts}")
    assert counts["public"] == 0 and counts["restricted"] > 0


@pytest.mark.parametrize("name", ["acl", "ACL", "асl", "groups", "ａｃｌ"])
def test_an_html_meta_acl_is_read_or_refused_never_public(tmp_path, name):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "memo.html").write_text(
        f'<html><head><meta name="{name}" content="finance, managers"></head>'
        f"<body><p>{CANARY}.</p></body></html>", encoding="utf-8")
    outcome = _outcome(lambda: load_folder(folder))
    assert outcome == ("restricted" if name.casefold() == "acl" else "refused") or (
        outcome == "restricted" and fold_key(name) == "acl")  # a lookalike is read with a warning
    if outcome == "restricted":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            corpus = load_folder(folder)
        assert corpus["memo"].acl == ("finance", "managers")
        assert CANARY in _surface(corpus, ["managers"])


# Filter fields that sound like readers (audience) are declared under ``filters:``; no
# access-like key becomes a mere filter there, and no filter counts as access.

ROOTS = ["acl", "acls", "access", "group", "groups", "permission", "reader", "role",
         "visibility", "allow"]
LOOKALIKE = {"a": "а", "c": "с", "e": "е", "o": "о", "p": "р", "i": "і"}
FILTER_FORMS = {  # form -> (key, line end) -> document text, no acl of its own
    "filters block": lambda k, e: f"---{e}{FIELDS}{e}filters:{e}  {k}: {GROUPS}{e}---{e}{BODY}",
    "filters flow": lambda k, e: f"---{e}{FIELDS}{e}filters: {{{k}: {GROUPS}}}{e}---{e}{BODY}",
    "filters nested": lambda k, e:
        f"---{e}{FIELDS}{e}filters:{e}  product: payroll{e}  meta:{e}    {k}: {GROUPS}{e}"
        f"---{e}{BODY}",
    "filters list": lambda k, e:
        f"---{e}{FIELDS}{e}filters:{e}  tags:{e}  - {k}: {GROUPS}{e}---{e}{BODY}",
    "top level": lambda k, e: f"---{e}{FIELDS}{e}{k}: {GROUPS}{e}---{e}{BODY}",
}


@st.composite
def access_like_keys(draw) -> str:
    """An access root (lookalike letters, case) with an audience or other word around it."""
    root = draw(st.sampled_from(ROOTS))
    root = "".join(LOOKALIKE[ch] if ch in LOOKALIKE and draw(st.booleans()) else ch
                   for ch in root)
    root = root.upper() if draw(st.booleans()) else root
    before = draw(st.sampled_from(["", "audience_", "Audience", "target_", "x-", "ａ"]))
    after = draw(st.sampled_from(["", "_audience", "Audience", "_list", "s", "-ids"]))
    return f"{before}{root}{after}"


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=access_like_keys() | st.sampled_from(spellings()),
       form=st.sampled_from(sorted(FILTER_FORMS)), end=st.sampled_from(["\n", "\r\n", "\x85"]),
       sibling=st.booleans())
def test_no_access_like_key_is_read_as_a_mere_filter(tmp_path_factory, key, form, end,
                                                      sibling):
    folder = _folder(tmp_path_factory.mktemp("filter"), FILTER_FORMS[form](key, end), "utf-8",
                     sibling)
    outcome = _outcome(lambda: load_folder(folder))
    # at the top a near miss of acl is read as acl (restricted); under filters, refused
    assert outcome == "refused" or (form == "top level" and outcome == "restricted"), (key, form)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=access_like_keys() | st.sampled_from(spellings()), sibling=st.booleans())
def test_no_access_like_jsonl_key_is_read_as_a_mere_filter(tmp_path_factory, key, sibling):
    tmp = tmp_path_factory.mktemp("jfilter")
    rows = [{"id": "procurement", "text": BODY, "metadata": {"filters": {key: ["finance"]}}}]
    if sibling:
        rows.append({"id": "canteen", "text": "Lunch.", "metadata": {"acl": "public"}})
    path = tmp / "docs.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    assert _outcome(lambda: load_jsonl(path)) == "refused", key


@pytest.mark.parametrize("key", ["audience", "Audience", "аudience", "target_audience",
                                 "roles", "visibility", "readers", "allowed"])
def test_a_reader_word_at_the_top_is_refused_and_says_where_filters_go(tmp_path, key):
    folder = _folder(tmp_path, FILTER_FORMS["top level"](key, "\n"), "utf-8", True)
    with pytest.raises(ValueError, match=re.escape("filters: {audience: admin}")) as exc:
        load_folder(folder)
    assert "\n" not in str(exc.value) and "procurement.md:" in str(exc.value)


def test_an_audience_filter_is_a_filter_and_never_access(tmp_path):
    from workbench.retrieval import BM25Retriever
    from workbench.retrieval.filtered import FilteredRetriever

    text = f"---\n{FIELDS}\nacl: [finance]\nfilters:\n  audience: managers\n---\n{BODY}"
    folder = _folder(tmp_path, text, "utf-8", True)
    corpus = load_folder(folder)
    doc = corpus["procurement"]
    assert doc.acl == ("finance",) and dict(doc.metadata["filters"]) == {"audience": "managers"}
    chunks = chunk_corpus(FixedChunker(size=400, overlap=0), corpus)
    found = FilteredRetriever(chunks, BM25Retriever, {"audience": "managers"}, corpus)
    assert {c.doc_id for c in found.candidates()} == {"procurement"}
    assert CANARY not in _surface(corpus, ["managers"])  # the audience grants nothing
    assert CANARY in _surface(corpus, ["finance"])
    # a filter alone is no declaration: beside a declaring sibling, the document is refused
    bare = f"---\n{FIELDS}\nfilters: {{audience: finance}}\n---\n{BODY}"
    folder = _folder(tmp_path / "bare", bare, "utf-8", True)
    with pytest.raises(ValueError, match="declares no access"):
        load_folder(folder)
    for bad in ("filters: admin", "filters: {audience: {acl: x}}", "filters: {audience: []}"):
        folder = _folder(tmp_path / "bad", f"---\n{FIELDS}\nacl: public\n{bad}\n---\n{BODY}",
                         "utf-8", False)
        with pytest.raises(ValueError, match="filters"):
            load_folder(folder)
