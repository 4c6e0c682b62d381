"""Evaluations: from a retriever (or a Run) and a golden set to one tidy table.

``Evaluation`` is one tidy table ``system, qid, category, source, relevance, metric, value``
(+ sweep parameters). ``relevance`` says which judgments a number uses (``evidence>=0.75``,
``chunk_id>=1``, ``document>=1``; see :mod:`workbench.metrics.registry`). Views:
``summary()`` and ``by("category")`` (mean, n, a 95% interval that stays honest at small n:
Clopper-Pearson for 0/1 metrics, the percentile bootstrap otherwise; ``small_n`` marks
cells with fewer than 10 questions), ``table()``, ``compare()`` (paired tests: the only
source of verdicts), ``latency()``. Unanswerable items are excluded and counted in
``excluded``; no question is excluded because of how the corpus was chunked.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from operator import attrgetter
from types import MappingProxyType
from typing import Any, Generic, TypeVar, cast

import numpy as np
import pandas as pd

from workbench.corpus import Chunk, Document
from workbench.corpus.reader import Reader
from workbench.evaluation.failures import Failures, Flipped, flipped, worst_failures
from workbench.evaluation.run import Run
from workbench.golden import GoldenItem, GoldenSet
from workbench.io import WorkbenchError, WorkbenchWarning
from workbench.metrics import (
    DEFAULT_EVIDENCE_THRESHOLD,
    Metric,
    Relevance,
    default_metrics,
    parse_metric,
    parse_relevance_label,
    relevance_label,
    score_queries,
)
from workbench.retrieval import Retriever
from workbench.stats import (
    SMALL_N,
    compare_many,
    comparison_table,
    is_small_sample,
    mean_interval,
)
from workbench.text import escape_html, frame_html

__all__ = ["INTERVAL_NOTE", "SMALL_MARK", "Evaluation", "FrameField", "describe_relevance",
           "evaluate"]

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
        return worst_failures(self._runs[system], _golden_items(golden), chunks, n=n, k=k,
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


def _check_k(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise WorkbenchError(f"k must be a positive integer (the number of chunks the generator "
                         f"receives), got {k!r}")
    return int(k)


def _golden_items(golden: GoldenSet | Iterable[GoldenItem]) -> list[GoldenItem]:
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


def _given_chunks(chunks: Sequence[Chunk]) -> dict[str, Chunk]:
    """Chunk id -> chunk of the chunking given, built at C speed (no Python per chunk)."""
    if not set(map(type, chunks)) <= {Chunk}:  # a subclass passes; anything else is named
        bad = next((c for c in chunks if not isinstance(c, Chunk)), None)
        if bad is not None:
            raise WorkbenchError(f"chunks must be Chunk objects (chunk_corpus(...)), "
                                 f"not {type(bad).__name__}")
    return dict(zip(map(attrgetter("id"), chunks), chunks, strict=True))


def _chunk_map(given: dict[str, Chunk] | None, run: Run) -> dict[str, Chunk] | None:
    """The chunks the run is judged against: those given, plus any a hit carries."""
    carried = [h.chunk for hs in run.hits.values() for h in hs if h.chunk is not None]
    if not carried:
        return given
    by_id: dict[str, Chunk] = dict(given or {})
    for chunk in carried:
        by_id.setdefault(chunk.id, chunk)
    return by_id


def _refuse_unknown(run: Run, by_id: Mapping[str, Chunk]) -> None:
    unknown = list(dict.fromkeys(h.chunk_id for hs in run.hits.values() for h in hs
                                 if h.chunk_id not in by_id))
    if unknown:
        raise WorkbenchError(
            f"run {run.system!r} returned {len(unknown)} chunk id(s) that are not among the "
            f"{len(by_id)} chunks given (e.g. {unknown[0]!r}); they would all score as misses. "
            "Pass the chunks your retriever returns, or wrap it so its hits carry their "
            "chunks (workbench.retrieval.adapters)")


def _without_the_chunking(parsed: list[Metric], explicit: bool) -> list[Metric]:
    """Only the hits' own chunks are known (a production run, a log): metrics whose ideal or
    ceiling needs every chunk of the chunking (nDCG, PrecisionΩ) would be computed against
    the retrieved chunks alone and read too high. Refused when asked for, left out (with a
    warning) from the defaults."""
    partial = [m.name for m in parsed if m.spec.needs_chunking]
    if not partial:
        return parsed
    if explicit:
        raise WorkbenchError(f"{', '.join(partial)} need(s) the whole chunking (the ideal ranking "
                         "is the best the chunking allows), and only the retrieved chunks are "
                         "known: pass chunks=... (e.g. the production chunking, located with "
                         "workbench.retrieval.adapters), or leave these metrics out")
    warnings.warn(f"{', '.join(partial)} left out: only the retrieved chunks are known, and "
                  "the ideal ranking needs the whole chunking (pass chunks=...)", WorkbenchWarning,
                  stacklevel=3)
    return [m for m in parsed if not m.spec.needs_chunking]


def _judged_by_document(items: Sequence[GoldenItem], by_id: Mapping[str, Chunk] | None) -> bool:
    """True when the answerable items label whole documents (``relevant_doc_ids``), or their
    chunk-id labels name no chunk but do name documents (document qrels read as chunk ids):
    chunk-level scoring would score every question 0. Refuses a golden set that mixes
    document labels with other labels."""
    answerable = [i for i in items if i.answerable]
    by_doc = [i.qid for i in answerable if i.judged_by_document]
    if by_doc:
        if len(by_doc) < len(answerable):
            raise WorkbenchError(f"{len(by_doc)} golden item(s) label whole documents (e.g. "
                             f"{by_doc[0]!r}) and {len(answerable) - len(by_doc)} label chunks "
                             "or evidence: score the document-labelled ones apart, with "
                             "level='document'")
        return True
    if by_id is None:
        return False
    labels = {c for i in answerable if not i.evidence for c in i.chunk_labels}
    if not labels or labels & by_id.keys():
        return False
    return bool(labels & {c.doc_id for c in by_id.values()})


def evaluate(source: Retriever | Run, golden: GoldenSet | Iterable[GoldenItem],
             chunks: Sequence[Chunk] | None = None, *,
             metrics: Sequence[str | Metric] | None = None, k: int = 5, level: str = "chunk",
             grade_threshold: int = 1,
             evidence_threshold: float = DEFAULT_EVIDENCE_THRESHOLD, system: str | None = None,
             params: Mapping[str, Any] | None = None, progress: bool = False,
             documents: Mapping[str, Document] | None = None,
             relevance: Relevance | None = None) -> Evaluation:
    """Score a retriever (searched here) or a ready Run against a golden set.

    ``chunks`` is the chunking the retriever searches (evidence items need it; every id the
    run returns must be among them, or be carried by its hit). ``k`` is the number of
    chunks the generator receives; the default metrics are taken at k. ``level="document"``
    ranks documents where their best chunk ranks, and k then counts documents (chunks are
    retrieved until k distinct documents are ranked). Chunk-id labels that name documents
    (BEIR qrels) are scored at document level automatically, with a warning.
    ``grade_threshold`` is the lowest relevant grade of chunk-id labels;
    ``evidence_threshold``
    the share of a span's non-blank characters that makes it found. ``relevance`` reuses
    judgments already made for this golden set, chunking and thresholds (a sweep scores many
    configurations of one chunking); one made otherwise is refused.
    """
    k = _check_k(k)
    items = _golden_items(golden)
    # one column per metric, however it was spelled (span_recall@5 is coverage@5)
    parsed = list({m.name: m for m in map(parse_metric, metrics or default_metrics(k))}.values())
    if level not in ("chunk", "document"):
        raise WorkbenchError(f"level must be 'chunk' or 'document', not {level!r}")
    if relevance is not None and (level == "document" or documents is not None):
        raise WorkbenchError("relevance=... is for chunk-level scoring and already holds the "
                         "evidence text: pass documents=... to Relevance, not to evaluate, and "
                         "leave relevance out at level='document'")
    depth = max([k, *[m.k or 0 for m in parsed]])
    given = None if chunks is None else _given_chunks(list(chunks))
    if level == "chunk" and not isinstance(source, Run) and given is not None:
        depth = min(depth, max(len(given), 1))  # nothing lies deeper than the corpus
    if level == "chunk" and _judged_by_document(items, given):
        warnings.warn("the golden set's labels name documents, not chunks (document qrels, "
                      "e.g. BEIR): scoring at document level, where k counts documents (pass "
                      "level='document' to say so)", WorkbenchWarning, stacklevel=2)
        level = "document"
    if isinstance(source, Run):
        run = source
    else:
        run = Run.from_retriever(source, items, depth, system=system, progress=progress,
                                 params=params,
                                 documents_of={c.id: c.doc_id for c in given.values()}
                                 if level == "document" and given is not None else None)
    if system:
        run = Run(system, run.hits, run.latency_s, run.params)
    by_id = _chunk_map(given, run)
    if by_id is not None:
        _refuse_unknown(run, by_id)
    if given is None and by_id is not None and level == "chunk" \
            and any(i.answerable and i.evidence for i in items):
        parsed = _without_the_chunking(parsed, explicit=metrics is not None)
    missing = [i.qid for i in items if i.answerable and i.qid not in run.hits]
    if missing:
        raise WorkbenchError(f"run {run.system!r} has no results for {len(missing)} golden "
                         f"question(s), e.g. {missing[:5]}; search every question")
    extra = dict(run.params) | dict(params or {})
    cats = {i.qid: (i.category, i.source) for i in items}
    if level == "document":
        if by_id is None:
            raise WorkbenchError("document-level scoring needs the chunks (chunks=...): the "
                             "document of a chunk is taken from the chunk, never its id")
        spans_only = [m.name for m in parsed if not m.defined_for("document")]
        if spans_only:
            raise WorkbenchError(f"{', '.join(spans_only)}: coverage@k and the span_* metrics "
                             "need evidence items scored at level='chunk'; documents have no "
                             "spans, so leave them out at level='document'")
        frame, excluded = _score_documents(run, items, by_id, parsed, grade_threshold)
    else:
        if relevance is None:
            relevance = Relevance(items, list(by_id.values()) if by_id is not None else None,
                                  evidence_threshold=evidence_threshold,
                                  grade_threshold=grade_threshold, documents=documents,
                                  chunking_complete=given is not None)
        else:
            _check_relevance(relevance, items, by_id, grade_threshold, evidence_threshold)
        scores = relevance.score(run.ranked(), parsed)
        rows = [(m.name, q, relevance.label(q), v) for m in parsed
                for q, v in scores.values[m.name].items()]
        frame = pd.DataFrame(rows, columns=["metric", "qid", "relevance", "value"])
        excluded = {**relevance.excluded, **{r: list(q) for r, q in scores.excluded.items()}}
    frame.insert(0, "system", run.system)
    frame.insert(2, "category", [cats[q][0] for q in frame["qid"]])
    frame.insert(3, "source", [cats[q][1] for q in frame["qid"]])
    for key, value in extra.items():
        frame[key] = value
    frame = frame[[*Evaluation.COLUMNS, *extra]]
    return Evaluation(frame, excluded, {run.system: run})


def _check_relevance(relevance: Relevance, items: Sequence[GoldenItem],
                     by_id: Mapping[str, Chunk] | None, grade_threshold: int,
                     evidence_threshold: float) -> None:
    """Refuse judgments made for other thresholds, another chunking or other golden items."""
    if (relevance.grade_threshold, relevance.evidence_threshold) != (grade_threshold,
                                                                     float(evidence_threshold)):
        raise WorkbenchError(f"relevance=... was judged at grade_threshold="
                         f"{relevance.grade_threshold}, "
                         f"evidence_threshold={relevance.evidence_threshold:g}, and evaluate was "
                         f"asked for grade_threshold={grade_threshold}, evidence_threshold="
                         f"{evidence_threshold:g}: pass the same thresholds to both")
    where = None if by_id is None else {c.id: (c.doc_id, c.start, c.end) for c in by_id.values()}
    if where != (None if relevance.index is None else relevance.index.where):
        raise WorkbenchError("relevance=... was judged under another chunking than the chunks "
                         "given: build it from the same chunks (Relevance(golden, chunks))")
    judged = {q for reason in relevance.excluded.values() for q in reason} | set(relevance.qids)
    if {i.qid for i in items} != judged \
            or any(relevance.items[i.qid] != i for i in items if i.qid in relevance.items):
        raise WorkbenchError("relevance=... was judged for other golden items: build it from the "
                         "golden set you evaluate (Relevance(golden, chunks))")


def _score_documents(run: Run, items: Sequence[GoldenItem], by_id: Mapping[str, Chunk],
                     parsed: Sequence[Metric], grade_threshold: int
                     ) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    # the documents holding each answer, graded by their best labelled chunk; a label that
    # names no chunk names a document (document qrels read as chunk ids)
    qrels = {i.qid: i.doc_grades(by_id, labels_may_name_documents=True)
             for i in items if i.answerable}
    ranked = run.to_documents({cid: c.doc_id for cid, c in by_id.items()}).ranked()
    scores = score_queries(qrels, ranked, parsed, grade_threshold=grade_threshold)
    label = relevance_label("document", grade_threshold)
    rows = [(name, q, label, float(v)) for name, values in scores.values.items()
            for q, v in zip(scores.qids, values, strict=True)]
    excluded = {"unanswerable": [i.qid for i in items if not i.answerable],
                "no_relevant_at_threshold": list(scores.excluded_no_relevant)}
    return pd.DataFrame(rows, columns=["metric", "qid", "relevance", "value"]), excluded
