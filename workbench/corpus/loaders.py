"""Loading a corpus: folders of ``.md`` / ``.txt`` files (YAML front matter for id, title,
version, effective_date, status, acl, ...) and PDF / HTML / DOCX files
(:mod:`~workbench.corpus.extract`), documents JSONL and BEIR folders
(``corpus.jsonl``). Every problem names the file (and line) and the field; ids and text are
NFC-normalised here, once."""

from __future__ import annotations

import re
from pathlib import Path
from types import MappingProxyType
from typing import Any

from workbench.corpus.extract import EXTRACTED_SUFFIXES, load_document
from workbench.corpus.types import Corpus, Document
from workbench.io import iter_jsonl
from workbench.text import nfc

__all__ = ["load_corpus", "load_folder", "load_jsonl"]

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*\n", re.DOTALL)


def _parse_front_matter(raw: str, path: Path) -> tuple[dict[str, Any], str]:
    import yaml

    match = _FRONT_MATTER.match(raw)
    if not match:
        return {}, raw
    try:
        meta = yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: front matter is not valid YAML ({exc}); fix the header")\
            from None
    if not isinstance(meta, dict):
        raise ValueError(f"{path}: front matter must be a mapping of key: value lines")
    return meta, raw[match.end() :]


def _document(doc_id: Any, text: Any, title: Any, meta: dict[str, Any], where: str) -> Document:
    if not isinstance(doc_id, str) or not doc_id.strip():
        raise ValueError(f"{where}: field 'id' must be a non-empty string")
    if not isinstance(text, str):
        raise ValueError(f"{where}: field 'text' must be a string")
    meta = {k: (str(v) if k == "effective_date" else v) for k, v in meta.items()}
    return Document(nfc(doc_id), nfc(text), nfc(str(title or "")), MappingProxyType(meta))


def load_folder(folder: str | Path) -> Corpus:
    """Load every ``*.md`` / ``*.txt`` file under ``folder`` (sorted by path), and every PDF,
    HTML and DOCX file through :func:`~workbench.corpus.extract.load_document`.

    Optional YAML front matter sets id, title, version, effective_date, status, acl, ...;
    without an id the file stem is used; without a title, the first ``# heading``.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"{folder}: not a folder of .md/.txt documents")
    docs = []
    for path in sorted(p for p in folder.rglob("*") if p.suffix in (".md", ".txt")
                       or p.suffix.lower() in EXTRACTED_SUFFIXES):
        if path.suffix.lower() in EXTRACTED_SUFFIXES:
            docs.append(load_document(path))
            continue
        raw = path.read_text(encoding="utf-8").replace("\r\n", "\n")
        meta, body = _parse_front_matter(raw, path)
        doc_id = meta.pop("id", path.stem)
        title = meta.pop("title", "")
        if not title:
            heading = re.search(r"^#\s+(.+)$", body, re.MULTILINE)
            title = heading.group(1).strip() if heading else path.stem
        docs.append(_document(str(doc_id), body, title, meta, str(path)))
    if not docs:
        raise ValueError(f"{folder}: no .md, .txt, .pdf, .html or .docx files found")
    return Corpus(docs, source=str(folder))


def load_jsonl(path: str | Path) -> Corpus:
    """Load documents from JSONL: one ``{"id", "text", "title"?, "metadata"?}`` per line."""
    docs = []
    for where, row in iter_jsonl(path):
        if not isinstance(row, dict):
            raise ValueError(f"{where}: each line must be a JSON object")
        meta = row.get("metadata") or {}
        if not isinstance(meta, dict):
            raise ValueError(f"{where}: field 'metadata' must be an object")
        doc_id = row.get("id", row.get("_id"))
        docs.append(_document(doc_id, row.get("text"), row.get("title", ""), dict(meta), where))
    return Corpus(docs, source=str(path))


def load_corpus(path: str | Path) -> Corpus:
    """Load a folder of .md/.txt files, a documents JSONL, or a BEIR folder (corpus.jsonl)."""
    path = Path(path)
    if path.is_dir() and (path / "corpus.jsonl").exists():
        return load_jsonl(path / "corpus.jsonl")
    if path.is_dir():
        return load_folder(path)
    if path.suffix == ".jsonl":
        return load_jsonl(path)
    if path.suffix.lower() in EXTRACTED_SUFFIXES:
        return Corpus([load_document(path)], source=str(path))
    raise ValueError(f"{path}: expected a folder of documents, a .jsonl of documents or one "
                     ".pdf/.html/.docx file")
