"""File I/O shared by every writer and reader of user files.

Reading. :func:`read_text` returns a file's text or raises :class:`InputError` naming the
file (and, for bytes that are not UTF-8, the line and column): a missing file, a folder
where a file belongs, an unreadable file. A leading byte-order mark is dropped.
:func:`iter_jsonl` yields the rows of a JSONL file as ``("file:line", row)``, each decoded by
:func:`decode_json_line`, which refuses malformed JSON, duplicate keys in one object, lone
surrogates (``"\\ud800"``) and nesting too deep to read, naming the line and the field;
:func:`decode_json_file` reads a whole-file JSON document the same way.

Writing. :func:`atomic_write_text` (and ``_bytes``) is a write that a crash cannot half-do:
a temporary file ``.{name}.<8 random characters>.tmp`` in the same folder, fsync,
``os.replace``; the new file keeps the permissions of the one it replaces, else gets those
of a plain write (0o666 less the umask, applied by the kernel). It holds the file's lock
(:func:`locked`) while it writes, removes the temporary files that killed writers left
behind, and removes its own on failure. A folder where the file belongs, a missing parent
folder (a typo'd path; callers that own their folders, such as caches, pass
``make_parents=True``), a full disk or a read-only target raise :class:`InputError`; the old
file is then unchanged. A read-modify-write (append a
golden case, ratchet a baseline) holds :func:`locked` around the read and the write, so
concurrent writers lose nothing; :func:`append_text` is that for a log that only grows (the
sweep state, the baseline changelog). A writer that rewrites a whole file it
read earlier (``GoldenSet.save``) goes through :func:`write_unless_changed`: a save never
overwrites a newer file. The lock is a ``filelock`` lock on the sibling ``.{name}.lock``
(an empty file that stays; the kernel releases the lock when a holder dies).

This module imports nothing from the rest of the package (it is the lowest layer).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import secrets
import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from filelock import FileLock, Timeout

__all__ = ["LOCK_TIMEOUT_S", "MAX_JSONL_LINE", "FileStamp", "InputError", "StaleFileError",
           "WorkbenchError", "WorkbenchWarning", "append_text", "atomic_write_bytes",
           "atomic_write_text", "decode_json_file", "decode_json_line", "encode_text",
           "find_lone_surrogate", "iter_jsonl", "lock_path", "locked", "read_text",
           "read_text_stamped", "target_path", "temp_files", "write_unless_changed"]

#: Seconds a writer waits for another writer's lock before giving up with an InputError.
LOCK_TIMEOUT_S = 120.0


class WorkbenchError(ValueError):
    """The package's own error: a bad input or a request it cannot do, in one line that says
    what to do. Every check of user input raises it (or a subclass); the ``workbench``
    command prints it as one line and exits 2, while any other exception is a bug and keeps
    its traceback. A ValueError, so ``except ValueError`` still catches it."""


class InputError(WorkbenchError):
    """Bad input or an impossible write, in one line: the file (line, field) and what to do.
    ``where`` is ``file`` or ``file:line``; ``field`` the field at fault, if any."""

    def __init__(self, where: str, message: str, field: str | None = None):
        self.where, self.field, self.reason = where, field, message
        named = f"field {field!r}: " if field else ""
        super().__init__(f"{where}: {named}{message}")


class WorkbenchWarning(UserWarning):
    """The base of every warning the package issues (a ``UserWarning``, so filters on that
    still apply); the test suite turns it into an error unless a test expects it.

    Shown once per message (a notebook re-running a cell is not told twice), as
    ``NameWarning: message``: the interpreter's file and line (a notebook cell's temporary
    file) say nothing to the person reading it. Filters set by the user still come first."""


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: TextIO | None = None, line: str | None = None) -> None:
    """``warnings.showwarning`` for the package's own warnings: the class and the message."""
    if not issubclass(category, WorkbenchWarning):
        _SHOW_OTHERS(message, category, filename, lineno, file, line)
        return
    text = f"{category.__name__}: {message}"
    if text in _SHOWN:  # once per message, whatever filters a host installed (IPython's)
        return
    _SHOWN.add(text)
    stream = sys.stderr if file is None else file
    if stream is not None:
        with suppress(OSError):
            stream.write(text + "\n")


_SHOWN: set[str] = set()
_SHOW_OTHERS = warnings.showwarning
warnings.showwarning = _show_warning
warnings.filterwarnings("once", category=WorkbenchWarning, append=True)


# ----------------------------------------------------------------------------- reading

def target_path(path: object, writer: str) -> Path:
    """``path`` as a Path. Every public writer takes the path first, then what it writes
    (``write_run(path, run)``, ``add_case(path, item)``); a call the other way round gets
    this error instead of a file named after an object."""
    if not isinstance(path, (str, os.PathLike)):
        raise WorkbenchError(f"{writer}: the path comes first, then what to write (got a "
                             f"{type(path).__name__} where the path goes)")
    return Path(path)


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


# ----------------------------------------------------------------------------- locking

def lock_path(path: str | Path) -> Path:
    """The lock file of ``path``: its sibling ``.{name}.lock``."""
    path = Path(path)
    return path.with_name(f".{path.name}.lock")


class _Locked(AbstractContextManager[None]):
    def __init__(self, path: Path, timeout: float):
        self.path, self.timeout = path, timeout
        self.lock: FileLock | None = None

    def __enter__(self) -> None:
        target = lock_path(self.path)
        try:  # filelock would wait out its timeout on a folder it cannot write: ask first
            target.parent.mkdir(parents=True, exist_ok=True)
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT, 0o666))
        except OSError as exc:
            raise InputError(str(self.path), f"cannot write here: the lock file {target} "
                             f"cannot be created ({exc.strerror or exc}); is the folder "
                             "writable?") from None
        try:
            self.lock = FileLock(target, timeout=self.timeout, is_singleton=True)
            self.lock.acquire()
        except Timeout:
            raise InputError(str(self.path), f"another process has held its lock ({target}) "
                             f"for over {self.timeout:.0f} s; wait for it to finish") from None
        except OSError as exc:
            raise InputError(str(self.path), f"cannot take the lock {target} "
                             f"({exc.strerror or exc}); is the folder writable?") from None

    def __exit__(self, *exc: object) -> None:
        if self.lock is not None:
            self.lock.release()


def locked(path: str | Path, timeout: float = LOCK_TIMEOUT_S) -> AbstractContextManager[None]:
    """Hold the lock of ``path`` (reentrant in one thread, exclusive between threads and
    processes): ``with locked(path): read, change, write``."""
    return _Locked(Path(path), timeout)


# ----------------------------------------------------------------------------- writing

def temp_files(path: str | Path) -> list[Path]:
    """The temporary files that writes of ``path`` create
    (``.{name}.<8 random characters>.tmp``)."""
    path = Path(path)
    pattern = re.compile(rf"\.{re.escape(path.name)}\.[A-Za-z0-9_]{{8}}\.tmp")
    if not path.parent.is_dir():
        return []
    return sorted(p for p in path.parent.iterdir() if pattern.fullmatch(p.name))


_TEMP_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789_"
_CREATE = os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_BINARY", 0)


def _create_temp(path: Path) -> tuple[int, str]:
    """A new temporary file ``.{name}.<8 random characters>.tmp`` next to ``path``, open for
    writing. Created with mode 0o666, so the kernel applies the umask as for a plain write
    (the process umask is never changed: threads share it)."""
    for _ in range(100):
        name = "".join(secrets.choice(_TEMP_CHARS) for _ in range(8))
        tmp = str(path.parent / f".{path.name}.{name}.tmp")
        try:
            return os.open(tmp, _CREATE, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no unused temporary file name", str(path.parent))


def _check_target(path: Path, make_parents: bool) -> None:
    if path.is_dir():
        raise InputError(str(path), "is a folder; give the path of a file to write")
    parent = path.parent
    if not parent.is_dir():
        if parent.exists():
            raise InputError(str(path), f"{parent} is a file, not a folder; check the path")
        if not make_parents:
            raise InputError(str(path), f"folder {parent} does not exist; check the path for "
                             "a typo, or create the folder first")
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(str(path), f"cannot create folder {parent} "
                             f"({exc.strerror or exc})") from None


def atomic_write_bytes(path: str | Path, data: bytes, *, make_parents: bool = False,
                       lock: bool = True) -> None:
    """Write ``data`` to ``path`` so that a crash leaves either the old file or the new one
    (see the module docstring). ``lock=False`` when the caller holds a lock that covers
    ``path`` (a cache's)."""
    path = Path(path)
    _check_target(path, make_parents)
    with locked(path) if lock else nullcontext():
        for stale in temp_files(path):  # left by a writer that was killed mid-write
            stale.unlink(missing_ok=True)
        tmp = ""
        try:
            fd, tmp = _create_temp(path)
            with os.fdopen(fd, "wb") as fh:  # closes the file on every path
                try:
                    mode = path.stat().st_mode & 0o777
                except FileNotFoundError:
                    pass
                else:  # the new file keeps the permissions of the one it replaces
                    os.fchmod(fh.fileno(), mode)
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except OSError as exc:
            if tmp:
                Path(tmp).unlink(missing_ok=True)
            raise InputError(str(path), f"cannot write ({exc.strerror or exc}); the old file "
                             "is unchanged: free disk space or check permissions, then retry"
                             ) from None
        except BaseException:
            if tmp:
                Path(tmp).unlink(missing_ok=True)
            raise


def atomic_write_text(path: str | Path, text: str, *, make_parents: bool = False,
                      lock: bool = True) -> None:
    """:func:`atomic_write_bytes` of ``text`` as UTF-8 with ``\\n`` line ends."""
    atomic_write_bytes(path, encode_text(text, path), make_parents=make_parents, lock=lock)


def append_text(path: str | Path, text: str, *, what: str, make_parents: bool = False) -> None:
    """Append ``text`` to the file ``path`` (created when missing) as one atomic rewrite,
    under the file's lock: the file is re-read under the lock, so whatever another writer
    put there before (appended lines, a rewrite) is kept and ``text`` follows it on a line
    of its own."""
    _check_target(Path(path), make_parents)  # before the lock, which would make the folder
    with locked(path):
        old = read_text(path, what) if Path(path).exists() else ""
        sep = "" if not old or old.endswith("\n") else "\n"
        atomic_write_text(path, old + sep + text, make_parents=make_parents, lock=False)


def encode_text(text: str, path: str | Path) -> bytes:
    """``text`` as the UTF-8 bytes to write to ``path``; a lone surrogate is an
    :class:`InputError`."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(str(path), f"text to write holds a lone surrogate at character "
                         f"{exc.start}; nothing was written") from None


# ----------------------------------------------------------------------------- rewriting

@dataclass(frozen=True)
class FileStamp:
    """What a file held when it was read: its size and the sha256 of its bytes."""

    size: int
    sha256: str

    @classmethod
    def of(cls, data: bytes) -> FileStamp:
        return cls(len(data), hashlib.sha256(data).hexdigest())


class StaleFileError(InputError):
    """A whole-file save refused: the file changed since it was read."""


def write_unless_changed(path: str | Path, data: bytes, since: FileStamp, *, what: str,
                         merge_appended: Callable[[bytes], bytes] | None = None) -> None:
    """Replace the file ``path``, read earlier as ``since``, with ``data``, only if it still
    holds those bytes: checked under the file's lock, so a save never overwrites a newer
    file (a file that already holds ``data`` is left as it is). When the file only grew
    since (its first ``since.size`` bytes unchanged) and ``merge_appended`` is given, the
    data written is ``merge_appended(appended bytes)`` (which raises
    :class:`StaleFileError` when the merge is ambiguous); otherwise :class:`StaleFileError`
    says what changed, and nothing is written."""
    path = Path(path)
    _check_target(path, make_parents=False)
    with locked(path):
        try:
            now = path.read_bytes()
        except FileNotFoundError:
            now = None
        except OSError as exc:
            raise InputError(str(path), f"cannot read the {what} file before saving "
                             f"({exc.strerror or exc}); nothing written") from None
        if now == data:  # nothing to write; still clear what a killed writer left
            for stale in temp_files(path):
                stale.unlink(missing_ok=True)
            return
        if now is not None and FileStamp.of(now) != since:
            grew = (len(now) > since.size
                    and FileStamp.of(now[:since.size]) == since)
            if grew and merge_appended is not None:
                data = merge_appended(now[since.size:])
            else:
                appended = now[since.size:].count(b"\n") or 1
                change = (f"{appended} line(s) were appended" if grew
                          else f"it was rewritten ({since.size} -> {len(now)} bytes)")
                raise StaleFileError(str(path), f"the {what} file changed since it was loaded "
                                     f"({change}, by another process or an editor); nothing "
                                     "written: load it again and redo your edits, or save to "
                                     "another path and merge the two files by hand")
        atomic_write_bytes(path, data, lock=False)
