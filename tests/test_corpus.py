import json
import unicodedata

import pytest

from workbench.corpus import Chunk, Document, Span, load_corpus, load_folder, load_jsonl


def test_folder_front_matter_nfc_and_title(tmp_path):
    decomposed = unicodedata.normalize("NFD", "Nghỉ phép năm")
    (tmp_path / "a.md").write_text(
        "---\nid: leave\ntitle: Leave\nversion: 2\neffective_date: 2026-01-01\n"
        "status: superseded\nacl: [hr]\n---\n# Heading\n" + decomposed + "\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("# Plain title\nbody", encoding="utf-8")
    corpus = load_folder(tmp_path)
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
    c = Chunk("d#3", "d", 0, 4, "text")
    assert c.embed_text == "text" and c.ordinal == 3
    assert c.content_hash == Chunk("e#0", "e", 9, 13, "text").content_hash
    assert c.content_hash != Chunk("d#3", "d", 0, 4, "text", embed_text="T: text").content_hash
