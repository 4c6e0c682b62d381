"""Who may read what, and which version of a document is current: each rule in one place.

Access. A document's ``metadata["acl"]`` lists the groups allowed to read it
(:func:`acl_of`, which ``Document.acl`` returns); a chunk may carry its own
``metadata["acl"]``. An empty ACL, or one containing ``"all"`` (:data:`EVERYONE`), means
everyone. :func:`can_read` checks one ACL; :func:`can_read_chunk` is the check of context
assembly: the document's ACL and the chunk's own must both allow the user, and a chunk whose
document is unknown is refused (fail closed). ``user_groups=None`` is the unrestricted
evaluation view (no check); pass the user's groups (``[]`` for a user in no group) to
enforce access.

Versions. A document is superseded (:func:`is_superseded`) when its ``status`` is
``superseded`` or it names a ``superseded_by``; ``Document.is_current``
(:func:`declared_current`) looks at ``status`` only. Context assembly drops superseded
documents, position items never use them as distractors, and diagnosis flags answers that
rest on them.

Used by: :mod:`workbench.generation.context`, :mod:`workbench.generation.evaluation`,
:mod:`workbench.generation.position`, :mod:`workbench.diagnose` and the trace viewer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

__all__ = ["EVERYONE", "HasMetadata", "acl_of", "can_read", "can_read_chunk",
           "declared_current", "is_superseded"]

EVERYONE = "all"


class HasMetadata(Protocol):
    """What the rules read: the ``metadata`` of a :class:`~workbench.corpus.Document` or a
    :class:`~workbench.corpus.Chunk` (this module does not import them: ``Document.acl`` and
    ``Document.is_current`` are defined through it)."""

    @property
    def metadata(self) -> Mapping[str, Any]: ...


def acl_of(metadata: Mapping[str, Any]) -> tuple[str, ...]:
    """The groups ``metadata["acl"]`` allows (a string is one group); empty means everyone.
    This is ``Document.acl``."""
    acl = metadata.get("acl") or ()
    return (acl,) if isinstance(acl, str) else tuple(acl)


def _groups(acl: Any) -> tuple[str, ...]:
    if acl is None:
        return ()
    return (acl,) if isinstance(acl, str) else tuple(str(g) for g in acl)


def can_read(user_groups: Iterable[str] | None, acl: Any) -> bool:
    """True when a user in ``user_groups`` may read something with ``acl``.
    ``user_groups=None`` is the unrestricted evaluation view."""
    allowed = _groups(acl)
    if user_groups is None or not allowed or EVERYONE in allowed:
        return True
    return bool(set(allowed) & set(user_groups))


def can_read_chunk(user_groups: Iterable[str] | None, chunk: HasMetadata,
                   doc: HasMetadata | None) -> bool:
    """True when a user in ``user_groups`` may read ``chunk`` of document ``doc``: the
    document's ACL (``Document.acl``) and the chunk's own (``chunk.metadata["acl"]``) must both
    allow it, and an unknown document (``doc=None``) is refused (fail closed). This is the
    access check of :func:`~workbench.generation.context.assemble_context`;
    ``user_groups=None`` is the unrestricted evaluation view."""
    if user_groups is None:
        return True
    return (doc is not None and can_read(user_groups, acl_of(doc.metadata))
            and can_read(user_groups, chunk.metadata.get("acl")))


def declared_current(metadata: Mapping[str, Any]) -> bool:
    """False when ``metadata["status"]`` is ``superseded``; this is ``Document.is_current``
    (a ``superseded_by`` alone does not clear it; :func:`is_superseded` counts both)."""
    return str(metadata.get("status", "current")) != "superseded"


def is_superseded(doc: HasMetadata | Mapping[str, Any]) -> bool:
    """True when a document (or its recorded version metadata, as a trace keeps it) is not
    the current version: ``status: superseded``, or a ``superseded_by`` is given."""
    metadata = doc if isinstance(doc, Mapping) else doc.metadata
    return not declared_current(metadata) or bool(metadata.get("superseded_by"))
