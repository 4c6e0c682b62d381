"""Where the workbench's caches live, which files in them are the workbench's, and clearing.

One cache folder for every command and notebook (:func:`cache_dir`: ``--cache DIR``, else
``$WORKBENCH_CACHE``, else ``$XDG_CACHE_HOME/workbench``, else ``~/.cache/workbench``), with
its sub-folders named once here: :data:`EMBEDDINGS_DIR` (the embedding cache,
:mod:`workbench.retrieval.cache`), :data:`GENERATIONS_DIR` (generated answers,
:mod:`workbench.generation.answer_cache`) and :data:`MODELS_DIR` (converted models).

Ownership. Each folder a writer creates carries :data:`CACHE_MARKER` (:func:`mark_cache_folder`)
and :data:`CACHE_MANIFEST`, the list of the files the workbench wrote there: one JSON line per
file, ``{"path": relative path, "size": bytes, "sha256": hex}``, added by
:func:`record_cache_files` right after the file is written (the digest of the bytes the
writer has in hand, so recording costs no second read), through :func:`workbench.io.append_text`
(atomic, under the manifest's lock). :func:`clear_cache_folder` deletes only what the manifest
lists, and of that only a regular file reached without a symlink whose size and sha256 still
match (hashed then, one file at a time, only the files about to go); then the folders its
deletions emptied. A marker is the workbench's only when it holds exactly the bytes
:func:`mark_cache_folder` writes for that folder's kind. So a user's file beside or inside a
cache folder is never deleted, whatever its name: no folder tree is removed, no name pattern
decides, and a file the user changed or replaced is no longer the one recorded. Lock files
(empty) stay.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from workbench.io import InputError, append_text, atomic_write_text, locked

__all__ = ["CACHE_ENV", "CACHE_MANIFEST", "CACHE_MARKER", "EMBEDDINGS_DIR", "GENERATIONS_DIR",
           "MODELS_DIR", "CacheFile", "Cleared", "cache_dir", "cache_files",
           "check_cache_folder", "clear_cache_folder", "mark_cache_folder",
           "record_cache_files", "record_cache_tree"]

#: The environment variable that moves the default cache folder.
CACHE_ENV = "WORKBENCH_CACHE"
#: The cache folder's sub-folders (:func:`cache_dir`): the embedding cache, the generated
#: answers and the local generator's converted models (unless ``$WORKBENCH_MODEL_CACHE``).
EMBEDDINGS_DIR = "embeddings"
GENERATIONS_DIR = "generations"
MODELS_DIR = "models"
#: The marker the workbench writes into each cache folder it creates (``embeddings/``,
#: ``generations/``, the models folder), in the CACHEDIR.TAG convention so backup tools skip
#: it too. ``clear`` deletes nothing in a folder without exactly the workbench's marker.
CACHE_MARKER = "CACHEDIR.TAG"
#: The list of files the workbench wrote into a cache folder (module docstring).
CACHE_MANIFEST = ".workbench-manifest.jsonl"
_MARKER_TEXT = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                "# This file is a cache directory tag created by workbench ({kind}).\n"
                "# `workbench cache clear` deletes only the workbench's own files here.\n")
_NOFOLLOW = os.O_RDONLY | os.O_NOFOLLOW
_DIR = _NOFOLLOW | os.O_DIRECTORY


def cache_dir(path: str | Path | None = None) -> Path:
    """The workbench cache folder: ``path`` when given, else ``$WORKBENCH_CACHE``, else
    ``$XDG_CACHE_HOME/workbench``, else ``~/.cache/workbench``. Its sub-folders are named by
    :data:`EMBEDDINGS_DIR`, :data:`GENERATIONS_DIR` and :data:`MODELS_DIR`."""
    if path is not None:
        return Path(path).expanduser()
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "workbench"


def mark_cache_folder(folder: Path, kind: str) -> None:
    """Create ``folder`` with its :data:`CACHE_MARKER` for ``kind`` (once); writers call it
    before their first file."""
    marker = folder / CACHE_MARKER
    if marker.is_file():
        return
    # Writers in several processes (sweep workers) may mark the folder at once: each writes
    # its own whole temporary file and links it into place; the first link wins, and no
    # writer ever sees (or removes) another's half-written file.
    folder.mkdir(parents=True, exist_ok=True)
    temp = folder / f".{CACHE_MARKER}.{uuid.uuid4().hex}.tmp"
    try:
        temp.write_bytes(_MARKER_TEXT.format(kind=kind).encode("utf-8"))
        with contextlib.suppress(FileExistsError):
            os.link(temp, marker)
    except OSError as e:
        raise InputError(str(marker), f"cannot write ({e.strerror}); check the cache "
                         "folder's permissions, or give another folder") from e
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()


def record_cache_files(folder: Path, files: Mapping[Path, str | None]) -> None:
    """Add ``files`` (paths inside the marked cache ``folder`` that the workbench has just
    written) to its :data:`CACHE_MANIFEST`, each with its size and sha256: the digest given
    (of the bytes the writer wrote), else read from the file now."""
    lines = []
    for path, digest in files.items():
        rel = path.relative_to(folder).as_posix()
        if digest is None:
            with path.open("rb") as fh:
                digest = _sha256(fh)
        lines.append(json.dumps({"path": rel, "size": path.lstat().st_size, "sha256": digest}))
    if lines:
        append_text(folder / CACHE_MANIFEST, "\n".join(lines) + "\n", what="cache manifest")


def record_cache_tree(folder: Path, tree: Path) -> None:
    """:func:`record_cache_files` of every regular file under ``tree`` (a converted model the
    workbench just wrote inside ``folder``), symlinks not followed."""
    record_cache_files(folder, {Path(top) / name: None
                                for top, _, names in os.walk(tree, followlinks=False)
                                for name in names if (Path(top) / name).is_file()
                                and not (Path(top) / name).is_symlink()})


@dataclass(frozen=True)
class CacheFile:
    """One line of a :data:`CACHE_MANIFEST`: a file the workbench wrote."""

    path: str
    size: int
    sha256: str


def cache_files(folder: Path) -> dict[str, CacheFile]:
    """The manifest of ``folder`` by relative path (the last line for a path wins); lines that
    are not a manifest entry, and a manifest that is a symlink, list nothing."""
    try:
        fd = os.open(folder / CACHE_MANIFEST, _NOFOLLOW)
    except OSError:
        return {}
    with os.fdopen(fd, "rb") as fh:
        data = fh.read()
    out: dict[str, CacheFile] = {}
    for line in data.decode("utf-8", "replace").splitlines():
        with contextlib.suppress(ValueError, TypeError, KeyError, RecursionError):
            row = json.loads(line)
            entry = CacheFile(row["path"], row["size"], row["sha256"])
            if (isinstance(entry.path, str) and type(entry.size) is int
                    and isinstance(entry.sha256, str)):
                out[entry.path] = entry
    return out


def check_cache_folder(folder: Path, *, deleting: bool, kind: str | None = None) -> None:
    """Refuse (:class:`~workbench.io.InputError`) a cache folder that is a file; when
    ``deleting``, ``/``, ``$HOME`` or a folder above it; when ``kind`` is given, an existing
    folder that is a symlink or lacks exactly the workbench's :data:`CACHE_MARKER` of that
    kind."""
    if folder.exists() and not folder.is_dir():
        raise InputError(str(folder), "is a file, not a cache folder; give the folder "
                         "(--cache DIR or $WORKBENCH_CACHE)")
    if deleting:
        real, home = folder.resolve(), Path.home().resolve()
        if real == Path(real.anchor) or real == home or real in home.parents:
            raise InputError(str(folder), f"resolves to {real}, the root or home folder: "
                             "never a cache folder, nothing deleted; give the cache folder "
                             "itself (e.g. ~/.cache/workbench)")
    if kind is None or not (folder.exists() or folder.is_symlink()):
        return
    if folder.is_symlink() or _read_nofollow(folder / CACHE_MARKER) != _MARKER_TEXT.format(
            kind=kind).encode("utf-8"):
        raise InputError(str(folder), f"has no workbench marker ({CACHE_MARKER} as the "
                         "workbench writes it) or is a symlink, so the workbench did not "
                         "create it and deletes nothing there; if its files are a cache of "
                         f"yours, delete them by hand (rm -r {folder})")


@dataclass(frozen=True)
class Cleared:
    """What :func:`clear_cache_folder` deleted: the relative paths and their bytes."""

    paths: tuple[str, ...] = ()
    bytes: int = 0


def clear_cache_folder(folder: Path, kind: str, under: str = "") -> Cleared:
    """Delete the files the workbench wrote in the cache folder ``folder`` of ``kind``
    (:data:`EMBEDDINGS_DIR`, :data:`GENERATIONS_DIR` or :data:`MODELS_DIR`), only those
    below ``under`` when given, as the module docstring says; then drop from the manifest
    what is gone. Refuses what :func:`check_cache_folder` refuses (a folder without the
    marker among them)."""
    if not folder.exists() and not folder.is_symlink():
        return Cleared()
    check_cache_folder(folder, deleting=True, kind=kind)
    deleted: list[str] = []
    nbytes = 0
    with locked(folder / CACHE_MANIFEST):
        listed = cache_files(folder)
        root = os.open(folder, _DIR)
        try:
            for entry in listed.values():
                if entry.path.startswith(under) and _delete_if_ours(root, entry):
                    deleted.append(entry.path)
                    nbytes += entry.size
            kept = [e for e in listed.values()
                    if e.path not in set(deleted) and _exists(root, e.path)]
        finally:
            os.close(root)
        if deleted:
            atomic_write_text(folder / CACHE_MANIFEST, "".join(
                json.dumps({"path": e.path, "size": e.size, "sha256": e.sha256}) + "\n"
                for e in kept), lock=False)
    return Cleared(tuple(sorted(deleted)), nbytes)


def _parts(rel: str) -> list[str] | None:
    parts = rel.split("/")
    ok = rel and not rel.startswith("/") and all(p not in ("", ".", "..") for p in parts)
    return parts if ok and "\0" not in rel else None


@contextlib.contextmanager
def _folders(root: int, parts: list[str]) -> Iterator[list[int]]:
    """Open the folders of ``parts[:-1]`` below ``root`` one by one, refusing a symlink
    (``O_NOFOLLOW``): the descriptors, ``root`` first."""
    fds = [root]
    try:
        for part in parts[:-1]:
            fds.append(os.open(part, _DIR, dir_fd=fds[-1]))
        yield fds
    finally:
        for fd in fds[1:]:
            os.close(fd)


def _exists(root: int, rel: str) -> bool:
    parts = _parts(rel)
    try:
        with _folders(root, parts or []) as fds:
            return parts is not None and stat.S_ISREG(
                os.stat(parts[-1], dir_fd=fds[-1], follow_symlinks=False).st_mode)
    except OSError:
        return False


def _delete_if_ours(root: int, entry: CacheFile) -> bool:
    """Unlink the file of ``entry`` if it is a regular file reached without a symlink with
    the recorded size and sha256; then remove the folders that left empty."""
    parts = _parts(entry.path)
    if parts is None:
        return False
    try:
        with _folders(root, parts) as fds:
            name = parts[-1]
            fd = os.open(name, _NOFOLLOW, dir_fd=fds[-1])
            with os.fdopen(fd, "rb") as fh:
                info = os.fstat(fh.fileno())
                if (not stat.S_ISREG(info.st_mode) or info.st_size != entry.size
                        or _sha256(fh) != entry.sha256):
                    return False
            now = os.stat(name, dir_fd=fds[-1], follow_symlinks=False)
            if (now.st_ino, now.st_dev) != (info.st_ino, info.st_dev):
                return False  # replaced while it was hashed
            os.unlink(name, dir_fd=fds[-1])
            for depth in range(len(parts) - 1, 0, -1):  # folders the deletion emptied
                try:
                    os.rmdir(parts[depth - 1], dir_fd=fds[depth - 1])
                except OSError:
                    break
    except OSError:
        return False
    return True


def _read_nofollow(path: Path) -> bytes | None:
    try:
        fd = os.open(path, _NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        return fh.read(4096) if stat.S_ISREG(os.fstat(fh.fileno()).st_mode) else None


def _sha256(fh: BinaryIO) -> str:
    digest = hashlib.sha256()
    for block in iter(lambda: fh.read(1 << 20), b""):
        digest.update(block)
    return digest.hexdigest()
