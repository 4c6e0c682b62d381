"""The ``workbench`` command: trec, validate, eval, chunks, sweep, gate, report, cache, synth.

A user error (a bad file, a bad spec, a value out of range, a folder where a file belongs, a
full disk or read-only target) is the package's own :class:`~workbench.io.WorkbenchError`:
it prints one line naming the file, line and field and what to do (a golden set's problems
one per line) and exits 2, as does a path too long for the file system (``ENAMETOOLONG``,
raised by the OS wherever the path is first looked at). Any other exception is a bug and
shows its traceback;
``validate`` exits 1 when the golden set has problems. A reader that closes the pipe early
(``workbench eval | head``) ends the command quietly with exit status 141, as a process
killed by SIGPIPE would (so a gate whose report was cut short never reads as passed). torch
is imported only when a dense model is asked for.

The package owns every command: :func:`build_parser` and :func:`main` here, the commands in
:mod:`~workbench.cli.retrieval` (trec, validate, eval, chunks), :mod:`~workbench.cli.sweep`,
:mod:`~workbench.cli.gate`, :mod:`~workbench.cli.report` and :mod:`~workbench.cli.cache`,
and the argument checks they share in :mod:`~workbench.cli.args`. A command's module is
imported only when that command runs, so ``import workbench.cli`` stays fast. Warnings print
as one ``workbench: warning: ...`` line.
``python -m workbench.cli`` runs :func:`main` (:mod:`workbench.cli.__main__`).

Layer: the top; may import anything in the package. Nothing imports it.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from workbench.cli.args import (
    check_combinations,
    chunker_spec,
    cutoff,
    non_negative_int,
    probability,
    share,
)
from workbench.io import WorkbenchError
from workbench.metrics.registry import DEFAULT_EVIDENCE_THRESHOLD

__all__ = ["build_parser", "given_options", "main"]


# Each command's module is imported only when the command runs.

def _trec(args: argparse.Namespace) -> int:
    from workbench.cli.retrieval import run_trec_command

    return run_trec_command(args)


REANCHOR_HELP = ("re-anchor evidence spans labelled on another extraction of the documents "
                 "by their quotes (exact, normalised, fuzzy; the drift report is printed); "
                 "a span that needs review is refused")

def _validate(args: argparse.Namespace) -> int:
    from workbench.cli.retrieval import run_validate_command

    return run_validate_command(args)


def _eval(args: argparse.Namespace) -> int:
    from workbench.cli.retrieval import run_eval_command

    return run_eval_command(args)


def _chunks(args: argparse.Namespace) -> int:
    from workbench.cli.retrieval import run_chunks_command

    return run_chunks_command(args)


def _gate(args: argparse.Namespace) -> int:
    from workbench.cli.gate import run_gate_command

    return run_gate_command(args)


def _sweep(args: argparse.Namespace) -> int:
    from workbench.cli.sweep import run_sweep_command

    return run_sweep_command(args)


def _report(args: argparse.Namespace) -> int:
    from workbench.cli.report import run_report_command

    return run_report_command(args)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``workbench eval: error: argument -k: ...``."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)


def _questions(args: argparse.Namespace) -> int:
    from workbench.cli.questions import run_questions_command

    return run_questions_command(args)


def _cache(args: argparse.Namespace) -> int:
    from workbench.cli.cache import run_cache_command

    return run_cache_command(args)


CHUNKER_HELP = ("chunker spec, e.g. recursive:size=300,unit=tokens,header=true (default: "
                "document:title=true for a BEIR folder, fixed:size=800,overlap=100 otherwise)")
ENCODER_HELP = ("minilm | e5 | any model name/path (default: chosen for the language, "
                "e5 unless corpus and questions are Latin-script)")


def cache_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cache", metavar="DIR",
                   help="cache folder (default: $WORKBENCH_CACHE, else ~/.cache/workbench; "
                        "embeddings go in DIR/embeddings). See `workbench cache info`")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="workbench", description=(__doc__ or "").splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("trec", help="trec_eval-style scores of a TREC run against TREC qrels")
    p.add_argument("qrels")
    p.add_argument("run")
    p.add_argument("-m", "--measure", action="append",
                   help="metric (recall@10, P_5, ndcg_cut_10, map, ...); repeatable")
    p.add_argument("--threshold", type=non_negative_int, default=1,
                   help="minimum relevant grade (default 1)")
    p.set_defaults(fn=_trec)

    p = sub.add_parser("validate", help="check a golden set against a corpus")
    p.add_argument("golden")
    p.add_argument("--corpus", required=True)
    p.add_argument("--chunker", type=chunker_spec,
                   help="also check chunk ids against this chunking")
    p.add_argument("--reanchor", action="store_true", help=REANCHOR_HELP)
    p.set_defaults(fn=_validate)

    def corpus_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("--corpus", required=True,
                       help="folder of .md/.txt, documents .jsonl, BEIR folder or SQuAD .json")
        p.add_argument("--golden", help="golden set .jsonl (not needed for BEIR/SQuAD inputs)")

    p = sub.add_parser("eval", help="evaluate a retriever on a golden set")
    corpus_args(p)
    p.add_argument("--chunker", type=chunker_spec, default=None, help=CHUNKER_HELP)
    p.add_argument("--retriever", default="bm25", help="bm25 | dense | hybrid | hybrid+rerank")
    p.add_argument("--encoder", default=None, help=ENCODER_HELP)
    p.add_argument("-k", type=cutoff, default=5, help="chunks the generator receives (default 5)")
    p.add_argument("-m", "--metric", action="append", help="metric such as recall@5; repeatable")
    p.add_argument("--level", choices=["chunk", "document"], default=None,
                   help="chunk, or document (the default for a BEIR folder, which judges "
                        "documents)")
    p.add_argument("--evidence-threshold", type=share, default=DEFAULT_EVIDENCE_THRESHOLD,
                   help="share of a span's non-blank characters the retrieved chunks must hold "
                        f"for it to count as found (default {DEFAULT_EVIDENCE_THRESHOLD})")
    p.add_argument("--relevance-threshold", type=cutoff, default=1,
                   help="lowest grade of graded qrels / chunk labels that counts as relevant "
                        "for the binary metrics, as trec_eval's -l (default 1); nDCG's gains "
                        "are the grades themselves")
    p.add_argument("--run", metavar="RUN.jsonl",
                   help="score logged retrieval results instead of running a retriever: one "
                        '{"qid", "hits": [{"doc_id", "text"} | {"doc_id", "start", "end"} | '
                        '{"chunk_id"}, ...]} per line (see workbench.evaluation.run_files)')
    p.add_argument("--chunks", metavar="CHUNKS.jsonl",
                   help="the production chunking instead of --chunker: one chunk a line, "
                        '{"chunk_id", "doc_id", "start", "end"} or {"chunk_id", "doc_id", '
                        '"text"}; a --run of {"chunk_id"} hits is resolved in it')
    p.add_argument("--reanchor", action="store_true", help=REANCHOR_HELP)
    p.add_argument("--run-scores", choices=["similarity", "distance", "ignore"],
                   default="similarity", help="what the run's scores are (default similarity)")
    p.add_argument("--run-offsets", default="auto", metavar="auto|body|raw|SPEC",
                   help="how the run's offsets count: auto (default: detected from the hit "
                        "texts, refused when they leave it open), body (characters into the "
                        "document text), raw (characters into the raw files of --corpus, front "
                        "matter included) or words such as 'utf8,1-based,inclusive,file' "
                        "(workbench.corpus.conventions)")
    p.add_argument("--export-run", metavar="PATH",
                   help="write the run that was scored: a run JSONL, or a TREC run for "
                        ".trec/.txt/.run files")
    p.add_argument("--by-category", action="store_true",
                   help="also print the per-category table however long it is (by default it "
                        "is printed when it has 2 to 12 rows)")
    cache_arg(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(fn=_eval)

    p = sub.add_parser("chunks", help="chunking diagnostics: chunks, cost, split rate")
    corpus_args(p)
    p.add_argument("--chunker", type=chunker_spec, action="append", required=True,
                   help="chunker spec; repeatable")
    p.add_argument("--json", action="store_true")
    cache_arg(p)  # a semantic chunker embeds its sentences through the cache
    p.set_defaults(fn=_chunks)

    p = sub.add_parser("gate", help="CI gate: exit 1 when retrieval regressed against a baseline")
    p.add_argument("--baseline", required=True, help="baseline JSON, e.g. evals/baseline.json")
    p.add_argument("--corpus", help="default for this and the options below: the baseline's")
    p.add_argument("--golden")
    p.add_argument("--chunker", type=chunker_spec)
    p.add_argument("--retriever")
    p.add_argument("--encoder")
    p.add_argument("-k", type=cutoff)
    p.add_argument("-m", "--metric", action="append", help="gate only this metric; repeatable")
    p.add_argument("--level", choices=["chunk", "document"])
    p.add_argument("--alpha", type=probability, default=0.05,
                   help="one-sided test level (0.05)")
    p.add_argument("--update-baseline", action="store_true",
                   help="write the baseline (create it, or ratchet it upward only)")
    cache_arg(p)
    p.add_argument("--golden-changed", action="store_true",
                   help="acknowledge an edited golden set: compare the common questions")
    p.add_argument("--force", action="store_true", help="with --update-baseline: allow lower")
    p.add_argument("--generation", action="store_true",
                   help="gate answer accuracy (local generator, cached) against a generation "
                        "baseline; model, prompt and judge are pinned in it")
    p.add_argument("--questions", help="with --generation: comma-separated qids to answer")
    p.add_argument("--history", action="store_true",
                   help="print the baseline's changelog (one line per ratchet) and exit")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(fn=_gate)

    p = sub.add_parser("sweep", help="evaluate a grid of configurations (grid YAML; see "
                                     "workbench.sweep)")
    corpus_args(p)
    p.add_argument("--grid", required=True, help="grid YAML: parameter: [values], + metrics")
    p.add_argument("--executor", help="dask://HOST:PORT or processes:N (default: in process)")
    p.add_argument("--state", help="JSONL of finished configs: a rerun skips them (resume)")
    p.add_argument("--holdout", type=float, help="fraction of questions held out of the "
                   "ranking; the winner is reported on them (split stored beside --state)")
    p.add_argument("--holdout-seed", type=int, default=0, help="seed of the held-out split")
    cache_arg(p)
    p.add_argument("-k", type=cutoff, default=5, help="k when the grid has none (default 5)")
    p.add_argument("--json", action="store_true", help="one row per configuration, as JSON")
    p.set_defaults(fn=_sweep)

    p = sub.add_parser("report", help="one standalone HTML report: retrieval metrics, answers "
                                      "(extractive reader), triage and failing traces")
    corpus_args(p)
    p.add_argument("--chunker", type=chunker_spec, default=None, help=CHUNKER_HELP)
    p.add_argument("--retriever", default="bm25", help="bm25 | dense | hybrid | hybrid+rerank")
    p.add_argument("--encoder", default=None, help=ENCODER_HELP)
    p.add_argument("-k", type=cutoff, default=5, help="chunks the generator receives (default 5)")
    cache_arg(p)
    p.add_argument("--budget-tokens", type=non_negative_int, default=None,
                   help="context budget in tokens")
    p.add_argument("--user-group", action="append", default=None,
                   help="enforce access as a user in this group; repeatable")
    p.add_argument("--unrestricted", action="store_true",
                   help="show every document, restricted ones included (needed on a corpus "
                        "with restricted documents when no --user-group is given)")
    p.add_argument("--no-generation", action="store_true", help="retrieval metrics only")
    p.add_argument("--traces", help="also save the traces (JSONL, ids only) here")
    p.add_argument("--title", help="report title")
    p.add_argument("--plots", action="store_true",
                   help="add the per-category heatmap (inlines plotly.js: about 4.6 MB)")
    p.add_argument("--out", required=True, help="the HTML file to write, e.g. report.html")
    p.set_defaults(fn=_report)

    p = sub.add_parser("questions", help="candidate questions from logs (CSV, JSONL, text), run "
                                         "logs and trace exports: merged, sampled, as JSONL")
    p.add_argument("files", nargs="+", help="question logs, run logs or span exports")
    p.add_argument("--field", help="the CSV column, JSONL field (a.b) or span attribute holding "
                                   "the question (default: question; spans: the input)")
    p.add_argument("--format", choices=["csv", "jsonl", "txt", "run", "spans"],
                   help="the files' format (default: from the suffix; .json is a span export)")
    p.add_argument("--scores", choices=["similarity", "distance"], default="similarity",
                   help="what a run log's scores are (default similarity)")
    p.add_argument("--threshold", type=float, default=90.0,
                   help="near-duplicate ratio, 0-100 (default 90; 100: exact duplicates only)")
    p.add_argument("--sample", type=non_negative_int, default=None,
                   help="keep this many (default all)")
    p.add_argument("--by", choices=["novelty", "confidence", "random"], default="novelty",
                   help="order: file order, low retrieval confidence first, or seeded random")
    p.add_argument("--golden", help="leave out the questions already in this golden set")
    p.add_argument("--seed", type=int, default=0, help="seed of --by random (default 0)")
    p.add_argument("-o", "--out", required=True, help="the candidates JSONL to write")
    p.set_defaults(fn=_questions)

    p = sub.add_parser("cache", help="what the cache folder holds (info), or empty it (clear)")
    p.add_argument("action", choices=["info", "clear"])
    cache_arg(p)
    p.add_argument("--model", help="clear: only this model's embeddings (a name such as "
                                   "minilm or e5, or a model id from `cache info`)")
    p.add_argument("--only", choices=["embeddings", "generations", "models"],
                   help="clear: only the embeddings, the generated answers or the local "
                        "generator's converted model")
    p.add_argument("--json", action="store_true", help="info: machine-readable output")
    p.set_defaults(fn=_cache)

    p = sub.add_parser("route", help="score a model router's routes on labelled requests")
    p.add_argument("requests", help="labelled requests JSONL (id, category, request, passes)")
    p.add_argument("routes", help="routes JSONL (id, models: ranked)")
    p.add_argument("--models", required=True, help='models JSON {"costs": {model: cost}}')
    p.add_argument("--compare", help="a second routes JSONL: paired comparison against it")
    p.add_argument("-k", type=cutoff, default=2, help="recall cutoff (default 2)")
    p.set_defaults(fn=_route)
    from workbench.cli.synth import add_synth_parser  # its command imports run on use

    add_synth_parser(sub, CHUNKER_HELP, cache_arg)
    return parser


def _route(args: argparse.Namespace) -> int:
    from workbench.cli.routing import run_route_command

    return run_route_command(args)


def _one_line_warning(message: Warning | str, category: type[Warning], filename: str,  # noqa: ARG001
                      lineno: int, line: str | None = None) -> str:  # noqa: ARG001
    """``warnings.formatwarning`` (its signature): the message alone, on one line."""
    return f"workbench: warning: {message}\n"


def given_options(argv: Sequence[str] | None) -> tuple[set[str], dict[str, str]]:
    """The destinations of the options given on the command line ``argv`` (not those at their
    defaults) and every option's flag in its command, by destination."""
    parser = build_parser()
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for sub in subs.choices.values():
        for action in sub._actions:
            action.default = argparse.SUPPRESS
    given = vars(parser.parse_args(argv))
    sub = subs.choices[given["command"]]
    flags = {a.dest: (a.option_strings or [a.dest])[-1] for a in sub._actions}
    return set(given) - {"command", "fn"}, flags


def main(argv: Sequence[str] | None = None) -> int:
    import warnings

    args = build_parser().parse_args(argv)
    saved, warnings.formatwarning = warnings.formatwarning, _one_line_warning
    try:
        check_combinations(args, *given_options(argv))
        return int(args.fn(args))
    except BrokenPipeError:  # the reader closed the pipe (| head): stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except WorkbenchError as exc:  # anything else is a bug: its traceback shows
        print(f"workbench {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a path the user typed that no file system can hold
        if exc.errno != errno.ENAMETOOLONG:
            raise
        print(f"workbench {args.command}: error: {str(exc.filename)[:80]}...: a file name "
              "longer than the file system allows; check the path", file=sys.stderr)
        return 2
    finally:
        warnings.formatwarning = saved

