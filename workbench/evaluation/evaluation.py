"""Evaluations: from a retriever (or a Run) and a golden set to one tidy table.

``Evaluation`` is one tidy table ``system, qid, category, source, metric, value`` (+ sweep
parameters) with views: ``summary()`` (mean, n, 95% bootstrap interval), ``by("category")``,
``compare()`` (paired tests), ``latency()``. :func:`evaluate` scores chunk-id metrics
(relevance from evidence spans when the golden set has them); :func:`span_evaluate` scores
the character-span metrics. Unanswerable items are excluded from retrieval metrics and
counted in ``excluded``.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from workbench.corpus import Chunk
from workbench.evaluation.run import Run
from workbench.evaluation.stats import bootstrap_ci, compare_many, comparison_table
from workbench.golden import GoldenSet
from workbench.metrics import SPAN_METRICS, parse_metric, score_queries, score_spans
from workbench.retrieval import Retriever

__all__ = ["DEFAULT_METRICS", "Evaluation", "default_metrics", "evaluate", "span_evaluate"]

DEFAULT_METRICS = ("recall@{k}", "precision@{k}", "hit_rate@{k}", "mrr@{k}", "ndcg@{k}")


def default_metrics(k: int) -> list[str]:
    """The headline metrics at the k the generator receives."""
    return [m.format(k=k) for m in DEFAULT_METRICS]


class Evaluation:
    """One tidy table of per-query metric values, with summary views."""

    COLUMNS = ("system", "qid", "category", "source", "metric", "value")

    def __init__(self, frame: pd.DataFrame, excluded: Mapping[str, Sequence[str]] | None = None,
                 runs: Mapping[str, Run] | None = None):
        missing = [c for c in self.COLUMNS if c not in frame.columns]
        if missing:
            raise ValueError(f"Evaluation table lacks columns {missing}")
        self.frame = frame.reset_index(drop=True)
        self.excluded = {k: list(v) for k, v in (excluded or {}).items()}
        self.runs = dict(runs or {})

    @property
    def params(self) -> list[str]:
        """Extra columns (sweep parameters) that identify a configuration."""
        return [c for c in self.frame.columns if c not in self.COLUMNS]

    @property
    def metrics(self) -> list[str]:
        return list(dict.fromkeys(self.frame["metric"]))

    @property
    def n(self) -> int:
        return int(self.frame["qid"].nunique())

    def to_frame(self) -> pd.DataFrame:
        return self.frame.copy()

    def __add__(self, other: Evaluation) -> Evaluation:
        excluded = {k: sorted({*self.excluded.get(k, []), *other.excluded.get(k, [])})
                    for k in {*self.excluded, *other.excluded}}
        return Evaluation(pd.concat([self.frame, other.frame], ignore_index=True), excluded,
                          {**self.runs, **other.runs})

    def _summarise(self, keys: list[str], level: float) -> pd.DataFrame:
        rows = []
        for key, group in self.frame.groupby(keys, sort=False, dropna=False):
            key = key if isinstance(key, tuple) else (key,)
            values = group["value"].to_numpy(dtype=float)
            low, high = bootstrap_ci(values, level)
            rows.append({**dict(zip(keys, key, strict=True)), "mean": float(values.mean()),
                         "n": len(values), "ci_low": low, "ci_high": high})
        return pd.DataFrame(rows)

    def summary(self, level: float = 0.95) -> pd.DataFrame:
        """Mean, n and bootstrap interval per system (and parameters) and metric."""
        return self._summarise(["system", *self.params, "metric"], level)

    def by(self, column: str = "category", level: float = 0.95) -> pd.DataFrame:
        """The summary split by a column such as ``category`` or ``source``."""
        return self._summarise(["system", *self.params, column, "metric"], level)

    def table(self, column: str | None = "category", digits: int = 3) -> pd.DataFrame:
        """Wide view for people: rows = (system, group), columns = metrics, cells
        ``mean [low, high]``; the n of each row is a column."""
        data = self.by(column) if column else self.summary()
        index = ["system", *self.params, *([column] if column else [])]
        data = data.assign(cell=[f"{m:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"
                                 for m, lo, hi in zip(data["mean"], data["ci_low"],
                                                      data["ci_high"], strict=True)])
        wide = data.pivot_table(index=index, columns="metric", values="cell", aggfunc="first",
                                sort=False)
        wide.insert(0, "n", data.groupby(index, sort=False)["n"].max())
        return wide[["n", *[m for m in self.metrics if m in wide.columns]]]

    def configs(self) -> list[str]:
        """One label per configuration: the system name plus its parameter values."""
        return list(dict.fromkeys(self._labels()))

    def _labels(self) -> pd.Series:
        labels = self.frame["system"].astype(str)
        for p in self.params:
            labels = labels + " " + p + "=" + self.frame[p].astype(str)
        return labels

    def compare(self, baseline: str | Evaluation | None = None,
                metrics: Sequence[str] | None = None, alpha: float = 0.05) -> pd.DataFrame:
        """Every configuration against ``baseline`` (a label from ``configs()``, or another
        Evaluation; default: the first configuration), paired on the same questions.

        Per metric: delta, paired bootstrap interval, p-value (McNemar exact for 0/1
        metrics such as hit rate, sign-flip permutation otherwise), Holm-corrected across
        the candidates, wins/losses/ties and a plain-words verdict."""
        ev = self if not isinstance(baseline, Evaluation) else baseline + self
        labels = ev._labels()
        names = list(dict.fromkeys(labels))
        base = (names[0] if baseline is None or isinstance(baseline, Evaluation)
                else baseline)
        if base not in names:
            raise ValueError(f"baseline {base!r} is not one of the configurations {names}")
        rows = []
        for metric in metrics or ev.metrics:
            sub = ev.frame[ev.frame["metric"] == metric]
            per = {name: dict(zip(g["qid"], g["value"], strict=True))
                   for name, g in sub.groupby(labels[sub.index], sort=False)}
            candidates = {n: v for n, v in per.items() if n != base}
            if base not in per or not candidates:
                continue
            table = comparison_table(compare_many(per[base], candidates, alpha=alpha))
            rows.append(table.assign(metric=metric, baseline_config=base))
        if not rows:
            raise ValueError("nothing to compare: need at least two configurations")
        return pd.concat(rows).reset_index().set_index(["metric", "name"])

    def latency(self) -> pd.DataFrame:
        """Per system: p50 / p95 / mean search latency in milliseconds."""
        rows = []
        for name, run in self.runs.items():
            values = np.array(list(run.latency_s.values()), dtype=float) * 1000
            if len(values):
                rows.append({"system": name, "p50_ms": float(np.percentile(values, 50)),
                             "p95_ms": float(np.percentile(values, 95)),
                             "mean_ms": float(values.mean()), "n": len(values)})
        return pd.DataFrame(rows)

    def __repr__(self) -> str:
        systems = self.frame["system"].nunique()
        return (f"Evaluation({systems} system(s), n={self.n} questions, metrics={self.metrics}, "
                f"excluded={ {k: len(v) for k, v in self.excluded.items()} })")

    def _repr_html_(self) -> str:
        notes = "; ".join(f"{len(v)} {k} excluded" for k, v in self.excluded.items() if v)
        caption = f"n={self.n} questions, mean [95% bootstrap interval]" + (
            f"; {notes}" if notes else "")
        table = self.table(column=None).to_html(escape=True)
        return f"<div><p>{html.escape(caption)}</p>{table}</div>"


def evaluate(source: Retriever | Run, golden: GoldenSet, chunks: Sequence[Chunk] | None = None,
             metrics: Sequence[str] | None = None, k: int = 5, level: str = "chunk",
             threshold: int = 1, system: str | None = None,
             params: Mapping[str, Any] | None = None, progress: bool = False) -> Evaluation:
    """Score a retriever (searched here) or a ready Run against a golden set.

    ``chunks`` lets evidence spans grade chunk ids (span-derived relevance); ``level``
    "document" scores documents at their best chunk's rank instead.
    """
    metric_names = list(metrics or default_metrics(k))
    parsed = [parse_metric(m) for m in metric_names]
    depth = max([k, *[m.k or 0 for m in parsed]])
    if isinstance(source, Run):
        run = source
    else:
        run = Run.from_retriever(source, golden, depth, system, progress, params)
    if system:
        run = Run(system, run.hits, run.latency_s, run.params)
    if level == "document":
        run = run.to_documents({c.id: c.doc_id for c in chunks or ()})
        qrels = golden.doc_qrels(chunks)
    elif level == "chunk":
        qrels = golden.qrels(chunks)
    else:
        raise ValueError(f"level must be 'chunk' or 'document', not {level!r}")
    unanswerable = [i.qid for i in golden if not i.answerable]
    missing = [q for q in qrels if q not in run.hits]
    if missing:
        raise ValueError(f"run {run.system!r} has no results for {len(missing)} golden "
                         f"question(s), e.g. {missing[:5]}; search every question")
    scores = score_queries(qrels, run.ranked(), parsed, threshold=threshold)
    items = {i.qid: i for i in golden}
    extra = dict(run.params) | dict(params or {})
    frames = []
    for name, values in scores.values.items():
        frames.append(pd.DataFrame({
            "system": run.system, "qid": scores.qids,
            "category": [items[q].category for q in scores.qids],
            "source": [items[q].source for q in scores.qids],
            "metric": name, "value": np.asarray(values, dtype=float), **extra}))
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=list(Evaluation.COLUMNS))
    excluded = {"unanswerable": unanswerable,
                "no_relevant_at_threshold": list(scores.excluded_no_relevant)}
    return Evaluation(frame, excluded, {run.system: run})


def span_evaluate(
    run: Any,
    golden: Any,
    chunks: Sequence[Chunk],
    k: int = 5,
    system: str | None = None,
) -> Any:
    """Span metrics of a :class:`~workbench.evaluation.Run` (or a retriever, searched here)
    against a golden set's evidence spans, as an :class:`~workbench.evaluation.Evaluation`
    (so ``summary()``, ``by("category")`` and ``compare()`` work).

    Metric names carry k: ``span_recall@5``, ``span_precision@5``, ``span_iou@5``, plus
    ``span_precision_omega`` (independent of the retriever). ``chunks`` must hold every
    chunk id the run returns. Items without evidence (or unanswerable) are excluded and
    counted in ``excluded["no_evidence"]``.
    """
    if not isinstance(run, Run):
        run = Run.from_retriever(run, golden, k, system)
    name = system or run.system
    by_id = {c.id: c for c in chunks}
    items = [i for i in golden if i.answerable and i.evidence]
    excluded = [i.qid for i in golden if not (i.answerable and i.evidence)]
    retrieved: dict[str, list[Chunk]] = {}
    for item in items:
        hits = run.hits.get(item.qid)
        if hits is None:
            raise ValueError(f"run {run.system!r} has no results for question {item.qid!r}")
        unknown = [h.chunk_id for h in hits[:k] if h.chunk_id not in by_id]
        if unknown:
            raise ValueError(
                f"run {run.system!r} returned chunk {unknown[0]!r} for {item.qid!r}, which is "
                "not among the chunks given: pass the chunks the retriever returns"
            )
        retrieved[item.qid] = [by_id[h.chunk_id] for h in hits[:k]]
    scores = score_spans(retrieved, {i.qid: list(i.evidence) for i in items}, k, chunks)
    rename = {m: f"{m}@{k}" for m in SPAN_METRICS[:3]}
    frames = [
        pd.DataFrame({
            "system": name,
            "qid": scores.qids,
            "category": [i.category for i in items],
            "source": [i.source for i in items],
            "metric": rename.get(metric, metric),
            "value": values,
        })
        for metric, values in scores.values.items()
    ]
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=list(Evaluation.COLUMNS))
    return Evaluation(frame, {"no_evidence": excluded}, {name: run})
