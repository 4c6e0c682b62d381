"""Loading a corpus: folders of ``.md`` / ``.txt`` files with YAML front matter, PDF / HTML /
DOCX files (:mod:`~workbench.corpus.extract`), documents JSONL and BEIR folders
(``corpus.jsonl``). Every problem names the file (and line) and the
field; ids and text get the one normal form here, once (:func:`~workbench.text.normalize_text`).

Front matter is a YAML mapping between a first line ``---`` and a closing ``---`` or ``...``
(a UTF-8 byte-order mark and blank lines before it are allowed). Its keys are
:data:`HEADER_KEYS`: ``id`` (default: the file stem), ``title`` (default: the first
``# heading``), ``version``, ``effective_date`` (an ISO date), ``status`` (``current`` |
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

Deny by default. Line ends are read as ``\n`` whatever they were (CR, CRLF, NEL, U+2028).
Any line of a file that looks like a key (``key:``, ``"key":``, ``key =``) whose key folds to
an access word (:data:`~workbench.corpus.access.ACCESS_WORDS`) and was not read as the
header's ``acl`` refuses the document with its file and line (a JSON header, a second
header, ``acl:`` after a preface, a nested ``acl``). When any document of a corpus declares
``acl`` (or ``access="required"`` is given), every document must declare it (``acl:
public`` for public ones); a document without one is refused, never public. A PDF, HTML or
DOCX file declares access in a sidecar ``NAME.meta.yaml`` (the same keys as front matter);
an HTML file may instead carry ``<meta name="acl" content="finance, managers">``.
In documents JSONL, the access key is ``metadata.acl``; any other key at any depth that
folds to an access word (``"acl"`` at the top, ``"Metadata"``, ``"meta"``,
``metadata.metadata.acl``, ``"groups"``) refuses the line.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from workbench.corpus.access import (
    FILTERS_KEY,
    access_like,
    access_word,
    filter_fields,
    fold_key,
    parse_acl,
)
from workbench.corpus.conversations import load_conversations
from workbench.corpus.docx_text import docx_access
from workbench.corpus.extract import EXTRACTED_SUFFIXES, load_document
from workbench.corpus.production import DocIdRule, extracted_documents
from workbench.corpus.types import Corpus, Document
from workbench.io import InputError, WorkbenchWarning, iter_jsonl, read_text
from workbench.text import normalize_text

__all__ = ["HEADER_KEYS", "LIBRARY_KEYS", "STATUSES", "FrontMatterWarning", "checked_document",
           "load_corpus", "load_documents", "load_folder", "load_jsonl", "require_access"]

HEADER_KEYS = ("id", "title", "version", "effective_date", "status", "superseded_by", "acl",
               FILTERS_KEY)
STATUSES = ("current", "superseded")
_ACL_LINE = re.compile(r"^\s*acls?\s*:", re.IGNORECASE)
#: A line that looks like a key: ``key:``, ``- key:``, ``{"key":``, ``key =``, and a quoted
#: ``"key":`` anywhere in a line (JSON).
_KEY_LINE = re.compile(r"^\s*[^\w\s]{0,3}\s*[\"']?(?P<key>[^\s:=\"'{}\[\]]{2,40})[\"']?\s*[:=]")
_QUOTED_KEY = re.compile(r"[\"'](?P<key>[^\s\"']{2,40})[\"']\s*:")
_LINE_ENDS = re.compile(r"\r\n?|[\x85\u2028\u2029\x0b\x0c]")
#: Keys that document loaders of other libraries write and that name no readers, although
#: they hold an access word (LlamaIndex's SimpleDirectoryReader writes ``last_accessed_date``).
LIBRARY_KEYS = ("last_accessed_date",)
#: Which documents must declare access: ``auto`` (all of them once one does) or
#: ``required`` (all of them).
ACCESS_MODES = ("auto", "required")


class FrontMatterWarning(WorkbenchWarning):
    """A front-matter key the workbench does not know (kept in ``Document.metadata``)."""


def _header_loader() -> type:
    import yaml

    class HeaderLoader(yaml.SafeLoader):
        """SafeLoader that keeps dates as text (validated here, with the file and line)."""

    HeaderLoader.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
    return HeaderLoader


def _split_header(raw: str, path: Path) -> tuple[str | None, int, str]:
    """``(header YAML or None, line number of its first line, body)``."""
    lines = raw.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        return None, 0, raw
    opener = lines[first].strip()
    if opener == "+++":
        raise InputError(f"{path}:{first + 1}", "TOML front matter (+++) is not read; write "
                         "the header as YAML between '---' lines")
    if opener != "---":
        for n, line in enumerate(lines[:12], start=1):
            if _ACL_LINE.match(line):
                raise InputError(f"{path}:{n}", "an 'acl:' line outside a front-matter "
                                 "header would make this document public; put the header "
                                 "between '---' lines at the top", field="acl")
        return None, 0, raw
    close = next((i for i in range(first + 1, len(lines))
                  if lines[i].rstrip() in ("---", "...")), None)
    if close is None:
        raise InputError(f"{path}:{first + 1}", "front matter opened here is never closed; "
                         "end it with a line '---' (or '...')")
    return "\n".join(lines[first + 1:close]), first + 2, "\n".join(lines[close + 1:])


#: The most values a front-matter header may expand to (YAML aliases included).
MAX_HEADER_VALUES = 10_000


def _expanded_size(node: Any, memo: dict[int, int]) -> int:
    """How many values ``node`` stands for once its aliases are expanded (each shared node
    counted once per use, computed once)."""
    key = id(node)
    if key not in memo:
        memo[key] = MAX_HEADER_VALUES + 1  # a node met again while counting: a cycle
        children = node.value if isinstance(node.value, list) else []
        flat = [c for pair in children for c in (pair if isinstance(pair, tuple) else (pair,))]
        memo[key] = min(1 + sum(_expanded_size(c, memo) for c in flat), MAX_HEADER_VALUES + 1)
    return memo[key]


def _parse_header(text: str, line0: int, path: Path) -> tuple[dict[str, Any], dict[str, int]]:
    """The header's keys and values, and the line of each key; every problem names
    ``file:line``."""
    import yaml

    meta: dict[str, Any] = {}
    lines: dict[str, int] = {}
    try:  # the loader reads (and may refuse, ReaderError) the text as it is created
        loader = _header_loader()(text)
    except yaml.YAMLError as exc:
        char = getattr(exc, "character", None)
        code = ord(char) if isinstance(char, str) and len(char) == 1 else char
        shown = f"character {code:#06x}" if isinstance(code, int) else "a character"
        line = line0 + text.count("\n", 0, getattr(exc, "position", 0) or 0)
        raise InputError(f"{path}:{line}", f"front matter holds {shown}, which YAML does not "
                         "allow (a control character); remove it from the header") from None
    try:
        node = loader.get_single_node()
        if node is None:
            return meta, lines
        if not isinstance(node, yaml.MappingNode):
            raise InputError(f"{path}:{line0}", "front matter must be 'key: value' lines")
        if _expanded_size(node, {}) > MAX_HEADER_VALUES:
            raise InputError(f"{path}:{line0}", f"front matter expands to over "
                             f"{MAX_HEADER_VALUES:,} values (YAML aliases repeating aliases); "
                             "write the values out")
        for key_node, value_node in node.value:
            line = line0 + key_node.start_mark.line
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, str):
                raise InputError(f"{path}:{line}", f"front-matter key {key!r} is not a name")
            if key in meta:
                raise InputError(f"{path}:{line}", f"given twice (first on line {lines[key]});"
                                 " keep one", field=key)
            meta[key] = loader.construct_object(value_node, deep=True)
            lines[key] = line
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f"{path}:{line0 + mark.line}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(where, f"front matter is not valid YAML ({problem}); fix the header")\
            from None
    except RecursionError:
        raise InputError(f"{path}:{line0}", "front matter nested too deeply to read") from None
    finally:
        loader.dispose()
    return meta, lines


def _closest(key: str) -> str | None:
    found = difflib.get_close_matches(key.casefold(), HEADER_KEYS, n=1, cutoff=0.6)
    return found[0] if found else None


def _known_keys(meta: dict[str, Any], at: Callable[[str], str], prefix: str,
                unknown: dict[str, list[str]] | None, source: str) -> tuple[dict[str, Any], str]:
    """``meta`` with a near miss of ``acl`` (``ACL``, ``acls``) read as ``acl`` and other
    access-like keys refused, and the key the ``acl`` came from. Other unknown keys are kept
    and, when ``unknown`` is given, collected there (key -> ``source`` files) for one warning
    per key."""
    out: dict[str, Any] = {}
    acl_from = "acl"
    for key, value in meta.items():
        if key in HEADER_KEYS or key in LIBRARY_KEYS:
            out[key] = value
            continue
        closest = _closest(key)
        where = at(key)
        folded = fold_key(key)
        if closest == "acl" or "acl" in folded:
            if "acl" in meta or "acl" in out:
                raise InputError(where, f"{key!r} and 'acl' both name readers; keep 'acl'",
                                 field=f"{prefix}{key}")
            warnings.warn(f"{where}: field {prefix + key!r} is not a known key; read as 'acl' "
                          "(the closest known key) so the document stays restricted: rename "
                          "it 'acl'", FrontMatterWarning, stacklevel=5)
            out["acl"] = value
            acl_from = key
            continue
        if access_like(key):
            raise InputError(where, "looks like a list of readers, but the key that restricts "
                             f"access is 'acl'; rename it (e.g. {prefix}acl: [finance]), or, "
                             f"for a filter field and not access, put it under "
                             f"{prefix}{FILTERS_KEY} (e.g. {FILTERS_KEY}: {{audience: admin}})",
                             field=f"{prefix}{key}")
        if unknown is not None:
            unknown.setdefault(key, []).append(source)
        out[key] = value
    return out, acl_from


def _checked(meta: dict[str, Any], at: Callable[[str], str], prefix: str = "",
             unknown: dict[str, list[str]] | None = None, source: str = "") -> dict[str, Any]:
    """Validate the keys (``at(key)`` is where each is; ``prefix`` names the field's parent,
    ``metadata.`` in JSONL): the access rules of :func:`_known_keys` first, for front matter
    and JSONL alike, then the known keys' values. Returns the metadata to keep."""
    out, acl_from = _known_keys(meta, at, prefix, unknown, source)
    if "acl" in out:
        out["acl"] = parse_acl(out["acl"], at(acl_from), f"{prefix}acl")
    if FILTERS_KEY in out:
        out[FILTERS_KEY] = filter_fields(out[FILTERS_KEY], at(FILTERS_KEY),
                                         f"{prefix}{FILTERS_KEY}")
    if "effective_date" in out:
        value = out["effective_date"]
        text = str(value).strip()
        try:
            (dt.datetime if "T" in text else dt.date).fromisoformat(text)
        except ValueError:
            raise InputError(at("effective_date"), f"{value!r} is not a date; write it as "
                             "YYYY-MM-DD", field=f"{prefix}effective_date") from None
        out["effective_date"] = text
    if "status" in out:
        status = str(out["status"]).strip().casefold()
        if status not in STATUSES:
            raise InputError(at("status"), f"{out['status']!r} is not one of {STATUSES}",
                             field=f"{prefix}status")
        out["status"] = status
    if out.get("superseded_by") is not None and not isinstance(out["superseded_by"], str):
        raise InputError(at("superseded_by"), "must be the id of the newer document",
                         field=f"{prefix}superseded_by")
    return out


def _document(doc_id: Any, text: Any, title: Any, meta: dict[str, Any], where: str) -> Document:
    if not isinstance(doc_id, str) or not doc_id.strip():
        shown = "empty" if doc_id is None or doc_id == "" else f"{doc_id!r}, not text"
        hint = "; quote it" if isinstance(doc_id, int | float) else ""
        raise InputError(where, f"is {shown}: give each document a non-empty text id{hint}",
                         field="id")
    if doc_id != doc_id.strip():
        raise InputError(where, f"{doc_id!r} has surrounding whitespace; remove it", field="id")
    if not isinstance(text, str):
        raise InputError(where, "must be a string", field="text")
    if title is not None and not isinstance(title, str | int | float):
        raise InputError(where, f"{title!r} is not text", field="title")
    return Document(normalize_text(doc_id), normalize_text(text),
                    normalize_text(str(title or "")), MappingProxyType(meta))


def _unread_access_lines(raw: str, path: Path, read: set[int]) -> None:
    """Refuse a line that looks like an access key (:func:`access_word`) and is not one of
    the header's top-level key lines ``read`` (those the header rules checked)."""
    for n, line in enumerate(raw.split("\n"), start=1):
        if n in read or len(line) > 10_000:
            continue
        keys = [m["key"] for m in _QUOTED_KEY.finditer(line)]
        head = _KEY_LINE.match(line)
        for key in ([head["key"]] if head else []) + keys:
            if access_word(key):
                raise InputError(f"{path}:{n}", f"{line.strip()[:60]!r} looks like access "
                                 "metadata but is not read as the header's acl, so the "
                                 "document would be public: put 'acl: [group]' in the "
                                 "front matter between '---' lines at the top", field=key)


def _load_file(path: Path, unknown: dict[str, list[str]]) -> Document:
    raw = _LINE_ENDS.sub("\n", read_text(path, "document"))
    header, line0, body = _split_header(raw, path)
    meta: dict[str, Any] = {}
    lines: dict[str, int] = {}
    if header is not None:
        meta, lines = _parse_header(header, line0, path)
    _unread_access_lines(raw, path, set(lines.values()))
    where_id = f"{path}:{lines['id']}" if "id" in lines else str(path)
    doc_id = meta.pop("id") if "id" in meta else path.stem
    title = meta.pop("title", "")
    if not title:
        heading = re.search(r"^#\s+(.+)$", body, re.MULTILINE)
        title = heading.group(1).strip() if heading else path.stem
    meta = _checked(meta, lambda key: f"{path}:{lines[key]}" if key in lines else str(path),
                    unknown=unknown, source=str(path))
    return _document(doc_id, body, title, meta, where_id)


_META_TAG = re.compile(r"<meta\b[^>]*>", re.IGNORECASE)
_ATTR = re.compile(r"""\b(name|content)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""",
                   re.IGNORECASE)


def _html_acl(path: Path) -> dict[str, Any]:
    """``<meta name="acl" content="finance, managers">`` of an HTML file as ``{"acl": ...}``;
    a meta name that folds to another access word is refused."""
    found: dict[str, Any] = {}
    markup = path.read_text(encoding="utf-8", errors="replace")
    for tag in _META_TAG.findall(markup):
        attrs = {m[1].lower(): m[2] or m[3] or m[4] for m in _ATTR.finditer(tag)}
        word = access_word(attrs.get("name", ""))
        if word is None:
            continue
        line = markup.count("\n", 0, markup.find(tag)) + 1
        if attrs.get("name", "").strip().casefold() != "acl" or "acl" in found:
            raise InputError(f"{path}:{line}", f"{tag[:80]!r} looks like access metadata, but "
                             "only one <meta name=\"acl\" content=\"group, ...\"> is read as "
                             "access", field="acl")
        groups = (attrs.get("content") or "").split(",")
        found["acl"] = parse_acl(groups, f"{path}:{line}")
    return found


def _sidecar(doc: Document, path: Path, unknown: dict[str, list[str]]) -> Document:
    """An extracted document with the keys of its sidecar ``NAME.meta.yaml``, if any, and
    for HTML its ``<meta name="acl">``, for DOCX its properties
    (:func:`~workbench.corpus.docx_text.docx_access`); declaring access in both is refused."""
    side = path.with_name(f"{path.stem}.meta.yaml")
    suffix = path.suffix.lower()
    tagged = (_html_acl(path) if suffix in (".html", ".htm") else
              docx_access(doc.metadata.get("properties"), path) if suffix == ".docx" else {})
    if tagged and side.is_file():
        raise InputError(str(path), f"declares access in the file (a <meta> tag or a DOCX "
                         f"property) and has a sidecar {side.name}: keep one", field="acl")
    if tagged:
        return Document(doc.id, doc.text, doc.title,
                        MappingProxyType({**doc.metadata, **tagged}))
    if not side.is_file():
        return doc
    text = _LINE_ENDS.sub("\n", read_text(side, "sidecar"))
    meta, lines = _parse_header(text, 1, side)
    _unread_access_lines(text, side, set(lines.values()))
    meta.pop("id", None)
    title = meta.pop("title", None) or doc.title
    meta = _checked(meta, lambda key: f"{side}:{lines[key]}" if key in lines else str(side),
                    unknown=unknown, source=str(side))
    return Document(doc.id, doc.text, normalize_text(str(title)),
                    MappingProxyType({**doc.metadata, **meta}))


def require_access(docs: list[Document], where: Callable[[Document], str], access: str,
                    source: str) -> None:
    """Deny by default: once one document declares ``acl`` (or ``access="required"``), a
    document without one is refused."""
    if access not in ACCESS_MODES:
        raise InputError(source, f"access={access!r} is not one of {ACCESS_MODES}",
                         field="access")
    declared = next((d for d in docs if "acl" in d.metadata), None)
    if declared is None and access == "auto":
        return
    missing = next((d for d in docs if "acl" not in d.metadata), None)
    if missing is not None:
        why = (f"{where(declared)} declares access" if declared is not None
               else "access is required for this corpus")
        raise InputError(where(missing), f"declares no access, but {why}: every document must "
                         "then declare it; add 'acl: public' (everyone) or 'acl: [group]' to "
                         "its front matter (a sidecar NAME.meta.yaml for PDF/HTML/DOCX)",
                         field="acl")


def load_folder(folder: str | Path, access: str = "auto") -> Corpus:
    """Load every ``*.md`` / ``*.txt`` file under ``folder`` (sorted by path; see the module
    docstring for the front matter), and every PDF, HTML and DOCX file through
    :func:`~workbench.corpus.extract.load_document` (with its sidecar ``NAME.meta.yaml``). A
    folder named like a document is an error. ``access="required"`` makes an ``acl`` mandatory
    on every document; by default (``auto``) it is mandatory once one document has one."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(str(folder), "not a folder of .md/.txt documents; check the path")
    paths = sorted(p for p in folder.rglob("*") if p.suffix in (".md", ".txt")
                   or p.suffix.lower() in EXTRACTED_SUFFIXES)
    unknown: dict[str, list[str]] = {}
    docs = []
    file_of: dict[str, Path] = {}
    for path in paths:
        if path.is_dir():
            raise InputError(str(path), "is a folder named like a document; rename it (its "
                             "files are read either way)")
        extracted = path.suffix.lower() in EXTRACTED_SUFFIXES
        doc = (_sidecar(load_document(path), path, unknown) if extracted
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
    for key, files in unknown.items():
        closest = _closest(key)
        hint = (f"the closest known key is {closest!r}" if closest
                else f"known keys: {', '.join(HEADER_KEYS)}")
        shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
        warnings.warn(f"front-matter key {key!r} is not known ({shown}); {hint}. It is kept "
                      "in Document.metadata", FrontMatterWarning, stacklevel=2)
    return Corpus(docs, source=str(folder))


def _fixed(where: str) -> Callable[[str], str]:
    return lambda _key: where


def _unread_access_keys(value: Any, where: str, field: str = "") -> None:
    """Refuse a key at any depth of a JSONL row that folds to an access word and is not a
    key of ``metadata`` (those the header rules read or refuse)."""
    if isinstance(value, dict):
        for key, inner in value.items():
            name = f"{field}{key}"
            if field != "metadata." and access_word(key):
                raise InputError(where, "looks like access metadata but only metadata.acl "
                                 "is read as access, so the document would be public: move "
                                 "it to \"metadata\": {\"acl\": [...]}", field=name)
            _unread_access_keys(inner, where, f"{name}.")
    elif isinstance(value, list):
        for inner in value:
            _unread_access_keys(inner, where, field)


def checked_document(doc_id: Any, text: Any, title: Any, metadata: Any, where: str,
                     header: bool = False) -> Document:
    """One document record (a JSONL line, a production system's document) through the
    access rules: ``metadata`` as a JSONL line's ``metadata`` (``acl`` read, other access-like
    keys refused). With ``header=True`` the text is another system's extraction of a file,
    kept as it is: a front-matter header at its top is read as a file's (its keys merged
    with ``metadata``; two different ``acl`` are refused) and an access-like line elsewhere
    refuses the document."""
    _unread_access_keys({"metadata": metadata}, where)
    if not isinstance(metadata or {}, dict):
        raise InputError(where, "must be an object", field="metadata")
    meta = dict(metadata or {})
    if header and isinstance(text, str):
        raw = _LINE_ENDS.sub("\n", text)
        block, line0, _ = _split_header(raw, Path(where))
        found, lines = _parse_header(block, line0, Path(where)) if block is not None else ({}, {})
        _unread_access_lines(raw, Path(where), set(lines.values()))
        found.pop("id", None)
        if "acl" in found and "acl" in meta and parse_acl(found["acl"], where, "acl") != \
                parse_acl(meta["acl"], where, "metadata.acl"):
            raise InputError(where, "the front matter and the metadata declare different "
                             "acl; keep one", field="acl")
        meta = {**found, **meta}
    checked = _checked(meta, _fixed(where), "metadata.")
    return _document(doc_id, text, title, checked, where)


def load_documents(docs: Iterable[Any], *, doc_id: DocIdRule = None, access: str = "auto",
                   source: str = "the documents given",
                   where: Sequence[str] | None = None) -> Corpus:
    """A corpus of documents as a production system extracted them (LangChain
    ``Document``s, LlamaIndex ``Document``s or nodes, ``{"doc_id", "text", "metadata"}``
    records: :mod:`~workbench.corpus.production`), the text kept as it was indexed and read
    through the access rules of :func:`checked_document` (``header=True``); ``access`` as in
    :func:`load_folder`."""
    records = extracted_documents(docs, doc_id, where, source)
    if not records:
        raise InputError(source, "no documents given")
    out = [checked_document(r.doc_id, r.text, r.title, dict(r.metadata), r.where, header=True)
           for r in records]
    where_of = {d.id: r.where for d, r in zip(out, records, strict=True)}
    require_access(out, lambda d: where_of[d.id], access, source)
    return Corpus(out, source=source)


def load_jsonl(path: str | Path, access: str = "auto") -> Corpus:
    """Load documents from JSONL: one ``{"id", "text", "title"?, "metadata"?}`` per line;
    ``metadata["acl"]`` and the other header keys are validated as in front matter, and
    ``access`` is as in :func:`load_folder`. Lines ``{"doc_id", "text", "metadata"}`` are a
    production system's extraction (:func:`~workbench.corpus.production.load_documents`:
    pages of one document joined, the text kept as it was indexed)."""
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
        _unread_access_keys(row, where)
        doc_id = row.get("id", row.get("_id"))
        docs.append(checked_document(doc_id, row.get("text"), row.get("title", ""),
                                     row.get("metadata"), where))
        line_of.setdefault(docs[-1].id, where)
    require_access(docs, lambda d: line_of[d.id], access, str(path))
    return Corpus(docs, source=str(path))


def load_corpus(path: str | Path, access: str = "auto") -> Corpus:
    """Load a folder of .md/.txt files, a documents JSONL, a conversations JSONL (one turn
    per line with a ``speaker`` and no ``id``:
    :func:`~workbench.corpus.conversations.load_conversations`), or a BEIR folder
    (corpus.jsonl); ``access`` as in :func:`load_folder`."""
    path = Path(path)
    if path.is_dir() and (path / "corpus.jsonl").exists():
        return load_jsonl(path / "corpus.jsonl", access)
    if path.is_dir():
        return load_folder(path, access)
    if path.suffix == ".jsonl":
        first = next(iter_jsonl(path, "documents JSONL"), (str(path), None))[1]
        if isinstance(first, dict) and "speaker" in first and "id" not in first:
            return load_conversations(path)  # one turn per line: chat logs, tickets
        return load_jsonl(path, access)
    if not path.exists():
        raise InputError(str(path), "corpus not found; give a folder of documents, a .jsonl of "
                         "documents or one .pdf/.html/.docx file")
    if path.suffix.lower() in EXTRACTED_SUFFIXES:
        return Corpus([load_document(path)], source=str(path))
    raise InputError(str(path), "expected a folder of documents, a .jsonl of documents or one "
                     ".pdf/.html/.docx file")
