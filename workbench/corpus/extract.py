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

Access: the file's declarations go through the door (:func:`~workbench.corpus.admission.admit`)
with the extractor's findings as facts: the sidecar ``NAME.meta.yaml`` beside the file (the
one sidecar name: :func:`sidecar_of`; a file that looks like a sidecar under any other name,
``NAME.meta.yml``, ``NAME.html.meta.yaml``, ``Name.META.YAML``, ``NAME.yaml``, is refused,
never ignored: :func:`refuse_lookalike_sidecars`), an HTML file's ``<meta>`` tags
(:func:`~workbench.corpus.html_text.html_access`) and a DOCX file's properties
(:func:`~workbench.corpus.docx_text.docx_access`).

:func:`provenance` is what a chunk of such a document records in its metadata: ``pages``
(the pages it spans) and ``heading_path`` (the headings above its start). The chunkers and
the locator call it, so every chunk says where its passage came from.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.corpus.admission import Declaration, admit
from workbench.corpus.blocks import warning
from workbench.corpus.docx_text import docx_access
from workbench.corpus.headers import normal_line_ends, parse_header, unread_access_lines
from workbench.corpus.html_text import html_access
from workbench.corpus.types import Document
from workbench.io import InputError, WorkbenchError, read_text
from workbench.text import normalize_text

__all__ = ["EXTRACTED_SUFFIXES", "SIDECAR_SUFFIX", "WARNING_KINDS", "ExtractionWarning",
           "admit_file", "extraction_warnings", "load_document", "looks_like_sidecar",
           "provenance",
           "refuse_lookalike_sidecars", "sidecar_of"]

EXTRACTED_SUFFIXES = (".pdf", ".html", ".htm", ".docx")
#: The one sidecar name: ``NAME.meta.yaml`` beside ``NAME.pdf`` / ``.html`` / ``.docx``.
SIDECAR_SUFFIX = ".meta.yaml"
_DATA_SUFFIXES = ("yaml", "yml", "json", "toml", "meta", "metadata")
_SEPARATORS = re.compile(r"[.\s_\-]+")
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


def sidecar_of(path: Path) -> Path:
    """The one sidecar name of an extracted file: ``NAME.meta.yaml`` beside ``NAME.pdf``."""
    return path.with_name(f"{path.stem}{SIDECAR_SUFFIX}")


def _folded(name: str) -> list[str]:
    return [p for p in _SEPARATORS.split(unicodedata.normalize("NFKC", name).casefold()) if p]


def looks_like_sidecar(name: str, stems: Iterable[str] = ()) -> bool:
    """True when a file name looks like a sidecar: ``meta`` or ``metadata`` after a first
    part and a data suffix (``NAME.meta.yml``, ``NAME.html.meta.yaml``, ``Name.META.YAML``,
    ``NAME_meta.json``), or one of the ``stems`` of the documents beside it with a data
    suffix (``NAME.yaml``, ``NAME.pdf.yml``); compared after NFKC and case folding."""
    parts = _folded(name)
    if len(parts) < 2 or parts[-1] not in _DATA_SUFFIXES:
        return False
    folded_stems = {"".join(_folded(s)) for s in stems}
    return (any(p in ("meta", "metadata") for p in parts[1:])
            or "".join(parts[:-1]) in folded_stems
            or (len(parts) > 2 and "".join(parts[:-2]) in folded_stems))


def refuse_lookalike_sidecars(files: Iterable[Path], documents: Iterable[Path]) -> None:
    """Refuse a file among ``files`` that looks like a sidecar (:func:`looks_like_sidecar`,
    against the stems of ``documents`` in its folder) but is not the sidecar of an extracted
    document there: it would otherwise be ignored, and the access it declares dropped."""
    documents = list(documents)
    claimed = {sidecar_of(d) for d in documents if d.suffix.lower() in EXTRACTED_SUFFIXES}
    for file in files:
        if file in claimed or file.suffix.lower() in (".md", ".txt") or not file.is_file():
            continue
        near = [d for d in documents if d.parent == file.parent]
        if not looks_like_sidecar(file.name, [d.stem for d in near] + [d.name for d in near]):
            continue
        name = "".join(_folded(file.name))
        match = max((d for d in near if name.startswith("".join(_folded(d.stem)))),
                    key=lambda d: len(d.stem), default=None)
        fix = (f"name it exactly {sidecar_of(match).name} (beside {match.name})"
               if match is not None and match.suffix.lower() in EXTRACTED_SUFFIXES else
               f"{match.name} declares access in its front matter" if match is not None else
               "name it NAME.meta.yaml beside NAME.pdf / .html / .docx")
        raise InputError(str(file), "looks like a sidecar but is not named as one, so its "
                         f"access would be ignored: the one sidecar name is NAME{SIDECAR_SUFFIX}"
                         f"; {fix}, or move it out of the corpus")


def _sidecar(side: Path) -> tuple[Declaration, str | None]:
    """The declaration of a sidecar and the title it gives."""
    text = normal_line_ends(read_text(side, "sidecar"))
    meta, lines = parse_header(text, 1, side)
    unread_access_lines(text, side, set(lines.values()))
    meta.pop("id", None)
    title = meta.pop("title", None)
    return (Declaration(meta, str(side), {k: f"{side}:{n}" for k, n in lines.items()}),
            None if title is None else str(title))


def _in_file(path: Path, meta: dict[str, Any]) -> list[Declaration]:
    """What an HTML file's ``<meta>`` tags or a DOCX file's properties declare."""
    suffix = path.suffix.lower()
    if suffix in (".html", ".htm"):
        return [Declaration({name: content}, f"{path}:{line}")
                for name, content, line in html_access(path)]
    if suffix == ".docx":
        found = docx_access(meta.get("properties"), path)
        return [Declaration(found, str(path))] if found else []
    return []


def load_document(path: str | Path, doc_id: str | None = None, *,
                  unknown: dict[str, list[str]] | None = None) -> Document:
    """Read one PDF, HTML or DOCX file (chosen by suffix) into a Document through the door,
    with the access its sidecar, ``<meta>`` tags or properties declare (see the module doc;
    a look-alike sidecar beside it is refused); the id is the file stem unless given.
    Problems name the file; a missing reader names the extra to install. ``unknown``
    collects unknown sidecar keys (:func:`~workbench.corpus.admission.admit`)."""
    path = Path(path)
    if path.parent.is_dir():
        beside = list(path.parent.iterdir())
        stem = "".join(_folded(path.stem))
        refuse_lookalike_sidecars(
            (p for p in beside if "".join(_folded(p.name)).startswith(stem)),
            [p for p in beside if p.suffix.lower() in (*EXTRACTED_SUFFIXES, ".md", ".txt")])
    return admit_file(path, doc_id, unknown=unknown)


def admit_file(path: Path, doc_id: str | None = None, *,
               unknown: dict[str, list[str]] | None = None) -> Document:
    """:func:`load_document` for a file whose folder was checked for look-alike sidecars
    (:func:`refuse_lookalike_sidecars`, as :func:`~workbench.corpus.loaders.load_folder`
    does once for the whole folder)."""
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
    if text != normalize_text(text):
        raise AssertionError(f"{path}: extractor returned text not in the normal form")
    facts = {"source": str(path), **meta}
    if not text.strip():
        info = dict(facts.get("extraction") or {})
        info["warnings"] = [*info.get("warnings", ()), warning(
            "no_text", "no text was extracted (an image-only file needs OCR first)")]
        facts["extraction"] = info
    declared = _in_file(path, facts)
    side = sidecar_of(path)
    if side.is_file():
        sidecar, given = _sidecar(side)
        title = given or title
        declared.append(sidecar)
    return admit(doc_id or path.stem, text, title or path.stem, declared, where=str(path),
                 facts=facts, unknown=unknown, source=str(side))
