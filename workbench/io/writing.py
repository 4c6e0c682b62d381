"""Writing user files: atomic, locked, never over a newer file.

:func:`atomic_write_text` (and ``_bytes``) is a write that a crash cannot half-do: a
temporary file ``.{name}.<8 random characters>.tmp`` in the same folder, fsync,
``os.replace``; the new file keeps the permissions of the one it replaces, else gets those
of a plain write (0o666 less the umask, applied by the kernel). It holds the file's lock
(:func:`~workbench.io.locking.locked`) while it writes, removes the temporary files that
killed writers left behind, and removes its own on failure. A folder where the file
belongs, a missing parent folder (a typo'd path; callers that own their folders, such as
caches, pass ``make_parents=True``), a full disk or a read-only target raise
:class:`~workbench.io.errors.InputError`; the old file is then unchanged.
:func:`append_text` is a read-modify-write for a log that only grows (the sweep state, the
baseline changelog). A writer that rewrites a whole file it read earlier
(``GoldenSet.save``) goes through :func:`write_unless_changed`: a save never overwrites a
newer file. Every public writer takes the path first (:func:`target_path`).
"""

from __future__ import annotations

import errno
import os
import re
import secrets
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path

from workbench.io.errors import InputError, WorkbenchError
from workbench.io.locking import locked
from workbench.io.reading import FileStamp, read_text

__all__ = ["StaleFileError", "append_text", "atomic_write_bytes", "atomic_write_text",
           "encode_text", "target_path", "temp_files", "write_unless_changed"]


def target_path(path: object, writer: str) -> Path:
    """``path`` as a Path. Every public writer takes the path first, then what it writes
    (``write_run(path, run)``, ``add_case(path, item)``); a call the other way round gets
    this error instead of a file named after an object."""
    if not isinstance(path, (str, os.PathLike)):
        raise WorkbenchError(f"{writer}: the path comes first, then what to write (got a "
                             f"{type(path).__name__} where the path goes)")
    return Path(path)


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
