"""PDF text with its page numbers, in reading order, with the problems of the extraction named.

Extractor: pypdfium2 (PDFium, Apache-2.0/BSD-3): per character its code point and box. The
layout is read from the boxes, not from the order the producer wrote the text in:

* **lines**: consecutive characters whose boxes share at least a third of their height with
  the line's vertical extent form a line;
* **two columns**: a vertical band at least ``GUTTER_PT`` wide in the middle half of the page
  that (almost) no character crosses, with at least ``MIN_COLUMN_LINES`` lines on each side.
  The page is then read left column, then right column (lines that cross the gutter, such as
  a title, come before the columns when above them, after otherwise; a line that ends less
  than ``GUTTER_SLACK_PT`` into the gutter, as a justified line may, stays in its column).
  When the producer's text stream alternated between the columns (a plain extractor then
  reads *across* them, interleaving two texts line by line), the page gets a
  ``reading_order`` warning;
* **paragraphs**: a gap between lines larger than ``PARAGRAPH_GAP`` times the page's usual
  line spacing is a blank line;
* **hyphenation**: a line ending in a hyphen (or PDFium's line-end hyphen mark) followed by
  a word on the next line is a break; :func:`~workbench.corpus.blocks.dehyphenate` rejoins
  it ("requ-/est" -> "request", "trade-/in" -> "trade-in") and the ``hyphenation`` warning
  says how many were joined and kept. ``dehyphenate=False`` keeps ``-`` + newline instead;
* **running headers and footers**: among the top and bottom ``EDGE_LINES`` lines of each
  page, a line whose text (numbers blanked: page numbers, dates) recurs at the same height on
  at least ``RUNNING_SHARE`` of the pages (3 or more) is page furniture: dropped before the
  layout is read, counted in the ``running_headers`` warning;
* **no text layer**: a page with fewer than ``MIN_PAGE_CHARS`` characters that images cover
  for more than half is a scan: ``no_text_layer`` names it (its text needs OCR).

Pages are separated by a blank line; ``metadata["pages"]`` gives each page's offsets and its
printed label.
"""

from __future__ import annotations

import itertools
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from workbench.corpus.blocks import BREAK, Vocabulary, dehyphenate, page_list, warning
from workbench.io import InputError
from workbench.text import normalize_text

__all__ = ["EDGE_LINES", "EDGE_TOLERANCE_PT", "GUTTER_PT", "GUTTER_SLACK_PT", "MIN_COLUMN_LINES",
           "MIN_PAGE_CHARS", "PARAGRAPH_GAP", "RUNNING_SHARE", "read_pdf", "running_lines"]

GUTTER_PT = 12
GUTTER_SLACK_PT = 1.0
EDGE_LINES = 3
EDGE_TOLERANCE_PT = 4.0
RUNNING_SHARE = 0.5
MIN_COLUMN_LINES = 5
MIN_PAGE_CHARS = 20
PARAGRAPH_GAP = 1.6
_HYPHENS = ("-", BREAK, "\u2010")  # a soft hyphen is already BREAK (_glyphs)


@dataclass
class _Line:
    chars: list[tuple[str, float, float, float, float]] = field(default_factory=list)
    bottom: float = float("inf")
    top: float = float("-inf")

    def add(self, ch: str, box: tuple[float, float, float, float]) -> None:
        self.chars.append((ch, *box))
        if box[3] > box[1]:
            self.bottom, self.top = min(self.bottom, box[1]), max(self.top, box[3])

    def overlaps(self, box: tuple[float, float, float, float]) -> bool:
        """Whether a glyph's box shares at least a third of its height with the line (so a
        comma below the baseline stays on its line, the next line's glyphs do not)."""
        if self.top < self.bottom:  # no glyph with a height yet
            return True
        shared = min(self.top, box[3]) - max(self.bottom, box[1])
        return shared >= (box[3] - box[1]) / 3

    @property
    def text(self) -> str:
        return " ".join("".join(c[0] for c in self.chars).split())


@dataclass
class _Page:
    number: int
    label: str
    text: str
    glyphs: int
    image_cover: float
    two_columns: bool = False
    read_across: bool = False
    breaks: int = 0


def _glyphs(textpage: Any) -> list[tuple[str, tuple[float, float, float, float]]]:
    import pypdfium2.raw as raw

    out = []
    for i in range(textpage.count_chars()):
        code = raw.FPDFText_GetUnicode(textpage.raw, i)
        if code in (10, 13) or code == 0:
            continue
        ch = chr(code)
        if ch in ("\u0002", "\u00ad"):  # PDFium's and the soft line-end hyphen
            ch = BREAK
        out.append((ch, tuple(textpage.get_charbox(i))))
    return out


def _lines(glyphs: list[tuple[str, tuple[float, float, float, float]]]) -> list[_Line]:
    """Lines in stream order: a glyph whose vertical middle is outside the current line's
    extent starts a new line (spaces and marks without height stay on the current line)."""
    lines: list[_Line] = []
    for ch, box in glyphs:
        if not lines or (box[3] > box[1] and not ch.isspace() and not lines[-1].overlaps(box)):
            lines.append(_Line())
        lines[-1].add(ch, box)
    return [ln for ln in lines if ln.text]


def _gutter(lines: list[_Line], width: float) -> tuple[float, float] | None:
    """The widest empty vertical band of the middle half of the page, if it splits the page
    into two columns (see the module doc)."""
    cover = np.zeros(int(width) + 2, dtype=np.int64)
    for ln in lines:
        for ch, left, _, right, _ in ln.chars:
            if right > left and not ch.isspace():
                cover[max(int(left), 0): min(int(right) + 1, len(cover))] += 1
    if not cover.any():
        return None
    busy = float(np.percentile(cover[cover > 0], 90))
    empty = cover <= max(1.0, 0.05 * busy)
    best: tuple[int, int] | None = None
    run = None
    for x in range(int(width * 0.25), int(width * 0.75) + 1):
        if empty[x]:
            run = x if run is None else run
            if x + 1 - run >= GUTTER_PT and (best is None or x + 1 - run > best[1] - best[0]):
                best = (run, x + 1)
        else:
            run = None
    if best is None:
        return None
    mid = (best[0] + best[1]) / 2
    left = sum(1 for ln in lines if all(c[3] <= mid for c in ln.chars if c[3] > c[1]))
    right = sum(1 for ln in lines if all(c[1] >= mid for c in ln.chars if c[3] > c[1]))
    both = sum(1 for ln in lines if any(c[3] <= mid for c in ln.chars if c[3] > c[1])
               and any(c[1] >= mid for c in ln.chars if c[3] > c[1]))
    if max(left, both) + both < MIN_COLUMN_LINES or right + both < MIN_COLUMN_LINES:
        return None
    return float(best[0]), float(best[1])


def _split(lines: list[_Line], gutter: tuple[float, float]
           ) -> tuple[list[_Line], list[_Line], list[_Line], int]:
    """Left and right column lines, lines crossing the gutter, and how often the text stream
    switched between the columns."""
    g0, g1 = gutter
    mid = (g0 + g1) / 2
    left, right, spanning = [], [], []
    sides: list[str] = []
    for ln in lines:
        if any(c[1] < g1 - GUTTER_SLACK_PT and c[3] > g0 + GUTTER_SLACK_PT and c[3] > c[1]
               and not c[0].isspace() for c in ln.chars):
            spanning.append(ln)
            continue
        parts = {"L": _Line(), "R": _Line()}
        side = "L"
        for ch, *box in ln.chars:
            if box[2] > box[0] and not ch.isspace():
                side = "L" if (box[0] + box[2]) / 2 < mid else "R"
                if not sides or sides[-1] != side:
                    sides.append(side)
            parts[side].add(ch, (box[0], box[1], box[2], box[3]))
        left += [parts["L"]] if parts["L"].text else []
        right += [parts["R"]] if parts["R"].text else []
    return left, right, spanning, max(len(sides) - 1, 0)


def _paragraphs(lines: list[_Line]) -> tuple[str, int]:
    """The text of a column: lines top to bottom, a blank line at paragraph gaps, line-end
    hyphens before a word marked ``BREAK``; and how many such breaks there are."""
    lines = sorted(lines, key=lambda ln: -ln.top)
    gaps = [a.top - b.top for a, b in itertools.pairwise(lines) if a.top > b.top]
    usual = statistics.median(gaps) if gaps else 0.0
    out: list[str] = []
    breaks = 0
    for i, ln in enumerate(lines):
        text = ln.text
        nxt = lines[i + 1] if i + 1 < len(lines) else None
        new_paragraph = nxt is None or (usual > 0 and ln.top - nxt.top > PARAGRAPH_GAP * usual)
        if text.endswith(_HYPHENS) and not new_paragraph and nxt is not None \
                and nxt.text[:1].isalnum() and text[-2:-1].isalnum():
            out.append(text[:-1] + BREAK + "\n")
            breaks += 1
            continue
        text = text.replace(BREAK, "-")
        out.append(text + ("\n\n" if new_paragraph else "\n"))
    return "".join(out).strip(), breaks


def _image_cover(page: Any, width: float, height: float) -> float:
    import pypdfium2.raw as raw

    area = 0.0
    for obj in page.get_objects(filter=[raw.FPDF_PAGEOBJ_IMAGE]):
        left, bottom, right, top = obj.get_bounds()
        area += max(0.0, right - left) * max(0.0, top - bottom)
    return min(1.0, area / (width * height)) if width * height else 0.0


@dataclass
class _Raw:
    """A page's lines before layout, and what the page-level warnings need."""

    number: int
    label: str
    width: float
    height: float
    lines: list[_Line]
    glyphs: int
    image_cover: float


def _page_lines(pdf: Any, index: int) -> _Raw:
    page = pdf[index]
    try:
        width, height = page.get_size()
        textpage = page.get_textpage()
        try:
            glyphs = _glyphs(textpage)
        finally:
            textpage.close()
        label = pdf.get_page_label(index) or str(index + 1)
        n_glyphs = sum(1 for ch, _ in glyphs if not ch.isspace())
        return _Raw(index + 1, label, width, height, _lines(glyphs), n_glyphs,
                    _image_cover(page, width, height))
    finally:
        page.close()


def _furniture_key(line: _Line) -> str:
    """A line's text with its numbers blanked (page numbers, dates, counters)."""
    return re.sub(r"\d+", "#", line.text.casefold())


def running_lines(pages: list[_Raw]) -> dict[int, list[_Line]]:
    """Running headers and footers: among the ``EDGE_LINES`` top and bottom lines of each
    page, the lines whose text (numbers blanked) recurs at the same height (within
    ``EDGE_TOLERANCE_PT``) on at least ``RUNNING_SHARE`` of the pages (and 3 pages or more).
    Returns, per page number, the lines to drop."""
    if len(pages) < 3:
        return {}
    seen: dict[str, list[tuple[int, float, _Line]]] = {}
    for p in pages:
        ordered = sorted(p.lines, key=lambda ln: -ln.top)
        edge = ordered[:EDGE_LINES] + ordered[EDGE_LINES:][-EDGE_LINES:]
        for ln in {id(ln): ln for ln in edge}.values():
            seen.setdefault(_furniture_key(ln), []).append((p.number, ln.top, ln))
    need = max(3, RUNNING_SHARE * len(pages))
    out: dict[int, list[_Line]] = {}
    for key, where in seen.items():
        if not key.strip() or len({n for n, _, _ in where}) < need:
            continue
        heights = statistics.median(top for _, top, _ in where)
        same = [(n, ln) for n, top, ln in where if abs(top - heights) <= EDGE_TOLERANCE_PT]
        if len({n for n, _ in same}) >= need:
            for n, ln in same:
                out.setdefault(n, []).append(ln)
    return out


def _layout(raw: _Raw, drop: list[_Line]) -> _Page:
    lines = [ln for ln in raw.lines if all(ln is not d for d in drop)]
    result = _Page(raw.number, raw.label, "", raw.glyphs, raw.image_cover)
    gutter = _gutter(lines, raw.width)
    if gutter is None:
        result.text, result.breaks = _paragraphs(lines)
        return result
    left, right, spanning, switches = _split(lines, gutter)
    top = max((ln.top for ln in left + right), default=0.0)
    above = [ln for ln in spanning if ln.bottom >= top]
    below = [ln for ln in spanning if ln.bottom < top]
    texts = [_paragraphs(group) for group in (above, left, right, below) if group]
    result.text = "\n\n".join(t for t, _ in texts if t)
    result.breaks = sum(b for _, b in texts)
    result.two_columns = True
    result.read_across = switches >= max(MIN_COLUMN_LINES, min(len(left), len(right)) // 4)
    return result


def read_pdf(path: Path, dehyphenate_breaks: bool = True) -> tuple[str, str, dict[str, Any]]:
    """Title, text and metadata of a PDF (see the module doc)."""
    try:
        import pypdfium2 as pdfium
    except ImportError:  # pragma: no cover - the documents extra installs it
        raise InputError(str(path), "reading PDF needs pypdfium2: pip install "
                         "'workbench[documents]'") from None
    try:
        pdf = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        raise ValueError(f"{path}: cannot be read as a PDF ({exc}); is it damaged or "
                         "password-protected?") from None
    try:
        raws = [_page_lines(pdf, i) for i in range(len(pdf))]
        title = str(pdf.get_metadata_dict().get("Title") or "").strip()
    finally:
        pdf.close()
    furniture = running_lines(raws)
    pages = [_layout(r, furniture.get(r.number, [])) for r in raws]
    texts = [normalize_text(p.text) for p in pages]
    joined, kept = 0, 0
    if dehyphenate_breaks and any(p.breaks for p in pages):
        vocabulary = Vocabulary("\n\n".join(texts))
        fixed = [dehyphenate(t, vocabulary) for t in texts]
        texts = [t for t, _, _ in fixed]
        joined, kept = sum(j for _, j, _ in fixed), sum(k for _, _, k in fixed)
    else:
        texts = [t.replace(BREAK + "\n", "-\n") for t in texts]
    spans, at = [], 0
    for page, text in zip(pages, texts, strict=True):
        spans.append({"page": page.number, "label": page.label, "start": at,
                      "end": at + len(text)})
        at += len(text) + 2
    warnings = []
    scans = [p.number for p in pages if p.glyphs < MIN_PAGE_CHARS and p.image_cover > 0.5]
    if scans:
        warnings.append(warning("no_text_layer", f"page(s) {page_list(scans)} are images with "
                                "no text layer (scans?): their text is missing until they "
                                "are OCR'd", scans))
    across = [p.number for p in pages if p.read_across]
    if across:
        warnings.append(warning("reading_order", f"page(s) {page_list(across)} have two "
                                "columns whose text stream reads across them (a plain "
                                "extractor interleaves the columns line by line); read here "
                                "column by column", across))
    if furniture:
        dropped = sorted(furniture)
        shown = sorted({ln.text for lines in furniture.values() for ln in lines})[:3]
        examples = ", ".join(map(repr, shown))
        warnings.append(warning("running_headers", f"{sum(map(len, furniture.values()))} "
                                "running header/footer line(s) repeated on page(s) "
                                f"{page_list(dropped)} dropped (e.g. {examples})", dropped))
    broken = [p.number for p in pages if p.breaks]
    if broken:
        total = sum(p.breaks for p in pages)
        done = (f"{joined} rejoined as one word, {kept} kept as hyphenated compounds"
                if dehyphenate_breaks else "kept as '-' and a line break")
        warnings.append(warning("hyphenation", f"{total} word(s) broken at line ends on "
                                f"page(s) {page_list(broken)}: {done}", broken))
    if not title or title.lower() in ("untitled", "unknown"):
        first = next((t for t in texts if t.strip()), "")
        title = first.strip().splitlines()[0][:100] if first.strip() else ""
    meta = {"format": "pdf", "pages": spans, "extraction": {
        "extractor": f"pypdfium2 {pdfium.version.PYPDFIUM_INFO}", "warnings": warnings,
        "two_column_pages": [p.number for p in pages if p.two_columns],
        "running_lines_dropped": sum(map(len, furniture.values())),
        "dehyphenated": dehyphenate_breaks}}
    return title, "\n\n".join(texts), meta
