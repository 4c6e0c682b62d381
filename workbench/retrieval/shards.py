"""The embedding cache's files (in the cache folder of :mod:`workbench.runtime.caches`): how
folders and shards are named, and how one shard is written (atomically) and read back (checked).

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

from workbench.io import WorkbenchError, atomic_write_bytes, temp_files

__all__ = [
    "SHARD_NAME",
    "ShardError",
    "is_temp_file",
    "model_slug",
    "read_model_id",
    "read_shard",
    "remove_stale_temp",
    "shard_rows",
    "text_hash",
    "write_model_id",
    "write_shard",
]

#: A shard's file name (``stem`` and ``sha`` groups).
SHARD_NAME = re.compile(r"^(?P<stem>[0-9]+-[0-9]+-[0-9a-f]+)\.(?P<sha>[0-9a-f]{64})\.npz$")
_TEMP_OF = re.compile(r"^\.(?P<target>.+)\.[^.]+\.tmp$")


class ShardError(WorkbenchError):
    """A shard that must not be served: its ``reason`` says why."""


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


def write_model_id(folder: Path, model_id: str) -> str | None:
    """Record which model a model folder holds (once); the sha256 of the bytes written, None
    when the file was there already. The caller holds the model folder's lock."""
    path = folder / "model.json"
    if path.exists():
        return None
    data = json.dumps({"model_id": model_id}).encode("utf-8")
    atomic_write_bytes(path, data, lock=False)
    return hashlib.sha256(data).hexdigest()


def read_model_id(folder: Path) -> str:
    """The model id of a model folder (its name for folders written before ``model.json``)."""
    try:
        return str(json.loads((folder / "model.json").read_text(encoding="utf-8"))["model_id"])
    except (OSError, ValueError, KeyError, TypeError):
        return folder.name
