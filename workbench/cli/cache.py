"""``workbench cache info | clear``: what the cache folder holds, and emptying it.

The cache folder is :func:`workbench.runtime.cache_dir` (``--cache DIR``, else
``$WORKBENCH_CACHE``, else ``$XDG_CACHE_HOME/workbench`` or ``~/.cache/workbench``): the
embeddings in ``embeddings/`` (per model and kind), the generated answers in
``generations/`` and the local generator's converted model in ``models/``, or in
``$WORKBENCH_MODEL_CACHE`` when set (:func:`workbench.generation.model_cache_root`).
``clear`` removes them all, or ``--only`` one kind, or ``--model`` one model's embeddings.
It deletes only what the workbench wrote: each of those folders carries the marker the
workbench's writers create (:data:`~workbench.retrieval.shards.CACHE_MARKER`); an unmarked
folder is refused, only files of the workbench's naming scheme go (of a models folder, the
converted models that hold ``workbench-source.json``), symlinks are never followed, and
``/``, ``$HOME`` (or a folder above it) and a file given as the folder are refused
(:func:`~workbench.retrieval.shards.clear_cache_folder`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
from pathlib import Path
from typing import Any

from workbench.io import WorkbenchError

__all__ = ["run_cache_command"]


def _size(nbytes: float) -> str:
    """Bytes for people: ``512 B``, ``18.9 MB``."""
    if nbytes < 1000:
        return f"{nbytes:.0f} B"
    for unit in ("kB", "MB", "GB"):
        nbytes /= 1000
        if nbytes < 1000 or unit == "GB":
            break
    return f"{nbytes:.1f} {unit}"


def _files(folder: Path, pattern: str = "*") -> tuple[int, int]:
    """Files matching ``pattern`` under ``folder`` and their bytes."""
    files = [p for p in folder.rglob(pattern) if p.is_file()] if folder.is_dir() else []
    return len(files), sum(p.stat().st_size for p in files)


def _models(folder: Path) -> list[Path]:
    """The converted models in ``folder``: what ``clear`` would delete."""
    from workbench.runtime import MODEL_SOURCE_FILE

    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink()
                  and (p / MODEL_SOURCE_FILE).is_file()) if folder.is_dir() else []


def _where(given: str | None) -> str:
    from workbench.runtime import CACHE_ENV

    if given:
        return "given with --cache"
    if os.environ.get(CACHE_ENV):
        return f"from ${CACHE_ENV}"
    return f"the default; set ${CACHE_ENV} or pass --cache to move it"


def run_cache_command(args: argparse.Namespace) -> int:
    from workbench.generation.local import model_cache_root
    from workbench.retrieval import EmbeddingCache
    from workbench.runtime import EMBEDDINGS_DIR, GENERATIONS_DIR, cache_dir, check_cache_folder

    root = cache_dir(args.cache)
    folders = _Folders(root, root / GENERATIONS_DIR, model_cache_root(args.cache))
    for folder in (root, folders.models):
        check_cache_folder(folder, deleting=args.action == "clear")
    embeddings = EmbeddingCache(root / EMBEDDINGS_DIR)
    if args.action == "info":
        return _info(folders, embeddings, args)
    return _clear(folders, embeddings, args)


@dataclasses.dataclass(frozen=True)
class _Folders:
    """Where the cache command looks: the cache folder, its answers and converted models."""

    root: Path
    generations: Path
    models: Path


def _info(folders: _Folders, embeddings: Any, args: argparse.Namespace) -> int:
    root = folders.root
    rows = embeddings.inventory()
    answers, answer_bytes = _files(folders.generations, "*.json")
    models = {p.name: _files(p)[1] for p in _models(folders.models)}
    if args.json:
        print(json.dumps({"folder": str(root), "embeddings": rows,
                          "generations": {"answers": answers, "bytes": answer_bytes},
                          "models": models, "models_folder": str(folders.models)}, indent=2))
        return 0
    print(f"cache folder: {root} ({_where(args.cache)})")
    if rows:
        width = max(len(r["model_id"]) for r in rows)
        print(f"embeddings ({_size(sum(r['bytes'] for r in rows))}):")
        print(f"  {'model':<{width}}  {'kind':<8}  {'vectors':>9}  {'shards':>6}  {'size':>9}")
        for r in rows:
            print(f"  {r['model_id']:<{width}}  {r['kind']:<8}  {r['vectors']:>9,}  "
                  f"{r['shards']:>6}  {_size(r['bytes']):>9}")
    else:
        print("embeddings: none")
    print(f"generations: {answers:,} answers ({_size(answer_bytes)})")
    print(f"converted models in {folders.models}: "
          + (", ".join(f"{name} ({_size(n)})" for name, n in models.items()) or "none"))
    return 0


def _clear(folders: _Folders, embeddings: Any, args: argparse.Namespace) -> int:
    from workbench.runtime import (
        GENERATIONS_DIR,
        MODELS_DIR,
        check_cache_folder,
        clear_cache_folder,
    )

    root = folders.root
    for kind, folder in (("embeddings", embeddings.root), ("generations", folders.generations),
                         ("models", folders.models)):
        if args.only in (None, kind) and (kind == "embeddings" or not args.model):
            check_cache_folder(folder, deleting=True, marked=True)  # all refusals before a delete
    rows = embeddings.inventory()
    if args.model:
        if args.only not in (None, "embeddings"):
            raise WorkbenchError(f"--model names an embedding model: it cannot go with "
                             f"--only {args.only}")
        model_id = _model_id(args.model, rows)
        gone = [r for r in rows if r["model_id"] == model_id]
        if not gone:
            known = ", ".join(sorted({r["model_id"] for r in rows})) or "none"
            raise WorkbenchError(f"no embeddings of {model_id!r} in {embeddings.root} "
                             f"(models there: {known})")
        embeddings.clear(model_id)
        print(f"removed {sum(r['vectors'] for r in gone):,} vectors of {model_id} "
              f"({_size(sum(r['bytes'] for r in gone))}) from {embeddings.root}")
        return 0
    removed = []
    if args.only in (None, "embeddings"):
        embeddings.clear()
        removed.append(f"{sum(r['vectors'] for r in rows):,} vectors of "
                       f"{len({r['model_id'] for r in rows})} model(s) "
                       f"({_size(sum(r['bytes'] for r in rows))})")
    if args.only in (None, "generations"):
        answers, answer_bytes = clear_cache_folder(folders.generations, GENERATIONS_DIR)
        removed.append(f"{answers:,} generated answers ({_size(answer_bytes)})")
    if args.only in (None, "models"):
        # the converted models, not the folder: $WORKBENCH_MODEL_CACHE may hold more
        models, model_bytes = clear_cache_folder(folders.models, MODELS_DIR)
        removed.append(f"{models} converted model(s) ({_size(model_bytes)})"
                       + ("" if folders.models == root / MODELS_DIR else f" from {folders.models}"))
    print(f"removed {', '.join(removed)} from {root}")
    return 0


def _model_id(name: str, rows: list[dict[str, Any]]) -> str:
    """A model id as ``cache info`` lists it, or the id of the encoder ``name`` builds."""
    if any(r["model_id"] == name for r in rows):
        return name
    from workbench.retrieval import get_encoder

    return get_encoder(name).model_id
