"""DOCX text in body order: headings as markdown, tables by row, lists as ``- `` items.

Extractor: python-docx (MIT), ``Document.iter_inner_content()``, which yields paragraphs and
tables in the order of the body (``doc.paragraphs`` alone silently skips tables). A
paragraph styled ``Title`` or ``Heading N`` becomes a ``#`` line recorded in
``metadata["headings"]``; ``List ...`` styles become ``- `` items; a table row is one line,
its cells joined by ``" | "`` (a merged cell, which python-docx repeats, is written once);
nested tables are read in place. Page headers and footers are left out (page furniture).
A file whose parts unpack to more than :data:`MAX_UNPACKED_BYTES` is refused before reading
(a zip bomb), and a part that is not well-formed XML is an error naming the file.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any

from workbench.corpus.blocks import TextBuilder
from workbench.io import InputError

__all__ = ["MAX_UNPACKED_BYTES", "read_docx"]

#: The most a DOCX file may unpack to (all its parts together).
MAX_UNPACKED_BYTES = 256_000_000

_HEADING = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)


def _heading_level(style: str) -> int | None:
    if style.lower() == "title":
        return 1
    m = _HEADING.match(style.strip())
    return int(m.group(1)) if m else None


def _table(out: TextBuilder, table: Any) -> None:
    for row in table.rows:
        cells: list[str] = []
        previous = None
        for cell in row.cells:
            if cell._tc is previous:  # a merged cell appears once per grid column
                continue
            previous = cell._tc
            cells.append(" ".join(cell.text.split()))
        if any(cells):
            out.line(" | ".join(cells))
        for cell in row.cells:
            for inner in cell.tables:
                out.end_lines()
                _table(out, inner)
    out.end_lines()


def read_docx(path: Path) -> tuple[str, str, dict[str, Any]]:
    """Title, text and metadata of a DOCX file (see the module doc)."""
    try:
        import docx
        from docx.opc.exceptions import PackageNotFoundError
        from docx.table import Table
    except ImportError:  # pragma: no cover - the documents extra installs it
        raise InputError(str(path), "reading DOCX needs python-docx: pip install "
                         "'workbench[documents]'") from None
    from lxml.etree import XMLSyntaxError

    try:
        with zipfile.ZipFile(path) as zf:
            unpacked = sum(info.file_size for info in zf.infolist())
    except (zipfile.BadZipFile, OSError) as exc:
        raise InputError(str(path), f"cannot be read as a DOCX file ({exc})") from None
    if unpacked > MAX_UNPACKED_BYTES:
        raise InputError(str(path), f"unpacks to {unpacked:,} bytes, over the limit of "
                         f"{MAX_UNPACKED_BYTES:,} for a DOCX file (a zip bomb?); nothing read")
    try:
        document = docx.Document(str(path))
    except (zipfile.BadZipFile, PackageNotFoundError, KeyError, ValueError,
            XMLSyntaxError) as exc:
        reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise InputError(str(path), f"cannot be read as a DOCX file ({reason}); save it "
                         "again from Word or convert it") from None
    out = TextBuilder()
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            _table(out, block)
            continue
        text = block.text
        style = block.style.name if block.style is not None else ""
        level = _heading_level(style or "")
        if level is not None:
            out.heading(text, level)
        elif (style or "").lower().startswith("list"):
            out.line("- " + " ".join(text.split()))
        else:
            out.end_lines()
            out.block(" ".join(text.split()))
    title = (document.core_properties.title or "").strip()
    if not title and out.headings:
        title = out.headings[0]["text"]
    meta = {"format": "docx", "headings": out.headings,
            "extraction": {"extractor": "python-docx", "warnings": []}}
    return title, out.text, meta
