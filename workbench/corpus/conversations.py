"""Chat logs and ticket threads as documents, with the offsets of every turn.

A turn is one speaker's message: ``Turn(speaker, time, start, end)``, ``[start, end)`` the
exact span of the whole turn (its ``[time] speaker:`` prefix included) in ``Document.text``.

* :func:`load_conversations` reads JSONL with one turn per line:
  ``{"conversation": id, "speaker", "text", "time"?, "title"?, "metadata"?}`` (turns in file
  order; a conversation's first line may carry its title). Access is read as for every
  document, through the door (:func:`~workbench.corpus.admission.admit`): every turn's
  ``metadata`` is a declaration of its conversation (an ``acl`` on any turn restricts the
  whole conversation, turns that declare different ones refuse it, a key that names readers
  anywhere refuses it), and deny by default holds across the file
  (:func:`~workbench.corpus.admission.require_access`). The document text is
  one ``[time] speaker: text`` paragraph per turn, and ``metadata["turns"]`` lists the turns
  as ``{"speaker", "time", "start", "end"}``.
* :func:`parse_turns` finds the turns of a Markdown / plain-text log, one turn per line that
  starts ``Speaker: ...``, ``**Speaker**: ...``, ``**Speaker:** ...`` or ``[time] Speaker: ...``
  (a speaker is 1-4 words, at most 40 characters); lines that follow belong to the turn.
  Text before the first turn (a title, a ticket summary) is in no turn.
* :func:`document_turns` is the turns of any document: its ``metadata["turns"]`` when
  present (checked against the text), else :func:`parse_turns`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.corpus.admission import Declaration, admit, refuse_unread_access, require_access
from workbench.corpus.types import Corpus, Document
from workbench.io import InputError, WorkbenchError, iter_jsonl
from workbench.text import normalize_text

__all__ = ["Turn", "document_turns", "load_conversations", "parse_turns"]

_TURN = re.compile(
    r"^[ \t]*(?:[-*][ \t]+)?(?:\[(?P<time>[^\]\n]{1,40})\][ \t]*)?"
    r"(?:\*\*(?P<bold>[^*:\n]{1,40}?)(?::\*\*|\*\*[ \t]*:)"
    r"|(?P<plain>[A-Za-z0-9_.@'-]+(?:[ \t][A-Za-z0-9_.@'-]+){0,3}?)[ \t]*(?:\([^)\n]{0,40}\))?:)"
    r"(?=[ \t]|$)",
    re.MULTILINE,
)
# words that open a line with a colon but do not name a speaker
_NOT_SPEAKERS = frozenset({"note", "http", "https", "step", "example", "warning", "tip"})


@dataclass(frozen=True)
class Turn:
    """One speaker's message: ``text[start:end]`` is the whole turn, prefix included."""

    speaker: str
    time: str
    start: int
    end: int


def parse_turns(text: str) -> list[Turn]:
    """The turns of a chat log or ticket thread in Markdown or plain text (module docstring);
    each ends where the next begins, trailing whitespace trimmed."""
    heads = []
    for m in _TURN.finditer(text):
        speaker = (m.group("bold") or m.group("plain") or "").strip()
        if speaker and speaker.lower() not in _NOT_SPEAKERS:
            heads.append((m.start(), speaker, (m.group("time") or "").strip()))
    turns = []
    for k, (start, speaker, time) in enumerate(heads):
        end = heads[k + 1][0] if k + 1 < len(heads) else len(text)
        piece = text[start:end]
        lo = start + len(piece) - len(piece.lstrip())
        turns.append(Turn(speaker, time, lo, start + len(piece.rstrip())))
    return turns


def document_turns(document: Document) -> list[Turn]:
    """A document's turns: ``metadata["turns"]`` (from :func:`load_conversations`) when
    present, else :func:`parse_turns` of its text. Recorded turns must be in order, inside
    the text and not overlapping, or ValueError names the document."""
    recorded = document.metadata.get("turns")
    if recorded is None:
        return parse_turns(document.text)
    turns = []
    last = 0
    for n, row in enumerate(recorded):
        ok = isinstance(row, Mapping) and all(isinstance(row.get(k), int) for k in ("start", "end"))
        if not ok or not last <= row["start"] < row["end"] <= len(document.text):
            raise WorkbenchError(f"document {document.id!r}: metadata turns[{n}] must be "
                             f"{{'speaker', 'start', 'end'}} in order inside the text, got {row!r}")
        turns.append(Turn(str(row.get("speaker", "")), str(row.get("time", "")),
                          row["start"], row["end"]))
        last = row["end"]
    return turns


def _conversation(doc_id: str, rows: Sequence[tuple[str, str, str]], title: str,
                  declared: list[Declaration], where: str) -> Document:
    parts: list[str] = []
    turns: list[dict[str, Any]] = []
    pos = 0
    for speaker, time, body in rows:
        head = f"[{time}] {speaker}: " if time else f"{speaker}: "
        piece = head + body.strip()
        turns.append({"speaker": speaker, "time": time, "start": pos, "end": pos + len(piece)})
        parts.append(piece)
        pos += len(piece) + 2
    return admit(doc_id, "\n\n".join(parts), title, declared, where=where,
                 facts={"turns": turns})


def load_conversations(path: str | Path, access: str = "auto") -> Corpus:
    """One document per conversation of a turns JSONL (module docstring); a bad line raises
    :class:`~workbench.io.InputError` naming the file, line and field. ``access`` as in
    :func:`~workbench.corpus.loaders.load_folder`."""
    order: list[str] = []
    rows: dict[str, list[tuple[str, str, str]]] = {}
    titles: dict[str, str] = {}
    declared: dict[str, list[Declaration]] = {}
    first: dict[str, str] = {}
    for where, row in iter_jsonl(path, "conversations JSONL"):
        if not isinstance(row, dict):
            raise InputError(where, 'each line must be a JSON object {"conversation", '
                             '"speaker", "text", "time"?}')
        conv = row.get("conversation", row.get("id"))
        if not isinstance(conv, str) or not conv.strip():
            raise InputError(where, "must be the conversation's non-empty text id",
                             field="conversation")
        for key in ("speaker", "text"):
            if not isinstance(row.get(key), str) or not row[key].strip():
                raise InputError(where, "must be non-empty text", field=key)
        time = row.get("time", "")
        if not isinstance(time, str | int | float):
            raise InputError(where, "must be text such as 2024-05-01T10:00", field="time")
        refuse_unread_access({k: v for k, v in row.items() if k != "metadata"}, where)
        meta = row.get("metadata") or {}
        if not isinstance(meta, dict) or "turns" in meta:
            raise InputError(where, "must be an object without 'turns'", field="metadata")
        conv = normalize_text(conv.strip())
        if conv not in rows:
            order.append(conv)
            rows[conv] = []
            titles[conv] = normalize_text(str(row.get("title") or conv))
            declared[conv] = []
            first[conv] = where
        if meta:
            declared[conv].append(Declaration(meta, where, prefix="metadata."))
        speaker = normalize_text(row["speaker"].strip())
        rows[conv].append((speaker, normalize_text(str(time)), normalize_text(row["text"])))
    docs = [_conversation(c, rows[c], titles[c], declared[c], first[c]) for c in order]
    require_access(docs, lambda d: first[d.id], access, str(path))
    return Corpus(docs, source=str(path))
