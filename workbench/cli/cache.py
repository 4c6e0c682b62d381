"""``workbench cache info | clear``: what the cache folder holds, and emptying it.

The cache folder is :func:`workbench.runtime.cache_dir` (``--cache DIR``, else
``$WORKBENCH_CACHE``, else ``$XDG_CACHE_HOME/workbench`` or ``~/.cache/workbench``): the
embeddings in ``embeddings/`` (per model and kind), the generated answers in
``generations/`` and the local generator's converted model in ``models/``, or in
``$WORKBENCH_MODEL_CACHE`` when set (:func:`workbench.generation.model_cache_root`).
``clear`` removes them all, or ``--only`` one kind, or ``--model`` one model's embeddings.
It deletes only what the workbench wrote (:func:`~workbench.runtime.clear_cache_folder`):
each of those folders carries exactly the marker the workbench's writers create and the
manifest of the files they wrote; an unmarked folder is refused, only listed files whose size
and sha256 still match go (never a folder tree, never through a symlink), and ``/``,
``$HOME`` (or a folder above it) and a file given as the folder are refused. ``info`` counts
from the same manifests.
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


def _listed(folder: Path) -> dict[str, int]:
    """The files the workbench wrote in ``folder`` (its manifest) that are still there, with
    their bytes: what ``clear`` may delete."""
    from workbench.runtime import cache_files

    return {rel: entry.size for rel, entry in cache_files(folder).items()
            if (folder / rel).is_file() and not (folder / rel).is_symlink()}


def _models(folder: Path) -> dict[str, int]:
    """The converted models in ``folder`` (the first part of each listed path) and their
    bytes."""
    models: dict[str, int] = {}
    for rel, size in _listed(folder).items():
        if "/" in rel:
            models[rel.split("/")[0]] = models.get(rel.split("/")[0], 0) + size
    return dict(sorted(models.items()))


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
    answers = {rel: n for rel, n in _listed(folders.generations).items() if rel.endswith(".json")}
    answer_bytes = sum(answers.values())
    models = _models(folders.models)
    if args.json:
        print(json.dumps({"folder": str(root), "embeddings": rows,
                          "generations": {"answers": len(answers), "bytes": answer_bytes},
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
    print(f"generations: {len(answers):,} answers ({_size(answer_bytes)})")
    print(f"converted models in {folders.models}: "
          + (", ".join(f"{name} ({_size(n)})" for name, n in models.items()) or "none"))
    return 0


def _clear(folders: _Folders, embeddings: Any, args: argparse.Namespace) -> int:
    from workbench.runtime import (
        EMBEDDINGS_DIR,
        GENERATIONS_DIR,
        MODELS_DIR,
        check_cache_folder,
        clear_cache_folder,
    )

    root = folders.root
    for kind, folder in ((EMBEDDINGS_DIR, embeddings.root), (GENERATIONS_DIR, folders.generations),
                         (MODELS_DIR, folders.models)):
        if args.only in (None, kind) and (kind == EMBEDDINGS_DIR or not args.model):
            check_cache_folder(folder, deleting=True, kind=kind)  # all refusals before a delete
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
        vectors, nbytes, _ = _removed(rows, embeddings.inventory())
        print(f"removed {vectors:,} vectors of {model_id} ({_size(nbytes)}) "
              f"from {embeddings.root}")
        return 0
    removed = []
    if args.only in (None, "embeddings"):
        embeddings.clear()
        vectors, nbytes, n_models = _removed(rows, embeddings.inventory())
        removed.append(f"{vectors:,} vectors of {n_models} model(s) ({_size(nbytes)})")
    if args.only in (None, "generations"):
        answers = clear_cache_folder(folders.generations, GENERATIONS_DIR)
        removed.append(f"{sum(p.endswith('.json') for p in answers.paths):,} generated answers "
                       f"({_size(answers.bytes)})")
    if args.only in (None, "models"):
        # the converted models, not the folder: $WORKBENCH_MODEL_CACHE may hold more
        converted = clear_cache_folder(folders.models, MODELS_DIR)
        removed.append(f"{len({p.split('/')[0] for p in converted.paths if '/' in p})} "
                       f"converted model(s) ({_size(converted.bytes)})"
                       + ("" if folders.models == root / MODELS_DIR else f" from {folders.models}"))
    print(f"removed {', '.join(removed)} from {root}")
    return 0


def _removed(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> tuple[int, int, int]:
    """Vectors, bytes and models that went between two inventories (a shard ``clear`` kept,
    because it changed since it was written, still counts as there)."""
    left = {(r["model_id"], r["kind"]): r for r in after}
    gone = [(r, left.get((r["model_id"], r["kind"]), {"vectors": 0, "bytes": 0}))
            for r in before]
    return (sum(r["vectors"] - kept["vectors"] for r, kept in gone),
            sum(r["bytes"] - kept["bytes"] for r, kept in gone),
            len({r["model_id"] for r, kept in gone if kept["vectors"] < r["vectors"]}))


def _model_id(name: str, rows: list[dict[str, Any]]) -> str:
    """A model id as ``cache info`` lists it, or the id of the encoder ``name`` builds."""
    if any(r["model_id"] == name for r in rows):
        return name
    from workbench.retrieval import get_encoder

    return get_encoder(name).model_id
