"""Builders of PDF, HTML and DOCX files for the extractor tests, made at run time (no binary
fixture is committed). Each returns the text it drew, so extraction can be scored against it.

PDFs are drawn with reportlab (BSD): Helvetica, text wrapped by measured string widths. The
scanned page is an image of text drawn with Pillow's bundled font. DOCX files are written
with python-docx.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conftest import HANDBOOK

PAGE_W, PAGE_H = 595.0, 842.0


def prose(name: str, n: int | None = None) -> list[str]:
    """Plain paragraphs of a handbook document (front matter, headings, tables dropped)."""
    text = (HANDBOOK / "docs" / name).read_text(encoding="utf-8")
    text = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)
    out = []
    for block in re.split(r"\n\s*\n", text):
        block = block.strip()
        if not block or block.startswith(("#", "|", ">")):
            continue
        block = re.sub(r"^\s*(\d+\.|-)\s+", "", block, flags=re.M)
        out.append(" ".join(re.sub(r"[*`_]", "", block).split()))
    return out[:n]


def flat(text: str) -> str:
    return " ".join(text.split())


def recovered(truth: str, got: str) -> float:
    """Share of the truth's characters found in order in ``got`` (whitespace-normalised)."""
    truth, got = flat(truth), flat(got)
    blocks = difflib.SequenceMatcher(None, truth, got, autojunk=False).get_matching_blocks()
    return sum(b.size for b in blocks) / len(truth)


def similarity(a: str, b: str) -> float:
    """difflib's ratio of the whitespace-normalised texts (penalises extra text too)."""
    return difflib.SequenceMatcher(None, flat(a), flat(b), autojunk=False).ratio()


def wrap(words: list[str], size: float, width: float) -> list[str]:
    from reportlab.pdfbase.pdfmetrics import stringWidth

    lines, line = [], ""
    for w in words:
        trial = f"{line} {w}".strip()
        if stringWidth(trial, "Helvetica", size) <= width or not line:
            line = trial
        else:
            lines.append(line)
            line = w
    return [*lines, line] if line else lines


def draw_lines(canvas: Any, lines: list[str], y: float, size: float = 11) -> float:
    """Draw ``lines`` (Helvetica ``size``, 14 pt apart) at the left margin from ``y`` down;
    the y below the last one. The one drawing loop of the PDF builders."""
    canvas.setFont("Helvetica", size)
    for line in lines:
        canvas.drawString(72, y, line)
        y -= 14
    return y


@dataclass
class Drawn:
    """A generated file and what was drawn in it (``pages``: the text of each page in reading
    order; ``notes``: builder-specific facts)."""

    path: Path
    pages: list[str]
    notes: dict[str, object] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return "\n\n".join(self.pages)


def one_column_pdf(path: Path, pages: int = 3) -> Drawn:
    from reportlab.pdfgen.canvas import Canvas

    paras = [p for f in ("policy-refunds.md", "policy-returns.md", "support-sla.md")
             for p in prose(f)]
    canvas = Canvas(str(path), pagesize=(PAGE_W, PAGE_H))
    texts, k = [], 0
    for _ in range(pages):
        y, drawn = PAGE_H - 72, []
        while True:
            lines = wrap(paras[k % len(paras)].split(), 11, PAGE_W - 144)
            if y - 14 * len(lines) < 72:
                break
            y = draw_lines(canvas, lines, y) - 12
            drawn.append(paras[k % len(paras)])
            k += 1
        canvas.showPage()
        texts.append("\n\n".join(drawn))
    canvas.save()
    return Drawn(path, texts)


def two_column_pdf(path: Path, stream: str) -> Drawn:
    """One page, two columns with a 24 pt gutter. ``stream="columns"`` writes the left
    column's lines, then the right's (most producers); ``"across"`` writes line i of the left
    column, then line i of the right (some producers: a plain extractor then interleaves)."""
    from reportlab.pdfgen.canvas import Canvas

    width = (PAGE_W - 144 - 24) / 2
    left = [ln for p in prose("policy-refunds.md", 4) for ln in [*wrap(p.split(), 10, width), ""]]
    right = [ln for p in prose("leave-annual.md", 4) for ln in [*wrap(p.split(), 10, width), ""]]
    n = min(max(len(left), len(right)), 52)
    left, right = (left + [""] * n)[:n], (right + [""] * n)[:n]
    canvas = Canvas(str(path), pagesize=(PAGE_W, PAGE_H))
    canvas.setFont("Helvetica", 10)
    x0, x1 = 72.0, 72 + width + 24

    def draw(x: float, i: int, line: str) -> None:
        if line:
            canvas.drawString(x, PAGE_H - 72 - 13 * i, line)

    if stream == "columns":
        for i, line in enumerate(left):
            draw(x0, i, line)
        for i, line in enumerate(right):
            draw(x1, i, line)
    else:
        for i in range(n):
            draw(x0, i, left[i])
            draw(x1, i, right[i])
    canvas.showPage()
    canvas.save()
    columns = " ".join(left) + " " + " ".join(right)
    across = " ".join(f"{a} {b}" for a, b in zip(left, right, strict=True))
    return Drawn(path, [columns], {"across": across, "stream": stream})


def scanned_page_pdf(path: Path) -> Drawn:
    """Three pages: text, an image of text with no text layer (like a scan), text."""
    from PIL import Image, ImageDraw, ImageFont
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen.canvas import Canvas

    paras = prose("care-tents.md")
    canvas = Canvas(str(path), pagesize=(PAGE_W, PAGE_H))
    pages = []
    for k in range(3):
        lines = wrap(paras[k].split(), 11, PAGE_W - 144)
        if k == 1:
            scale = 3
            image = Image.new("L", (int(PAGE_W * scale), int(PAGE_H * scale)), 255)
            pen = ImageDraw.Draw(image)
            font = ImageFont.load_default(size=11 * scale)
            for i, line in enumerate(lines):
                pen.text((72 * scale, (72 + 14 * i) * scale), line, font=font, fill=0)
            canvas.drawImage(ImageReader(image), 0, 0, PAGE_W, PAGE_H)
            pages.append("")
        else:
            draw_lines(canvas, lines, PAGE_H - 72)
            pages.append(paras[k])
        canvas.showPage()
    canvas.save()
    return Drawn(path, pages, {"scanned_page": 2, "scanned_text": paras[1]})


COMPOUNDS = ("Use the self-service portal for a follow-up or a check-in. A well-known "
             "trade-in offer covers second-hand and made-to-measure items; long-term and "
             "short-term rentals, e-bikes and co-branded gift cards are non-refundable.")


def hyphenated_pdf(path: Path) -> Drawn:
    """A narrow column where words are broken at line ends as a typesetter does: a compound
    at its own hyphen ("trade-" / "in"), a long word inside ("requ-" / "est")."""
    from reportlab.pdfbase.pdfmetrics import stringWidth
    from reportlab.pdfgen.canvas import Canvas

    words = " ".join([*prose("policy-returns.md", 3), COMPOUNDS, COMPOUNDS,
                      *prose("policy-refunds.md", 3)]).split()

    def fits(s: str) -> bool:
        return stringWidth(s, "Helvetica", 10) <= 200

    lines: list[tuple[str, str]] = []  # (drawn line, how it ends: "", "soft", "compound")
    line, broken = "", []
    for w in words:
        if fits(f"{line} {w}".strip()) or not line:
            line = f"{line} {w}".strip()
            continue
        core = w.rstrip(".,;:)")
        own = core.find("-", 1)
        if 0 < own < len(core) - 1 and fits(f"{line} {w[:own + 1]}"):
            lines.append((f"{line} {w[:own + 1]}", "compound"))
            broken.append(core)
            line = w[own + 1:]
        elif core.isalpha() and len(core) >= 7 and (cut := next(
                (k for k in range(len(core) - 3, 2, -1) if fits(f"{line} {w[:k]}-")), None)):
            lines.append((f"{line} {w[:cut]}-", "soft"))
            broken.append(core)
            line = w[cut:]
        else:
            lines.append((line, ""))
            line = w
        if len(lines) >= 60 and lines[-1][1] == "":
            break
    canvas = Canvas(str(path), pagesize=(PAGE_W, PAGE_H))
    canvas.setFont("Helvetica", 10)
    for i, (ln, _) in enumerate(lines):
        canvas.drawString(72, PAGE_H - 60 - 12.5 * i, ln)
    canvas.showPage()
    canvas.save()
    truth, glue = "", ""
    for ln, end in lines:
        truth += glue + (ln[:-1] if end == "soft" else ln)
        glue = " " if end == "" else ""
    drawn = [w for w in broken if w in truth]
    return Drawn(path, [truth], {"broken": drawn,
                                 "soft": [w for w in drawn if "-" not in w],
                                 "compound": [w for w in drawn if "-" in w]})


HTML = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Returns Procedure | Northwind Gear</title>
<style>body { font-family: sans-serif } .x { color: BOILERPLATE_CSS }</style>
<script>var track = "BOILERPLATE_JS"; if (1 < 2) {}</script></head>
<body>
<header><div>Northwind Gear BOILERPLATE_HEADER</div>
<nav><ul><li><a href="/">Home BOILERPLATE_NAV</a></li><li>Shop</li></ul></nav></header>
<main><article>
<h1>Returns Procedure</h1>
<p>This procedure tells customers &amp; staff how to send an item back.
Whether you get money back is decided by the <a href="/refunds">Refund Policy</a>.</p>
<h2>Starting a return</h2>
<p>Open the Returns Portal. It issues an RMA number (for example <b>RMA-40281177</b>).<br>An
RMA number is valid for 10&nbsp;days.</p>
<h3>Reason codes</h3>
<table><thead><tr><th>Code</th><th>Meaning</th><th>Who pays shipping</th></tr></thead>
<tbody><tr><td>R1</td><td>Changed my mind</td><td>Customer ($6.95)</td></tr>
<tr><td>R3</td><td>Faulty</td><td>Northwind</td></tr></tbody></table>
<h2>Returning in store</h2>
<ul><li>Bring the order email.</li><li>Bring the item.</li></ul>
<!-- BOILERPLATE_COMMENT -->
</article>
<aside>Related: Warranty BOILERPLATE_ASIDE</aside></main>
<noscript>Enable JavaScript BOILERPLATE_NOSCRIPT</noscript>
<footer>&copy; 2026 Northwind Gear BOILERPLATE_FOOTER</footer>
<script type="application/ld+json">{"@type": "BOILERPLATE_JSONLD"}</script>
</body></html>
"""

HTML_TEXT = """# Returns Procedure

This procedure tells customers & staff how to send an item back. \
Whether you get money back is decided by the Refund Policy.

## Starting a return

Open the Returns Portal. It issues an RMA number (for example RMA-40281177).
An RMA number is valid for 10 days.

### Reason codes

Code | Meaning | Who pays shipping
R1 | Changed my mind | Customer ($6.95)
R3 | Faulty | Northwind

## Returning in store

- Bring the order email.
- Bring the item."""


def docx_file(path: Path) -> str:
    """A DOCX with a page header and footer, headings, a table with a merged cell, a list
    and a page break; returns the text the extractor should give."""
    import docx

    d = docx.Document()
    d.sections[0].header.paragraphs[0].text = "Northwind internal BOILERPLATE_HEADER"
    d.sections[0].footer.paragraphs[0].text = "Confidential BOILERPLATE_FOOTER"
    d.add_heading("Returns Procedure", level=1)
    d.add_paragraph(prose("policy-returns.md", 1)[0])
    d.add_heading("Reason codes", level=2)
    rows = [("Code", "Meaning", "Who pays"), ("R1", "Changed my mind", "Customer"),
            ("R3", "Faulty or defective", "Northwind")]
    table = d.add_table(rows=len(rows) + 1, cols=3)
    for i, row in enumerate(rows):
        for j, value in enumerate(row):
            table.cell(i, j).text = value
    merged = table.cell(3, 1).merge(table.cell(3, 2))
    table.cell(3, 0).text = "R5"
    merged.text = "Ask support"
    d.add_paragraph("Bring the packing slip.", style="List Bullet")
    d.add_page_break()
    d.add_heading("Returning in store", level=2)
    para = d.add_paragraph("Online orders can be returned ")
    para.add_run("at any store").bold = True
    para.add_run(" at no cost.")
    d.save(str(path))
    return ("# Returns Procedure\n\n" + prose("policy-returns.md", 1)[0] + "\n\n## Reason codes"
            "\n\nCode | Meaning | Who pays\nR1 | Changed my mind | Customer\n"
            "R3 | Faulty or defective | Northwind\nR5 | Ask support\n\n"
            "- Bring the packing slip.\n\n## Returning in store\n\n"
            "Online orders can be returned at any store at no cost.")
