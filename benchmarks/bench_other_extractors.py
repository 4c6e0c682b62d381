"""Production chunks made by other extractors, located in the workbench's extraction.

The handbook's files are written as PDF (reportlab), DOCX (python-docx) and HTML, one format
per file in turn (the Vietnamese and Chinese files never as PDF: Helvetica has no glyphs
for them). A production system extracts them with its own tools, as LangChain's loaders do
(pypdf per page, python-docx paragraphs, BeautifulSoup ``get_text``), and splits them with
``RecursiveCharacterTextSplitter(400, 40)``. The workbench loads the same files with its
own extractors (``load_folder``), and each production chunk is located there:

* before: exact and normalised only (``Locator(align=None)``, what the issue measured);
* after: with alignment (the default ``Locator``), counted by method (``LocationReport``);
* as indexed: the corpus loaded from the production documents (``load_documents``), where
  every chunk is found exactly.

Run: ``python benchmarks/bench_other_extractors.py`` (about a minute on 2 cores).
"""

from __future__ import annotations

import html
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "data" / "handbook" / "docs"
FORMATS = ("pdf", "docx", "html")


def blocks(path: Path) -> list[tuple[str, str]]:
    """The body of a handbook file as ``(kind, text)`` blocks: heading, item, row or para."""
    text = re.sub(r"\A---\n.*?\n---\n", "", path.read_text(encoding="utf-8"), flags=re.S)
    out = []
    for block in re.split(r"\n\s*\n", text):
        for line in (block.splitlines() if block.lstrip().startswith(("-", "|", "1."))
                     else [block]):
            line = line.strip()
            if not line or re.fullmatch(r"\|?[\s:|-]+\|?", line):
                continue
            plain = " ".join(re.sub(r"[*`_]", "", line).split())
            if plain.startswith("#"):
                out.append(("heading", plain.lstrip("# ")))
            elif re.match(r"^(-|\d+\.)\s", plain):
                out.append(("item", re.sub(r"^(-|\d+\.)\s+", "", plain)))
            elif plain.startswith("|"):
                out.append(("row", "  ".join(c.strip() for c in plain.strip("|").split("|"))))
            else:
                out.append(("para", plain))
    return out


def write_pdf(path: Path, parts: list[tuple[str, str]]) -> None:
    from reportlab.pdfbase.pdfmetrics import stringWidth
    from reportlab.pdfgen.canvas import Canvas

    width, height = 595.0, 842.0
    canvas = Canvas(str(path), pagesize=(width, height))
    y = height - 72

    def line(text: str, font: str, size: float, x: float = 72) -> None:
        nonlocal y
        if y < 72:
            canvas.showPage()
            y = height - 72
        canvas.setFont(font, size)
        canvas.drawString(x, y, text)
        y -= size * 1.35

    for kind, text in parts:
        font, size = ("Helvetica-Bold", 13) if kind == "heading" else ("Helvetica", 10)
        indent = 84 if kind == "item" else 72
        words, current = text.split(), ""
        for w in words:
            trial = f"{current} {w}".strip()
            if stringWidth(trial, font, size) > width - 72 - indent and current:
                line(current, font, size, indent)
                current = w
            else:
                current = trial
        if current:
            line(("• " if kind == "item" and current == text[:len(current)] else "")
                 + current, font, size, indent)
        y -= 6
    canvas.save()


def write_docx(path: Path, parts: list[tuple[str, str]]) -> None:
    import docx

    d = docx.Document()
    for kind, text in parts:
        if kind == "heading":
            d.add_heading(text, level=2)
        elif kind == "item":
            d.add_paragraph(text, style="List Bullet")
        else:
            d.add_paragraph(text)
    d.save(str(path))


def write_html(path: Path, parts: list[tuple[str, str]]) -> None:
    body = []
    for kind, text in parts:
        tag = {"heading": "h2", "item": "li", "row": "p", "para": "p"}[kind]
        body.append(f"<{tag}>{html.escape(text)}</{tag}>")
    path.write_text("<!doctype html><html><head><meta charset='utf-8'><title>"
                    f"{html.escape(path.stem)}</title></head><body>\n"
                    + "\n".join(body) + "\n</body></html>\n", encoding="utf-8")


def build(folder: Path) -> list[Path]:
    """Each handbook file in one format (in turn; no PDF for vi/zh)."""
    out = []
    for i, md in enumerate(sorted(DOCS.glob("*.md"))):
        fmt = FORMATS[i % 3]
        if fmt == "pdf" and md.stem.startswith(("vi-", "zh-")):
            fmt = "docx"
        path = folder / f"{md.stem}.{fmt}"
        {"pdf": write_pdf, "docx": write_docx, "html": write_html}[fmt](path, blocks(md))
        out.append(path)
    return out


def production_documents(paths: list[Path]) -> list[Any]:
    """The files as LangChain loaders extract them: pypdf per page, python-docx paragraphs
    joined by newlines (Docx2txtLoader-like), BeautifulSoup ``get_text`` (BSHTMLLoader)."""
    import docx
    import pypdf
    from bs4 import BeautifulSoup
    from langchain_core.documents import Document

    out = []
    for path in paths:
        meta = {"source": str(path)}
        if path.suffix == ".pdf":
            for n, page in enumerate(pypdf.PdfReader(str(path)).pages):
                out.append(Document(page.extract_text(), metadata={**meta, "page": n}))
        elif path.suffix == ".docx":
            text = "\n\n".join(p.text for p in docx.Document(str(path)).paragraphs)
            out.append(Document(text, metadata=meta))
        else:
            soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
            out.append(Document(soup.get_text(), metadata=meta))
    return out


def production_splits(documents: list[Any]) -> list[Any]:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(chunk_size=400, chunk_overlap=40,
                                              add_start_index=True)
    return splitter.split_documents(documents)


def measure(folder: Path) -> dict[str, Any]:
    from workbench.corpus import Locator, load_documents, load_folder
    from workbench.retrieval.adapters import chunks_from_documents

    paths = build(folder)
    documents = production_documents(paths)
    splits = production_splits(documents)
    ours = load_folder(folder)
    t0 = time.perf_counter()
    before = chunks_from_documents(splits, Locator(ours, align=None), unlocated="skip")
    t1 = time.perf_counter()
    after = chunks_from_documents(splits, ours, unlocated="skip")
    t2 = time.perf_counter()
    indexed = chunks_from_documents(splits, load_documents(documents), unlocated="skip")
    return {"files": len(paths), "chunks": len(splits), "before": before.report,
            "after": after.report, "as_indexed": indexed.report,
            "seconds": (t1 - t0, t2 - t1)}


def main() -> int:
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory() as tmp:
        got = measure(Path(tmp))
    print(f"{got['files']} handbook files as PDF/DOCX/HTML, {got['chunks']} production chunks "
          "(pypdf / python-docx / BeautifulSoup, RecursiveCharacterTextSplitter 400/40)")
    print(f"in the workbench's extraction, before (exact + normalised, "
          f"{got['seconds'][0]:.1f} s): {got['before'].summary()}")
    print(f"in the workbench's extraction, with alignment ({got['seconds'][1]:.1f} s): "
          f"{got['after'].summary()}")
    print(f"in the production extraction (load_documents): {got['as_indexed'].summary()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
