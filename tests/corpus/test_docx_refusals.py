"""A broken or oversized DOCX is one error line naming the file, never a traceback: a
truncated document.xml or [Content_Types].xml (lxml XMLSyntaxError), a DOCTYPE, and a zip
bomb refused from its declared sizes before any part is read."""

from __future__ import annotations

import zipfile

import pytest

docx = pytest.importorskip("docx")

from workbench.corpus import docx_text, load_document  # noqa: E402


@pytest.fixture
def good(tmp_path):
    doc = docx.Document()
    doc.add_paragraph("hello from the memo")
    path = tmp_path / "good.docx"
    doc.save(path)
    return path


def _variant(good, out, change, extra=None):
    with zipfile.ZipFile(good) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zo:
        for info in zin.infolist():
            zo.writestr(info, change(info.filename, zin.read(info.filename)))
        for name, data in (extra or {}).items():
            zo.writestr(name, data)
    return out


@pytest.mark.parametrize("part", ["word/document.xml", "[Content_Types].xml"])
def test_a_truncated_part_is_one_line(good, tmp_path, part):
    bad = _variant(good, tmp_path / "bad.docx",
                   lambda n, b: b[: len(b) // 2] if n == part else b)
    with pytest.raises(ValueError, match=r"bad\.docx: cannot be read as a DOCX file") as exc:
        load_document(bad)
    assert "\n" not in str(exc.value)


def test_a_doctype_does_not_raise_a_traceback(good, tmp_path):
    bad = _variant(good, tmp_path / "dt.docx", lambda n, b: b.replace(
        b"?>", b"?><!DOCTYPE x [<!ENTITY a 'b'>]>", 1) if n == "word/document.xml" else b)
    try:
        doc = load_document(bad)
    except ValueError as exc:
        assert "dt.docx" in str(exc)
    else:
        assert "hello from the memo" in doc.text


def test_a_zip_bomb_is_refused_from_its_declared_size(good, tmp_path, monkeypatch):
    monkeypatch.setattr(docx_text, "MAX_UNPACKED_BYTES", 1_000_000)
    bomb = _variant(good, tmp_path / "bomb.docx", lambda n, b: b,
                    {"word/media/pad.bin": b"\0" * 5_000_000})
    assert bomb.stat().st_size < 100_000
    with pytest.raises(ValueError, match=r"bomb\.docx: unpacks to .* over the limit"):
        load_document(bomb)
