"""Extraction as documents really are: running headers and footers dropped with a count, two
columns read in order despite a header, a crossing heading and a justified line a fraction of
a point into the gutter, dehyphenation that keeps compounds, Korean text at a line-end hyphen
(jamo that compose), Sphinx sidebars and permalinks; offsets exact after every cleanup."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests import documents as drawn
from workbench.chunking import FixedChunker, chunk_corpus
from workbench.corpus import extraction_warnings, load_document
from workbench.corpus.blocks import BREAK, dehyphenate
from workbench.corpus.html_text import html_to_text
from workbench.text import normalize_text

PAGE_W, PAGE_H = drawn.PAGE_W, drawn.PAGE_H


def _exact_offsets(doc) -> None:
    """Every offset the extraction records slices its text: pages, headings, chunks."""
    text = doc.text
    for page in doc.metadata.get("pages", ()):
        assert 0 <= page["start"] <= page["end"] <= len(text)
    for h in doc.metadata.get("headings", ()):
        assert text[h["start"]:].startswith("#" * h["level"] + " " + h["text"])
    for c in chunk_corpus(FixedChunker(size=120, overlap=20), [doc]):
        assert text[c.start:c.end] == c.text


def printed_pdf(path: Path, pages: int = 5) -> drawn.Drawn:
    """Pages as a browser prints them: a header with date and file path and a footer with
    the page number on every page, body prose between."""
    from reportlab.pdfgen.canvas import Canvas

    paras = [p for f in ("policy-refunds.md", "support-sla.md") for p in drawn.prose(f)]
    canvas = Canvas(str(path), pagesize=(PAGE_W, PAGE_H))
    texts, k = [], 0
    for n in range(1, pages + 1):
        canvas.setFont("Helvetica", 8)
        canvas.drawString(36, PAGE_H - 24, "02/12/2026, 10:31")
        canvas.drawString(300, PAGE_H - 24, "file:///home/ana/Downloads/handbook.html")
        canvas.drawString(PAGE_W - 80, 24, f"{n}/{pages}")
        y, out = PAGE_H - 72, []
        for _ in range(3):
            lines = drawn.wrap(paras[k % len(paras)].split(), 11, PAGE_W - 144)
            y = drawn.draw_lines(canvas, lines, y) - 12
            out.append(paras[k % len(paras)])
            k += 1
        canvas.showPage()
        texts.append("\n\n".join(out))
    canvas.save()
    return drawn.Drawn(path, texts)


def test_running_headers_and_footers_are_dropped_and_counted(tmp_path):
    pdf = printed_pdf(tmp_path / "printed.pdf")
    doc = load_document(pdf.path)
    assert "file:///" not in doc.text and "02/12/2026" not in doc.text
    assert not any(line.strip() in {f"{n}/5" for n in range(1, 6)}
                   for line in doc.text.splitlines())
    assert drawn.similarity(pdf.text, doc.text) > 0.99
    (w,) = [w for w in extraction_warnings(doc) if w.kind == "running_headers"]
    assert w.message.startswith("10 running header/footer line(s)") and w.pages == (1, 2, 3, 4, 5)
    for page, truth in zip(doc.metadata["pages"], pdf.pages, strict=True):
        assert drawn.similarity(truth, doc.text[page["start"]:page["end"]]) > 0.99
    _exact_offsets(doc)


def test_a_line_repeated_only_on_some_pages_or_mid_page_stays(tmp_path):
    from reportlab.pdfgen.canvas import Canvas

    canvas = Canvas(str(tmp_path / "t.pdf"), pagesize=(PAGE_W, PAGE_H))
    for n in range(4):
        canvas.setFont("Helvetica", 11)
        for i in range(12):
            canvas.drawString(72, PAGE_H - 72 - 14 * i, "Keep this line" if i == 6 else
                              f"Body line {i} of page {n} with words {'x' * (n + i)}")
        if n == 0:
            canvas.drawString(72, 40, "Only once at the bottom")
        canvas.showPage()
    canvas.save()
    doc = load_document(tmp_path / "t.pdf")
    assert doc.text.count("Keep this line") == 4 and "Only once at the bottom" in doc.text
    assert not [w for w in extraction_warnings(doc) if w.kind == "running_headers"]


def two_columns_with_furniture(path: Path) -> drawn.Drawn:
    """Two columns under a running header that crosses the gutter, a heading across both
    columns midway, and left-column lines stretched to end 0.4 pt into the gutter."""
    from reportlab.pdfbase.pdfmetrics import stringWidth
    from reportlab.pdfgen.canvas import Canvas

    width = (PAGE_W - 144 - 24) / 2
    canvas = Canvas(str(path), pagesize=(PAGE_W, PAGE_H))
    pages = []
    for n in range(3):
        canvas.setFont("Helvetica", 8)
        canvas.drawString(72, PAGE_H - 30, "Northwind Handbook — internal — printed 2026-12-02 "
                                           "— every page carries this header line")
        left = [ln for p in drawn.prose("policy-refunds.md")[n:n + 3]
                for ln in drawn.wrap(p.split(), 10, width)][:30]
        right = [ln for p in drawn.prose("leave-annual.md")[n:n + 3]
                 for ln in drawn.wrap(p.split(), 10, width)][:30]
        canvas.setFont("Helvetica-Bold", 14)
        title = f"{['Refunds', 'Leave', 'Both'][n]} and what each team does, in both columns"
        canvas.drawString(72, PAGE_H - 60, title)
        for i, line in enumerate(left):
            natural = stringWidth(line, "Helvetica", 10)
            text = canvas.beginText(72, PAGE_H - 90 - 13 * i)
            text.setFont("Helvetica", 10)
            stretch = i % 3 == 0 and len(line) > 1  # justified: to 0.4 pt into the gutter
            text.setCharSpace((width + 0.4 - natural) / (len(line) - 1) if stretch else 0)
            text.textLine(line)
            canvas.drawText(text)
        canvas.setFont("Helvetica", 10)
        for i, line in enumerate(right):
            canvas.drawString(72 + width + 24, PAGE_H - 90 - 13 * i, line)
        canvas.showPage()
        pages.append(title + "\n\n" + " ".join(left) + "\n\n" + " ".join(right))
    canvas.save()
    return drawn.Drawn(path, pages)


def test_two_columns_survive_a_header_a_crossing_heading_and_a_justified_line(tmp_path):
    pdf = two_columns_with_furniture(tmp_path / "cols.pdf")
    doc = load_document(pdf.path)
    assert doc.metadata["extraction"]["two_column_pages"] == [1, 2, 3]
    assert "every page carries this header line" not in doc.text
    assert drawn.recovered(pdf.text, doc.text) > 0.99
    assert drawn.similarity(pdf.text, doc.text) > 0.98
    _exact_offsets(doc)


def test_dehyphenation_keeps_compounds_and_joins_broken_words():
    text = (f"The architecture{BREAK}\ndependent code: architecture and dependent. "
            f"Not{BREAK}\nCosmetic. Our evalu{BREAK}\nation of state-of-the{BREAK}\nart work "
            f"is a well-estab{BREAK}\nlished rule; send e{BREAK}\nmail, the e-mail way. "
            f"Please requ{BREAK}\nest it.")
    fixed, joined, kept = dehyphenate(text)
    assert fixed == ("The architecture-dependent code: architecture and dependent. "
                     "Not-Cosmetic. Our evaluation of state-of-the-art work is a "
                     "well-established rule; send e-mail, the e-mail way. Please request it.")
    assert (joined, kept) == (3, 4)


def jamo_font(path: Path) -> Path:
    """A TrueType font with box glyphs for the Hangul conjoining jamo, ASCII and the hyphen
    (no installed font has the jamo; a PDF whose text maps to jamo is what some producers
    write for Korean)."""
    from fontTools.fontBuilder import FontBuilder
    from fontTools.pens.ttGlyphPen import TTGlyphPen

    chars = [*range(0x20, 0x7F), *range(0x1100, 0x1113), *range(0x1161, 0x1176),
             *range(0x11A8, 0x11C3)]
    names = [".notdef", *(f"u{c:04X}" for c in chars)]
    fb = FontBuilder(1000, isTTF=True)
    fb.setupGlyphOrder(names)
    fb.setupCharacterMap({c: f"u{c:04X}" for c in chars})
    glyphs = {}
    for name in names:
        pen = TTGlyphPen(None)
        if name != "u0020":
            pen.moveTo((50, 0))
            pen.lineTo((50, 700))
            pen.lineTo((550, 700))
            pen.lineTo((550, 0))
            pen.closePath()
        glyphs[name] = pen.glyph()
    fb.setupGlyf(glyphs)
    fb.setupHorizontalMetrics({n: (600, 50) for n in names})
    fb.setupHorizontalHeader(ascent=800, descent=-200)
    fb.setupNameTable({"familyName": "JamoBoxes", "styleName": "Regular"})
    fb.setupOS2(sTypoAscender=800, usWinAscent=800, usWinDescent=200)
    fb.setupPost()
    fb.save(str(path))
    return path


def test_korean_jamo_at_a_line_end_hyphen_extract_without_an_assertion(tmp_path):
    """The crash: page text is put in NFC before the breaks are resolved, so a syllable (L+V)
    at a line end and a trailing jamo (T) on the next line composed only once joined, and
    the extractor's normal-form assertion failed."""
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.pdfgen.canvas import Canvas

    pdfmetrics.registerFont(TTFont("JamoBoxes", str(jamo_font(tmp_path / "jamo.ttf"))))
    canvas = Canvas(str(tmp_path / "ko.pdf"), pagesize=(PAGE_W, PAGE_H))
    canvas.setFont("JamoBoxes", 12)
    lines = ["\u1112\u1161\u11ab \u1100\u116e\u11a8 \u1112\u1161-",
             "\u11ab\u1100\u116e\u11a8 \u1109\u1165 data", "\u1100\u1161\u11a8 end"]
    for i, line in enumerate(lines):
        canvas.drawString(72, PAGE_H - 72 - 16 * i, line)
    canvas.showPage()
    canvas.save()
    doc = load_document(tmp_path / "ko.pdf")
    assert doc.text == normalize_text(doc.text)
    assert "\ud55c \uad6d" in doc.text  # 한 국: the jamo composed into syllables
    (w,) = [w for w in extraction_warnings(doc) if w.kind == "hyphenation"]
    assert "1 kept" in w.message  # Korean is not hyphenated at line ends: a real hyphen
    # whatever the rule decides, a join that composes is put back in the normal form
    joined = dehyphenate(f"data \ud558{BREAK}\n\u11ab data \ud558\u11ab")[0]
    assert joined == normalize_text(joined)


SPHINX = """<!DOCTYPE html><html><head><title>Refunds &#8212; Handbook 1.0 documentation</title>
</head><body>
<div class="related" role="navigation" aria-label="related navigation"><h3>Navigation</h3>
<ul><li class="right"><a href="genindex.html" title="General Index">index</a></li>
<li class="nav-item nav-item-0"><a href="index.html">Handbook 1.0 documentation</a> &#187;</li>
</ul></div>
<div class="document"><div class="documentwrapper"><div class="bodywrapper">
<div class="body" role="main">
<section id="refunds"><h1>{title}<a class="headerlink" href="#refunds"
 title="Link to this heading">¶</a></h1>
<p>{body}</p>
<section id="how"><h2>How to ask<a href="#how" title="Permalink">¶</a></h2>
<div class="toctree-wrapper compound"><ul><li class="toctree-l1">
<a class="reference internal" href="a.html">Returns</a></li></ul></div>
<p>{more}</p></section></section>
<div class="footer">Page footer inside the body stays: {more}</div>
</div></div></div>
<div class="sphinxsidebar" role="navigation" aria-label="main navigation">
<div class="sphinxsidebarwrapper"><h3><a href="index.html">Table of Contents</a></h3>
<ul><li><a class="reference internal" href="#">Refunds</a></li></ul>
<div id="searchbox" role="search"><h3 id="searchlabel">Quick search</h3>
<form class="search" action="search.html"><input type="text" name="q"/></form></div>
</div></div><div class="clearer"></div></div>
<div class="footer" role="contentinfo">&#169; Copyright 2026. Created using
<a href="https://www.sphinx-doc.org/">Sphinx</a> 7.2.</div>
</body></html>"""

FURNITURE = ("Navigation", "General Index", "Table of Contents", "Quick search", "Copyright",
             "Created using", "¶", "Handbook 1.0 documentation")
words = st.text(st.characters(whitelist_categories=("L", "N"), max_codepoint=0x9FFF),
                min_size=1, max_size=8)
sentence = st.lists(words, min_size=1, max_size=12).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(title=sentence, body=sentence, more=sentence)
def test_sphinx_page_furniture_is_dropped_and_offsets_stay_exact(title, body, more):
    if any(f.lower() in f"{title} {body} {more}".lower() for f in FURNITURE):
        return
    _, text, headings = html_to_text(SPHINX.format(title=title, body=body, more=more))
    assert not [f for f in FURNITURE if f in text]
    assert text.startswith("# " + " ".join(normalize_text(title).split()))
    assert "Returns" in text and "Page footer inside the body stays" in text  # content
    for h in headings:
        assert text[h["start"]:].startswith("#" * h["level"] + " " + h["text"])
