"""How synthetic items differ from real ones, measured: the overlap figure and slices by kind.

* :func:`lexical_overlap` / :func:`overlap_table`: the share of a question's content terms
  found in the chunk holding its answer, the figure that shows synthetic questions borrowing
  the chunk's words (the seed's warning), beside the same figure for real questions.
* :func:`item_slices`: any Evaluation split by item fields such as ``source`` and ``kind``.
* :func:`fooled_by`: which of an item's own distractors a run ranked in its top k.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pandas as pd

from workbench.corpus import Chunk
from workbench.evaluation import Evaluation, Run
from workbench.golden import GoldenItem
from workbench.io import WorkbenchError
from workbench.retrieval.bm25 import tokenize
from workbench.stats import mean_interval

__all__ = ["fooled_by", "item_slices", "lexical_overlap", "overlap_table"]


def lexical_overlap(question: str, text: str) -> float:
    """The share of ``question``'s distinct content terms (the BM25 tokenizer, stopwords
    removed) that occur in ``text``; 0.0 for a question with no content terms."""
    terms = set(tokenize(question))
    return len(terms & set(tokenize(text))) / len(terms) if terms else 0.0


def overlap_table(items: Iterable[GoldenItem], chunks: Sequence[Chunk]) -> pd.DataFrame:
    """Per answerable item with evidence: ``lexical_overlap`` of its question with the chunk
    holding its answer (a synthetic item's target chunk; else the chunk of ``chunks`` that
    overlaps its first evidence span most), with ``source`` and ``kind``."""
    by_id = {c.id: c for c in chunks}
    rows = []
    for item in items:
        if not item.evidence:
            continue
        chunk = by_id.get(str(item.extra.get("target_chunk", "")))
        if chunk is None:
            ev = item.evidence[0]
            near = [(min(c.end, ev.end) - max(c.start, ev.start), c) for c in chunks
                    if c.doc_id == ev.doc_id]
            best = max(near, key=lambda t: t[0], default=None)
            if best is None or best[0] <= 0:
                continue
            chunk = best[1]
        rows.append({"qid": item.qid, "source": item.source,
                     "kind": str(item.extra.get("kind", "-")), "chunk_id": chunk.id,
                     "overlap": lexical_overlap(item.question, chunk.text)})
    return pd.DataFrame(rows, columns=["qid", "source", "kind", "chunk_id", "overlap"])


def item_slices(evaluation: Evaluation, items: Iterable[GoldenItem],
                fields: Sequence[str] = ("source", "kind"),
                confidence: float = 0.95) -> pd.DataFrame:
    """Mean and interval (:func:`~workbench.stats.mean_interval`) of each system's
    metrics per combination of item ``fields`` (an attribute such as ``source`` or a key of
    ``extra`` such as ``kind``; ``-`` when an item has none)."""
    def value(item: GoldenItem, name: str) -> str:
        got = getattr(item, name, None) if name in GoldenItem.__dataclass_fields__ \
            else item.extra.get(name)
        return "-" if got is None else str(got)
    keys = {i.qid: tuple(value(i, f) for f in fields) for i in items}
    frame = evaluation.frame
    missing = sorted(set(frame["qid"]) - set(keys))
    if missing:
        raise WorkbenchError(f"questions scored but not among the items: {missing[:5]}")
    for n, name in enumerate(fields):
        frame[f"_{name}"] = [keys[q][n] for q in frame["qid"]]
    rows = []
    for key, group in frame.groupby(["system", "metric", *(f"_{f}" for f in fields)],
                                    sort=False):
        low, high, method = mean_interval(group["value"].to_numpy(float), confidence)
        rows.append({"system": key[0], "metric": key[1],
                     **dict(zip(fields, key[2:], strict=True)), "mean": group["value"].mean(),
                     "ci_low": low, "ci_high": high, "n": len(group), "interval": method})
    return pd.DataFrame(rows)


def fooled_by(run: Run, items: Iterable[GoldenItem], k: int = 5) -> pd.DataFrame:
    """Per item with ``distractors`` that ``run`` searched: its distractors ranked in the top
    ``k`` (``fooled``: chunk ids best first; ``first_rank``: the best of their ranks, 0 when
    none is there), so a miss on a hard question can be traced to exactly those chunks."""
    rows = []
    for item in items:
        mine = {d["chunk_id"] for d in item.extra.get("distractors", ())}
        if not mine or item.qid not in run.hits:
            continue
        ranked = [h for h in run.hits[item.qid] if h.rank <= k and h.chunk_id in mine]
        rows.append({"qid": item.qid, "kind": str(item.extra.get("kind", "-")),
                     "fooled": [h.chunk_id for h in ranked],
                     "first_rank": min((h.rank for h in ranked), default=0)})
    return pd.DataFrame(rows, columns=["qid", "kind", "fooled", "first_rank"])
