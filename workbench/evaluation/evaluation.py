"""Runs and Evaluations: from a retriever and a golden set to one tidy table.

``Run`` maps qid -> ranked hits (plus per-query search latency). ``Evaluation`` is one
tidy table ``system, qid, category, source, metric, value`` (+ sweep parameters) with
views: ``summary()`` (mean, n, 95% bootstrap interval), ``by("category")``, ``latency()``.
Unanswerable items are excluded from retrieval metrics and counted in ``excluded``.
"""

from __future__ import annotations

import html
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from workbench.corpus import Chunk
from workbench.evaluation.stats import bootstrap_ci, compare_many, comparison_table
from workbench.golden import GoldenSet
from workbench.metrics import parse_metric, score_queries
from workbench.retrieval.base import Hit, Retriever

DEFAULT_METRICS = ("recall@{k}", "precision@{k}", "hit_rate@{k}", "mrr@{k}", "ndcg@{k}")


def default_metrics(k: int) -> list[str]:
    """The headline metrics at the k the generator receives."""
    return [m.format(k=k) for m in DEFAULT_METRICS]


@dataclass(frozen=True)
class Run:
    """qid -> ranked hits for one system. ``latency_s`` holds per-query search seconds."""

    system: str
    hits: Mapping[str, tuple[Hit, ...]]
    latency_s: Mapping[str, float] = field(default_factory=dict, hash=False)
    params: Mapping[str, Any] = field(default_factory=dict, hash=False)

    @classmethod
    def from_retriever(cls, retriever: Retriever, golden: GoldenSet | Iterable[Any], k: int = 10,
                       system: str | None = None, progress: bool = False,
                       params: Mapping[str, Any] | None = None) -> Run:
        """Search every golden question (answerable or not) and time each search."""
        hits: dict[str, tuple[Hit, ...]] = {}
        latency: dict[str, float] = {}
        items = list(golden)
        for item in tqdm(items, desc=f"search {getattr(retriever, 'name', '')}",
                         disable=not progress):
            started = time.perf_counter()
            found = retriever.search(item.question, k)
            latency[item.qid] = time.perf_counter() - started
            hits[item.qid] = tuple(found)
        name = str(system or getattr(retriever, "name", type(retriever).__name__))
        return cls(name, MappingProxyType(hits), MappingProxyType(latency),
                   MappingProxyType(dict(params or {})))

    @classmethod
    def from_ranked(cls, ranked: Mapping[str, Sequence[str]], system: str = "run") -> Run:
        """Build from plain ranked id lists (best first)."""
        hits = {q: tuple(Hit(cid, float(-i), i + 1, system) for i, cid in enumerate(ids))
                for q, ids in ranked.items()}
        return cls(system, MappingProxyType(hits))

    def ranked(self) -> dict[str, list[str]]:
        return {q: [h.chunk_id for h in hs] for q, hs in self.hits.items()}

    def to_documents(self) -> Run:
        """Document-level run: a document ranks where its best chunk ranks."""
        out: dict[str, tuple[Hit, ...]] = {}
        for qid, hs in self.hits.items():
            seen: dict[str, Hit] = {}
            for h in hs:
                doc = h.chunk_id.split("#", 1)[0]
                if doc not in seen:
                    seen[doc] = Hit(doc, h.score, len(seen) + 1, h.source)
            out[qid] = tuple(seen.values())
        return Run(self.system, MappingProxyType(out), self.latency_s,
                   MappingProxyType({**self.params, "level": "document"}))


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
        run, qrels = run.to_documents(), golden.doc_qrels()
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
