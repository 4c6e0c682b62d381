"""Documents from PDF, HTML and DOCX files: one dispatch, and what they carry besides text.

:func:`load_document` reads one file by its suffix (``.pdf`` :mod:`~workbench.corpus.pdf_text`,
``.html``/``.htm`` :mod:`~workbench.corpus.html_text`, ``.docx``
:mod:`~workbench.corpus.docx_text`) into a :class:`~workbench.corpus.types.Document` whose
metadata holds:

* ``source`` (the file) and ``format``;
* ``pages``: ``[{"page", "label", "start", "end"}]`` for PDFs, 1-based physical page numbers
  with the printed label, offsets into ``Document.text``;
* ``headings``: ``[{"start", "level", "text"}]`` for HTML and DOCX (headings are also written
  into the text as markdown ``#`` lines, so the markdown chunker sees the structure);
* ``extraction``: ``{"extractor", "warnings": [{"kind", "pages", "message"}], ...}``. Warning
  kinds (:data:`WARNING_KINDS`): ``no_text_layer`` (a page that is an image, e.g. a scan:
  its text is missing until it is OCR'd), ``reading_order`` (two columns whose text stream
  reads across them), ``hyphenation`` (words broken at line ends, and how they were
  rejoined), ``no_text`` (nothing extracted at all).

:func:`provenance` is what a chunk of such a document records in its metadata: ``pages``
(the pages it spans) and ``heading_path`` (the headings above its start). The chunkers and
the locator call it, so every chunk says where its passage came from.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from workbench.corpus.blocks import warning
from workbench.corpus.types import Document
from workbench.io import WorkbenchError
from workbench.text import normalize_text

__all__ = ["EXTRACTED_SUFFIXES", "WARNING_KINDS", "ExtractionWarning", "extraction_warnings",
           "load_document", "provenance"]

EXTRACTED_SUFFIXES = (".pdf", ".html", ".htm", ".docx")
WARNING_KINDS = ("no_text_layer", "reading_order", "hyphenation", "no_text")


@dataclass(frozen=True)
class ExtractionWarning:
    """One extraction problem of a document: ``kind`` (:data:`WARNING_KINDS`), the 1-based
    ``pages`` it concerns (empty for formats without pages) and a sentence for people."""

    doc_id: str
    kind: str
    message: str
    pages: tuple[int, ...] = ()

    def __str__(self) -> str:
        return f"{self.doc_id}: {self.kind}: {self.message}"


def extraction_warnings(doc: Document) -> list[ExtractionWarning]:
    """The extraction warnings recorded on a document (none for markdown and text files)."""
    info = doc.metadata.get("extraction") or {}
    return [ExtractionWarning(doc.id, str(w["kind"]), str(w["message"]),
                              tuple(int(p) for p in w.get("pages", ())))
            for w in info.get("warnings", ())]


def provenance(doc: Document, start: int, end: int) -> dict[str, Any]:
    """Where ``[start, end)`` of ``doc`` came from: ``{"pages": [...]}`` for a paged document,
    ``{"heading_path": [...]}`` (outermost first) where the document has headings."""
    out: dict[str, Any] = {}
    pages = doc.metadata.get("pages")
    if pages:
        starts = [int(p["start"]) for p in pages]
        first = max(bisect.bisect_right(starts, start) - 1, 0)
        last = max(bisect.bisect_right(starts, max(start, end - 1)) - 1, first)
        out["pages"] = [int(p["page"]) for p in pages[first: last + 1]]
    headings = doc.metadata.get("headings")
    if headings:
        path: list[tuple[int, str]] = []
        for h in headings:
            if int(h["start"]) > start:
                break
            while path and path[-1][0] >= int(h["level"]):
                path.pop()
            path.append((int(h["level"]), str(h["text"])))
        if path:
            out["heading_path"] = [text for _, text in path]
    return out


def load_document(path: str | Path, doc_id: str | None = None) -> Document:
    """Read one PDF, HTML or DOCX file (chosen by suffix) into a Document; the id is the file
    stem unless given. Problems name the file; a missing reader names the extra to install."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in EXTRACTED_SUFFIXES:
        raise WorkbenchError(f"{path}: not a PDF, HTML or DOCX file (suffix {path.suffix!r})")
    if not path.is_file():
        raise WorkbenchError(f"{path}: not a file")
    reader: Callable[[Path], tuple[str, str, dict[str, Any]]]
    if suffix == ".pdf":
        from workbench.corpus.pdf_text import read_pdf as reader
    elif suffix == ".docx":
        from workbench.corpus.docx_text import read_docx as reader
    else:
        from workbench.corpus.html_text import read_html as reader
    title, text, meta = reader(path)
    return _document(doc_id or path.stem, title or path.stem, text, meta, path)


def _document(doc_id: str, title: str, text: str, meta: Mapping[str, Any], path: Path) -> Document:
    """The Document of an extracted file, with the ``no_text`` warning when it is empty.
    Extractors give text in the load-time normal form (their page and heading offsets are
    into it)."""
    if text != normalize_text(text):
        raise AssertionError(f"{path}: extractor returned text not in the normal form")
    meta = {"source": str(path), **meta}
    if not text.strip():
        info = dict(meta.get("extraction") or {})
        info["warnings"] = [*info.get("warnings", ()), warning(
            "no_text", "no text was extracted (an image-only file needs OCR first)")]
        meta["extraction"] = info
    return Document(normalize_text(doc_id), text, normalize_text(title), MappingProxyType(meta))
