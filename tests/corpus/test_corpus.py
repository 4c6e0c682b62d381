import json
import unicodedata

import pytest

from workbench.corpus import (
    UNRESTRICTED,
    Chunk,
    Document,
    Span,
    load_corpus,
    load_folder,
    load_jsonl,
)


def test_folder_front_matter_nfc_and_title(tmp_path):
    decomposed = unicodedata.normalize("NFD", "Nghỉ phép năm")
    (tmp_path / "a.md").write_text(
        "---\nid: leave\ntitle: Leave\nversion: 2\neffective_date: 2026-01-01\n"
        "status: superseded\nacl: [hr]\n---\n# Heading\n" + decomposed + "\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("# Plain title\nbody", encoding="utf-8")
    with pytest.raises(ValueError, match=r"b\.txt: field 'acl': declares no access, but .*a\.md"):
        load_folder(tmp_path)  # deny by default: once one document declares access, all must
    (tmp_path / "b.txt").write_text("---\nacl: public\n---\n# Plain title\nbody",
                                    encoding="utf-8")
    corpus = load_folder(tmp_path)
    assert corpus["b"].acl == ("all",)
    leave = corpus["leave"]
    assert leave.title == "Leave"
    assert leave.metadata["effective_date"] == "2026-01-01"
    assert leave.acl == ("hr",) and not leave.is_current
    assert unicodedata.is_normalized("NFC", leave.text)
    assert "Nghỉ phép năm" in leave.text
    assert corpus["b"].title == "Plain title"


def test_duplicate_ids_rejected(tmp_path):
    for name in ("x.md", "y.md"):
        (tmp_path / name).write_text("---\nid: same\n---\ntext", encoding="utf-8")
    with pytest.raises(ValueError, match="duplicate document id 'same'"):
        load_folder(tmp_path)


def test_jsonl_errors_name_line(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text(json.dumps({"id": "a", "text": "x"}) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"docs.jsonl:2: malformed JSON"):
        load_jsonl(path)
    path.write_text(json.dumps({"id": "a#1", "text": "x"}) + "\n", encoding="utf-8")
    assert list(load_corpus(path)) == ["a#1"]  # any id: chunks carry their document
    path.write_text(json.dumps({"id": "a", "text": 3}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"docs\.jsonl:1: field 'text'"):
        load_corpus(path)


def test_span_locate_refuses_ambiguous():
    doc = Document("d", "refund in 30 days. refund in 30 days, or 60 for business.")
    with pytest.raises(ValueError, match="more than once"):
        Span.locate(doc, "refund in 30 days")
    span = Span.locate(doc, "60 for business")
    assert doc.text[span.start:span.end] == "60 for business"
    with pytest.raises(ValueError, match="not found"):
        Span.locate(doc, "90 days")
    with pytest.raises(ValueError):
        Span("d", 5, 5)


def test_chunk_defaults_and_hash():
    c = Chunk("d#3", "d", 0, 4, text="text")
    assert c.embed_text == "text"
    assert c.content_hash == Chunk("e#0", "e", 9, 13, text="text").content_hash
    assert c.content_hash != Chunk("d#3", "d", 0, 4, text="text", embed_text="T: text").content_hash


def test_zero_width_characters_are_removed_at_load_so_bm25_finds_the_word(tmp_path):
    from workbench.chunking import FixedChunker, chunk_corpus
    from workbench.retrieval import BM25Retriever

    (tmp_path / "a.md").write_text("# Access\n\nReset your pass\u200bword every year.\n",
                                   encoding="utf-8")
    (tmp_path / "b.md").write_text("# Other\n\nNothing about access here at all.\n",
                                   encoding="utf-8")
    corpus = load_folder(tmp_path)
    assert "password" in corpus["a"].text and "\u200b" not in corpus["a"].text
    chunks = chunk_corpus(FixedChunker(size=200, overlap=0), corpus.documents)
    assert BM25Retriever(chunks).search("password", 1)[0].chunk_id == "a#0"
    assert Span.locate(corpus["a"], "pass\u2060word").start == corpus["a"].text.index("password")
    # joiners that change how a script is written are kept
    (tmp_path / "c.md").write_text("\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
                                   encoding="utf-8")
    assert "\u200c" in load_folder(tmp_path)["c"].text


def test_unknown_front_matter_keys_warn_once_naming_the_closest_known_key(tmp_path):
    from workbench.corpus import FrontMatterWarning

    for name in ("a", "b"):
        (tmp_path / f"{name}.md").write_text("---\ntitel: A title\nauthor: me\n---\nbody",
                                             encoding="utf-8")
    with pytest.warns(FrontMatterWarning) as caught:
        corpus = load_folder(tmp_path)
    said = sorted(str(w.message) for w in caught)
    assert len(said) == 2 and "'author'" in said[0] and "known keys" in said[0]
    assert "'titel'" in said[1] and "closest known key is 'title'" in said[1]
    assert "a.md" in said[1] and "b.md" in said[1]
    assert corpus["a"].metadata["titel"] == "A title"  # kept, not guessed at


def test_documents_built_in_python_fail_closed_on_a_malformed_acl():
    from workbench.corpus import admit
    from workbench.generation.context import assemble_context

    for bad in (5, True, False, "", [], "finance,", ["hr", " "]):
        with pytest.raises(ValueError, match="built only through the one door"):
            Document("d", "text", metadata={"acl": bad})
        with pytest.raises(ValueError, match="<memory>: field 'acl'"):
            admit("d", "text", "", {"acl": bad})
    chunk = Chunk("d#0", "d", 0, 4, text="text", metadata={"acl": 0})
    with pytest.raises(ValueError, match="chunk 'd#0': field 'acl'"):
        assemble_context(["d#0"], [chunk], [Document("d", "text")], user_groups=UNRESTRICTED)


@pytest.mark.parametrize("key", ["ACL", "acls", "Acl"])
def test_jsonl_near_miss_of_acl_keeps_the_document_restricted(tmp_path, key):
    """A near miss of ``acl`` in JSONL metadata is read as the acl (with a warning naming
    the line and the field), as in front matter; it never loads as public."""
    path = tmp_path / "docs.jsonl"
    path.write_text(json.dumps({"id": "pay", "text": "salaries",
                                "metadata": {key: ["hr"]}}) + "\n", encoding="utf-8")
    with pytest.warns(UserWarning, match=rf"docs\.jsonl:1: field 'metadata\.{key}'.*'acl'"):
        doc = load_jsonl(path)["pay"]
    assert doc.acl == ("hr",)


@pytest.mark.parametrize("key", ["access", "allowed_groups", "readers", "visibility"])
def test_jsonl_refuses_readers_under_another_word(tmp_path, key):
    path = tmp_path / "docs.jsonl"
    path.write_text(json.dumps({"id": "pay", "text": "salaries",
                                "metadata": {key: ["hr"]}}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"docs\.jsonl:1: field 'metadata\.{key}': looks like "
                       r"a list of readers.*rename it"):
        load_corpus(path)


def test_jsonl_refuses_acl_and_a_near_miss_together(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text(json.dumps({"id": "pay", "text": "x", "metadata": {
        "acl": ["hr"], "ACL": ["all"]}}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"docs\.jsonl:1: field 'metadata\.ACL': .*keep 'acl'"):
        load_jsonl(path)


@pytest.mark.parametrize("names", [("x/a.md", "y/a.md"), ("report.md", "report.txt")])
def test_duplicate_ids_in_a_folder_name_both_files(tmp_path, names):
    for name in names:
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("text", encoding="utf-8")
    first, second = (str(tmp_path / name) for name in names)
    with pytest.raises(ValueError, match="duplicate document id") as err:
        load_folder(tmp_path)
    message = str(err.value)
    assert message.startswith(second + ": field 'id'") and first in message
    assert "'id:' in its front matter" in message and "\n" not in message


def test_duplicate_id_of_an_extracted_file_names_both_files(tmp_path):
    (tmp_path / "report.md").write_text("text", encoding="utf-8")
    (tmp_path / "report.html").write_text("<p>text</p>", encoding="utf-8")
    with pytest.raises(ValueError, match="duplicate document id 'report'") as err:
        load_folder(tmp_path)
    assert str(tmp_path / "report.html") in str(err.value)
    assert str(tmp_path / "report.md") in str(err.value)


@pytest.mark.parametrize("metadata", [{}, {"status": "current"}, {"status": "superseded"},
                                      {"status": " Superseded "}, {"superseded_by": "b"},
                                      {"status": "current", "superseded_by": "b"},
                                      {"superseded_by": ""}])
def test_one_answer_to_which_version_is_current(metadata):
    """is_current and is_superseded never both hold (a superseded_by alone supersedes)."""
    from workbench.corpus import Document, is_superseded

    doc = Document("a", "text", metadata=metadata)
    assert doc.is_current is not is_superseded(doc)
    assert is_superseded(doc) is (bool(metadata.get("superseded_by"))
                                  or metadata.get("status", "").strip().lower() == "superseded")
