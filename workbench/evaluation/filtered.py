"""Filtered against unfiltered retrieval on the same questions (:func:`compare_filtered`).

Each question has its own filter (``filter_of(item)``, e.g. the product and version the
asker uses). A question whose evidence the filter excludes (no chunk that passes the filter
holds any part of an evidence span, or of a labelled chunk) is reported with status
``"evidence excluded by filter"`` and no filtered score: the filter, not the retriever,
lost it. One with some of its evidence excluded is ``"evidence partly excluded"`` and is
scored (its recall cannot reach 1 filtered). The others are ``"compared"``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pandas as pd

from workbench.corpus import Chunk
from workbench.evaluation.scoring import evaluate
from workbench.golden import GoldenItem, GoldenSet
from workbench.retrieval import Retriever
from workbench.retrieval.filtered import Filter, FilteredRetriever, filter_key

__all__ = ["EXCLUDED", "PARTLY", "compare_filtered", "evidence_excluded"]

EXCLUDED = "evidence excluded by filter"
PARTLY = "evidence partly excluded"


def evidence_excluded(item: GoldenItem, candidates: Sequence[Chunk]) -> tuple[int, int]:
    """``(excluded, total)``: how many of the item's evidence spans (else labelled chunk
    ids) no candidate chunk overlaps."""
    if item.evidence:
        by_doc: dict[str, list[Chunk]] = {}
        for c in candidates:
            by_doc.setdefault(c.doc_id, []).append(c)
        lost = sum(1 for e in item.evidence if not any(
            c.start < e.end and e.start < c.end for c in by_doc.get(e.doc_id, [])))
        return lost, len(item.evidence)
    ids = {c.id for c in candidates}
    labels = list(item.relevant_chunk_ids)
    return sum(1 for cid in labels if cid not in ids), len(labels)


def compare_filtered(unfiltered: Retriever, filtered: FilteredRetriever,
                     golden: GoldenSet | Iterable[GoldenItem],
                     filter_of: Callable[[GoldenItem], Filter], *, chunks: Sequence[Chunk],
                     k: int = 5, metric: str = "recall@{k}") -> pd.DataFrame:
    """One row per answerable question: ``qid``, ``filter`` (as text), ``unfiltered`` and
    ``filtered`` (``metric`` at ``k``; ``filtered`` is NaN when the filter excludes all the
    evidence), ``status`` (module docstring) and ``excluded_evidence`` (spans lost / total).
    Both retrievals are scored by :func:`~workbench.evaluation.evaluate` over ``chunks``."""
    items = [i for i in (golden.items if isinstance(golden, GoldenSet) else golden)
             if i.answerable]
    name = metric.format(k=k)
    base = _scores(evaluate(unfiltered, items, chunks, metrics=[name], k=k).frame)
    rows: list[dict[str, Any]] = []
    groups: dict[Any, list[GoldenItem]] = {}
    for item in items:
        groups.setdefault(filter_key(filter_of(item)), []).append(item)
    for key, members in groups.items():
        view = filtered.with_filter({f: list(v) for f, v in key})
        candidates = view.candidates()
        lost = {i.qid: evidence_excluded(i, candidates) for i in members}
        scored = [i for i in members if lost[i.qid][0] < lost[i.qid][1]]
        values = (_scores(evaluate(view, scored, chunks, metrics=[name], k=k).frame)
                  if scored else {})
        for i in members:
            gone, total = lost[i.qid]
            status = EXCLUDED if gone == total and total else PARTLY if gone else "compared"
            rows.append({"qid": i.qid, "filter": " ".join(f"{f}={'|'.join(v)}" for f, v in key),
                         "unfiltered": base.get(i.qid, float("nan")),
                         "filtered": values.get(i.qid, float("nan")),
                         "status": status, "excluded_evidence": f"{gone}/{total}"})
    order = {i.qid: n for n, i in enumerate(items)}
    rows.sort(key=lambda row: order[str(row["qid"])])
    return pd.DataFrame(rows)


def _scores(frame: pd.DataFrame) -> dict[str, float]:
    return {str(q): float(v) for q, v in zip(frame["qid"], frame["value"], strict=True)}
