"""The Evaluation: one tidy table of per-question metric values, and its views.

``Evaluation`` is one tidy table ``system, qid, category, source, relevance, metric, value``
(+ sweep parameters). ``relevance`` says which judgments a number uses (``evidence>=0.75``,
``chunk_id>=1``, ``document>=1``; see :mod:`workbench.metrics.registry`). Views:
``summary()`` and ``by("category")`` (mean, n, a 95% interval that stays honest at small n:
Clopper-Pearson for 0/1 metrics, the percentile bootstrap otherwise; ``small_n`` marks
cells with fewer than 10 questions), ``table()``, ``compare()`` (paired tests: the only
source of verdicts), ``latency()``, ``worst()`` and ``flipped()``. Unanswerable items are
excluded and counted in ``excluded``. :func:`~workbench.evaluation.scoring.evaluate` builds
one from a retriever or a Run, :func:`evaluation_from_scores` from any per-question values.
:class:`FrameField` keeps the tables of other frozen results the same way (a copy in, a copy
out).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Generic, TypeVar, cast

import numpy as np
import pandas as pd

from workbench.corpus import Chunk, Document
from workbench.corpus.reader import Reader
from workbench.evaluation.failures import Failures, Flipped, flipped, worst_failures
from workbench.evaluation.run import Run
from workbench.golden import GoldenItem, GoldenSet
from workbench.io import WorkbenchError
from workbench.metrics import DEFAULT_EVIDENCE_THRESHOLD, parse_metric, parse_relevance_label
from workbench.stats import (
    SMALL_N,
    compare_many,
    comparison_table,
    is_small_sample,
    mean_interval,
)
from workbench.text import escape_html, frame_html

__all__ = ["INTERVAL_NOTE", "SMALL_MARK", "Evaluation", "FrameField", "describe_relevance",
           "evaluation_from_scores"]

Table = TypeVar("Table", pd.DataFrame, "pd.DataFrame | None")
SMALL_MARK = "†"
INTERVAL_NOTE = ("95% interval: Clopper-Pearson for 0/1 metrics, percentile bootstrap "
                 f"otherwise; {SMALL_MARK} fewer than {SMALL_N} questions (rough)")


def describe_relevance(label: str) -> str:
    """A relevance label in words, for captions."""
    kind, threshold = parse_relevance_label(label)
    if kind == "evidence":
        return (f"evidence spans, found when the retrieved chunks hold >= "
                f"{threshold:.0%} of a span's non-blank characters")
    if kind == "chunk_id":
        return f"labelled chunk ids (trec_eval semantics, grade >= {threshold:g})"
    return f"documents ranked at their best chunk (trec_eval semantics, grade >= {threshold:g})"


class FrameField(Generic[Table]):
    """A table field of a frozen, keyword-only dataclass (``frame: FrameField[pd.DataFrame]
    = FrameField()``): kept as a copy of what was given and read as a copy, so the result it
    belongs to never changes. The field is required; ``None`` stays ``None``."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._slot = f"_{name}_table"

    def __get__(self, obj: object | None, owner: type | None = None) -> Table:
        if obj is None:  # looked up on the class: no default, the field is required
            raise AttributeError(self._slot)
        table = getattr(obj, self._slot)
        return cast(Table, None if table is None else table.copy())

    def __set__(self, obj: object, value: Table) -> None:
        if self._slot in vars(obj):
            raise AttributeError(f"{type(obj).__name__} is read-only")
        object.__setattr__(obj, self._slot, None if value is None else value.copy())


class Evaluation:
    """One tidy table of per-question metric values, with summary views. Immutable:
    ``frame`` returns a copy."""

    COLUMNS = ("system", "qid", "category", "source", "relevance", "metric", "value")

    def __init__(self, frame: pd.DataFrame, excluded: Mapping[str, Sequence[str]] | None = None,
                 runs: Mapping[str, Run] | None = None):
        missing = [c for c in self.COLUMNS if c not in frame.columns]
        if missing:
            raise WorkbenchError(f"Evaluation table lacks columns {missing}")
        if frame["relevance"].isna().any():
            raise WorkbenchError("every row of an Evaluation says which relevance judged it: the "
                             "'relevance' column has empty cells")
        self._frame = frame.reset_index(drop=True).copy()
        self._excluded = {k: tuple(v) for k, v in (excluded or {}).items()}
        self._runs = MappingProxyType(dict(runs or {}))

    @property
    def frame(self) -> pd.DataFrame:
        """The tidy table (a copy: an Evaluation never changes)."""
        return self._frame.copy()

    @property
    def excluded(self) -> dict[str, list[str]]:
        """Questions left out, by reason (unanswerable, no relevant label, ...)."""
        return {k: list(v) for k, v in self._excluded.items()}

    @property
    def runs(self) -> Mapping[str, Run]:
        return self._runs

    @property
    def params(self) -> list[str]:
        """Extra columns (sweep parameters) that identify a configuration."""
        return [c for c in self._frame.columns if c not in self.COLUMNS]

    @property
    def metrics(self) -> list[str]:
        return list(dict.fromkeys(self._frame["metric"]))

    @property
    def relevance(self) -> list[str]:
        """The relevance labels of the numbers in this table."""
        return list(dict.fromkeys(self._frame["relevance"]))

    @property
    def n(self) -> int:
        return int(self._frame["qid"].nunique())

    def to_frame(self) -> pd.DataFrame:
        return self.frame

    def __add__(self, other: Evaluation) -> Evaluation:
        excluded = {k: sorted({*self._excluded.get(k, ()), *other._excluded.get(k, ())})
                    for k in {*self._excluded, *other._excluded}}
        return Evaluation(pd.concat([self._frame, other._frame], ignore_index=True), excluded,
                          {**self._runs, **other._runs})

    def _summarise(self, keys: list[str], confidence: float) -> pd.DataFrame:
        rows = []
        for key, group in self._frame.groupby(keys, sort=False, dropna=False):
            key = key if isinstance(key, tuple) else (key,)
            values = group["value"].to_numpy(dtype=float)
            low, high, method = mean_interval(values, confidence)
            rows.append({**dict(zip(keys, key, strict=True)), "mean": float(values.mean()),
                         "n": len(values), "ci_low": low, "ci_high": high, "interval": method,
                         "small_n": is_small_sample(len(values))})
        return pd.DataFrame(rows)

    def summary(self, confidence: float = 0.95) -> pd.DataFrame:
        """Mean, n and interval per configuration, metric and relevance (see module doc)."""
        return self._summarise(["system", *self.params, "metric", "relevance"], confidence)

    def by(self, column: str = "category", confidence: float = 0.95) -> pd.DataFrame:
        """The summary split by a column such as ``category`` or ``source``."""
        if column not in self._frame.columns:
            raise WorkbenchError(f"no column {column!r}; choose one of {list(self._frame.columns)}")
        return self._summarise(["system", *self.params, column, "metric", "relevance"], confidence)

    def table(self, column: str | None = "category", digits: int = 3) -> pd.DataFrame:
        """Wide view for people: rows = (configuration, group, relevance), columns = metrics,
        cells ``mean [low, high]`` (``†``: fewer than 10 questions); ``n`` is a column."""
        data = self.by(column) if column else self.summary()
        index = ["system", *self.params, *([column] if column else []), "relevance"]
        data = data.assign(cell=[
            f"{m:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]" + (SMALL_MARK if s else "")
            for m, lo, hi, s in zip(data["mean"], data["ci_low"], data["ci_high"],
                                    data["small_n"], strict=True)])
        wide = data.pivot_table(index=index, columns="metric", values="cell", aggfunc="first",
                                sort=False)
        wide.insert(0, "n", data.groupby(index, sort=False)["n"].max())
        return wide[["n", *[m for m in self.metrics if m in wide.columns]]]

    def configs(self) -> list[str]:
        """One label per configuration: the system name plus its parameter values."""
        return list(dict.fromkeys(self.labels()))

    def labels(self) -> pd.Series:
        """The configuration label of every row of the table: the system name, then each
        parameter the row has (a parameter another system has and this one lacks, such as a
        dense index's, is left out, never written ``nan``)."""
        labels = self._frame["system"].astype(str)
        for p in self.params:
            given = self._frame[p].notna()
            labels = labels.where(~given, labels + " " + p + "=" + self._frame[p].astype(str))
        return labels

    def _per_config(self, metric: str) -> dict[str, tuple[dict[str, float], set[str]]]:
        """config label -> ({qid: value}, relevance labels) for one metric."""
        rows = self._frame[self._frame["metric"] == metric]
        labels = self.labels()[rows.index]
        return {name: (dict(zip(g["qid"], g["value"], strict=True)), set(g["relevance"]))
                for name, g in rows.groupby(labels, sort=False)}

    def compare(self, baseline: str | Evaluation | None = None,
                metrics: Sequence[str] | None = None, alpha: float = 0.05) -> pd.DataFrame:
        """Every configuration of this Evaluation against ``baseline``, paired on the same
        questions: a label from ``configs()`` (default: the first configuration), or another
        Evaluation holding one configuration (the baseline: it never takes this one's values,
        whatever the system names; a clashing label gets `` (baseline)``).

        Per metric: delta, paired bootstrap interval, p-value (McNemar exact for 0/1
        metrics such as hit rate, sign-flip permutation otherwise), Holm-corrected across
        the candidates, wins/losses/ties and a plain-words verdict; ``baseline_config`` and
        ``relevance`` name what was compared. Both sides must use the same relevance."""
        if isinstance(baseline, Evaluation):
            if len(baseline.configs()) != 1:
                raise WorkbenchError(f"the baseline Evaluation holds {len(baseline.configs())} "
                                 "configurations; compare against one (e.g. "
                                 "ev.compare(old.subset(...)) or a label of ev.configs())")
            base_name = baseline.configs()[0]
            if base_name in self.configs():
                base_name += " (baseline)"
            base_source: Evaluation = baseline
            candidates_from = self
        else:
            names = self.configs()
            base_name = names[0] if baseline is None else baseline
            if base_name not in names:
                raise WorkbenchError(f"baseline {base_name!r} is not one of the configurations "
                                 f"{names}")
            base_source = self
            candidates_from = self
        rows = []
        for metric in metrics or self.metrics:
            per = candidates_from._per_config(metric)
            base_per = base_source._per_config(metric)
            base = (next(iter(base_per.values()), None) if base_source is not self
                    else base_per.get(base_name))
            candidates = {n: v for n, v in per.items()
                          if base_source is not self or n != base_name}
            if base is None or not candidates:
                continue
            for name, (_, rel) in candidates.items():
                if rel != base[1]:
                    raise WorkbenchError(f"{metric}: {name!r} uses relevance {sorted(rel)} and the "
                                     f"baseline {sorted(base[1])}; compare numbers judged the "
                                     "same way")
            table = comparison_table(compare_many(base[0], {n: v for n, (v, _) in
                                                            candidates.items()}, alpha=alpha))
            rows.append(table.assign(metric=metric, baseline_config=base_name,
                                     relevance=", ".join(sorted(base[1]))))
        if not rows:
            raise WorkbenchError("nothing to compare: the baseline and at least one other "
                             "configuration must share a metric")
        return pd.concat(rows).reset_index().set_index(["metric", "name"])

    def worst(self, n: int = 10, *, golden: GoldenSet | Iterable[GoldenItem],
              chunks: Sequence[Chunk] | None = None, system: str | None = None,
              k: int | None = None,
              evidence_threshold: float = DEFAULT_EVIDENCE_THRESHOLD,
              documents: Mapping[str, Document] | None = None,
              user_groups: Reader | Iterable[str] | str | None = None) -> Failures:
        """The ``n`` questions that fail worst for ``system`` (default: the first run), at
        ``k`` (default: the k of this evaluation's first ``recall@k``, else 5), each with its
        evidence, what was retrieved instead and the chunk boundaries around the answer;
        ``chunks`` is the chunking the run searched. "Worst" is defined in
        :mod:`workbench.evaluation.failures`; ``documents`` and ``user_groups`` name its
        reader (:func:`~workbench.evaluation.failures.worst_failures`)."""
        system = system or next(iter(self._runs), "")
        if system not in self._runs:
            raise WorkbenchError(f"no run named {system!r}; runs: {list(self._runs)}")
        if k is None:
            k = next((m.k for m in map(parse_metric, self.metrics)
                      if m.kind == "recall" and m.k is not None), 5)
        return worst_failures(self._runs[system], golden_items(golden), chunks, n=n, k=k,
                              evidence_threshold=evidence_threshold, documents=documents,
                              user_groups=user_groups)

    def flipped(self, baseline: str, candidate: str, metric: str | None = None) -> Flipped:
        """The questions whose ``metric`` (default: the first) changed from configuration
        ``baseline`` to ``candidate`` (labels from ``configs()``), both ways."""
        metric = metric or self.metrics[0]
        per = self._per_config(metric)
        for name in (baseline, candidate):
            if name not in per:
                raise WorkbenchError(f"{name!r} is not a configuration here: {list(per)}")
        a, b = per[baseline][0], per[candidate][0]
        common = sorted(set(a) & set(b))
        return flipped({q: a[q] for q in common}, {q: b[q] for q in common}, metric,
                       (baseline, candidate))

    def latency(self) -> pd.DataFrame:
        """Per system: p50 / p95 / mean search latency in milliseconds."""
        rows = []
        for name, run in self._runs.items():
            values = np.array(list(run.latency_s.values()), dtype=float) * 1000
            if len(values):
                rows.append({"system": name, "p50_ms": float(np.percentile(values, 50)),
                             "p95_ms": float(np.percentile(values, 95)),
                             "mean_ms": float(values.mean()), "n": len(values)})
        return pd.DataFrame(rows)

    def __repr__(self) -> str:
        systems = self._frame["system"].nunique()
        return (f"Evaluation({systems} system(s), n={self.n} questions, metrics={self.metrics}, "
                f"relevance={self.relevance}, "
                f"excluded={ {k: len(v) for k, v in self._excluded.items()} })")

    def _repr_html_(self) -> str:
        notes = "; ".join(f"{len(v)} {k} excluded" for k, v in self._excluded.items() if v)
        judged = "; ".join(f"{r}: {describe_relevance(r)}" for r in self.relevance)
        caption = (f"n={self.n} questions, mean [{INTERVAL_NOTE}]. Relevance: {judged}"
                   + (f"; {notes}" if notes else ""))
        table = frame_html(self.table(column=None))
        return f"<div><p>{escape_html(caption)}</p>{table}</div>"


def evaluation_from_scores(scores: Mapping[str, Mapping[str, float]], system: str = "system",
                           categories: Mapping[str, str] | None = None,
                           relevance: str = "n/a") -> Evaluation:
    """An Evaluation from per-question values ``{qid: {metric: value}}``: any per-question
    outcome (e.g. answer accuracy 0/1 for a nightly generation gate) can then be gated.
    ``relevance`` labels how the values were judged (``n/a`` for answer grades)."""
    cats = categories or {}
    rows = [{"system": system, "qid": q, "category": cats.get(q, "uncategorised"),
             "source": "n/a", "relevance": relevance, "metric": m, "value": float(v)}
            for q, per in scores.items() for m, v in per.items()]
    return Evaluation(pd.DataFrame(rows, columns=list(Evaluation.COLUMNS)))


def golden_items(golden: GoldenSet | Iterable[GoldenItem]) -> list[GoldenItem]:
    """The items of a golden set given to :func:`~workbench.evaluation.scoring.evaluate` or
    :meth:`Evaluation.worst`: GoldenItems, at least one, some answerable (else an error
    saying what to pass)."""
    items = list(golden)
    bad = [type(i).__name__ for i in items if not isinstance(i, GoldenItem)]
    if bad:
        raise WorkbenchError(f"the golden set holds {bad[0]} objects: pass a GoldenSet or "
                         "GoldenItems (GoldenSet.load('golden.jsonl'))")
    if not items:
        raise WorkbenchError("the golden set is empty: add labelled questions first "
                         "(GoldenSet.load, add_case)")
    if not any(i.answerable for i in items):
        raise WorkbenchError(f"all {len(items)} golden questions are unanswerable: retrieval "
                         "metrics need questions whose answer is in the corpus")
    return items
