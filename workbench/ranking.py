"""The one ordering rule: score descending, then id descending (trec_eval's tie rule).

Every ranked list the workbench makes goes through :func:`top_k`: BM25, dense and fused
hits, reranked hits, production hits with tied scores, and the docnos of a scored TREC run
(trec_eval ``qsort``\\s by ``sim`` descending, then ``strcmp(docno)`` descending). So a run
ranks the same as a list, as a scored dict and as a TREC file.

Conventions: ids compare as Python strings (code points, which is ``strcmp`` over UTF-8);
``-inf`` and ``inf`` are ordinary scores; a NaN score cannot be ranked and is refused
(``ValueError``), as the metrics refuse it; an id given twice with one score keeps both
entries in input order (a production list may repeat a chunk).

Layer: the lowest, with :mod:`workbench.io` and :mod:`workbench.text`; imports nothing else
from the package.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from workbench.io import WorkbenchError

__all__ = ["id_ranks", "top_k"]


def id_ranks(ids: Sequence[str]) -> np.ndarray:
    """Each id's place in ascending string order (equal ids share a place): precompute it
    once for ids that are ranked again and again (a retriever's chunk ids) and pass it to
    :func:`top_k` as ``id_rank``."""
    order = sorted(range(len(ids)), key=ids.__getitem__)
    ranks = np.empty(len(ids), dtype=np.int64)
    place, previous = -1, None
    for n, i in enumerate(order):
        if n == 0 or ids[i] != previous:
            place, previous = place + 1, ids[i]
        ranks[i] = place
    return ranks


def top_k(ids: Sequence[str], scores: ArrayLike, k: int | None = None, *,
          id_rank: np.ndarray | None = None) -> np.ndarray:
    """Indices into ``ids`` / ``scores`` of the ``k`` best entries (all of them with
    ``None``), best first: score descending, then id descending (the module's rule).

    Fast for a large ``n`` and a small ``k``: ``np.partition`` finds the k-th best score,
    and only the entries at or above it (every entry tied with the k-th included, so a tie
    at the cut is broken by id, never by position) are sorted. ``id_rank`` (from
    :func:`id_ranks` of the same ids) saves sorting the ids when that pool is large.
    """
    values = np.asarray(scores)
    if values.dtype.kind != "f":
        values = values.astype(np.float64)
    if values.ndim != 1 or len(values) != len(ids):
        raise WorkbenchError(f"top_k needs one score per id: {len(ids)} ids, scores of shape "
                         f"{values.shape}")
    n = len(values)
    k = n if k is None else min(int(k), n)
    if np.isnan(values).any():
        bad = ids[int(np.flatnonzero(np.isnan(values))[0])]
        raise WorkbenchError(f"a score is NaN (id {bad!r}): NaN cannot be ranked; fix the scores "
                             "or drop the entry")
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    if k < n:  # the k-th best score (partitioned from the top: fast on many equal scores)
        kth = -np.partition(-values, k - 1)[k - 1]
        pool = np.flatnonzero(values >= kth)
    else:
        pool = np.arange(n)
    if id_rank is not None:
        ordered = pool[np.lexsort((-id_rank[pool], -values[pool]))]
    else:  # stable sorts: ids descending, then scores descending
        by_id = np.asarray(sorted(pool.tolist(), key=ids.__getitem__, reverse=True),
                           dtype=np.int64)
        ordered = by_id[np.argsort(-values[by_id], kind="stable")]
    return ordered[:k]
