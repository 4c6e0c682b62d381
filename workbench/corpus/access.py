"""Who may read what, and which version of a document is current: each rule in one place.

Access (fails closed). A document's ``metadata["acl"]`` names the groups allowed to read it;
a chunk may carry its own ``metadata["acl"]``. :func:`parse_acl` is the one reading of an
``acl`` value: a single group name or a list of group names, each trimmed and case-folded
(``" Finance "`` and ``"finance"`` are one group); a comma separates group names in every
format (``"finance, hr"`` is two groups). Anything else that is present (``false``,
``0``, ``''``, ``null``, ``5``, ``true``, an empty list, a blank name) is an error, never
"everyone". An ``acl`` that is absent means everyone, and so does one naming ``"all"``
or ``"public"`` (:data:`EVERYONE`; ``public`` is read as ``all``; the loaders require a
declaration on every document once one document of a corpus declares access).
:func:`access_word` folds a key (NFKC, a table of Cyrillic and Greek lookalikes, casefold)
and says whether it is an access word (:data:`ACCESS_WORDS`): the loaders refuse such a key
that was not read as ``acl``, and :func:`access_like` (an access word, or a key holding
``acl`` or a :data:`READER_WORDS` word such as ``audience``) is what a header may not hold
outside ``acl``. Filter fields that sound like readers (``audience``) are declared under
:data:`FILTERS_KEY` (``filters: {audience: admin}``): :func:`filter_fields` reads them as
filters (never access: a document stays as public or restricted as its ``acl`` says) and
still refuses an access word or root there (:data:`FILTER_READER_WORDS` are the only reader
words lifted). The asking user's groups are read the same way
(:func:`user_groups_of`: one name or a list of names, trimmed and case-folded).
:func:`can_read` checks one ACL;
:func:`can_read_chunk` is the check of context assembly, the trace viewer and the report: the
document's ACL and the chunk's own must both allow the user, and a chunk whose document is
unknown is refused. ``user_groups=None`` is the unrestricted evaluation view (no check); pass
the user's groups (``[]`` for a user in no group) to enforce access.

Versions. A document is superseded (:func:`is_superseded`) when its ``status`` is
``superseded`` or it names a ``superseded_by``; ``Document.is_current`` is its negation
(one rule, one answer). Context assembly drops superseded
documents, position items never use them as distractors, and diagnosis flags answers that
rest on them.

Used by: :mod:`workbench.corpus.loaders` (validation at load), :mod:`workbench.generation`,
:mod:`workbench.diagnose`, the trace viewer and the report.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from workbench.io import InputError

__all__ = ["ACCESS_WORDS", "EVERYONE", "FILTERS_KEY", "FILTER_READER_WORDS", "PUBLIC",
           "READER_WORDS", "HasMetadata", "access_like", "access_word", "acl_of", "can_read",
           "can_read_chunk", "filter_fields", "fold_key", "is_superseded", "parse_acl",
           "user_groups_of"]

EVERYONE = "all"
#: The other name for everyone: ``acl: public`` declares a public document.
PUBLIC = "public"
#: Words that name readers: a key folding to one of them is access metadata.
ACCESS_WORDS = ("acl", "acls", "groups", "access", "permissions")
#: Roots of words that name readers or a restriction under another name (``restricted_to``,
#: ``visible_to``, ``classification``, ``sensitivity``, ``confidential``, ``clearance``,
#: ``entitlements``, ``privileges``, ``secret``, ``private``, ``authorized_users``,
#: ``shared_with``, ``tlp``, ``embargo``): a key holding one (after :func:`fold_key`) is
#: refused outside :data:`FILTERS_KEY`, because whether it restricts access is a guess.
READER_WORDS = ("access", "allow", "audience", "group", "permission", "reader", "role",
                "visib", "restrict", "classif", "confidential", "sensitiv", "clearance",
                "entitle", "privilege", "secret", "private", "authoris", "authoriz", "sharedwith",
                "tlp", "embargo")
#: The one key whose entries are filter fields, never access (``filters: {audience: x}``).
FILTERS_KEY = "filters"
#: The reader words a filter field may hold under :data:`FILTERS_KEY`; every other reader
#: word (and ``acl``) stays refused there too.
FILTER_READER_WORDS = ("audience",)
#: Cyrillic and Greek letters that look like Latin ones (after NFKC and casefold).
_CONFUSABLES = str.maketrans({
    "а": "a", "с": "c", "е": "e", "о": "o", "р": "p", "х": "x", "у": "y", "і": "i",
    "ј": "j", "ѕ": "s", "ԁ": "d", "ɡ": "g", "һ": "h", "ӏ": "l", "ո": "n", "ս": "u",
    "м": "m", "т": "t", "в": "b", "к": "k", "н": "h", "г": "r", "ԛ": "q", "ԝ": "w",
    "α": "a", "ο": "o", "ρ": "p", "ι": "i", "ν": "v", "κ": "k", "τ": "t", "υ": "u",
    "χ": "x", "ε": "e", "ϲ": "c", "β": "b", "η": "n", "μ": "u", "ѵ": "v", "ɩ": "i",
    "ɑ": "a", "ı": "i", "ℓ": "l", "1": "l", "|": "l", "0": "o"})


def fold_key(key: str) -> str:
    """``key`` as the letters it looks like: NFKC, casefold, lookalikes mapped to Latin,
    anything but letters dropped (``"АСL"``, ``"ａｃｌ"``, ``"a-c-l"`` all fold to ``acl``)."""
    import unicodedata

    text = key.translate(_CONFUSABLES)  # before NFKC too: it maps lunate sigma to sigma
    text = unicodedata.normalize("NFKC", text).casefold().translate(_CONFUSABLES)
    text = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in text if "a" <= ch <= "z")


def access_word(key: Any) -> str | None:
    """The access word (:data:`ACCESS_WORDS`) ``key`` folds to (:func:`fold_key`), or None;
    the singular of ``groups``/``permissions`` counts too."""
    if not isinstance(key, str) or len(key) > 40:
        return None
    folded = fold_key(key)
    for word in ACCESS_WORDS:
        if folded in (word, word.rstrip("s")):
            return word
    return None


def access_like(key: Any) -> bool:
    """True when ``key`` may name readers: an access word (:func:`access_word`), or its
    folding holds ``acl`` or a :data:`READER_WORDS` word (``target_audience``, ``Roles``)."""
    if access_word(key):
        return True
    folded = fold_key(key) if isinstance(key, str) else ""
    return "acl" in folded or any(word in folded for word in READER_WORDS)


def filter_fields(value: Any, where: str, field: str = FILTERS_KEY) -> dict[str, Any]:
    """The filter fields declared under :data:`FILTERS_KEY`: a mapping of names to a value
    (text, number, true/false) or a non-empty list of values. A name that is access-like
    (:func:`access_like`) other than through :data:`FILTER_READER_WORDS` is refused (an
    ``acl`` under ``filters`` would otherwise read as a mere filter and leave the document
    public), and so is a nested mapping (it could hide such a name)."""
    if not isinstance(value, Mapping) or not value:
        raise InputError(where, "must map filter names to values, e.g. filters: {audience: "
                         "admin, product: payroll}", field=field)
    out: dict[str, Any] = {}
    for key, inner in value.items():
        name = f"{field}.{key}"
        if not isinstance(key, str) or not key.strip():
            raise InputError(where, f"filter name {key!r} is not a name", field=field)
        rest = fold_key(key)
        for word in FILTER_READER_WORDS:
            rest = rest.replace(word, "")
        if access_word(key) or (rest and access_like(rest)):
            raise InputError(where, "names readers, and a filter is never access: declare "
                             "who may read the document with 'acl' at the top of the header",
                             field=name)
        items = inner if isinstance(inner, list) else [inner]
        if not items or any(isinstance(v, Mapping | list) or v is None for v in items):
            raise InputError(where, f"is {inner!r}; give a value or a list of values",
                             field=name)
        out[key] = inner
    return out


class HasMetadata(Protocol):
    """What the rules read: the ``metadata`` of a :class:`~workbench.corpus.Document` or a
    :class:`~workbench.corpus.Chunk` (this module does not import them: ``Document.acl`` and
    ``Document.is_current`` are defined through it)."""

    @property
    def metadata(self) -> Mapping[str, Any]: ...


def _group(name: Any, where: str, field: str, what: str) -> str:
    if not isinstance(name, str):
        hint = f"; quote it ('{name}')" if isinstance(name, int | float) else ""
        shown = repr(name)
        if len(shown) > 80:  # an alias-built list can be megabytes long
            shown = f"{shown[:60]}... (a {type(name).__name__})"
        raise InputError(where, f"{what}{shown} is not a group name{hint}", field=field)
    group = name.strip().casefold()
    if not group:
        raise InputError(where, f"{what}is blank; name a group", field=field)
    return group


def parse_acl(value: Any, where: str = "acl", field: str = "acl") -> tuple[str, ...]:
    """The groups an ``acl`` value names (trimmed, case-folded, in order); raises
    :class:`~workbench.io.InputError` naming ``where`` and ``field`` for anything but a group
    name or a non-empty list of group names. One syntax in every format: a comma separates
    groups, in a string or in a list entry (``"finance, hr"`` is ``[finance, hr]``), and an
    empty name between commas is refused."""
    fix = ("give a group name or a list of group names, e.g. acl: [finance], or acl: [all] "
           "for everyone")
    if isinstance(value, str):
        if not value.strip():
            raise InputError(where, f"is empty; {fix}", field=field)
        return _everyone(tuple(dict.fromkeys(_group(g, where, field, "")
                                             for g in value.split(","))))
    if isinstance(value, list | tuple):
        if not value:
            raise InputError(where, f"is an empty list; {fix}", field=field)
        return _everyone(tuple(dict.fromkeys(
            _group(part, where, field, "entry ") for g in value
            for part in (g.split(",") if isinstance(g, str) else [g]))))
    shown = json.dumps(value, default=str) if value is None or isinstance(
        value, bool | int | float) else repr(value)
    raise InputError(where, f"is {shown}, which names no group; {fix}", field=field)


def _everyone(groups: tuple[str, ...]) -> tuple[str, ...]:
    """``public`` read as :data:`EVERYONE` (one name for everyone downstream)."""
    return tuple(dict.fromkeys(EVERYONE if g == PUBLIC else g for g in groups))


def acl_of(metadata: Mapping[str, Any], where: str = "metadata") -> tuple[str, ...]:
    """The groups ``metadata["acl"]`` allows (:func:`parse_acl`); empty when there is no
    ``acl`` (everyone). This is ``Document.acl``."""
    return parse_acl(metadata["acl"], where) if "acl" in metadata else ()


def user_groups_of(user_groups: Iterable[str] | str | None) -> frozenset[str] | None:
    """The asking user's groups, trimmed and case-folded: a single name is one group (never
    its letters); None stays None (the unrestricted view)."""
    if user_groups is None:
        return None
    if isinstance(user_groups, str):
        return frozenset({_group(user_groups, "user_groups", "user_groups", "group ")})
    try:
        names = list(user_groups)
    except TypeError:
        raise InputError("user_groups", f"{user_groups!r} is not a group name or a list of "
                         "group names") from None
    return frozenset(_group(g, "user_groups", "user_groups", "group ") for g in names)


def can_read(user_groups: Iterable[str] | str | None, acl: Any) -> bool:
    """True when a user in ``user_groups`` may read something with ``acl``: the groups of
    ``Document.acl`` (empty or None: no ACL, everyone) or a raw ``acl`` value, read by
    :func:`parse_acl` (a malformed one raises ValueError whatever the view).
    ``user_groups=None`` is the unrestricted evaluation view."""
    allowed = parse_acl(acl) if acl is not None and acl != () and acl != [] else ()
    groups = user_groups_of(user_groups)
    if groups is None or not allowed or EVERYONE in allowed:
        return True
    return bool(set(allowed) & groups)


def can_read_chunk(user_groups: Iterable[str] | str | None, chunk: HasMetadata,
                   doc: HasMetadata | None) -> bool:
    """True when a user in ``user_groups`` may read ``chunk`` of document ``doc``: the
    document's ACL and the chunk's own (``chunk.metadata["acl"]``) must both allow it, and an
    unknown document (``doc=None``) is refused (fail closed). ``user_groups=None`` is the
    unrestricted evaluation view; a malformed ACL raises ValueError in every view."""
    name = str(getattr(chunk, "id", "chunk"))
    chunk_acl = acl_of(chunk.metadata, f"chunk {name!r}")
    doc_acl = acl_of(doc.metadata, f"document {getattr(doc, 'id', '?')!r}") if doc else ()
    groups = user_groups_of(user_groups)
    if groups is None:
        return True
    return doc is not None and can_read(groups, doc_acl) and can_read(groups, chunk_acl)


def is_superseded(doc: HasMetadata | Mapping[str, Any]) -> bool:
    """True when a document (or its recorded version metadata, as a trace keeps it) is not
    the current version: ``status: superseded``, or a ``superseded_by`` is given."""
    metadata = doc if isinstance(doc, Mapping) else doc.metadata
    status = str(metadata.get("status", "current")).strip().casefold()
    return status == "superseded" or bool(metadata.get("superseded_by"))
