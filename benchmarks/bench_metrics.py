"""Time workbench.metrics against pytrec_eval, ranx and ir_measures on the same inputs.

    python benchmarks/bench_metrics.py [--queries 10000] [--depth 100] [--repeat 3]

Inputs are dict-of-dict (``{qid: {docid: score}}`` and ``{qid: {docid: grade}}``), as every
peer accepts them. Each tool computes recall@10, P@10, reciprocal rank (uncut), nDCG@10 and
success/hit_rate@10 in one call; the time counts everything from the dicts to the means (peer
object construction included). The best of ``--repeat`` runs is reported. ranx's first call
compiles numba code (cached on disk after the first ever run) and is reported separately.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from workbench.metrics import mean_scores

OURS = ["recall@10", "precision@10", "mrr", "ndcg@10", "hit_rate@10"]
TREC = ["recall_10", "P_10", "recip_rank", "ndcg_cut_10", "success_10"]


def make_inputs(n_queries: int, depth: int, seed: int = 0) -> tuple[dict, dict]:
    rng = np.random.default_rng(seed)
    n_docs = max(10 * depth, 1000)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_queries):
        qid = f"q{q}"
        docs = rng.choice(n_docs, size=depth, replace=False)
        scores = np.sort(rng.random(depth))[::-1]
        run[qid] = {f"d{d}": float(s) for d, s in zip(docs, scores, strict=True)}
        n_rel = int(rng.integers(1, 6))
        # Relevant docs: mostly from the run (at random ranks), sometimes unretrieved.
        picks = rng.choice(np.concatenate([docs, rng.choice(n_docs, size=20)]), size=n_rel,
                           replace=False)
        qrels[qid] = {f"d{d}": int(rng.integers(1, 4)) for d in picks}
    return qrels, run


def best_of(fn: Callable[[], dict[str, float]], repeat: int) -> tuple[float, dict[str, float]]:
    best, result = float("inf"), {}
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
    return best, result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    warnings.filterwarnings("ignore", message="unsafe cast")  # ranx's numba kernels

    t = time.perf_counter()
    qrels, run = make_inputs(args.queries, args.depth)
    print(f"{args.queries} queries x {args.depth} docs, built in {time.perf_counter() - t:.2f}s")

    rows: list[tuple[str, float, dict[str, float]]] = []

    def ours() -> dict[str, float]:
        got = mean_scores(qrels, run, OURS)
        return dict(zip(TREC, (got[m] for m in OURS), strict=True))

    rows.append(("workbench", *best_of(ours, args.repeat)))

    try:
        import pytrec_eval

        def trec() -> dict[str, float]:
            ev = pytrec_eval.RelevanceEvaluator(qrels, set(TREC))
            res = ev.evaluate(run)
            return {m: float(np.mean([r[m] for r in res.values()])) for m in TREC}

        rows.append(("pytrec_eval", *best_of(trec, args.repeat)))
    except ImportError:
        print("pytrec_eval not installed: skipped")

    notes: list[str] = []
    try:
        import ranx

        ranx_names = ["recall@10", "precision@10", "mrr", "ndcg@10", "hit_rate@10"]

        def ranx_eval() -> dict[str, float]:
            got: Any = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), ranx_names)
            return {t: float(got[r]) for t, r in zip(TREC, ranx_names, strict=True)}

        cold, _ = best_of(ranx_eval, 1)
        notes.append(f"ranx first call (numba JIT or cache load) took {cold:.2f}s")
        rows.append(("ranx (warm)", *best_of(ranx_eval, args.repeat)))
    except ImportError:
        print("ranx not installed: skipped")

    try:
        import ir_measures
        from ir_measures import RR, P, R, Success, nDCG

        measures = {"recall_10": R @ 10, "P_10": P @ 10, "recip_rank": RR,
                    "ndcg_cut_10": nDCG @ 10, "success_10": Success @ 10}

        def irm() -> dict[str, float]:
            got = ir_measures.calc_aggregate(list(measures.values()), qrels, run)
            return {t: float(got[m]) for t, m in measures.items()}

        rows.append(("ir_measures", *best_of(irm, args.repeat)))
    except ImportError:
        print("ir_measures not installed: skipped")

    base_time, base = rows[0][1], rows[0][2]
    print(f"\n{'tool':<14}{'seconds':>10}{'x workbench':>13}   means agree (1e-6)")
    for name, secs, means in rows:
        bad = [m for m in TREC if abs(means[m] - base[m]) > 1e-6]
        agree = "yes" if not bad else "NO: " + ", ".join(
            f"{m} {means[m]:.6f} vs {base[m]:.6f}" for m in bad)
        print(f"{name:<14}{secs:>10.3f}{secs / base_time:>13.1f}   {agree}")
        if bad:
            print(f"WARNING: {name} disagrees with workbench on {', '.join(bad)}")
    for note in notes:
        print(note)
    print("\nmeans: " + ", ".join(f"{m}={v:.4f}" for m, v in base.items()))


if __name__ == "__main__":
    main()
