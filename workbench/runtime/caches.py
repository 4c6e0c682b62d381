"""Where the workbench's caches live, and the folders' ownership marks.

One cache folder for every command and notebook (:func:`cache_dir`: ``--cache DIR``, else
``$WORKBENCH_CACHE``, else ``$XDG_CACHE_HOME/workbench``, else ``~/.cache/workbench``), with
its sub-folders named once here: :data:`EMBEDDINGS_DIR` (the embedding cache,
:mod:`workbench.retrieval.cache`), :data:`GENERATIONS_DIR` (generated answers,
:mod:`workbench.generation.answer_cache`) and :data:`MODELS_DIR` (converted models). Each
folder a writer creates carries :data:`CACHE_MARKER` (:func:`mark_cache_folder`);
:func:`clear_cache_folder` deletes only the workbench's own files in a marked folder.
"""

from __future__ import annotations

import contextlib
import os
import re
import uuid
from pathlib import Path

from workbench.io import InputError

__all__ = ["CACHE_ENV", "CACHE_MARKER", "EMBEDDINGS_DIR", "GENERATIONS_DIR", "MODELS_DIR",
           "MODEL_SOURCE_FILE", "cache_dir", "check_cache_folder", "clear_cache_folder",
           "mark_cache_folder"]

#: The environment variable that moves the default cache folder.
CACHE_ENV = "WORKBENCH_CACHE"
#: The cache folder's sub-folders (:func:`cache_dir`): the embedding cache, the generated
#: answers and the local generator's converted models (unless ``$WORKBENCH_MODEL_CACHE``).
EMBEDDINGS_DIR = "embeddings"
GENERATIONS_DIR = "generations"
MODELS_DIR = "models"
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
