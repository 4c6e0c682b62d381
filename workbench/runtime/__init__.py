"""Runtime: what the steps that run models and write caches share.

Owns where the caches live (:mod:`~workbench.runtime.caches`: :func:`cache_dir`, the
sub-folder names, the ownership marker and manifest, clearing), how a bundled model loads
(:mod:`~workbench.runtime.models`: :class:`LazyModel`, once, under a lock, timed, with its
thread cap) and what a process keeps built for the last corpora it worked on
(:mod:`~workbench.runtime.memo`: :class:`LastBuilt`, found by their ids and texts).
Retrieval's encoders and rerankers and generation's local model and answer cache use them, so
neither reaches into the other.

Layer: the lowest, with :mod:`workbench.io`, :mod:`workbench.text` and
:mod:`workbench.ranking`; imports only :mod:`workbench.io`.
"""

from __future__ import annotations

from workbench.runtime.caches import (
    CACHE_ENV,
    CACHE_MANIFEST,
    CACHE_MARKER,
    EMBEDDINGS_DIR,
    GENERATIONS_DIR,
    MODELS_DIR,
    CacheFile,
    Cleared,
    cache_dir,
    cache_files,
    check_cache_folder,
    clear_cache_folder,
    mark_cache_folder,
    record_cache_files,
    record_cache_tree,
)
from workbench.runtime.memo import LastBuilt
from workbench.runtime.models import (
    THREADS_ENV,
    LazyModel,
    LoadedOnFirstUse,
    default_threads,
    quiet_transformers,
    set_torch_threads,
)

__all__ = ["CACHE_ENV", "CACHE_MANIFEST", "CACHE_MARKER", "EMBEDDINGS_DIR", "GENERATIONS_DIR",
           "MODELS_DIR", "THREADS_ENV", "CacheFile", "Cleared", "LastBuilt", "LazyModel",
           "LoadedOnFirstUse", "cache_dir", "cache_files", "check_cache_folder",
           "clear_cache_folder", "default_threads", "mark_cache_folder", "quiet_transformers",
           "record_cache_files", "record_cache_tree", "set_torch_threads"]
