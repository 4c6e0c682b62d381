"""Retrieval metrics, vectorised with numpy, following trec_eval's conventions.

Inputs
    qrels: ``{qid: {docid: grade}}`` with integer grades. A document is *relevant* when
        ``grade >= grade_threshold`` (default 1, like trec_eval's ``-l``). Grades <= 0 are never
        relevant and have zero gain; unjudged documents count as grade 0.
    run: ``{qid: [docid, ...]}`` ranked best first, or ``{qid: {docid: score}}`` as used by
        pytrec_eval, ranx and ir_measures. Scored queries are ranked like trec_eval: score
        descending, ties broken by docid in *descending* string order (the one tie rule of
        the workbench: retrievers order ties the same way, so a run scores the same as a list
        and as a dict). A repeated docid in a list keeps its first rank and its repeats
        occupy ranks of their own (k is what the generator receives). Ranks are 1-based. A
        score is a real number of any numeric type (float, int, numpy, Decimal, Fraction); a
        NaN, None, bool, complex or string score is refused (WorkbenchError, a ValueError).

Which queries are scored
    * Queries in the run but not in the qrels are ignored (trec_eval default).
    * Queries in the qrels but not in the run are ignored by default (``missing="ignore"``,
      trec_eval default); ``missing="zero"`` scores them 0 on every metric (trec_eval ``-c``).
    * Queries without any relevant document at ``grade_threshold`` are excluded from the per-query
      values and the means, and listed in ``PerQueryScores.excluded_no_relevant``
      (``no_relevant="exclude"``, the workbench default). trec_eval keeps them in ``num_q``
      with every thresholded score 0 (nDCG keeps its graded gains, as trec_eval's nDCG
      ignores ``-l``): ``no_relevant="zero"`` does the same (``workbench trec`` uses it).

Metrics (``k`` is a rank cutoff; a run shorter than k is padded with non-relevant documents)
    precision@k      |relevant in top k| / k (divides by k even if fewer were retrieved). P_k
    recall@k         |relevant in top k| / |relevant|. recall_k
    hit_rate@k       1 if any relevant document is in the top k, else 0. Not recall: one hit
                     out of four relevant documents gives hit_rate 1 but recall 0.25. success_k
    mrr, mrr@k       1 / rank of the first relevant document (0 if none, or none in the top k).
                     The mean over queries is MRR. recip_rank (uncut only)
    ndcg@k           DCG@k / IDCG@k; gain = grade (linear), discount log2(rank + 1); the ideal
                     ranking is *all judged* grades of the query sorted descending, cut at k.
                     ndcg_cut_k. ``ndcg`` without k uses the whole run and all judgments (ndcg).
                     Gains ignore ``grade_threshold``, as trec_eval's nDCG ignores ``-l``.
                     (Järvelin and Kekäläinen, "Cumulated gain-based evaluation of IR
                     techniques", ACM TOIS 20(4), 2002; trec_eval's m_ndcg.c / m_ndcg_cut.c.)
    ndcg_retrieved@k "retrieved-only" nDCG: the ideal re-sorts the grades of the *retrieved*
                     top k, so unretrieved relevant documents are not penalised (not trec_eval).
    map, ap@k        average precision: sum of precision at each relevant rank (within the
                     whole run, or the top k) divided by |relevant|. map, map_cut_k
    r_precision      |relevant in top R| / R with R = |relevant|. Rprec

How: a run's scores are read (and checked) once into one float array, and the qrels' grades
into another; only documents judged with grade > 0 are located in the run (a list by
position, a scored query by looking them all up at C speed and counting, in one vectorised
comparison, the scores above theirs), giving an (n_queries x depth) grade matrix; every
metric is then a cumsum or matrix product over it. depth is the largest cutoff, or the
longest ranking if an uncut metric (mrr, map, ndcg, r_precision) is requested. No step walks
the queries in Python per judged document (``benchmarks/bench_metrics.py``: within 1.2x of a
minimal numpy scorer of the same dicts).
"""

from __future__ import annotations

import functools
import math
import operator
import struct
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, compress, repeat
from typing import Any, Literal, cast

import numpy as np

from workbench.io import WorkbenchError
from workbench.metrics.intervals import paused_gc
from workbench.metrics.registry import Metric, parse_metric

__all__ = ["PerQueryScores", "check_rankings", "mean_scores", "score_queries"]

Qrels = Mapping[str, Mapping[str, int]]
_VALUES = operator.methodcaller("values")
_GET = operator.attrgetter("get")
_BLOCK = 2048  # rows compared at once: 2048 x depth 100 doubles = 1.6 MB
#: qid -> ranked chunk ids (best first) or qid -> {chunk id: score} (ranked by score, then id).
Rankings = Mapping[str, Sequence[str]] | Mapping[str, Mapping[str, float]]


@dataclass(frozen=True)
class PerQueryScores:
    """Per-query values. ``values[name]`` is aligned with ``qids`` (sorted); ``name`` is the
    string the caller passed (or ``Metric.name``). ``excluded_no_relevant`` lists queries that
    would have been scored but have no relevant document; ``missing_from_run`` lists qrels
    queries absent from the run (scored 0 with ``missing="zero"``, else left out)."""

    qids: list[str]
    values: dict[str, np.ndarray]
    excluded_no_relevant: list[str]
    missing_from_run: list[str]

    def mean(self) -> dict[str, float]:
        """Mean of each metric over ``qids``; NaN when no query was scored."""
        return {k: float(v.mean()) if v.size else float("nan") for k, v in self.values.items()}


class _Scores:
    """The scores of a run's scored queries (``qid -> {id: score}``), read once into one
    flat float array: ``row[qid]`` indexes ``start``/``length``, whose slice of ``flat``
    holds that query's scores in the dict's order. Reading them is where a run is checked:
    a score that is no real number, a NaN, or a bool is refused (see :func:`check_rankings`,
    which names the query and id), every value at C speed and only suspects in Python."""

    def __init__(self, qrels: Any, run: Any) -> None:
        if not isinstance(run, Mapping):
            check_rankings(qrels, run)
        scored: Mapping[str, Mapping[str, float]] = run  # every query scored: the usual
        if not set(map(type, run.values())) <= {dict}:
            scored = {}
            for q, ranked in run.items():
                if isinstance(ranked, Mapping):
                    scored[q] = ranked
                elif type(ranked) is not list and type(ranked) is not tuple and (
                        isinstance(ranked, str | bytes) or not isinstance(ranked, Sequence)):
                    check_rankings(qrels, run)
        self.row = dict(zip(scored, range(len(scored)), strict=True))
        self.length = np.fromiter(map(len, scored.values()), np.int64, len(scored))
        self.start = np.cumsum(self.length) - self.length
        values = [m.values() for m in scored.values()]
        n = int(self.length.sum())
        try:  # packed as C doubles (the rule of _as_double): refuses str, which numpy would
            # parse ("0.5"), and None, at C speed
            with warnings.catch_warnings():
                warnings.simplefilter("error", np.exceptions.ComplexWarning)
                packed = struct.pack(f"{n}d", *chain.from_iterable(values))
        except (struct.error, np.exceptions.ComplexWarning) as err:
            check_rankings(qrels, run)  # names the query and id
            raise WorkbenchError(f"run: every score must be a real number ({err})") from err
        self.flat = np.frombuffer(packed, np.float64, n)
        if np.isnan(self.flat).any():
            check_rankings(qrels, run)
        # a bool reads as 0.0 or 1.0: only queries holding such a value are looked at
        zero_one = np.flatnonzero((self.flat == 0.0) | (self.flat == 1.0))
        if zero_one.size:
            rows = np.unique(np.searchsorted(self.start, zero_one, side="right") - 1)
            if any(isinstance(v, bool | np.bool_) for r in rows.tolist() for v in values[r]):
                check_rankings(qrels, run)

    @functools.cached_property
    def _fixed(self) -> np.ndarray | None:
        """The scores as a (queries x depth) matrix when every query has the same depth."""
        if not self.length.size or not (self.length == self.length[0]).all():
            return None
        return self.flat.reshape(len(self.length), -1)

    @functools.cached_property
    def descending(self) -> bool:
        """True when every query's scores strictly fall in the dict's order (a ranked run):
        then no two of a query's scores are equal, and no tie needs breaking."""
        fixed = self._fixed
        if fixed is not None:
            return bool((fixed[:, 1:] < fixed[:, :-1]).all())
        falls = self.flat[1:] < self.flat[:-1]
        begins = self.start[(self.start > 0) & (self.start < self.flat.size)]
        falls[begins - 1] = True  # where one query ends and the next begins
        return bool(falls.all())

    def above_and_equal(self, rows: np.ndarray, values: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray | None]:
        """For each (row, value): how many scores of that row are above it, and equal (None
        when :attr:`descending`: each value is then its row's only one)."""
        length, start = self.length[rows], self.start[rows]
        fixed = self._fixed
        if fixed is not None:  # fixed depth: 2-D comparisons, a block of rows at a time
            above = np.empty(len(rows), np.int64)  # (its temporaries stay in cache)
            equal = None if self.descending else np.empty(len(rows), np.int64)
            for at in range(0, len(rows), _BLOCK):
                cand, value = fixed[rows[at:at + _BLOCK]], values[at:at + _BLOCK, None]
                above[at:at + _BLOCK] = np.count_nonzero(cand > value, axis=1)
                if equal is not None:
                    equal[at:at + _BLOCK] = np.count_nonzero(cand == value, axis=1)
            return above, equal
        # otherwise one segment of the flat scores per (row, value), each at least 1 long
        ends = np.cumsum(length)
        pos = np.arange(int(ends[-1])) - np.repeat(ends - length - start, length)
        cand, ref = self.flat[pos], np.repeat(values, length)
        above = np.add.reduceat(cand > ref, ends - length)
        if self.descending:
            return above, None
        return above, np.add.reduceat(cand == ref, ends - length)


def _by_text(qids: Iterable[str]) -> list[str]:
    """Query ids sorted by their text (``str``), the order of every result."""
    listed = list(qids)
    return sorted(listed) if set(map(type, listed)) <= {str} else sorted(listed, key=str)


class _Positives:
    """The scored queries' positive judgments (grade > 0), read once: ``qids`` (sorted by
    their text), ``positives`` (each query's doc -> grade, in the qrels' order), ``lens`` and
    ``grades`` (those grades flat, query after query), ``n_rel`` (relevant documents at the
    threshold), and ``excluded`` (sorted: queries with nothing relevant at the threshold,
    unless ``no_relevant="zero"``). Per-query counts are taken from the flat grades at C
    speed; a dict is rebuilt only for a query that judges some document <= 0."""

    def __init__(self, qrels: Qrels, run: Rankings, *, missing: str, no_relevant: str,
                 grade_threshold: int) -> None:
        asked = list(qrels) if missing == "zero" else list(filter(run.__contains__, qrels))
        judged = list(map(qrels.__getitem__, asked))
        lens = np.fromiter(map(len, judged), np.int64, len(judged))
        grades = np.fromiter(chain.from_iterable(map(_VALUES, judged)), np.float64,
                             int(lens.sum()))
        ends = np.cumsum(lens)

        def per_query(mask: np.ndarray) -> np.ndarray:
            running = np.concatenate([[0], np.cumsum(mask)])
            counted: np.ndarray = running[ends] - running[ends - lens]
            return counted

        non_positive = per_query(grades <= 0)
        relevant = per_query(grades >= grade_threshold)
        keep = relevant > 0 if no_relevant == "exclude" else np.ones(len(asked), bool)
        kept = list(compress(asked, keep.tolist()))
        self.excluded = _by_text(compress(asked, (~keep).tolist()))
        self.qids = _by_text(kept)
        at = dict(zip(asked, range(len(asked)), strict=True))
        order = np.fromiter(map(at.__getitem__, self.qids), np.int64, len(self.qids))
        # qrels often list only relevant documents: then each query keeps its dict
        self.positives: list[Mapping[str, int]] = list(map(judged.__getitem__, order.tolist()))
        for n in np.flatnonzero(non_positive[order]).tolist():
            self.positives[n] = {d: g for d, g in self.positives[n].items() if g > 0}
        taken = lens[order]  # the grades of the kept queries, in their sorted order
        grades = grades[np.repeat(ends[order] - taken - np.cumsum(taken) + taken, taken)
                        + np.arange(int(taken.sum()))]
        self.grades = grades[grades > 0]
        self.lens = taken - non_positive[order]
        self.n_rel = relevant[order].astype(np.float64)


def _ranked_grades(run: Rankings, scores: _Scores, judged: _Positives,
                   depth: int | None) -> np.ndarray:
    """(len(qids) x width) matrix of grades by rank (column 0 = rank 1), 0 where unjudged,
    non-relevant or past the end of the run. Only positively judged documents are located:
    in a list by position; in a scored query by counting the scores above theirs."""
    qids, positives = judged.qids, judged.positives
    row_of = np.fromiter(map(scores.row.get, qids, repeat(-1)), np.int64, len(qids))
    by_score = row_of >= 0
    longest = int(scores.length[row_of[by_score]].max()) if by_score.any() else 0
    rows: list[int] = []  # (row, 0-based rank, grade) of each retrieved positive document
    ranks: list[int] = []
    grades: list[float] = []
    for i in np.flatnonzero(~by_score).tolist():  # ranked lists (or absent: no documents)
        docs = cast(Sequence[str], run.get(qids[i], ()))  # scored queries have a row
        # the first occurrence keeps its rank; repeats occupy ranks of their own
        rank_of = dict(zip(reversed(docs), range(len(docs) - 1, -1, -1), strict=True))
        longest = max(longest, len(docs))
        for d, grade in positives[i].items():
            if (rank := rank_of.get(d)) is not None:
                rows.append(i)
                ranks.append(rank)
                grades.append(grade)
    width = min(depth, max(longest, 1)) if depth else max(longest, 1)  # nothing lies deeper
    out = np.zeros((len(qids), width))
    if by_score.any():
        # every positive document of every scored query looked up at C speed, in the order
        # of its query's positives (None, read as NaN, where the run lacks it)
        located = np.flatnonzero(by_score)
        pos = positives if located.size == len(qids) else [positives[i] for i in
                                                           located.tolist()]
        lens = judged.lens[located]
        gets = map(_GET, map(run.__getitem__, map(qids.__getitem__, located.tolist())))
        looked = np.fromiter(chain.from_iterable(map(map, gets, pos)), np.float64,
                             int(lens.sum()))
        found = ~np.isnan(looked)  # the run's own scores are never NaN (refused)
        f_rows = np.repeat(located, lens)[found]
        values = looked[found]
        f_grade = judged.grades[np.repeat(by_score, judged.lens)][found]
        if f_rows.size:
            above, equal = scores.above_and_equal(row_of[f_rows], values)
            if equal is not None:
                _break_ties(run, qids, positives, f_rows, values, above, equal)
            keep = above < width
            out[f_rows[keep], above[keep]] = f_grade[keep]
    if rows:
        row_a, rank_a = np.array(rows, dtype=np.int64), np.array(ranks, dtype=np.int64)
        keep = rank_a < width
        out[row_a[keep], rank_a[keep]] = np.array(grades, dtype=np.float64)[keep]
    return out


def _break_ties(run: Rankings, qids: list[str], positives: list[Mapping[str, int]],
                f_rows: np.ndarray, values: np.ndarray, above: np.ndarray,
                equal: np.ndarray) -> None:
    """Add to ``above`` the equal scores ranked first (larger docids), for each located
    document whose score is not its query's only one of that value."""
    tied = np.flatnonzero(equal > 1)
    if not tied.size:
        return
    first = np.searchsorted(f_rows, f_rows[tied])  # a row's documents are contiguous
    for t, start in zip(tied.tolist(), first.tolist(), strict=True):
        i = int(f_rows[t])
        scored = run[qids[i]]
        assert isinstance(scored, Mapping)  # only scored queries were located by score
        # the row's located documents, in the order they were located
        d = [d for d in positives[i] if d in scored][t - start]
        score = values[t]
        above[t] += sum(s == score and d2 > d for d2, s in scored.items())


def _ideal_gains(judged: _Positives, depth: int | None) -> np.ndarray:
    """(queries x depth) matrix of each query's positive judged grades, sorted descending."""
    lens, flat = judged.lens, judged.grades
    mat = np.zeros((len(lens), max(int(lens.max(initial=0)), 1)))  # zeros beyond
    mat[np.repeat(np.arange(len(lens)), lens),
        np.arange(len(flat)) - np.repeat(np.cumsum(lens) - lens, lens)] = flat
    return -np.sort(-mat, axis=1)[:, :depth]


def _discount(n: int) -> np.ndarray:
    discount: np.ndarray = 1.0 / np.log2(np.arange(2, n + 2))
    return discount


def _dcg(gains: np.ndarray, k: int) -> np.ndarray:
    k = min(k, gains.shape[1])
    dcg: np.ndarray = gains[:, :k] @ _discount(k)
    return dcg


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out: np.ndarray = np.divide(num, den, out=np.zeros_like(num, dtype=np.float64),
                                where=den > 0)
    return out


def _as_double(value: Any) -> float | None:
    """The value as a C double by Python's float protocol (``__float__`` or ``__index__``:
    floats, ints, numpy numbers, Decimal, Fraction; never text parsed), else None. The one
    rule of what a score or grade may be: :class:`_Scores` packs a whole run by it (a numpy
    complex, which packs with a warning, made an error there)."""
    if isinstance(value, complex | np.complexfloating):  # numpy's would drop the imaginary part
        return None
    try:
        double: float = struct.unpack("d", struct.pack("d", value))[0]
    except struct.error:
        return None
    return double


def _number(value: Any, finite: bool = True) -> bool:
    """A real number by :func:`_as_double` (not a bool), not NaN; finite unless
    ``finite=False``."""
    if isinstance(value, bool | np.bool_) or (x := _as_double(value)) is None:
        return False
    return not math.isnan(x) and (not finite or math.isfinite(x))


def check_rankings(qrels: Any, run: Any) -> None:
    """Refuse inputs that would score silently wrong: qrels that are not ``qid -> doc ->
    integer grade`` (a NaN, None or fractional grade), and a run that is not ``qid ->
    ranked ids`` or ``qid -> id -> score`` (a string, which would rank its letters;
    a None or NaN score, which would sort anywhere). The error names the query and id."""
    if not isinstance(qrels, Mapping):
        raise WorkbenchError(f"qrels must be a mapping qid -> doc -> grade, not "
                             f"{type(qrels).__name__}")
    for q, judged in qrels.items():
        if not isinstance(judged, Mapping):
            raise WorkbenchError(f"qrels[{q!r}] must be a mapping doc -> grade, not "
                                 f"{type(judged).__name__}")
        for d, g in judged.items():
            if not _number(g) or float(g) != int(g):
                raise WorkbenchError(f"qrels[{q!r}][{d!r}]: grade must be an integer (not NaN, "
                                     f"None or a fraction), got {g!r}; give 0 for non-relevant")
    if not isinstance(run, Mapping):
        raise WorkbenchError(f"run must be a mapping qid -> ranked ids (or id -> score), not "
                             f"{type(run).__name__}")
    for q, ranked in run.items():
        if isinstance(ranked, Mapping):
            bad = next(((d, v) for d, v in ranked.items() if not _number(v, False)), None)
            if bad is not None:
                raise WorkbenchError(f"run[{q!r}][{bad[0]!r}]: score must be a number "
                                     f"(not NaN or None), got {bad[1]!r}")
        elif isinstance(ranked, str | bytes) or not isinstance(ranked, Sequence):
            raise WorkbenchError(f"run[{q!r}] must be a list of ranked ids (or a mapping id "
                                 f"-> score), not {type(ranked).__name__} {ranked!r:.40}")


@paused_gc()  # its many small objects would trigger full collections of the caller's heap
def score_queries(
    qrels: Qrels,
    run: Rankings,
    metrics: Sequence[str | Metric],
    *,
    grade_threshold: int = 1,
    missing: Literal["ignore", "zero"] = "ignore",
    no_relevant: Literal["exclude", "zero"] = "exclude",
) -> PerQueryScores:
    """Per-query scores for each metric (see the module docstring for the conventions).

    ``values`` is keyed by each metric as passed: the string itself, or ``Metric.name``.
    ``missing="zero"`` scores qrels queries absent from the run as 0 (trec_eval ``-c``);
    ``no_relevant="zero"`` keeps queries without a relevant document, scored 0 (trec_eval)."""
    if isinstance(grade_threshold, bool) or not isinstance(grade_threshold, int) \
            or grade_threshold < 1:
        raise WorkbenchError(f"grade_threshold must be an integer >= 1 (grades <= 0 are "
                             f"non-relevant), got {grade_threshold!r}")
    if missing not in ("ignore", "zero"):
        raise WorkbenchError(f"missing must be 'ignore' or 'zero', got {missing!r}")
    if no_relevant not in ("exclude", "zero"):
        raise WorkbenchError(f"no_relevant must be 'exclude' or 'zero', got {no_relevant!r}")
    if not (isinstance(qrels, Mapping) and set(map(type, qrels.values())) <= {dict}
            and set(map(type, chain.from_iterable(map(_VALUES, qrels.values()))))
            <= {int}):  # dicts of int grades pass at C speed; anything else is looked at
        check_rankings(qrels, {})
    scores = _Scores(qrels, run)
    if isinstance(metrics, str | Metric):
        metrics = [metrics]
    parsed = {(m if isinstance(m, str) else m.name): parse_metric(m) for m in metrics}
    for m in parsed.values():
        if not m.defined_for("chunk_id"):
            raise WorkbenchError(f"{m.name} needs evidence spans; chunk-id and document "
                             "relevance define it nowhere (score it with evaluate())")

    absent = _by_text(qrels.keys() - run.keys())
    judged = _Positives(qrels, run, missing=missing, no_relevant=no_relevant,
                        grade_threshold=grade_threshold)
    qids = judged.qids
    # with no_relevant="zero", a query with nothing relevant at the threshold scores 0 on
    # every thresholded metric by construction; nDCG keeps its graded gains
    n_rel = np.maximum(judged.n_rel, 1.0)

    cuts = [m.k for m in parsed.values() if m.k is not None]
    uncut = any(m.k is None for m in parsed.values())
    depth = None if uncut else max(cuts, default=1)
    grades = _ranked_grades(run, scores, judged, depth)
    width = grades.shape[1]
    rel = grades >= grade_threshold
    gains = grades  # only grades > 0 are ever placed in the matrix
    ideal = None
    if any(m.kind == "ndcg" for m in parsed.values()):
        ideal = _ideal_gains(judged, None if uncut else depth)

    def hits_at(k: int) -> np.ndarray:
        within: np.ndarray = np.count_nonzero(rel[:, :min(k, width)], axis=1)
        return within.astype(np.float64)

    @functools.cache
    def hits() -> np.ndarray:
        """Relevant documents within each rank, once, when a metric needs every rank."""
        running: np.ndarray = np.cumsum(rel, axis=1)
        return running

    values: dict[str, np.ndarray] = {}
    for key, m in parsed.items():
        k = m.k if m.k is not None else width
        if m.kind == "precision":
            v = hits_at(k) / k
        elif m.kind == "recall":
            v = hits_at(k) / n_rel
        elif m.kind == "hit_rate":
            v = (hits_at(k) > 0).astype(np.float64)
        elif m.kind == "mrr":
            first = rel[:, : min(k, width)].argmax(axis=1) + 1.0
            v = np.where(rel[:, : min(k, width)].any(axis=1), 1.0 / first, 0.0)
        elif m.kind == "ap":
            kk = min(k, width)
            prec = hits()[:, :kk] / np.arange(1, kk + 1)
            v = (prec * rel[:, :kk]).sum(axis=1) / n_rel
        elif m.kind == "r_precision":
            at = np.minimum(n_rel.astype(np.int64), width) - 1
            v = np.take_along_axis(hits(), at[:, None], axis=1)[:, 0] / n_rel
        elif m.kind == "ndcg":
            assert ideal is not None
            kk = k if m.k is not None else max(width, ideal.shape[1])
            v = _safe_div(_dcg(gains, kk), _dcg(ideal, kk))
        elif m.kind == "ndcg_retrieved":
            top = gains[:, : min(k, width)]
            v = _safe_div(_dcg(top, k), _dcg(-np.sort(-top, axis=1), k))
        else:  # pragma: no cover - Metric.of only builds the kinds above
            raise WorkbenchError(f"unsupported metric kind {m.kind!r}")
        values[key] = v

    return PerQueryScores(
        qids=qids, values=values, excluded_no_relevant=judged.excluded,
        missing_from_run=absent
    )


def mean_scores(
    qrels: Qrels,
    run: Rankings,
    metrics: Sequence[str | Metric],
    *,
    grade_threshold: int = 1,
    missing: Literal["ignore", "zero"] = "ignore",
    no_relevant: Literal["exclude", "zero"] = "exclude",
) -> dict[str, float]:
    """Mean of each metric over scored queries (see :func:`score_queries`; NaN if none).
    Queries without relevant documents are excluded unless ``no_relevant="zero"``."""
    return score_queries(qrels, run, metrics, grade_threshold=grade_threshold, missing=missing,
                         no_relevant=no_relevant).mean()
