"""The one door in: every document, whichever way it enters, is admitted by :func:`admit`.

Folders (front matter, PDF / HTML / DOCX with their sidecar, ``<meta>`` tags and
properties), single files, documents JSONL, conversations JSONL and a production system's
records of one or many parts all hand :func:`admit` every :class:`Declaration` of a
document (one per header, sidecar, tag set, JSONL line, page, node or turn), with the file,
line and field of each key. :func:`admit` returns the :class:`~workbench.corpus.Document`
with its access, or refuses it with an :class:`~workbench.io.InputError` naming file, line
and field. It alone holds the key that builds a Document whose metadata names readers
(:func:`~workbench.corpus.types.admission_key`); a Document built anywhere else with such a
key raises.

The key rules (one place, every format alike):

* the known keys are :data:`HEADER_KEYS`; a key that folds to ``acl``
  (:func:`~workbench.corpus.access.fold_key`: case, separators, NFKC, lookalike letters:
  ``ACL``, ``acls``, ``ａｃｌ``) is read as ``acl`` with a :class:`FrontMatterWarning`, so the
  document stays restricted; any other key that names readers or a restriction
  (:func:`~workbench.corpus.access.access_like`: ``groups``, ``restricted_to``,
  ``visible_to``, ``classification``, ``restricted``, ``audience``, ``sensitivity``, ...) at
  any depth refuses the document, in every corpus, whether or not another document declares
  ``acl``; ``audience`` as a filter goes under ``filters``;
* the groups are read by :func:`~workbench.corpus.access.parse_acl` (a comma separates
  groups in every format);
* every declaration that declares access must declare the same groups (pages, nodes and
  turns of one record; a file's tag and its sidecar); one that says nothing takes the
  document's. Parts that disagree refuse the document;
* ``facts`` are what the workbench's own extractors found (source, format, pages, headings,
  extraction, properties, turns): kept, never read as access.

Deny by default across a corpus: :func:`require_access` (once one document declares ``acl``,
or ``access="required"``, every document must).
"""

from __future__ import annotations

import datetime as dt
import difflib
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.corpus.access import (
    FILTERS_KEY,
    access_like,
    access_word,
    filter_fields,
    fold_key,
    parse_acl,
)
from workbench.corpus.types import Admitted, Document, admission_key
from workbench.io import InputError, WorkbenchError, WorkbenchWarning
from workbench.text import normalize_text

__all__ = ["ACCESS_MODES", "FACT_KEYS", "HEADER_KEYS", "LIBRARY_KEYS", "STATUSES",
           "Declaration", "FrontMatterWarning", "admit", "closest_key", "refuse_unread_access",
           "require_access"]

HEADER_KEYS = ("id", "title", "version", "effective_date", "status", "superseded_by", "acl",
               FILTERS_KEY)
STATUSES = ("current", "superseded")
#: Keys that document loaders of other libraries write and that name no readers, although
#: they hold an access word (LlamaIndex's SimpleDirectoryReader writes ``last_accessed_date``).
LIBRARY_KEYS = ("last_accessed_date",)
#: What the workbench's extractors and loaders record about a document (never access).
FACT_KEYS = ("source", "format", "pages", "headings", "extraction", "properties", "turns")
#: Which documents must declare access: ``auto`` (all of them once one does) or
#: ``required`` (all of them).
ACCESS_MODES = ("auto", "required")

_KEY = admission_key()


class FrontMatterWarning(WorkbenchWarning):
    """A front-matter key the workbench does not know (kept in ``Document.metadata``), or a
    near miss of ``acl`` read as ``acl``."""


@dataclass(frozen=True)
class Declaration:
    """What one source says about a document: a header, a sidecar, a file's ``<meta>`` tags
    or properties, a JSONL line's ``metadata``, one page, node or turn. ``where`` names it
    (file and line), ``lines`` the place of each key when it has its own; ``prefix`` is the
    field's parent in messages (``metadata.``)."""

    metadata: Mapping[str, Any]
    where: str
    lines: Mapping[str, str] = field(default_factory=dict)
    prefix: str = ""

    def at(self, key: str) -> str:
        return self.lines.get(key, self.where)


def closest_key(key: str) -> str | None:
    """The known key (:data:`HEADER_KEYS`) closest to ``key``, if any is close."""
    found = difflib.get_close_matches(key.casefold(), HEADER_KEYS, n=1, cutoff=0.6)
    return found[0] if found else None


def _access_key(value: Any, path: str) -> str | None:
    """The path (``path.key``) of the first key at any depth of ``value`` that names readers
    (:func:`~workbench.corpus.access.access_like`), or None."""
    if isinstance(value, Mapping):
        for key, inner in value.items():
            name = f"{path}.{key}" if path else str(key)
            found = name if access_like(key) else _access_key(inner, name)
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for inner in value:
            found = _access_key(inner, path)
            if found is not None:
                return found
    return None


def refuse_unread_access(value: Any, where: str) -> None:
    """Refuse a key at any depth of a record (a JSONL line, a production record, a turn),
    outside its ``metadata`` (which the door reads), that names readers: nothing reads it,
    so the document would be public."""
    name = _access_key(value, "")
    if name is not None:
        raise InputError(where, "looks like access metadata but only metadata.acl is read as "
                         "access, so the document would be public: move it to "
                         "\"metadata\": {\"acl\": [...]}", field=name)


def _nested_intent(value: Any, where: str, name: str) -> None:
    """Refuse a key below the top of a declaration that names readers: only a top-level
    ``acl`` is read."""
    found = _access_key(value, name)
    if found is not None:
        raise InputError(where, "names readers below the top of the metadata, where nothing "
                         "is read as access, so the document would be public: declare them "
                         "as a top-level 'acl: [group]'", field=found)


def _keys(d: Declaration, unknown: dict[str, list[str]] | None, source: str
          ) -> tuple[dict[str, Any], str]:
    """``d``'s metadata with a near miss of ``acl`` read as ``acl`` and every other key that
    names readers refused, and the key the ``acl`` came from; unknown keys collected in
    ``unknown`` (key -> sources) when given."""
    out: dict[str, Any] = {}
    acl_from = "acl"
    for key, value in d.metadata.items():
        if not isinstance(key, str) or not key.strip():
            raise InputError(d.where, f"key {key!r} is not a name", field=f"{d.prefix}{key}")
        if key != FILTERS_KEY:
            _nested_intent(value, d.at(key), f"{d.prefix}{key}")
        if key in HEADER_KEYS or key in LIBRARY_KEYS:
            out[key] = value
            continue
        where = d.at(key)
        if closest_key(key) == "acl" or "acl" in fold_key(key) or access_word(key) == "acl":
            if "acl" in d.metadata or "acl" in out:
                raise InputError(where, f"{key!r} and 'acl' both name readers; keep 'acl'",
                                 field=f"{d.prefix}{key}")
            warnings.warn(f"{where}: field {d.prefix + key!r} is not a known key; read as "
                          "'acl' (the closest known key) so the document stays restricted: "
                          "rename it 'acl'", FrontMatterWarning, stacklevel=4)
            out["acl"] = value
            acl_from = key
            continue
        if access_like(key):
            raise InputError(where, "looks like a list of readers, but the key that restricts "
                             f"access is 'acl'; rename it (e.g. {d.prefix}acl: [finance]), or, "
                             f"for a filter field and not access, put it under "
                             f"{d.prefix}{FILTERS_KEY} (e.g. {FILTERS_KEY}: {{audience: admin}})",
                             field=f"{d.prefix}{key}")
        if unknown is not None and key not in FACT_KEYS:
            unknown.setdefault(key, []).append(source or d.where)
        out[key] = value
    return out, acl_from


def _checked(d: Declaration, unknown: dict[str, list[str]] | None, source: str
             ) -> tuple[dict[str, Any], str]:
    """The metadata of ``d`` to keep (key rules, then the known keys' values) and where its
    ``acl`` was declared."""
    out, acl_from = _keys(d, unknown, source)
    p = d.prefix
    if "acl" in out:
        out["acl"] = parse_acl(out["acl"], d.at(acl_from), f"{p}acl")
    if FILTERS_KEY in out:
        out[FILTERS_KEY] = filter_fields(out[FILTERS_KEY], d.at(FILTERS_KEY), f"{p}{FILTERS_KEY}")
    if "effective_date" in out:
        value = out["effective_date"]
        text = str(value).strip()
        try:
            (dt.datetime if "T" in text else dt.date).fromisoformat(text)
        except ValueError:
            raise InputError(d.at("effective_date"), f"{value!r} is not a date; write it as "
                             "YYYY-MM-DD", field=f"{p}effective_date") from None
        out["effective_date"] = text
    if "status" in out:
        status = str(out["status"]).strip().casefold()
        if status not in STATUSES:
            raise InputError(d.at("status"), f"{out['status']!r} is not one of {STATUSES}",
                             field=f"{p}status")
        out["status"] = status
    if out.get("superseded_by") is not None and not isinstance(out["superseded_by"], str):
        raise InputError(d.at("superseded_by"), "must be the id of the newer document",
                         field=f"{p}superseded_by")
    return out, d.at(acl_from)


def admit(doc_id: Any, text: Any, title: Any = "",
          declared: Mapping[str, Any] | Sequence[Declaration] = (), *,
          where: str = "<memory>", facts: Mapping[str, Any] | None = None,
          unknown: dict[str, list[str]] | None = None, source: str = "") -> Document:
    """The one door: the :class:`~workbench.corpus.Document` ``doc_id`` with its access read
    from every declaration (a mapping is one declaration at ``where``), or an
    :class:`~workbench.io.InputError` naming the file, line and field (see the module doc).
    ``facts`` are the extractors' own findings; ``unknown`` collects unknown keys for one
    warning per key (``source`` names the file in it)."""
    if isinstance(declared, Mapping):
        declared = [Declaration(declared, where)]
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
    named = next((k for k in facts or {} if k not in FACT_KEYS or access_like(k)), None)
    if named is not None:
        raise WorkbenchError(f"{where}: {named!r} is not a fact an extractor records "
                             f"({', '.join(FACT_KEYS)}); pass it as a declaration")
    meta: dict[str, Any] = dict(facts or {})
    said: set[str] = set()
    access: tuple[str, ...] | None = None
    access_at = ""
    for d in declared:
        checked, at = _checked(d, unknown, source)
        if "acl" in checked:
            if access is not None and set(checked["acl"]) != set(access):
                raise InputError(at, f"declares acl {list(checked['acl'])}, and {access_at} "
                                 f"declares {list(access)}: different acl for one document "
                                 "(parts that disagree about access refuse it; a document has "
                                 "one access list); keep one", field=f"{d.prefix}acl")
            access, access_at = access or checked["acl"], access_at or at
        for key, value in checked.items():
            if key not in said:
                meta[key] = value
                said.add(key)
    if access is not None:
        meta["acl"] = access
    return Document(normalize_text(doc_id), normalize_text(text),
                    normalize_text(str(title or "")), Admitted(meta, _KEY))


def require_access(docs: Sequence[Document], where: Callable[[Document], str], access: str,
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
