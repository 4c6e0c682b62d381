"""``workbench cache info | clear``: what the cache folder holds, and emptying it.

The cache folder is :func:`workbench.retrieval.cache_dir` (``--cache DIR``, else
``$WORKBENCH_CACHE``, else ``$XDG_CACHE_HOME/workbench`` or ``~/.cache/workbench``): the
embeddings in ``embeddings/`` (per model and kind), the generated answers in
``generations/`` and the local generator's converted model in ``models/``, or in
``$WORKBENCH_MODEL_CACHE`` when set (:func:`workbench.generation.model_cache_root`).
``clear`` removes them all, or ``--only`` one kind, or ``--model`` one model's embeddings;
of a models folder it removes the converted models, never the folder itself.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
from pathlib import Path
from typing import Any

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
    return sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []


def _where(given: str | None) -> str:
    from workbench.retrieval import CACHE_ENV

    if given:
        return "given with --cache"
    if os.environ.get(CACHE_ENV):
        return f"from ${CACHE_ENV}"
    return f"the default; set ${CACHE_ENV} or pass --cache to move it"


def run_cache_command(args: argparse.Namespace) -> int:
    from workbench.generation.local import model_cache_root
    from workbench.retrieval import EmbeddingCache, cache_dir
    from workbench.retrieval.shards import EMBEDDINGS_DIR, GENERATIONS_DIR

    root = cache_dir(args.cache)
    folders = _Folders(root, root / GENERATIONS_DIR, model_cache_root(args.cache))
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
    from workbench.retrieval.shards import MODELS_DIR

    root = folders.root
    rows = embeddings.inventory()
    if args.model:
        if args.only not in (None, "embeddings"):
            raise ValueError(f"--model names an embedding model: it cannot go with "
                             f"--only {args.only}")
        model_id = _model_id(args.model, rows)
        gone = [r for r in rows if r["model_id"] == model_id]
        if not gone:
            known = ", ".join(sorted({r["model_id"] for r in rows})) or "none"
            raise ValueError(f"no embeddings of {model_id!r} in {embeddings.root} "
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
        answers, answer_bytes = _files(folders.generations, "*.json")
        shutil.rmtree(folders.generations, ignore_errors=True)
        removed.append(f"{answers:,} generated answers ({_size(answer_bytes)})")
    if args.only in (None, "models"):
        models = _models(folders.models)
        model_bytes = sum(_files(p)[1] for p in models)
        for model in models:  # the models, not the folder: $WORKBENCH_MODEL_CACHE may hold more
            shutil.rmtree(model, ignore_errors=True)
        removed.append(f"{len(models)} converted model(s) ({_size(model_bytes)})"
                       + ("" if folders.models == root / MODELS_DIR else f" from {folders.models}"))
    print(f"removed {', '.join(removed)} from {root}")
    return 0


def _model_id(name: str, rows: list[dict[str, Any]]) -> str:
    """A model id as ``cache info`` lists it, or the id of the encoder ``name`` builds."""
    if any(r["model_id"] == name for r in rows):
        return name
    from workbench.retrieval import get_encoder

    return get_encoder(name).model_id
