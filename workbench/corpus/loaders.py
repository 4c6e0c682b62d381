"""Loading a corpus: folders of ``.md`` / ``.txt`` files with YAML front matter, PDF / HTML /
DOCX files (:mod:`~workbench.corpus.extract`), documents JSONL and BEIR folders
(``corpus.jsonl``). Every problem names the file (and line) and the
field; ids and text get the one normal form here, once (:func:`~workbench.text.normalize_text`).

Front matter is a YAML mapping between a first line ``---`` and a closing ``---`` or ``...``
(a UTF-8 byte-order mark and blank lines before it are allowed). Its keys are
:data:`~workbench.corpus.admission.HEADER_KEYS`: ``id`` (default: the file stem), ``title``
(default: the first ``# heading``), ``version``, ``effective_date`` (an ISO date),
``status`` (``current`` |
``superseded``), ``superseded_by``, ``acl`` (see :mod:`workbench.corpus.access`) and
``filters`` (filter fields, never access: ``filters: {audience: admin}``). Access
fails closed: a header that cannot be parsed (never closed, not YAML, not a mapping, a key
given twice, TOML ``+++``), an ``acl`` that names no group, or an ``acl:`` line outside a
header refuses the document with an error; it is never loaded as public. A key that is not
known gets a warning naming the closest known key; a near miss of ``acl`` (``ACL``,
``acls``) is read as the ``acl`` it was meant to be, so the document stays restricted, and
a key that names readers under another word (``access``, ``groups``, ``roles``,
``audience``, ...: :func:`~workbench.corpus.access.access_like`) is refused; ``audience`` as a
filter is declared under ``filters``, where an access word is still refused
(:func:`~workbench.corpus.access.filter_fields`). Keys are compared after folding
(:func:`~workbench.corpus.access.fold_key`: NFKC, Cyrillic/Greek lookalikes, casefold), so
``асl`` or ``ａｃｌ`` count as ``acl``.

Every document goes through the one door, :func:`~workbench.corpus.admission.admit`, with
every declaration it carries (front matter, sidecar, ``<meta>`` tags, properties, JSONL
metadata, each page, node or turn); the key rules above are the door's.

Deny by default. Line ends are read as ``\n`` whatever they were (CR, CRLF, NEL, U+2028).
Any line of a file that looks like a key (``key:``, ``"key":``, ``key =``) whose key folds to
an access word (:data:`~workbench.corpus.access.ACCESS_WORDS`) and was not read as the
header's ``acl`` refuses the document with its file and line (a JSON header, a second
header, ``acl:`` after a preface, a nested ``acl``). When any document of a corpus declares
``acl`` (or ``access="required"`` is given), every document must declare it (``acl:
public`` for public ones); a document without one is refused, never public. A PDF, HTML or
DOCX file, in a folder or given alone, declares access in a sidecar ``NAME.meta.yaml`` (the
same keys as front matter; a file that looks like a sidecar under another name is refused);
an HTML file may instead carry ``<meta name="acl" content="finance, managers">``, read with
``html.parser`` (:mod:`~workbench.corpus.extract`).
In documents JSONL, the access key is ``metadata.acl``; any other key at any depth that
names readers (``"acl"`` at the top, ``"Metadata"``, ``"meta"``,
``metadata.metadata.acl``, ``"groups"``, ``"restricted_to"``) refuses the line.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from workbench.corpus.admission import (
    HEADER_KEYS,
    Declaration,
    FrontMatterWarning,
    admit,
    closest_key,
    refuse_unread_access,
    require_access,
)
from workbench.corpus.conversations import load_conversations
from workbench.corpus.extract import (
    EXTRACTED_SUFFIXES,
    admit_file,
    load_document,
    refuse_lookalike_sidecars,
)
from workbench.corpus.headers import (
    normal_line_ends,
    parse_header,
    split_header,
    unread_access_lines,
)
from workbench.corpus.production import DocIdRule, extracted_documents
from workbench.corpus.types import Corpus, Document
from workbench.io import InputError, iter_jsonl, read_text

__all__ = ["load_corpus", "load_documents", "load_folder", "load_jsonl"]

def _load_file(path: Path, unknown: dict[str, list[str]]) -> Document:
    raw = normal_line_ends(read_text(path, "document"))
    header, line0, body = split_header(raw, path)
    meta: dict[str, Any] = {}
    lines: dict[str, int] = {}
    if header is not None:
        meta, lines = parse_header(header, line0, path)
    unread_access_lines(raw, path, set(lines.values()))
    where_id = f"{path}:{lines['id']}" if "id" in lines else str(path)
    doc_id = meta.pop("id") if "id" in meta else path.stem
    title = meta.pop("title", "")
    if not title:
        heading = re.search(r"^#\s+(.+)$", body, re.MULTILINE)
        title = heading.group(1).strip() if heading else path.stem
    at = {key: f"{path}:{n}" for key, n in lines.items()}
    return admit(doc_id, body, title, [Declaration(meta, str(path), at)], where=where_id,
                 unknown=unknown, source=str(path))


def _warn_unknown(unknown: dict[str, list[str]]) -> None:
    for key, files in unknown.items():
        closest = closest_key(key)
        hint = (f"the closest known key is {closest!r}" if closest
                else f"known keys: {', '.join(HEADER_KEYS)}")
        shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
        warnings.warn(f"front-matter key {key!r} is not known ({shown}); {hint}. It is kept "
                      "in Document.metadata", FrontMatterWarning, stacklevel=3)


def load_folder(folder: str | Path, access: str = "auto") -> Corpus:
    """Load every ``*.md`` / ``*.txt`` file under ``folder`` (sorted by path; see the module
    docstring for the front matter), and every PDF, HTML and DOCX file through
    :func:`~workbench.corpus.extract.load_document` (with its sidecar ``NAME.meta.yaml``; a
    file that looks like a sidecar under another name is refused). A folder named like a
    document is an error. ``access="required"`` makes an ``acl`` mandatory on every
    document; by default (``auto``) it is mandatory once one document has one."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(str(folder), "not a folder of .md/.txt documents; check the path")
    every = sorted(folder.rglob("*"))
    paths = [p for p in every if p.suffix in (".md", ".txt")
             or p.suffix.lower() in EXTRACTED_SUFFIXES]
    unknown: dict[str, list[str]] = {}
    docs = []
    file_of: dict[str, Path] = {}
    for path in paths:
        if path.is_dir():
            raise InputError(str(path), "is a folder named like a document; rename it (its "
                             "files are read either way)")
    refuse_lookalike_sidecars(every, paths)
    for path in paths:
        extracted = path.suffix.lower() in EXTRACTED_SUFFIXES
        doc = (admit_file(path, unknown=unknown) if extracted
               else _load_file(path, unknown))
        first = file_of.setdefault(doc.id, path)
        if first != path:
            fix = ("give one of them its own 'id:' in its front matter, or rename one"
                   if not extracted or first.suffix in (".md", ".txt") else "rename one")
            raise InputError(str(path), f"duplicate document id {doc.id!r}: {first} has it "
                             f"too; {fix}", field="id")
        docs.append(doc)
    if not docs:
        raise InputError(str(folder), "no .md, .txt, .pdf, .html or .docx files found")
    require_access(docs, lambda d: str(file_of[d.id]), access, str(folder))
    _warn_unknown(unknown)
    return Corpus(docs, source=str(folder))


def _metadata(metadata: Any, where: str) -> Declaration:
    """A record's ``metadata`` as a declaration (an object, or absent)."""
    if not isinstance(metadata or {}, dict):
        raise InputError(where, "must be an object", field="metadata")
    return Declaration(dict(metadata or {}), where, prefix="metadata.")


def _record(doc_id: Any, text: Any, title: Any, declared: list[Declaration], where: str,
            header: bool = False) -> Document:
    """One document record (a JSONL line, a production system's document of one or many
    parts) through the door. With ``header=True`` the text is another system's extraction
    of a file, kept as it is: a front-matter header at its top is one more declaration (the
    metadata wins for other keys; a different ``acl`` is refused) and an access-like line
    elsewhere refuses the document."""
    if header and isinstance(text, str):
        raw = normal_line_ends(text)
        block, line0, _ = split_header(raw, Path(where))
        found, lines = parse_header(block, line0, Path(where)) if block is not None else ({}, {})
        unread_access_lines(raw, Path(where), set(lines.values()))
        found.pop("id", None)
        declared = [*declared, Declaration(found, where)]
    return admit(doc_id, text, title, declared, where=where)


def load_documents(docs: Iterable[Any], *, doc_id: DocIdRule = None, access: str = "auto",
                   source: str = "the documents given",
                   where: Sequence[str] | None = None) -> Corpus:
    """A corpus of documents as a production system extracted them (LangChain
    ``Document``s, LlamaIndex ``Document``s or nodes, ``{"doc_id", "text", "metadata"}``
    records: :mod:`~workbench.corpus.production`), the text kept as it was indexed; every
    part's metadata goes through the door (parts that disagree about access refuse the
    document) and a front-matter header at the top of the text is read as a file's;
    ``access`` as in :func:`load_folder`."""
    records = extracted_documents(docs, doc_id, where, source)
    if not records:
        raise InputError(source, "no documents given")
    out = [_record(r.doc_id, r.text, r.title, [_metadata(meta, at) for at, meta in r.parts],
                   r.where, header=True)
           for r in records]
    where_of = {d.id: r.where for d, r in zip(out, records, strict=True)}
    require_access(out, lambda d: where_of[d.id], access, source)
    return Corpus(out, source=source)


def load_jsonl(path: str | Path, access: str = "auto") -> Corpus:
    """Load documents from JSONL: one ``{"id", "text", "title"?, "metadata"?}`` per line;
    ``metadata`` goes through the door as front matter does, any other key that names
    readers refuses the line, and ``access`` is as in :func:`load_folder`. Lines
    ``{"doc_id", "text", "metadata"}`` are a production system's extraction
    (:func:`load_documents`: pages of one document joined, the text kept as it was
    indexed)."""
    rows = list(iter_jsonl(path, "documents JSONL"))
    for where, row in rows:
        if not isinstance(row, dict):
            raise InputError(where, "each line must be a JSON object {\"id\", \"text\"}")
    if rows and "doc_id" in rows[0][1] and "id" not in rows[0][1]:
        return load_documents([row for _, row in rows], access=access, source=str(path),
                              where=[where for where, _ in rows])
    docs = []
    line_of: dict[str, str] = {}
    for where, row in rows:
        refuse_unread_access({k: v for k, v in row.items() if k != "metadata"}, where)
        doc_id = row.get("id", row.get("_id"))
        docs.append(_record(doc_id, row.get("text"), row.get("title", ""),
                            [_metadata(row.get("metadata"), where)], where))
        line_of.setdefault(docs[-1].id, where)
    require_access(docs, lambda d: line_of[d.id], access, str(path))
    return Corpus(docs, source=str(path))


def load_corpus(path: str | Path, access: str = "auto") -> Corpus:
    """Load a folder of .md/.txt files, a documents JSONL, a conversations JSONL (one turn
    per line with a ``speaker`` and no ``id``:
    :func:`~workbench.corpus.conversations.load_conversations`), a BEIR folder
    (corpus.jsonl), or one PDF / HTML / DOCX file (with its sidecar, through the same door);
    ``access`` as in :func:`load_folder`."""
    path = Path(path)
    if path.is_dir() and (path / "corpus.jsonl").exists():
        return load_jsonl(path / "corpus.jsonl", access)
    if path.is_dir():
        return load_folder(path, access)
    if path.suffix == ".jsonl":
        first = next(iter_jsonl(path, "documents JSONL"), (str(path), None))[1]
        if isinstance(first, dict) and "speaker" in first and "id" not in first:
            return load_conversations(path, access)  # one turn per line: chat logs, tickets
        return load_jsonl(path, access)
    if not path.exists():
        raise InputError(str(path), "corpus not found; give a folder of documents, a .jsonl of "
                         "documents or one .pdf/.html/.docx file")
    if path.suffix.lower() in EXTRACTED_SUFFIXES:
        unknown: dict[str, list[str]] = {}
        docs = [load_document(path, unknown=unknown)]
        require_access(docs, lambda _d: str(path), access, str(path))
        _warn_unknown(unknown)
        return Corpus(docs, source=str(path))
    raise InputError(str(path), "expected a folder of documents, a .jsonl of documents or one "
                     ".pdf/.html/.docx file")
