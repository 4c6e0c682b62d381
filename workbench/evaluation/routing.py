"""Router evaluation as ranking: a model router scored with the retrieval ruler.

A router takes a request and returns a ranked list of models (or one). Given which models
pass each request, the models are the documents and "passes" is relevance, so the ranking
metrics are :func:`workbench.metrics.trec.score_queries`'s, one rule in one place:
``hit@1`` (the first choice passes: ``hit_rate@1``), ``mrr`` (1 / rank of the first passing
model) and ``recall@k`` (the share of passing models in the top k).

The cost view compares the router's first choice with the cheapest passing model (the
oracle) and with a fixed baseline model (by default the most expensive): ``cost`` is what the
router spends, ``overspend`` what it pays above the oracle on requests it gets right,
``saved`` the baseline's cost minus the router's and ``quality_lost`` the baseline's pass
minus the router's (both per request; means in :meth:`RouterEvaluation.summary`).

Requests no model passes stay in the cost view but have no ranking score (NaN), as a query
without a relevant document is excluded from the retrieval means.

Files: requests JSONL rows ``{"id", "category", "request", "passes": [model, ...]}``; models
JSON ``{"costs": {model: cost per request}}``; routes JSONL rows ``{"id", "models": [ranked]}``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from workbench.io import InputError, WorkbenchError, decode_json_file, iter_jsonl, read_text
from workbench.metrics.trec import score_queries
from workbench.stats import PairedComparison, compare_paired, mean_interval

__all__ = ["RouterEvaluation", "RoutingRequest", "compare_routers", "evaluate_router",
           "load_costs", "load_requests", "load_routes"]


@dataclass(frozen=True)
class RoutingRequest:
    """One labelled request: ``passes`` are the models whose answer passed."""

    id: str
    category: str
    request: str
    passes: frozenset[str]


def _field(row: object, name: str, kind: type, where: str) -> object:
    if not isinstance(row, dict) or not isinstance(row.get(name), kind):
        raise InputError(where, f"must be a {kind.__name__}", name)
    return row[name]


def _models(value: object, where: str, name: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(m, str) and m for m in value):
        raise InputError(where, "must be a list of model names", name)
    return list(value)


def load_requests(path: str | Path) -> list[RoutingRequest]:
    """The labelled requests of a JSONL file (ids unique; one clear line per bad row)."""
    out: list[RoutingRequest] = []
    seen: set[str] = set()
    for where, row in iter_jsonl(path, "routing requests"):
        rid = str(_field(row, "id", str, where))
        if rid in seen:
            raise InputError(where, f"request id {rid!r} is repeated", "id")
        seen.add(rid)
        out.append(RoutingRequest(rid, str(_field(row, "category", str, where)),
                                  str(_field(row, "request", str, where)),
                                  frozenset(_models(row.get("passes"), where, "passes"))))
    if not out:
        raise InputError(str(path), "no requests; add one JSON object per line")
    return out


def load_routes(path: str | Path) -> dict[str, list[str]]:
    """``{request id: ranked models}`` from a routes JSONL file."""
    out: dict[str, list[str]] = {}
    for where, row in iter_jsonl(path, "routes"):
        rid = str(_field(row, "id", str, where))
        if rid in out:
            raise InputError(where, f"request id {rid!r} is routed twice", "id")
        out[rid] = _models(row.get("models"), where, "models")
    return out


def load_costs(path: str | Path) -> dict[str, float]:
    """``{model: cost per request}`` from a models JSON file ``{"costs": {...}}``."""
    data = decode_json_file(read_text(path, "models"), path)
    costs = data.get("costs") if isinstance(data, dict) else None
    if not isinstance(costs, dict) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) and v >= 0
            for v in costs.values()):
        raise InputError(str(path), 'expected {"costs": {model: cost >= 0}}', "costs")
    return {str(k): float(v) for k, v in costs.items()}


RANKING = ("hit@1", "mrr")


@dataclass(frozen=True)
class RouterEvaluation:
    """One row per request (``frame``): category, the router's ``choice``, ``hit@1``,
    ``mrr``, ``recall@<k>`` (NaN where no model passes), ``choice_passes``, ``cost``,
    ``oracle_cost`` (the cheapest passing model; NaN where none passes), ``overspend``,
    ``saved`` and ``quality_lost`` against ``baseline``."""

    frame: pd.DataFrame
    k: int
    baseline: str
    name: str = ""

    @property
    def metrics(self) -> list[str]:
        return [*RANKING, f"recall@{self.k}", "choice_passes"]

    def scores(self, metric: str) -> dict[str, float]:
        """``{request id: value}`` of one per-request column, NaN rows left out."""
        col = self.frame[metric].dropna()
        return {str(q): float(v) for q, v in col.items()}

    def summary(self) -> pd.DataFrame:
        """Per category and ``all``: ``n``, the requests some model passes (the ranking
        metrics' questions: a request no model passes has no right answer to rank), ``no
        model passes`` (the others), each metric's mean with its interval
        (:func:`~workbench.stats.mean_interval`), and the cost view's means.
        ``choice_passes`` and the costs average over all the requests of the row."""
        rows = []
        groups = [("all", self.frame), *self.frame.groupby("category", sort=True)]
        for cat, part in groups:
            ranked = int(part["hit@1"].notna().sum())
            row: dict[str, object] = {"category": cat, "n": ranked,
                                      "no model passes": len(part) - ranked}
            for m in self.metrics:
                values = part[m].dropna().to_numpy(dtype=float)
                if values.size:
                    low, high, _ = mean_interval(values)
                    row[m], row[f"{m} low"], row[f"{m} high"] = values.mean(), low, high
                else:
                    row[m] = row[f"{m} low"] = row[f"{m} high"] = np.nan
            for c in ("cost", "oracle_cost", "overspend", "saved", "quality_lost"):
                row[c] = float(part[c].mean()) if part[c].notna().any() else np.nan
            rows.append(row)
        return pd.DataFrame(rows).set_index("category")


def evaluate_router(requests: Sequence[RoutingRequest], routes: Mapping[str, Sequence[str]],
                    costs: Mapping[str, float], *, k: int = 2, baseline: str | None = None,
                    name: str = "") -> RouterEvaluation:
    """Score ``routes`` (``{request id: ranked models}``) on labelled ``requests``.

    Every request must be routed, every routed or passing model priced, and a ranking must
    not repeat a model (ValueError naming the request)."""
    if k < 1:
        raise WorkbenchError(f"k must be >= 1, got {k}")
    if not costs:
        raise WorkbenchError("costs is empty")
    base = baseline if baseline is not None else max(sorted(costs), key=lambda m: costs[m])
    if base not in costs:
        raise WorkbenchError(f"baseline model {base!r} has no cost")
    for r in requests:
        ranked = routes.get(r.id)
        if not ranked:
            raise WorkbenchError(f"request {r.id!r} has no route")
        if len(set(ranked)) != len(ranked):
            raise WorkbenchError(f"request {r.id!r}: the route repeats a model: {list(ranked)}")
        unpriced = sorted((set(ranked) | r.passes) - set(costs))
        if unpriced:
            raise WorkbenchError(f"request {r.id!r}: no cost for models {unpriced}")
    qrels = {r.id: dict.fromkeys(sorted(r.passes), 1) for r in requests}
    run = {r.id: list(routes[r.id]) for r in requests}
    recall = f"recall@{k}"
    scored = score_queries(qrels, run, ["hit_rate@1", "mrr", recall])
    per = {m: dict(zip(scored.qids, scored.values[m], strict=True))
           for m in ("hit_rate@1", "mrr", recall)}
    rows = []
    for r in requests:
        choice = run[r.id][0]
        passes = choice in r.passes
        oracle = min((costs[m] for m in r.passes), default=np.nan)
        rows.append({"id": r.id, "category": r.category, "choice": choice,
                     "hit@1": per["hit_rate@1"].get(r.id, np.nan),
                     "mrr": per["mrr"].get(r.id, np.nan), recall: per[recall].get(r.id, np.nan),
                     "choice_passes": float(passes), "cost": costs[choice],
                     "oracle_cost": oracle,
                     "overspend": costs[choice] - oracle if passes else np.nan,
                     "saved": costs[base] - costs[choice],
                     "quality_lost": float(base in r.passes) - float(passes)})
    return RouterEvaluation(pd.DataFrame(rows).set_index("id"), k, base, name)


def compare_routers(a: RouterEvaluation, b: RouterEvaluation, metric: str = "hit@1",
                    alpha: float = 0.05) -> PairedComparison:
    """Paired comparison of two routers on the same requests (``b - a``), by
    :func:`~workbench.stats.compare_paired` (McNemar for 0/1 metrics)."""
    return compare_paired(a.scores(metric), b.scores(metric), alpha=alpha,
                          name=f"{b.name or 'b'} vs {a.name or 'a'}: {metric}")
