"""Sweep results: :class:`SweepResult` (the cost table, leaderboards, best configurations),
:func:`refine` (coarse, then fine) and :func:`first_relevant_rank_table` (the rank at which
the gold evidence is first found)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from workbench.corpus import Chunk
from workbench.evaluation import INTERVAL_NOTE, Evaluation, Run
from workbench.evaluation.pipeline import Pipeline
from workbench.golden import GoldenSet
from workbench.io import WorkbenchError
from workbench.metrics import DEFAULT_EVIDENCE_THRESHOLD, Relevance, at_k
from workbench.stats import compare_paired, mean_interval, selection_bias
from workbench.sweep.grid import GRID_KEYS, PERCENT, as_list, param_label
from workbench.sweep.holdout import Confirmation, HoldoutSplit, Tied, score_matrix
from workbench.text import escape_html, frame_html

RANK_BUCKETS: tuple[tuple[int, int, str], ...] = ((1, 1, "1"), (2, 3, "2-3"), (4, 5, "4-5"),
                                                  (6, 10, "6-10"))
MISSING = "missing"


class SweepResult(Evaluation):
    """An Evaluation with one system per configuration (named by the parameters that vary)
    and the grid parameters as columns, plus:

    * ``config_table``: one row per configuration: parameters, chunker ``spec``, ``chunks``,
      ``index_tokens``, ``cost_multiplier``, ``split_rate``, ``prompt_tokens_at_k`` (mean
      tokens of the top-k chunks returned, what the generator reads), ``embedded`` and
      ``reused`` (texts sent to the encoder / served from the cache);
    * ``skipped``: invalid combinations and why; ``found_rank[config][qid]``: the rank at
      which that configuration first found the question's gold evidence (None: not within
      the kept hits); ``resumed``: configurations read from the state file;
    * ``holdout``: the :class:`~workbench.sweep.holdout.HoldoutSplit` when the sweep ran with
      ``holdout=``: ``leaderboard``, ``best`` and ``best_by_category`` then rank on the
      tuning questions only, and :meth:`confirm` reports the winner on the held-out ones.

    Configuration labels (``configs()``, for ``compare``) are the system names, the index
    of ``config_table``. Immutable, as an Evaluation is: tables are read as copies, the rest
    is read-only.
    """

    def __init__(self, frame: pd.DataFrame, excluded: Mapping[str, Sequence[str]],
                 runs: Mapping[str, Run], configs: pd.DataFrame,
                 *, skipped: Sequence[Mapping[str, Any]] = (),
                 found_rank: Mapping[str, Mapping[str, int | None]] | None = None,
                 resumed: int = 0, holdout: HoldoutSplit | None = None,
                 evidence_threshold: float = DEFAULT_EVIDENCE_THRESHOLD):
        super().__init__(frame, excluded, runs)
        self._holdout = holdout
        self._evidence_threshold = evidence_threshold
        self._config_table = configs.copy()
        self._skipped = tuple(MappingProxyType(dict(s)) for s in skipped)
        self._found_rank = MappingProxyType({c: MappingProxyType(dict(v))
                                             for c, v in (found_rank or {}).items()})
        self._resumed = resumed

    @property
    def config_table(self) -> pd.DataFrame:
        return self._config_table.copy()

    @property
    def skipped(self) -> tuple[Mapping[str, Any], ...]:
        """The grid's invalid combinations, each with its ``reason``."""
        return self._skipped

    @property
    def found_rank(self) -> Mapping[str, Mapping[str, int | None]]:
        """config -> qid -> the rank at which its gold evidence was first found (None: not
        within the kept hits)."""
        return self._found_rank

    @property
    def holdout(self) -> HoldoutSplit | None:
        """The tuning / held-out split, or None (the sweep ran on every question)."""
        return self._holdout

    @property
    def resumed(self) -> int:
        """How many configurations were read from the state file."""
        return self._resumed

    @property
    def grid_params(self) -> list[str]:
        """The grid parameters (columns) of this sweep."""
        return [p for p in GRID_KEYS if p in self.params]

    @property
    def embedded(self) -> int:
        return int(self._config_table["embedded"].sum())

    @property
    def reused(self) -> int:
        return int(self._config_table["reused"].sum())

    def labels(self) -> pd.Series:
        """Configuration labels are the system names (they already name the parameters)."""
        return self._frame["system"].astype(str)

    def metric_name(self, metric: str | None = None) -> str:
        """``metric`` as named in this sweep (default: the first); ``recall@k`` also finds
        ``recall@5`` when every configuration has k=5."""
        if metric is None:
            return self.metrics[0]
        if metric in self.metrics:
            return metric
        ks = self._config_table["k_value"].unique()
        if len(ks) == 1:  # a template (recall@k) at the sweep's one k
            concrete = at_k(metric, int(ks[0]))
            if concrete in self.metrics:
                return concrete
        raise WorkbenchError(f"metric {metric!r} is not in this sweep: {self.metrics}")

    def _tuning(self, metric: str, category: str | None = None,
                part: str = "tuning") -> pd.DataFrame:
        """The rows of ``metric`` on the tuning (or ``"heldout"``) questions: all of them
        when the sweep has no held-out split."""
        frame = self._frame[self._frame["metric"] == metric]
        if self._holdout is not None:
            frame = frame[frame["qid"].isin(getattr(self._holdout, part))]
        if category is not None:
            frame = frame[frame["category"] == category]
        return frame

    def _scores(self, frame: pd.DataFrame) -> dict[str, dict[str, float]]:
        return {str(c): dict(zip(g["qid"], g["value"], strict=True))
                for c, g in frame.groupby("system", sort=False)}

    def leaderboard(self, metric: str | None = None, category: str | None = None,
                    confidence: float = 0.95, resamples: int = 1000) -> pd.DataFrame:
        """One row per configuration, best ``metric`` first: parameters, mean, interval,
        n and cost, on the tuning questions when the sweep has a held-out split.
        ``category`` restricts the questions to one category. The winner's row carries
        ``selection_bias``: the points of its mean expected from picking the best of these
        configurations alone (:func:`~workbench.stats.selection_bias`, ``resamples``
        bootstrap resamples; NaN on the other rows)."""
        metric = self.metric_name(metric)
        frame = self._tuning(metric, category)
        # one metric, one configuration per system: the summary has one row per system
        summ = Evaluation(frame[list(Evaluation.COLUMNS)]).summary(confidence).set_index("system")
        cost = self._config_table.drop(columns=["retriever_name", "k_value"])
        table = cost.join(summ[["mean", "ci_low", "ci_high", "n"]], how="inner")
        table = table.sort_values(["mean", "index_tokens"], ascending=[False, True],
                                  kind="stable")
        table.insert(0, "metric", metric)
        scores = self._scores(frame)
        matrix, _ = score_matrix(scores, [str(c) for c in table.index])
        bias = selection_bias(matrix, resamples) if matrix.shape[1] else float("nan")
        table["selection_bias"] = [bias if i == 0 else float("nan") for i in range(len(table))]
        return table

    def part_summary(self, part: str | None = None, confidence: float = 0.95) -> pd.DataFrame:
        """:meth:`Evaluation.summary` (mean, interval and n per configuration and metric)
        over the ``"tuning"`` or ``"heldout"`` questions of the split, or over every
        question (``None``, or a sweep without a split)."""
        frame = self._frame
        if part is not None and self._holdout is not None:
            frame = frame[frame["qid"].isin(getattr(self._holdout, part))]
        return Evaluation(frame[list(Evaluation.COLUMNS)]).summary(confidence)

    def tied(self, metric: str | None = None) -> list[str]:
        """The configurations other than :meth:`best` whose mean ``metric`` on the ranking
        questions (the tuning part with a split) is at most one question below the
        winner's (1/n: one question moves a mean of values in [0, 1] by at most that),
        equal means included, best first: the winner owes its place over them to the
        tie-break or to one question."""
        board = self.leaderboard(metric, resamples=1)
        top = board.iloc[0]
        close = board["mean"].iloc[1:] >= top["mean"] - 1.0 / int(top["n"]) - 1e-12
        return [str(c) for c in board.index[1:][close.to_numpy()]]

    def confirm(self, metric: str | None = None, baseline: str | None = None,
                confidence: float = 0.95, alpha: float = 0.05) -> Confirmation:
        """The winner on the tuning questions (:meth:`best`), reported on the held-out
        questions: its mean and interval there, next to its tuning mean and the expected
        selection bias, and the paired comparison against ``baseline`` (a configuration
        name; default: the first of the grid) on the held-out questions. Needs a sweep run
        with ``holdout=``."""
        if self._holdout is None:
            raise WorkbenchError("this sweep has no held-out part: run_sweep(..., holdout=0.3)")
        metric = self.metric_name(metric)
        board = self.leaderboard(metric, confidence=confidence)
        winner = str(board.index[0])
        base = baseline or str(self._config_table.index[0])
        if base not in self._config_table.index:
            raise WorkbenchError(f"baseline {base!r} is not a configuration of this sweep: "
                             f"{list(self._config_table.index)}")
        held = self._scores(self._tuning(metric, part="heldout"))
        win_held = held.get(winner, {})
        if not win_held:
            raise WorkbenchError(f"no held-out question was scored on {metric}")
        low, high, _ = mean_interval(list(win_held.values()), confidence)
        comparison = None
        if base != winner:
            common = sorted(set(win_held) & set(held.get(base, {})))
            comparison = compare_paired({q: held[base][q] for q in common},
                                        {q: win_held[q] for q in common}, alpha=alpha,
                                        confidence=confidence, name=winner)
        top = board.iloc[0]

        def held_mean(config: str) -> float:
            return float(np.mean(list(held[config].values())))

        tuning = {str(c): float(m) for c, m in board["mean"].items()}
        gaps = [mean - held_mean(c) for c, mean in tuning.items()]
        tied = tuple(Tied(c, tuning[c], held_mean(c), len(held[c])) for c in self.tied(metric))
        return Confirmation(
            config=winner, metric=metric, baseline=base, tuning_mean=float(top["mean"]),
            tuning_ci=(float(top["ci_low"]), float(top["ci_high"])), tuning_n=int(top["n"]),
            heldout_mean=held_mean(winner), heldout_ci=(low, high),
            heldout_n=len(win_held), selection_bias=float(top["selection_bias"]),
            configs=len(board), comparison=comparison, mean_gap=float(np.mean(gaps)),
            tied=tied)

    def best(self, metric: str | None = None, category: str | None = None) -> str:
        """The name of the configuration with the highest mean ``metric`` (ties: the smaller
        index, then grid order)."""
        return str(self.leaderboard(metric, category).index[0])

    def pipeline(self, config: str) -> Pipeline:
        """The :class:`~workbench.evaluation.pipeline.Pipeline` of one configuration (its
        chunker spec, retriever, encoder, k, this sweep's metrics at that k and relevance):
        ``run_pipeline`` on it, ``workbench eval`` and the gate give this sweep's numbers.
        The encoder is named by its label (an encoder object given to the sweep, by its
        ``model_id``)."""
        if config not in self._config_table.index:
            raise WorkbenchError(f"{config!r} is not a configuration of this sweep: "
                             f"{list(self._config_table.index)}")
        row = self._config_table.loc[config]
        retriever = str(row["retriever_name"])
        encoder = None
        if retriever != "bm25":  # the sweep's default encoder is MiniLM
            encoder = str(row["encoder"]) if "encoder" in row.index else "minilm"
        k = int(str(row["k_value"]))
        return Pipeline(str(row["spec"]), retriever, encoder, k,
                        metrics=tuple(at_k(m, k) for m in self.metrics), level="chunk",
                        evidence_threshold=self._evidence_threshold)

    def params_of(self, config: str) -> dict[str, Any]:
        row = self._config_table.loc[config]
        return {p: plain_value(row[p]) for p in self.grid_params}

    def label(self, **params: Any) -> str:
        """The configuration whose parameters equal ``params`` (e.g. ``size=800,
        overlap=100``), for ``compare(baseline=...)``."""
        table = self._config_table
        mask = pd.Series(True, index=table.index)
        for key, value in params.items():
            if key not in table.columns:
                raise WorkbenchError(
                    f"{key!r} is not a parameter of this sweep: {self.grid_params}")
            mask &= table[key].map(lambda v, want=value: param_label(v) == param_label(want))
        found = list(table.index[mask])
        if len(found) != 1:
            raise WorkbenchError(f"{len(found)} configurations match {params}; "
                             f"add parameters to pick one of: {found or list(table.index)}")
        return str(found[0])

    def subset(self, **params: Any) -> SweepResult:
        """The configurations whose parameters equal ``params`` (a value or a list of
        values each), e.g. ``result.subset(k=5)``; comparisons then run among those only."""
        table = self._config_table
        mask = pd.Series(True, index=table.index)
        for key, want in params.items():
            if key not in table.columns:
                raise WorkbenchError(
                    f"{key!r} is not a parameter of this sweep: {self.grid_params}")
            wanted = {param_label(v) for v in as_list(want)}
            mask &= table[key].map(lambda v, w=wanted: param_label(v) in w)
        keep = list(table.index[mask])
        if not keep:
            raise WorkbenchError(f"no configuration has {params}")
        frame = self._frame[self._frame["system"].isin(keep)]
        return SweepResult(frame, self.excluded, {k: self.runs[k] for k in keep},
                           table.loc[keep], skipped=self.skipped,
                           found_rank={k: v for k, v in self.found_rank.items() if k in keep},
                           resumed=self.resumed, holdout=self._holdout,
                           evidence_threshold=self._evidence_threshold)

    def best_by_category(self, metric: str | None = None,
                         confidence: float = 0.95) -> pd.DataFrame:
        """Per category: the best configuration there, its mean [interval] and n, next to the
        overall best configuration's score in that category."""
        metric = self.metric_name(metric)
        overall = self.best(metric)
        rows = []
        for cat in sorted(self._frame["category"].unique()):
            board = self.leaderboard(metric, cat, confidence)
            top = board.iloc[0]
            rows.append({"category": cat, "n": int(top["n"]), "best_config": board.index[0],
                         "mean": top["mean"], "ci_low": top["ci_low"], "ci_high": top["ci_high"],
                         "overall_best": overall,
                         "overall_best_mean": board.loc[overall, "mean"]})
        return pd.DataFrame(rows).set_index("category")

    def __repr__(self) -> str:
        return (f"SweepResult({len(self._config_table)} configs, {len(self.skipped)} skipped, "
                f"n={self.n} questions, metrics={self.metrics}, embedded={self.embedded}, "
                f"reused={self.reused}, resumed={self.resumed})")

    def _repr_html_(self) -> str:
        board = frame_html(self.leaderboard().drop(columns=["metric"]).round(3))
        split = self._holdout
        parts = "" if split is None else \
            f" ({len(split.tuning)} tuning: the table; {len(split.heldout)} held out)"
        note = (f"{len(self._config_table)} configurations, n={self.n} questions{parts}; "
                f"{self.metrics[0]} ({', '.join(self.relevance)}), mean [{INTERVAL_NOTE}]; "
                f"texts embedded "
                f"{self.embedded}, reused {self.reused}; {len(self.skipped)} skipped; "
                f"selection_bias: points of the winner's mean expected from the choice alone")
        held = "" if self._holdout is None else \
            f"<pre>{escape_html(self.confirm().summary())}</pre>"
        return f"<div><p>{escape_html(note)}</p>{held}{board}</div>"


def plain_value(value: Any) -> Any:
    """numpy scalars to Python ones (grids are plain data)."""
    return value.item() if isinstance(value, np.generic) else value


def _number(value: Any) -> float:
    """A grid value as a number: ``"25%"`` is 25.0 (grid values were validated)."""
    if isinstance(value, str):
        match = PERCENT.match(value)
        if match is None:
            raise WorkbenchError(f"{value!r} is not a number or a percentage")
        return float(match.group(1))
    return float(value)


def refine(result: SweepResult, metric: str | None = None, *, around: str | Mapping[str, Any]
           | None = None, params: Sequence[str] = ("size", "overlap"), points: int = 1
           ) -> dict[str, list[Any]]:
    """Coarse, then fine: a grid centred on the best configuration (or ``around``: a
    config name or parameter dict), with ``points`` evenly spaced values between it and each
    neighbouring coarse value for every numeric parameter in ``params`` (at an edge of the
    coarse grid, as far beyond the edge: the optimum may lie outside it). Values are integers;
    overlaps given as percentages stay percentages. Other parameters are fixed at the centre's
    values. Feed the result back to :func:`~workbench.sweep.run_sweep`."""
    if around is None:
        centre = result.params_of(result.best(metric))
    elif isinstance(around, str):
        centre = result.params_of(around)
    else:
        centre = result.params_of(result.label(**around))
    grid: dict[str, list[Any]] = {}
    for key in result.grid_params:
        value = plain_value(centre[key])
        coarse = [plain_value(v) for v in result.config_table[key].dropna().unique()]
        if key not in params or len(coarse) < 2 or value is None:
            if value is not None:
                grid[key] = [value]
            continue
        pct = isinstance(value, str)
        nums = sorted({_number(v) for v in coarse if isinstance(v, str) == pct})
        c = _number(value)
        i = nums.index(c)
        fine = {c}
        for j, mirror in ((i - 1, i + 1), (i + 1, i - 1)):
            # towards each neighbour; at an edge of the coarse grid, as far beyond it
            other = nums[j] if 0 <= j < len(nums) else 2 * c - nums[mirror]
            fine.update(c + (other - c) * s / (points + 1) for s in range(1, points + 1))
        low = 1 if key == "size" else 0
        out = sorted({round(v) for v in fine if round(v) >= low})
        grid[key] = [f"{v}%" for v in out] if pct else out
    return grid


# --------------------------------------------------------------------------- positions


def _bucket(rank: int | None, buckets: Sequence[tuple[int, int, str]]) -> str:
    if rank is not None:
        for lo, hi, name in buckets:
            if lo <= rank <= hi:
                return name
    return MISSING


def first_relevant_rank_table(ev: Evaluation, system: str | None = None,
                              *,
                              golden: GoldenSet | None = None,
                              chunks: Sequence[Chunk] | None = None, grade_threshold: int = 1,
                              evidence_threshold: float = DEFAULT_EVIDENCE_THRESHOLD,
                              column: str = "category",
                              buckets: Sequence[tuple[int, int, str]] = RANK_BUCKETS
                              ) -> pd.DataFrame:
    """The rank at which the gold evidence is first found, per ``column`` (plus ``all``):
    counts and shares of questions in rank buckets 1, 2-3, 4-5, 6-10 and ``missing`` (not
    found in the returned hits, or below the last bucket). Ranks are 1-based; relevance is
    judged as by :func:`workbench.evaluate` (an evidence span found at the coverage
    threshold, or a labelled chunk retrieved).

    From ``ev.runs[system].hits`` judged against ``golden`` under ``chunks``, or, for a
    SweepResult, the ranks recorded for that configuration's chunking. Every question the
    evaluation scored counts.
    """
    system = system or next(iter(ev.runs), "")
    if system not in ev.runs:
        raise WorkbenchError(f"no run named {system!r}; runs: {list(ev.runs)}")
    frame = ev.frame
    groups = dict(zip(frame["qid"], frame[column], strict=True))
    if golden is not None:
        relevance = Relevance(golden, chunks, evidence_threshold=evidence_threshold,
                              grade_threshold=grade_threshold)
        hits = ev.runs[system].hits
        found: Mapping[str, int | None] = {
            q: relevance.first_found(q, [h.chunk_id for h in hits.get(q, ())])
            for q in relevance.qids}
    elif isinstance(ev, SweepResult) and system in ev.found_rank:
        found = ev.found_rank[system]
    else:
        raise WorkbenchError("give the golden set (and the chunks) for this evaluation")
    order = [name for _, _, name in buckets] + [MISSING]
    rows = [{column: groups[q], "bucket": _bucket(rank, buckets)}
            for q, rank in found.items() if q in groups]
    data = pd.DataFrame(rows, columns=[column, "bucket"])
    data = pd.concat([data.assign(**{column: "all"}), data], ignore_index=True)
    counts = data.groupby([column, "bucket"]).size()
    cats = ["all", *sorted(c for c in data[column].unique() if c != "all")]
    index = pd.MultiIndex.from_product([cats, order], names=[column, "bucket"])
    table = counts.reindex(index, fill_value=0).rename("count").reset_index()
    totals = table.groupby(column)["count"].transform("sum")
    table["n"] = totals
    table["share"] = (table["count"] / totals.where(totals > 0, 1)).astype(float)
    table.attrs["system"] = system
    return table
