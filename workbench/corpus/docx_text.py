"""DOCX text in body order: headings as markdown, tables by row, lists as ``- `` items.

Extractor: python-docx (MIT), ``Document.iter_inner_content()``, which yields paragraphs and
tables in the order of the body (``doc.paragraphs`` alone silently skips tables). A
paragraph styled ``Title`` or ``Heading N`` becomes a ``#`` line recorded in
``metadata["headings"]``; ``List ...`` styles become ``- `` items; a table row is one line,
its cells joined by ``" | "`` (a merged cell, which python-docx repeats, is written once);
nested tables are read in place. Page headers and footers are left out (page furniture).
A file whose parts unpack to more than :data:`MAX_UNPACKED_BYTES` is refused before reading
(a zip bomb), and a part that is not well-formed XML is an error naming the file.

Access (deny by default, :func:`docx_access`): the text-valued core properties (keywords,
category, subject, content status, comments, ...) and custom properties are kept in
``metadata["properties"]``. One of them may declare the readers as ``acl: finance,
managers`` (a custom property named ``acl``: the groups alone). Any other property line
``WORD: ...`` or custom property whose name says access or a restriction
(:func:`~workbench.corpus.access.access_like`: ``groups``, ``Classification``,
``restricted_to``, ...), and any access word or sensitivity label
(``Confidential``) in a labelling property (keywords, category, content status, custom
properties), refuses the document, naming the property: it cannot be read as readers, and
the document must never load as public.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any

from workbench.corpus.access import access_like, access_word, fold_key, parse_acl
from workbench.corpus.blocks import TextBuilder
from workbench.io import InputError

__all__ = ["CORE_PROPERTIES", "LABEL_PROPERTIES", "MAX_UNPACKED_BYTES", "SENSITIVITY_WORDS",
           "docx_access", "read_docx"]

#: The text-valued DOCX core properties (python-docx's names) read for access.
CORE_PROPERTIES = ("author", "category", "comments", "content_status", "identifier",
                   "keywords", "language", "last_modified_by", "subject", "title", "version")
#: The properties that label a document (any access or sensitivity word in them refuses it);
#: in the others (title, subject, comments, ...) only an ``access-word: ...`` line does.
LABEL_PROPERTIES = ("category", "content_status", "keywords")
#: Labels that say a document is not for everyone; in a property, they refuse the document
#: unless it declares its readers (``acl: ...``).
SENSITIVITY_WORDS = ("confidential", "restricted", "internal", "private", "secret",
                     "sensitive", "classified")
_CUSTOM = re.compile(r"<(?:\w+:)?property\b[^>]*\bname\s*=\s*[\"']([^\"']*)[\"'][^>]*>(.*?)"
                     r"</(?:\w+:)?property>", re.S)
_TAGS = re.compile(r"<[^>]*>")
_DECLARED = re.compile(r"^\s*([^:=]{1,40}?)\s*[:=]\s*(.*?)\s*$", re.S)

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
            custom = (zf.read("docProps/custom.xml").decode("utf-8", "replace")
                      if "docProps/custom.xml" in zf.namelist()
                      and unpacked <= MAX_UNPACKED_BYTES else "")
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
    props = document.core_properties
    properties = {name: " ".join(str(getattr(props, name) or "").split())
                  for name in CORE_PROPERTIES}
    for name, value in _CUSTOM.findall(custom):
        properties[f"custom:{name}"] = " ".join(_TAGS.sub(" ", value).split())
    meta = {"format": "docx", "headings": out.headings,
            "properties": {k: v for k, v in properties.items() if v},
            "extraction": {"extractor": "python-docx", "warnings": []}}
    return title, out.text, meta


def docx_access(properties: Any, path: Path) -> dict[str, Any]:
    """``{"acl": groups}`` from the one property that reads ``acl: group, ...`` (a custom
    property named ``acl`` holds the groups alone), else ``{}``; a property that names access
    any other way, or a second declaration, raises :class:`InputError` naming the file and
    the property (see the module doc)."""
    found: dict[str, Any] = {}
    for name, value in dict(properties or {}).items():
        key, groups = (name[len("custom:"):], value) if name.startswith("custom:") else (
            None, value)
        declared = _DECLARED.match(value) if key is None else None
        if declared is not None and access_like(declared[1]):
            key, groups = declared[1], declared[2]
        if key is not None and key.strip().casefold() == "acl" and "acl" not in found:
            found["acl"] = parse_acl(groups, str(path), field=name)
            continue
        words = [w for w in re.split(r"[\W_]+", f"{key or ''} {value}") if w]
        label = name in LABEL_PROPERTIES or name.startswith("custom:")
        if (key is not None and access_like(key)) or (label and any(
                access_word(w) is not None or fold_key(w) in SENSITIVITY_WORDS for w in words)):
            raise InputError(str(path), f"DOCX property {name!r} ({value[:60]!r}) looks like "
                             "access information that is not read as readers, so the document "
                             "is refused rather than loaded as public: write the readers as "
                             "'acl: group, ...' in one property, or in a sidecar "
                             f"{path.stem}.meta.yaml ('acl: public' for everyone)", field=name)
    return found
