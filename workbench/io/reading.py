"""Reading user files: text and JSON, with errors that name the file and line.

:func:`read_text` returns a file's text or raises :class:`~workbench.io.errors.InputError`
naming the file (and, for bytes that are not UTF-8, the line and column): a missing file, a
folder where a file belongs, an unreadable file. A leading byte-order mark is dropped;
:func:`read_text_stamped` also gives the :class:`FileStamp` of the bytes read (for a later
:func:`~workbench.io.writing.write_unless_changed`). :func:`iter_jsonl` yields the rows of a
JSONL file as ``("file:line", row)``, each decoded by :func:`decode_json_line`, which refuses
malformed JSON, duplicate keys in one object, lone surrogates (``"\\ud800"``) and nesting
too deep to read, naming the line and the field; :func:`decode_json_file` reads a whole-file
JSON document the same way.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from workbench.io.errors import InputError

__all__ = ["MAX_JSONL_LINE", "FileStamp", "decode_json_file", "decode_json_line",
           "find_lone_surrogate", "is_int", "iter_jsonl", "read_text", "read_text_stamped"]


def is_int(value: object) -> TypeGuard[int]:
    """An integer that is not a bool: a count, offset or grade read from JSON or given by a
    caller (``True`` is an ``int`` in Python, and JSON's ``true`` must not pass as 1)."""
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class FileStamp:
    """What a file held when it was read: its size and the sha256 of its bytes."""

    size: int
    sha256: str

    @classmethod
    def of(cls, data: bytes) -> FileStamp:
        return cls(len(data), hashlib.sha256(data).hexdigest())


def read_text(path: str | Path, what: str = "file") -> str:
    """The UTF-8 text of ``path`` (a leading BOM dropped); ``what`` names the file's role in
    the messages (``"golden set"``, ``"baseline"``)."""
    return read_text_stamped(path, what)[0]


def read_text_stamped(path: str | Path, what: str = "file") -> tuple[str, FileStamp]:
    """:func:`read_text` and the :class:`FileStamp` of the bytes it read, for a later
    :func:`write_unless_changed` of the whole file."""
    path = Path(path)
    if path.is_dir():
        raise InputError(str(path), f"is a folder, not a {what} file; give the file's path")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(str(path), f"{what} file not found; check the path") from None
    except OSError as exc:
        raise InputError(str(path), f"cannot read the {what} file ({exc.strerror or exc})"
                         ) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(f"{path}:{line}", f"byte 0x{data[exc.start]:02x} at column {column} "
                         "is not UTF-8; save the file as UTF-8") from None
    return text[1:] if text.startswith("\ufeff") else text, FileStamp.of(data)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for key, value in pairs:
        if key in row:
            raise _DuplicateKey(key)
        row[key] = value
    return row


class _DuplicateKey(Exception):
    pass


def find_lone_surrogate(value: Any) -> str | None:
    """The path (``question``, ``evidence[0].text``) of the first string holding a lone
    surrogate (which no UTF-8 file can store), or None."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return where or "<line>"
        elif isinstance(item, dict):
            for key, sub in item.items():
                if find_lone_surrogate(key) is not None:
                    return f"{where}.{key!r}" if where else repr(key)
                stack.append((f"{where}.{key}" if where else str(key), sub))
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", sub) for i, sub in enumerate(item))
    return None


def _decode(text: str) -> Any:
    """JSON from ``text``; raises :class:`_BadJSON` (message, field, line) when it is not
    readable as the workbench reads JSON (see :func:`decode_json_line`)."""
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise _BadJSON(f"malformed JSON ({exc.msg}, column {exc.colno})", None, exc.lineno)\
            from None
    except _DuplicateKey as exc:
        raise _BadJSON("given twice in one object (JSON keeps only the last one silently); "
                       "keep one", str(exc.args[0]), None) from None
    except RecursionError:
        raise _BadJSON("JSON nested too deeply to read", None, None) from None
    bad = find_lone_surrogate(value)
    if bad is not None:
        raise _BadJSON("holds a lone surrogate (an escape such as \\ud800 that is half of a "
                       "character); fix the text", bad, None)
    return value


class _BadJSON(Exception):
    def __init__(self, message: str, field: str | None, line: int | None):
        super().__init__(message)
        self.message, self.field, self.line = message, field, line


def decode_json_line(line: str, where: str) -> Any:
    """One JSON value from one line of a file; raises :class:`InputError` naming ``where``
    (``file:line``) for malformed JSON, a key given twice in one object, a lone surrogate
    and nesting too deep to read."""
    try:
        return _decode(line)
    except _BadJSON as exc:
        fix = "; fix or delete the line" if exc.field is None else ""
        raise InputError(where, exc.message + fix, field=exc.field) from None


def decode_json_file(text: str, path: str | Path) -> Any:
    """One JSON document (a whole file's ``text``); errors as :func:`decode_json_line`,
    naming ``file:line`` where the line is known."""
    try:
        return _decode(text)
    except _BadJSON as exc:
        where = f"{path}:{exc.line}" if exc.line else str(path)
        raise InputError(where, exc.message, field=exc.field) from None


#: The longest JSONL line read (characters): a longer one is refused before it is decoded.
MAX_JSONL_LINE = 16_000_000


def iter_jsonl(path: str | Path, what: str = "JSONL") -> Iterator[tuple[str, Any]]:
    """Decoded rows of a JSONL file as ``("file:line", row)``, blank lines skipped; a bad
    line raises :class:`InputError` naming its file and line (see :func:`decode_json_line`),
    and so does a line longer than :data:`MAX_JSONL_LINE` characters."""
    text = read_text(path, what)
    for lineno, line in enumerate(text.split("\n"), start=1):
        if len(line) > MAX_JSONL_LINE:
            raise InputError(f"{path}:{lineno}", f"line of {len(line):,} characters, over "
                             f"the limit of {MAX_JSONL_LINE:,} for one {what} line; split it")
        if line.strip():
            where = f"{path}:{lineno}"
            yield where, decode_json_line(line, where)
