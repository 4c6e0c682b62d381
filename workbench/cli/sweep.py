"""``workbench sweep``: read the grid file and the dataset, run the sweep on the chosen
executor and print the leaderboard, or JSON (:func:`sweep_rows`)."""

from __future__ import annotations

import argparse
import json
from typing import Any

import pandas as pd

from workbench.cli.args import check_cutoffs, require_answerable
from workbench.evaluation import INTERVAL_NOTE
from workbench.metrics import at_k
from workbench.sweep.grid import load_grid
from workbench.sweep.holdout import Confirmation
from workbench.sweep.result import SweepResult, plain_value
from workbench.sweep.runner import make_executor, run_sweep


def _num(value: Any) -> Any:
    value = plain_value(value)
    return None if isinstance(value, float) and value != value else value


def _figures(row: dict[Any, Any]) -> dict[str, Any]:
    return {"mean": _num(row["mean"]), "ci_low": _num(row["ci_low"]),
            "ci_high": _num(row["ci_high"]), "n": int(row["n"])}


def sweep_rows(result: SweepResult) -> list[dict[str, Any]]:
    """One JSON-able row per configuration: parameters, ``metrics`` (mean, ci_low, ci_high,
    n) on the questions the leaderboard and ``best`` rank on (``questions``: ``tuning`` with a
    held-out split, else ``all``), ``heldout`` (the same on the held-out questions; None
    without a split), cost, and the texts embedded / reused."""
    split = result.holdout is not None

    def by_key(part: str | None) -> dict[tuple[str, str], dict[Any, Any]]:
        return {(str(r["system"]), str(r["metric"])): r
                for r in result.part_summary(part).to_dict("records")}

    ranked = by_key("tuning" if split else None)
    held = by_key("heldout") if split else {}
    rows = []
    for name, cfg in result.config_table.iterrows():
        rows.append({
            "config": name, "params": {p: _num(cfg[p]) for p in result.grid_params},
            "spec": cfg["spec"], "questions": "tuning" if split else "all",
            "metrics": {m: _figures(ranked[str(name), m]) for m in result.metrics},
            "heldout": {m: _figures(held[str(name), m]) for m in result.metrics}
            if split else None,
            "cost": {c: _num(cfg[c]) for c in ("chunks", "index_tokens", "cost_multiplier",
                                               "split_rate", "prompt_tokens_at_k")},
            "embedded": int(cfg["embedded"]), "reused": int(cfg["reused"])})
    return rows


def confirmation_row(c: Confirmation) -> dict[str, Any]:
    """The held-out confirmation as JSON: tuning and held-out mean [interval] n, the
    selection bias, the winner's gap beside the average gap of every configuration, the
    configurations tied with it (their tuning and held-out figures) and the paired
    comparison against the baseline on the held-out part."""
    return {"config": c.config, "metric": c.metric, "baseline": c.baseline,
            "tuning": {"mean": c.tuning_mean, "ci": list(c.tuning_ci), "n": c.tuning_n},
            "heldout": {"mean": c.heldout_mean, "ci": list(c.heldout_ci), "n": c.heldout_n},
            "selection_bias": c.selection_bias, "gap": c.gap, "mean_gap": c.mean_gap,
            "tied": [{"config": t.config, "tuning_mean": t.tuning_mean,
                      "heldout": {"mean": t.heldout_mean, "n": t.heldout_n}} for t in c.tied],
            "comparison": None if c.comparison is None else c.comparison.to_dict()}


def _questions(result: SweepResult) -> dict[str, int]:
    """How many questions each figure averages over: all, and the tuning / held-out parts."""
    split = result.holdout
    return {"all": result.n} if split is None else {
        "all": result.n, "tuning": len(split.tuning), "heldout": len(split.heldout)}


def run_sweep_command(args: argparse.Namespace) -> int:
    """``workbench sweep``: see the module docstring for the grid file."""
    import sys

    from workbench.cli.retrieval import embedding_cache
    from workbench.golden.datasets import load_dataset

    grid, metrics = load_grid(args.grid)
    # an @k template is checked at each k it will run at (the grid's, else -k)
    ks = [int(k) for k in grid.get("k", [args.k])]
    check_cutoffs(args.k, sorted({at_k(m, k)
                                  for m in metrics or () for k in ks}), None)
    corpus, golden = load_dataset(args.corpus, args.golden)
    require_answerable(golden, args.golden or args.corpus)
    golden.validate(corpus)
    executor, close = make_executor(args.executor)
    try:
        result = run_sweep(grid, golden, corpus, metrics=metrics, k=args.k, executor=executor,
                       cache=embedding_cache(args), progress=sys.stderr.isatty(),
                       state_path=args.state, holdout=args.holdout,
                       holdout_seed=args.holdout_seed)
    finally:
        close()
    metric = result.metrics[0]
    confirmed = result.confirm(metric) if result.holdout is not None else None
    if args.json:
        print(json.dumps({"n": result.n, "questions": _questions(result),
                          "metric_order": result.metrics,
                          "best": {m: result.best(m) for m in result.metrics},
                          "tied": {m: result.tied(m) for m in result.metrics},
                          "configs": sweep_rows(result),
                          "skipped": [{"params": {k: _num(v) for k, v in s["params"].items()},
                                       "reason": s["reason"]} for s in result.skipped],
                          "embedded": result.embedded, "reused": result.reused,
                          "resumed": result.resumed,
                          "holdout": None if confirmed is None else confirmation_row(confirmed)},
                         indent=2, ensure_ascii=False))
        return 0
    board = result.leaderboard(metric)
    table = pd.DataFrame({
        metric: [f"{m:.3f} [{lo:.3f}, {hi:.3f}]" for m, lo, hi in
                 zip(board["mean"], board["ci_low"], board["ci_high"], strict=True)],
        "n": board["n"], "chunks": board["chunks"], "index_tokens": board["index_tokens"],
        "cost_x": board["cost_multiplier"].round(2), "split_rate": board["split_rate"].round(3),
        "prompt_tokens": board["prompt_tokens_at_k"].round(0).astype(int),
        "embedded": board["embedded"], "reused": board["reused"]}, index=board.index)
    with pd.option_context("display.width", 250, "display.max_columns", 20,
                           "display.max_colwidth", 60):
        parts = _questions(result)
        print(f"{len(result.config_table)} configurations, n={result.n} questions"
              + (f" ({parts['tuning']} tuning: the table; {parts['heldout']} held out)"
                 if confirmed else "")
              + f"; {metric} ({', '.join(result.relevance)}): mean [{INTERVAL_NOTE}], "
              "best first")
        print(table.to_string())
    tied = result.tied(metric)
    print(f"best on {metric}: {result.best(metric)}"
          + (" (ranked on the tuning questions)" if confirmed else "")
          + f"; expected from selection alone: {board['selection_bias'].iloc[0] * 100:+.1f} "
          "points")
    if tied and confirmed is None:  # the confirmation lists them with their held-out figures
        exact = (board.loc[tied, "mean"] == board["mean"].iloc[0]).all()
        print(f"  {'tied with it' if exact else 'within one question of it'} (one question: "
              f"1/{int(board['n'].iloc[0])}): {', '.join(tied)}; the tie-break (fewer index "
              "tokens, then grid order) or one question chose the winner")
    if confirmed is not None:
        print(confirmed.summary())
    print(f"texts embedded: {result.embedded}, reused from the cache: {result.reused}; "
          f"resumed from state: {result.resumed}")
    for s in result.skipped:
        print(f"skipped {s['params']}: {s['reason']}")
    return 0
