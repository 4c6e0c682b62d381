"""Sweeps: evaluate a grid of retrieval configurations on one golden set, memoised.

A grid maps parameters to lists of values; every combination is one configuration::

    grid = {"chunker": ["fixed", "recursive"], "size": [200, 400, 800],
            "overlap": [0, "25%"], "header": [False, True], "retriever": ["bm25"], "k": [5]}
    result = run_sweep(grid, golden, corpus)          # a SweepResult (an Evaluation)
    result.leaderboard("recall@5")                # one row per config: mean [CI], n, cost

Parameters (a scalar means a one-value list):

    chunker    any kind the spec parser knows (``workbench.chunking.CHUNKER_KINDS``: fixed,
               sentence, recursive, markdown, semantic, conversation, glossary, code, ...),
               or a full chunker spec such as "parent:child=200,size=1000"
               (size/overlap/unit/header then do not apply)
    size       chunk budget (positive integer) in ``unit``
    overlap    integer, or a percentage of size such as "25%" (sentence: whole sentences;
               markdown takes none)
    unit       chars | tokens
    header     true | false | fields joined by '+' (title+section+date): contextual header
    retriever  bm25 | dense | hybrid (BM25 + dense, reciprocal rank fusion)
    encoder    minilm (default) | e5 | any sentence-transformers name or path; dense/hybrid only
    k          chunks the generator receives (default: the ``k`` argument)

Invalid combinations (overlap >= size, an overlap for markdown...) are skipped and listed in
``result.skipped`` with the reason. Metrics are evaluated at each configuration's k: a name
ending in ``@k`` (``recall@k``) means "at this configuration's k"; the default is the five
headline metrics, named concretely (``recall@5``) when the grid has one k, else ``recall@k``.

Grid files (``workbench sweep --grid GRID.yaml``, :func:`load_grid`) are YAML mappings of the
same keys plus ``metrics``::

    chunker: [fixed, recursive]
    size: [200, 400, 800]
    overlap: [0, 100]
    unit: chars
    retriever: [bm25]
    k: [5]
    metrics: [recall@5, mrr@5]

Errors name the file, the line and what is valid.

Memoisation: configurations sharing a chunking form one task, so each distinct chunking is
computed (and indexed) once; every ``embed_text`` goes through the :class:`EmbeddingCache`,
so a text is embedded once across the whole sweep (``embedded`` / ``reused`` per config).
Tasks run on any ``concurrent.futures.Executor`` (default: in this process, one after
another); for ``ProcessPoolExecutor`` or Dask (``client.get_executor()``) tasks carry the
corpus, the golden set and the cache *folder*, and results come back as plain data, so the
result equals the in-process one. Workers sharing a folder (local disk, or a network file
system across machines) share embeddings; the cache's shards are safe for concurrent writers.
Configurations that share a chunking run in one task, so the useful parallelism is the number
of distinct chunkings. With ``state_path``, each finished configuration is appended to a JSONL
file (atomically: the file is rewritten to a temporary file and renamed) and a restarted
sweep skips configurations already there.

The package is split by concern: :mod:`~workbench.sweep.grid` (grid parameters, validation,
:func:`expand_grid`, chunker specs, :func:`load_grid`), :mod:`~workbench.sweep.worker` (one
task: chunk once, embed through the cache, evaluate every configuration of that chunking;
what runs on process-pool and Dask workers), :mod:`~workbench.sweep.runner` (:func:`run_sweep`:
memoised tasks, executors, resume state) and :mod:`~workbench.sweep.result`
(:class:`SweepResult`, :func:`refine`, :func:`first_relevant_rank_table`) and
:mod:`~workbench.sweep.holdout` (the tuning / held-out split, the held-out
:class:`Confirmation`; the winner's curse is :func:`workbench.stats.selection_bias`).
``workbench sweep`` is :mod:`workbench.cli.sweep`.

Layer: may import :mod:`workbench.evaluation` and everything below it.
"""

from __future__ import annotations

from workbench.sweep.grid import (
    GRID_KEYS,
    SWEEP_RETRIEVERS,
    VALID,
    SweepConfig,
    check_value,
    expand_grid,
    load_grid,
)
from workbench.sweep.holdout import (
    Confirmation,
    HoldoutSplit,
    Tied,
    load_or_split,
    split_golden,
)
from workbench.sweep.result import (
    MISSING,
    RANK_BUCKETS,
    SweepResult,
    first_relevant_rank_table,
    refine,
)
from workbench.sweep.runner import InProcessExecutor, make_executor, run_sweep

__all__ = [
    "GRID_KEYS",
    "MISSING",
    "RANK_BUCKETS",
    "SWEEP_RETRIEVERS",
    "VALID",
    "Confirmation",
    "HoldoutSplit",
    "InProcessExecutor",
    "SweepConfig",
    "SweepResult",
    "Tied",
    "check_value",
    "expand_grid",
    "first_relevant_rank_table",
    "load_grid",
    "load_or_split",
    "make_executor",
    "refine",
    "run_sweep",
    "split_golden",
]
