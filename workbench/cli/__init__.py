"""The ``workbench`` command: trec, validate, eval, chunks, sweep, gate, report.

User errors (bad files, bad specs) print one clear message and exit 2 (validate: 1 when
the golden set has problems); never a traceback. torch is imported only when a dense
model is asked for.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from typing import Any

DEFAULT_TREC_MEASURES = ("map", "recip_rank", "P_5", "P_10", "recall_10", "ndcg_cut_10")


def _cmd_trec(args: argparse.Namespace) -> int:
    from workbench.metrics import mean_scores, parse_metric, trec_name
    from workbench.metrics.trec_files import read_trec_qrels, read_trec_run

    qrels = read_trec_qrels(args.qrels)
    run = read_trec_run(args.run)
    names = list(dict.fromkeys(args.measure or DEFAULT_TREC_MEASURES))
    means = mean_scores(qrels, run, names, threshold=args.threshold)
    for name in names:
        try:
            label = trec_name(parse_metric(name))
        except ValueError:  # no trec_eval equivalent (mrr@k, ndcg_retrieved@k): keep ours
            label = name
        print(f"{label:<22}\tall\t{means[name]:.4f}")
    return 0


def _load_inputs(args: argparse.Namespace) -> tuple[Any, Any]:
    from workbench.metrics.trec_files import load_dataset

    return load_dataset(args.corpus, getattr(args, "golden", None))


def _cmd_validate(args: argparse.Namespace) -> int:
    from workbench.corpus import load_corpus
    from workbench.golden import GoldenSet, GoldenSetError

    corpus = load_corpus(args.corpus)
    try:
        golden = GoldenSet.load(args.golden)
    except GoldenSetError as exc:
        for p in exc.problems:
            print(p)
        print(f"{len(exc.problems)} problem(s)")
        return 1
    chunks = None
    if args.chunker:
        from workbench.chunking import chunk_corpus, parse_chunker

        chunks = chunk_corpus(parse_chunker(args.chunker), corpus.documents)
    problems = golden.problems(corpus, chunks)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} problem(s)")
        return 1
    print(f"OK: {len(golden)} questions ({len(golden.answerable)} answerable) valid against "
          f"{len(corpus)} documents")
    return 0


def _jsonable(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 6)


def _cmd_eval(args: argparse.Namespace) -> int:
    from workbench.chunking import chunk_corpus, parse_chunker
    from workbench.evaluation import default_metrics, evaluate
    from workbench.retrieval import make_retriever

    corpus, golden = _load_inputs(args)
    golden.validate(corpus)
    chunks = chunk_corpus(parse_chunker(args.chunker), corpus.documents)
    retriever = make_retriever(args.retriever, chunks, encoder=args.encoder)
    metrics = args.metric or default_metrics(args.k)
    ev = evaluate(retriever, golden, chunks, metrics=metrics, k=args.k, level=args.level,
                  system=args.retriever)
    summary: list[dict[Any, Any]] = ev.summary().to_dict("records")
    by_cat: list[dict[Any, Any]] = ev.by("category").to_dict("records")
    if args.json:
        out: dict[str, Any] = {
            "n": ev.n, "k": args.k, "chunker": args.chunker, "retriever": args.retriever,
            "level": args.level, "chunks": len(chunks),
            "metrics": {r["metric"]: _jsonable(r["mean"]) for r in summary},
            "intervals": {r["metric"]: [_jsonable(r["ci_low"]), _jsonable(r["ci_high"])]
                          for r in summary},
            "by_category": {},
            "excluded": {k: len(v) for k, v in ev.excluded.items()},
            "latency_ms": ev.latency().drop(columns=["system"]).to_dict("records"),
        }
        for r in by_cat:
            cat = out["by_category"].setdefault(str(r["category"]), {"n": int(r["n"])})
            cat[str(r["metric"])] = _jsonable(float(r["mean"]))
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return 0
    import pandas as pd

    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(f"{args.retriever} over {len(chunks)} chunks ({args.chunker}); n={ev.n} questions; "
              f"excluded: {ev.excluded and {k: len(v) for k, v in ev.excluded.items()}}")
        print(ev.table(column=None).to_string())
        print()
        print(ev.table(column="category").to_string())
    return 0


def _cmd_chunks(args: argparse.Namespace) -> int:
    from workbench.chunking import diagnose_chunking, parse_chunker

    corpus, golden = _load_inputs(args)
    spans = [ev for item in golden for ev in item.evidence]
    rows = []
    for spec in args.chunker:
        d = diagnose_chunking(parse_chunker(spec), corpus.documents, spans)
        rows.append({"chunker": spec, "chunks": d.n_chunks, "mean_tokens": round(d.mean_tokens, 1),
                     "max_tokens": d.max_tokens, "index_tokens": d.index_tokens,
                     "cost_multiplier": round(d.cost_multiplier, 3),
                     "split_rate": round(d.split_rate, 4), "near_duplicates": d.near_duplicates})
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        import pandas as pd

        print(pd.DataFrame(rows).to_string(index=False))
    return 0


def _cmd_gate(args: argparse.Namespace) -> int:
    from workbench.cli.gate import run_gate_command

    return run_gate_command(args)


def _cmd_sweep(args: argparse.Namespace) -> int:
    from workbench.cli.sweep import run_sweep_command

    return run_sweep_command(args)


def _cmd_report(args: argparse.Namespace) -> int:
    from workbench.report import run_report_command

    return run_report_command(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="workbench", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("trec", help="trec_eval-style scores of a TREC run against TREC qrels")
    p.add_argument("qrels")
    p.add_argument("run")
    p.add_argument("-m", "--measure", action="append",
                   help="metric (recall@10, P_5, ndcg_cut_10, map, ...); repeatable")
    p.add_argument("--threshold", type=int, default=1, help="minimum relevant grade (default 1)")
    p.set_defaults(fn=_cmd_trec)

    p = sub.add_parser("validate", help="check a golden set against a corpus")
    p.add_argument("golden")
    p.add_argument("--corpus", required=True)
    p.add_argument("--chunker", help="also check chunk ids against this chunking")
    p.set_defaults(fn=_cmd_validate)

    def corpus_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("--corpus", required=True,
                       help="folder of .md/.txt, documents .jsonl, BEIR folder or SQuAD .json")
        p.add_argument("--golden", help="golden set .jsonl (not needed for BEIR/SQuAD inputs)")

    p = sub.add_parser("eval", help="evaluate a retriever on a golden set")
    corpus_args(p)
    p.add_argument("--chunker", default="fixed:size=800,overlap=100",
                   help="chunker spec, e.g. recursive:size=300,unit=tokens,header=true")
    p.add_argument("--retriever", default="bm25", help="bm25 | dense | hybrid | hybrid+rerank")
    p.add_argument("--encoder", default=None, help="minilm (default) | e5 | any model name/path")
    p.add_argument("-k", type=int, default=5, help="chunks the generator receives (default 5)")
    p.add_argument("-m", "--metric", action="append", help="metric such as recall@5; repeatable")
    p.add_argument("--level", choices=["chunk", "document"], default="chunk")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(fn=_cmd_eval)

    p = sub.add_parser("chunks", help="chunking diagnostics: chunks, cost, split rate")
    corpus_args(p)
    p.add_argument("--chunker", action="append", required=True, help="chunker spec; repeatable")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=_cmd_chunks)

    p = sub.add_parser("gate", help="CI gate: exit 1 when retrieval regressed against a baseline")
    p.add_argument("--baseline", required=True, help="baseline JSON, e.g. evals/baseline.json")
    p.add_argument("--corpus", help="default for this and the options below: the baseline's")
    p.add_argument("--golden")
    p.add_argument("--chunker")
    p.add_argument("--retriever")
    p.add_argument("--encoder")
    p.add_argument("-k", type=int)
    p.add_argument("-m", "--metric", action="append", help="gate only this metric; repeatable")
    p.add_argument("--level", choices=["chunk", "document"])
    p.add_argument("--alpha", type=float, default=0.05, help="one-sided test level (0.05)")
    p.add_argument("--update-baseline", action="store_true",
                   help="write the baseline (create it, or ratchet it upward only)")
    p.add_argument("--golden-changed", action="store_true",
                   help="acknowledge an edited golden set: compare the common questions")
    p.add_argument("--force", action="store_true", help="with --update-baseline: allow lower")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(fn=_cmd_gate)

    p = sub.add_parser("sweep", help="evaluate a grid of configurations (grid YAML; see "
                                     "workbench.sweep)")
    corpus_args(p)
    p.add_argument("--grid", required=True, help="grid YAML: parameter: [values], + metrics")
    p.add_argument("--executor", help="dask://HOST:PORT or processes:N (default: in process)")
    p.add_argument("--state", help="JSONL of finished configs: a rerun skips them (resume)")
    p.add_argument("--cache", default=".workbench_cache/embeddings",
                   help="embedding cache folder (shared by workers; a network folder for a "
                        "multi-machine Dask cluster)")
    p.add_argument("-k", type=int, default=5, help="k when the grid has none (default 5)")
    p.add_argument("--json", action="store_true", help="one row per configuration, as JSON")
    p.set_defaults(fn=_cmd_sweep)

    p = sub.add_parser("report", help="one standalone HTML report: retrieval metrics, answers "
                                      "(extractive reader), triage and failing traces")
    corpus_args(p)
    p.add_argument("--chunker", default="fixed:size=800,overlap=100", help="chunker spec")
    p.add_argument("--retriever", default="bm25", help="bm25 | dense | hybrid | hybrid+rerank")
    p.add_argument("--encoder", default=None, help="minilm (default) | e5 | any model name/path")
    p.add_argument("-k", type=int, default=5, help="chunks the generator receives (default 5)")
    p.add_argument("--budget-tokens", type=int, default=None, help="context budget in tokens")
    p.add_argument("--user-group", action="append", default=None,
                   help="enforce access as a user in this group; repeatable")
    p.add_argument("--no-generation", action="store_true", help="retrieval metrics only")
    p.add_argument("--traces", help="also save the traces (JSONL, ids only) here")
    p.add_argument("--title", help="report title")
    p.add_argument("--out", required=True, help="the HTML file to write, e.g. report.html")
    p.set_defaults(fn=_cmd_report)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.fn(args))
    except (ValueError, FileNotFoundError, KeyError) as exc:
        print(f"workbench {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
