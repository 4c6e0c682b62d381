"""PDF, HTML and DOCX extraction, on files generated at run time (tests/documents.py): text
recovered, reading order, scans, hyphenation, page numbers and heading paths in chunks."""

from __future__ import annotations

import pytest

from tests import documents as drawn
from workbench.chunking import FixedChunker, MarkdownChunker, chunk_corpus
from workbench.corpus import (
    Document,
    Span,
    extraction_warnings,
    load_corpus,
    load_document,
    load_folder,
    provenance,
)
from workbench.corpus.blocks import BREAK, Vocabulary, dehyphenate
from workbench.corpus.html_text import html_to_text

pytest.importorskip("pypdfium2")
pytest.importorskip("reportlab")
pytest.importorskip("docx")


def kinds(doc: Document) -> list[str]:
    return [w.kind for w in extraction_warnings(doc)]


def test_one_column_pdf_is_recovered_whole_with_its_pages(tmp_path):
    pdf = drawn.one_column_pdf(tmp_path / "one.pdf")
    doc = load_document(pdf.path)
    assert drawn.recovered(pdf.text, doc.text) == 1.0
    assert drawn.similarity(pdf.text, doc.text) == 1.0
    assert kinds(doc) == [] and doc.metadata["extraction"]["two_column_pages"] == []
    pages = doc.metadata["pages"]
    assert [p["page"] for p in pages] == [1, 2, 3]
    for page, truth in zip(pages, pdf.pages, strict=True):
        assert drawn.flat(doc.text[page["start"]:page["end"]]) == drawn.flat(truth)
    assert "\n\n" in doc.text[pages[0]["start"]:pages[0]["end"]]  # paragraph gaps kept


def test_chunks_of_a_pdf_carry_the_pages_they_span(tmp_path):
    doc = load_document(drawn.one_column_pdf(tmp_path / "one.pdf").path)
    chunks = chunk_corpus(FixedChunker(size=500, overlap=0), [doc])
    ends = [p["end"] for p in doc.metadata["pages"]]
    for c in chunks:
        expected = [p["page"] for p in doc.metadata["pages"]
                    if p["start"] < c.end and c.start < p["end"] + 2]
        assert c.metadata["pages"] == expected, (c.id, c.start, c.end, ends)
    assert any(len(c.metadata["pages"]) == 2 for c in chunks)


@pytest.mark.parametrize("stream", ["columns", "across"])
def test_two_columns_are_read_column_by_column_whatever_the_stream_order(tmp_path, stream):
    pdf = drawn.two_column_pdf(tmp_path / f"{stream}.pdf", stream)
    doc = load_document(pdf.path)
    assert drawn.similarity(pdf.text, doc.text) == 1.0
    assert drawn.similarity(str(pdf.notes["across"]), doc.text) < 0.7
    assert doc.metadata["extraction"]["two_column_pages"] == [1]
    # only a stream that reads across is a reading-order problem worth a warning
    assert kinds(doc) == (["reading_order"] if stream == "across" else [])
    if stream == "across":
        assert extraction_warnings(doc)[0].pages == (1,)


def test_a_page_without_a_text_layer_is_named(tmp_path):
    pdf = drawn.scanned_page_pdf(tmp_path / "scan.pdf")
    doc = load_document(pdf.path)
    (warning,) = extraction_warnings(doc)
    assert (warning.kind, warning.pages) == ("no_text_layer", (2,))
    assert "OCR" in warning.message
    p1, p2, p3 = doc.metadata["pages"]
    assert p2["start"] == p2["end"]
    assert drawn.flat(doc.text[p1["start"]:p1["end"]]) == drawn.flat(pdf.pages[0])
    assert drawn.flat(doc.text[p3["start"]:p3["end"]]) == drawn.flat(pdf.pages[2])


def test_hyphenation_at_line_ends_is_rejoined_and_reported(tmp_path):
    pdf = drawn.hyphenated_pdf(tmp_path / "hyph.pdf")
    soft, compound = pdf.notes["soft"], pdf.notes["compound"]
    assert soft and compound
    doc = load_document(pdf.path)
    assert drawn.similarity(pdf.text, doc.text) == 1.0
    words = set(drawn.flat(doc.text).replace(",", " ").replace(".", " ").split())
    assert set(soft) | set(compound) <= words
    (warning,) = extraction_warnings(doc)
    assert warning.kind == "hyphenation"
    assert (f"{len(soft) + len(compound)} word(s) broken" in warning.message
            and f"{len(soft)} rejoined" in warning.message
            and f"{len(compound)} kept" in warning.message)


def test_dehyphenation_can_be_turned_off(tmp_path):
    from workbench.corpus.pdf_text import read_pdf

    pdf = drawn.hyphenated_pdf(tmp_path / "hyph.pdf")
    _, text, meta = read_pdf(pdf.path, dehyphenate_breaks=False)
    assert text.count("-\n") == len(pdf.notes["broken"])
    assert "kept as '-' and a line break" in meta["extraction"]["warnings"][0]["message"]


def test_dehyphenate_rules():
    text = (f"Please requ{BREAK}\nest a follow{BREAK}\nup. A follow-up helps. Call Nor{BREAK}\n"
            f"thwind or see page 1{BREAK}\n2 of the New{BREAK}\nYork terms.")
    fixed, joined, kept = dehyphenate(text)
    assert fixed == ("Please request a follow-up. A follow-up helps. Call Northwind or see "
                     "page 1-2 of the New-York terms.")
    assert (joined, kept) == (2, 3)


def test_dehyphenate_a_page_by_the_vocabulary_of_its_document():
    """The words counted once per document decide a page's breaks as the page's own would
    not: "trade-in" written on another page keeps the hyphen of trade|in."""
    page = f"Ask for a trade{BREAK}\nin today."
    assert dehyphenate(page)[0] == "Ask for a tradein today."
    document = Vocabulary(page + "\n\nThe trade-in value is fixed.")
    assert dehyphenate(page, document) == ("Ask for a trade-in today.", 0, 1)


def test_html_keeps_content_tables_and_headings_and_drops_the_furniture(tmp_path):
    title, text, headings = html_to_text(drawn.HTML)
    assert text == drawn.HTML_TEXT
    assert "BOILERPLATE" not in text and "BOILERPLATE" not in title
    assert title == "Returns Procedure | Northwind Gear"
    assert [(h["level"], h["text"]) for h in headings] == [
        (1, "Returns Procedure"), (2, "Starting a return"), (3, "Reason codes"),
        (2, "Returning in store")]
    for h in headings:
        assert text[h["start"]:].startswith("#" * h["level"] + " " + h["text"])
    (tmp_path / "page.html").write_text(drawn.HTML, encoding="utf-8")
    doc = load_document(tmp_path / "page.html")
    at = doc.text.index("R3 | Faulty")
    assert provenance(doc, at, at + 5)["heading_path"] == [
        "Returns Procedure", "Starting a return", "Reason codes"]


def test_html_in_a_declared_charset_and_an_article_header(tmp_path):
    page = ('<html><head><meta charset="iso-8859-1"><title>Caf\xe9</title></head><body>'
            "<article><header><h1>Caf\xe9 rules</h1></header><p>Na\xefve text</p></article>"
            "</body></html>")
    (tmp_path / "p.html").write_bytes(page.encode("latin-1"))
    doc = load_document(tmp_path / "p.html")
    assert (doc.title, doc.text) == ("Café", "# Café rules\n\nNaïve text")


def test_docx_in_body_order_with_tables_lists_and_headings(tmp_path):
    want = drawn.docx_file(tmp_path / "doc.docx")
    doc = load_document(tmp_path / "doc.docx")
    assert doc.text == want
    assert "BOILERPLATE" not in doc.text
    assert doc.title == "Returns Procedure"
    at = doc.text.index("Bring the packing slip")
    assert provenance(doc, at, at + 10) == {"heading_path": ["Returns Procedure",
                                                             "Reason codes"]}


def test_a_folder_of_mixed_documents_loads_and_chunks_carry_where_they_came_from(tmp_path):
    (tmp_path / "notes.md").write_text("# Notes\n\nPlain markdown.\n", encoding="utf-8")
    drawn.one_column_pdf(tmp_path / "policy.pdf", pages=2)
    (tmp_path / "page.html").write_text(drawn.HTML, encoding="utf-8")
    drawn.docx_file(tmp_path / "procedure.docx")
    corpus = load_folder(tmp_path)
    assert sorted(corpus) == ["notes", "page", "policy", "procedure"]
    assert corpus["policy"].metadata["source"] == str(tmp_path / "policy.pdf")
    chunks = chunk_corpus(FixedChunker(size=300, overlap=0), corpus.documents)
    assert all("pages" in c.metadata for c in chunks if c.doc_id == "policy")
    assert all("heading_path" in c.metadata for c in chunks if c.doc_id in ("page", "procedure"))
    assert all(c.metadata == {} for c in chunks if c.doc_id == "notes")
    structured = MarkdownChunker(size=300).chunk(corpus["page"])
    assert structured[-1].metadata["section_path"][-1] == "Returning in store"
    assert load_corpus(tmp_path / "page.html")["page"].text == drawn.HTML_TEXT


def test_unreadable_files_are_errors_naming_the_file(tmp_path):
    for name in ("broken.pdf", "broken.docx"):
        (tmp_path / name).write_bytes(b"this is not what the suffix says")
        with pytest.raises(ValueError, match=name):
            load_document(tmp_path / name)
    with pytest.raises(ValueError, match="not a PDF, HTML or DOCX"):
        load_document(tmp_path / "x.odt")
    (tmp_path / "dir.pdf").mkdir()
    with pytest.raises(ValueError, match="not a file"):
        load_document(tmp_path / "dir.pdf")


def test_a_pdf_with_no_text_at_all_says_so(tmp_path):
    from PIL import Image
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen.canvas import Canvas

    canvas = Canvas(str(tmp_path / "scan.pdf"), pagesize=(595, 842))
    canvas.drawImage(ImageReader(Image.new("L", (60, 80), 128)), 0, 0, 595, 842)
    canvas.showPage()
    canvas.save()
    doc = load_document(tmp_path / "scan.pdf")
    assert doc.text == "" and kinds(doc) == ["no_text_layer", "no_text"]


def test_workbench_chunks_reports_extraction_warnings(tmp_path, capsys):
    import json

    from workbench.cli import main

    docs = tmp_path / "docs"
    docs.mkdir()
    drawn.scanned_page_pdf(docs / "scan.pdf")
    drawn.two_column_pdf(docs / "across.pdf", "across")
    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"qid": "q1", "question": "q", "relevant_chunk_ids": ["scan#0"]}\n',
                      encoding="utf-8")
    args = ["chunks", "--corpus", str(docs), "--golden", str(golden), "--chunker",
            "fixed:size=400,overlap=0"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "2 extraction warning(s)" in out
    assert "scan: no_text_layer: page(s) 2" in out and "across: reading_order" in out
    assert main([*args, "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert sorted((w["doc_id"], w["kind"], w["pages"]) for w in row["extraction_warnings"]) == [
        ("across", "reading_order", [1]), ("scan", "no_text_layer", [2])]


def test_the_chunk_preview_shows_warnings_and_pages_and_takes_any_chunk_id(tmp_path):
    import uuid

    from workbench.corpus import Chunk
    from workbench.widgets.chunk_preview import chunk_preview_html

    doc = load_document(drawn.scanned_page_pdf(tmp_path / "scan.pdf").path)
    pieces = chunk_corpus(FixedChunker(size=200, overlap=20), [doc])
    production = [Chunk(str(uuid.uuid4()), c.doc_id, c.start, c.end, text=c.text,
                        metadata=c.metadata) for c in pieces]
    page = chunk_preview_html(doc, production)
    assert "extraction: no_text_layer" in page and "OCR" in page
    assert "page 3" in page and ("page 1 " in page or "pages 1-3" in page)
    assert production[0].id in page


def test_extracted_text_gets_the_load_time_normal_form(tmp_path):
    """Soft hyphens, zero-width spaces and a BOM are removed from HTML and DOCX text as from
    markdown (text.normalize_text), and heading offsets point into the normalised text, so a
    quote of the visible text is found."""
    import docx

    page = ("\ufeff<html><head><meta charset=\"utf-8\"><title>Pay\u200bslips</title></head>"
            "<body><h1>Soft&shy;hyphen rules</h1><p>Pass\u200bword and Soft&shy;hyphen "
            "here.</p><h2>\u200bNext\u2060</h2><p>End.</p></body></html>")
    (tmp_path / "p.html").write_bytes(page.encode("utf-8"))
    made = docx.Document()
    made.add_heading("Soft\u00adhyphen rules", level=1)
    made.add_paragraph("Pass\u200bword and Soft\u00adhyphen here.")
    made.add_heading("\u200bNext\u2060", level=2)
    made.add_paragraph("End.")
    made.save(str(tmp_path / "d.docx"))
    for name in ("p.html", "d.docx"):
        doc = load_document(tmp_path / name)
        assert doc.text == ("# Softhyphen rules\n\nPassword and Softhyphen here.\n\n"
                            "## Next\n\nEnd."), name
        assert [(h["start"], h["text"]) for h in doc.metadata["headings"]] == [
            (0, "Softhyphen rules"), (doc.text.index("## Next"), "Next")], name
        span = Span.locate(doc, "Softhyphen here")
        assert doc.text[span.start:span.end] == "Softhyphen here"
    assert load_document(tmp_path / "p.html").title == "Payslips"
