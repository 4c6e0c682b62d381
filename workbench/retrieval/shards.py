"""The embedding cache's files: where the cache lives (:func:`cache_dir`), how folders and
shards are named, and how one shard is written (atomically) and read back (checked).

A shard is ``{time_ns}-{pid}-{uuid}.{sha256}.npz`` holding ``hashes`` (sha256 hex of each
text) and ``vectors`` (float32, one row per hash); the sha256 in its name is that of its own
bytes, so a truncated or altered shard is detected on reading. A model's folder also holds
``model.json`` (its model id, for ``workbench cache info``). Both are written by
:func:`workbench.io.atomic_write_bytes` (temp file ``.{name}.<8 random characters>.tmp``, fsync,
rename) without its lock: locking is the cache's concern
(:class:`~workbench.retrieval.cache.EmbeddingCache`), not this module's.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import time
import uuid
import zipfile
from pathlib import Path

import numpy as np

from workbench.io import InputError, WorkbenchError, atomic_write_bytes, temp_files

__all__ = [
    "CACHE_ENV",
    "CACHE_MARKER",
    "EMBEDDINGS_DIR",
    "GENERATIONS_DIR",
    "MODELS_DIR",
    "MODEL_SOURCE_FILE",
    "SHARD_NAME",
    "ShardError",
    "cache_dir",
    "check_cache_folder",
    "clear_cache_folder",
    "is_temp_file",
    "mark_cache_folder",
    "model_slug",
    "read_model_id",
    "read_shard",
    "remove_stale_temp",
    "shard_rows",
    "text_hash",
    "write_model_id",
    "write_shard",
]

#: The environment variable that moves the default cache folder.
CACHE_ENV = "WORKBENCH_CACHE"
#: The cache folder's sub-folders (:func:`cache_dir`): the embedding cache, the generated
#: answers and the local generator's converted models (unless ``$WORKBENCH_MODEL_CACHE``).
EMBEDDINGS_DIR = "embeddings"
GENERATIONS_DIR = "generations"
MODELS_DIR = "models"
#: A shard's file name (``stem`` and ``sha`` groups).
SHARD_NAME = re.compile(r"^(?P<stem>[0-9]+-[0-9]+-[0-9a-f]+)\.(?P<sha>[0-9a-f]{64})\.npz$")
#: The marker the workbench writes into each cache folder it creates (``embeddings/``,
#: ``generations/``, the models folder), in the CACHEDIR.TAG convention so backup tools skip
#: it too. ``clear`` deletes nothing in a folder without it.
CACHE_MARKER = "CACHEDIR.TAG"
_MARKER_TEXT = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                "# This file is a cache directory tag created by workbench ({kind}).\n"
                "# `workbench cache clear` deletes only the workbench's own files here.\n")
_TMP = r"\.{name}\.[A-Za-z0-9_]{{8}}\.tmp"
_SHARD = r"[0-9]+-[0-9]+-[0-9a-f]+\.[0-9a-f]{64}\.npz"
#: The files each cache folder's writers create, as paths relative to the folder.
_OWN_FILES = {
    EMBEDDINGS_DIR: re.compile(
        r"[A-Za-z0-9._-]{0,60}-[0-9a-f]{12}/(?:\.lock|model\.json|" + _TMP.format(
            name=r"model\.json") + r"|(?:document|query)/(?:\.lock|\.tmp-[^/]*|" + _SHARD
        + "|" + _TMP.format(name=_SHARD) + "))"),
    GENERATIONS_DIR: re.compile(
        r"\.cache\.lock|[0-9a-f]{2}/(?:[0-9a-f]{64}\.json|"
        + _TMP.format(name=r"[0-9a-f]{64}\.json") + ")"),
}
#: The file in each converted model's folder that marks it as the workbench's.
MODEL_SOURCE_FILE = "workbench-source.json"
_TEMP_OF = re.compile(r"^\.(?P<target>.+)\.[^.]+\.tmp$")


class ShardError(WorkbenchError):
    """A shard that must not be served: its ``reason`` says why."""


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


def text_hash(text: str) -> str:
    """sha256 of the UTF-8 text: the same key as ``Chunk.content_hash``."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def model_slug(model_id: str) -> str:
    """A folder name for ``model_id``: readable part plus a short hash (no collisions)."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", model_id).strip("._")[:60] or "model"
    return f"{readable}-{hashlib.sha256(model_id.encode('utf-8')).hexdigest()[:12]}"


def write_shard(folder: Path, hashes: list[str], vectors: np.ndarray) -> str:
    """Write one shard into ``folder`` atomically (temp file, fsync, rename); its name. The
    caller holds the folder's lock."""
    buf = io.BytesIO()
    np.savez(buf, hashes=np.asarray(hashes, dtype="<U64"), vectors=vectors)
    data = buf.getvalue()
    stem = f"{time.time_ns()}-{os.getpid()}-{uuid.uuid4().hex}"
    name = f"{stem}.{hashlib.sha256(data).hexdigest()}.npz"
    atomic_write_bytes(folder / name, data, lock=False)
    return name


def read_shard(path: Path) -> tuple[np.ndarray, np.ndarray] | None:
    """``(hashes, vectors)`` of a shard; None when it is gone (removed by another process
    meanwhile); :class:`ShardError` when its name, checksum or arrays are wrong."""
    match = SHARD_NAME.match(path.name)
    if match is None:
        raise ShardError("file name is not a shard name")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    if hashlib.sha256(data).hexdigest() != match["sha"]:
        raise ShardError("checksum mismatch (truncated or corrupted)")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            hashes, vectors = npz["hashes"], npz["vectors"]
    except Exception as exc:  # the right checksum but unreadable content
        raise ShardError(f"unreadable ({type(exc).__name__}: {exc})") from None
    if (
        vectors.ndim != 2
        or hashes.ndim != 1
        or len(hashes) != len(vectors)
        or vectors.dtype != np.float32
        or not np.all(np.isfinite(vectors))
    ):
        raise ShardError("malformed arrays")
    return hashes, vectors


def shard_rows(path: Path) -> int:
    """Rows of a shard, from the header of its ``vectors`` array (0 if unreadable)."""
    try:
        with zipfile.ZipFile(path) as zf, zf.open("vectors.npy") as fh:
            version = np.lib.format.read_magic(fh)
            header = (np.lib.format.read_array_header_1_0(fh) if version == (1, 0)
                      else np.lib.format.read_array_header_2_0(fh))
        return int(header[0][0])
    except (OSError, ValueError, KeyError, IndexError, zipfile.BadZipFile):
        return 0


def is_temp_file(path: Path) -> bool:
    """Whether ``path`` is the temp file of a shard write: :func:`workbench.io.temp_files`
    of a shard name, or a ``.tmp-...`` file of the writer before it."""
    if path.name.startswith(".tmp-"):
        return True
    match = _TEMP_OF.match(path.name)
    return (match is not None and SHARD_NAME.match(match["target"]) is not None
            and path in temp_files(path.parent / match["target"]))


def remove_stale_temp(path: Path, max_age_s: float = 3600.0) -> None:
    """Remove a temp file left by a writer that died (an old one: a live writer's is fresh)."""
    with contextlib.suppress(OSError):
        if time.time() - path.stat().st_mtime > max_age_s:
            path.unlink()


def write_model_id(folder: Path, model_id: str) -> None:
    """Record which model a model folder holds (once). The caller holds the model folder's
    lock."""
    path = folder / "model.json"
    if not path.exists():
        atomic_write_bytes(path, json.dumps({"model_id": model_id}).encode("utf-8"), lock=False)


def read_model_id(folder: Path) -> str:
    """The model id of a model folder (its name for folders written before ``model.json``)."""
    try:
        return str(json.loads((folder / "model.json").read_text(encoding="utf-8"))["model_id"])
    except (OSError, ValueError, KeyError, TypeError):
        return folder.name



def mark_cache_folder(folder: Path, kind: str) -> None:
    """Create ``folder`` with its :data:`CACHE_MARKER` (once); writers call it before their
    first file."""
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


def check_cache_folder(folder: Path, *, deleting: bool, marked: bool = False) -> None:
    """Refuse (:class:`~workbench.io.InputError`) a cache folder that is a file; when
    ``deleting``, ``/``, ``$HOME`` or a folder above it; when ``marked``, an existing folder
    that is a symlink or lacks the workbench's :data:`CACHE_MARKER`."""
    if folder.exists() and not folder.is_dir():
        raise InputError(str(folder), "is a file, not a cache folder; give the folder "
                         "(--cache DIR or $WORKBENCH_CACHE)")
    if deleting:
        real, home = folder.resolve(), Path.home().resolve()
        if real == Path(real.anchor) or real == home or real in home.parents:
            raise InputError(str(folder), f"resolves to {real}, the root or home folder: "
                             "never a cache folder, nothing deleted; give the cache folder "
                             "itself (e.g. ~/.cache/workbench)")
    if not marked or not (folder.exists() or folder.is_symlink()):
        return
    marker = folder / CACHE_MARKER
    if folder.is_symlink() or marker.is_symlink() or not marker.is_file() or (
            b"workbench" not in marker.read_bytes()[:4096]):
        raise InputError(str(folder), f"has no workbench marker ({CACHE_MARKER}) or is a "
                         "symlink, so the workbench did not create it and deletes nothing "
                         "there; if its files are a cache of yours, delete them by hand "
                         f"(rm -r {folder})")


def clear_cache_folder(folder: Path, kind: str, under: str = "") -> tuple[int, int]:
    """Delete the workbench's own files in the cache folder ``folder`` of ``kind``
    (:data:`EMBEDDINGS_DIR`, :data:`GENERATIONS_DIR` or :data:`MODELS_DIR`), only those
    below ``under`` when given; returns the entries (shards, answers, models: not locks or
    temp files) and bytes deleted. Refuses what :func:`check_cache_folder` refuses (a folder
    without the marker among them), and never follows a symlink: only files named by the
    workbench's scheme (for models, folders holding :data:`MODEL_SOURCE_FILE`) go."""
    if not folder.exists() and not folder.is_symlink():
        return 0, 0
    check_cache_folder(folder, deleting=True, marked=True)
    if kind == MODELS_DIR:
        return _clear_models(folder)
    own, files, nbytes = _OWN_FILES[kind], 0, 0
    for top, dirs, names in os.walk(folder, topdown=False, followlinks=False):
        for name in names:
            path = Path(top) / name
            rel = path.relative_to(folder).as_posix()
            if path.is_symlink() or not own.fullmatch(rel) or not rel.startswith(under):
                continue
            with contextlib.suppress(OSError):
                size = path.stat().st_size
                path.unlink()
                files, nbytes = files + (not name.startswith(".")), nbytes + size
        for name in dirs:  # folders the deletion emptied (never one with other files)
            with contextlib.suppress(OSError):
                if not (Path(top) / name).is_symlink():
                    (Path(top) / name).rmdir()
    return files, nbytes


def _clear_models(folder: Path) -> tuple[int, int]:
    import shutil

    models = [p for p in sorted(folder.iterdir()) if not p.is_symlink() and p.is_dir()
              and (p / MODEL_SOURCE_FILE).is_file()]
    nbytes = sum(f.stat().st_size for p in models for f in p.rglob("*")
                 if f.is_file() and not f.is_symlink())
    for model in models:
        shutil.rmtree(model)  # rmtree removes a symlink inside, never what it points to
    return len(models), nbytes
