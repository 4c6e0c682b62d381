"""``workbench report``: evaluate retrieval, answer every question with the extractive reader
(instant, deterministic), triage, and write one standalone HTML report
(:func:`workbench.report.write_report`) with the failing traces."""

from __future__ import annotations

import argparse

from workbench.cli.args import check_cutoffs, require_answerable
from workbench.io import WorkbenchError

__all__ = ["run_report_command"]


def run_report_command(args: argparse.Namespace) -> int:
    """``workbench report``: evaluate retrieval, answer every question with the extractive
    reader (instant, deterministic), triage, and write the report with the failing traces."""
    from workbench.cli.retrieval import (
        build_retriever,
        chunk_with_progress,
        chunker_spec,
        show_progress,
    )
    from workbench.corpus import UNRESTRICTED
    from workbench.diagnose import save_traces, traces_from_result, triage
    from workbench.evaluation import evaluate
    from workbench.generation import ExtractiveReader, run_generation_eval
    from workbench.golden import load_dataset
    from workbench.report import restricted_ids, write_report

    corpus, golden = load_dataset(args.corpus, args.golden)
    require_answerable(golden, args.golden or args.corpus)
    golden.validate(corpus)
    spec, _ = chunker_spec(args, corpus)
    chunks = chunk_with_progress(spec, corpus, args)
    check_cutoffs(args.k, None, len(chunks), "chunks in this corpus")
    restricted = restricted_ids(chunks, corpus)
    if restricted and args.user_group is None and not args.unrestricted \
            and not args.no_generation:
        raise WorkbenchError(f"{args.corpus}: {len(restricted)} document(s) or chunk(s) are "
                         "restricted (acl); give --user-group GROUP to report as a user, or "
                         "--unrestricted to show every document to whoever reads the report")
    retriever, _ = build_retriever(args, chunks, golden)
    ev = evaluate(retriever, golden, chunks, k=args.k, system=args.retriever,
                  progress=show_progress())
    generation = tri = traces = None
    if not args.no_generation:
        generation = run_generation_eval(ExtractiveReader(), retriever, golden, chunks,
                                         documents=corpus, k=args.k,
                                         budget_tokens=args.budget_tokens,
                                         user_groups=UNRESTRICTED if args.user_group is None
                                         else args.user_group)
        tri = triage(generation)
        traces = traces_from_result(generation, golden=golden, corpus=corpus, chunks=chunks,
                                    run=ev.runs.get(args.retriever), system=args.retriever)
        if args.traces:
            save_traces(args.traces, traces)
    title = args.title or f"{args.retriever} over {spec}, k={args.k}"
    notes = (f"corpus {args.corpus}; golden {args.golden or '(from the dataset)'}; "
             f"{len(chunks)} chunks; generator: extractive reader (a deterministic baseline)"
             + (f"; budget {args.budget_tokens} tokens" if args.budget_tokens else "")
             + (f"; as a user in {args.user_group}" if args.user_group is not None else ""))
    out = write_report(args.out, ev, sweep=None, generation=generation, traces=traces, title=title,
                       golden=golden,
                       corpus=corpus, chunks=chunks, triage=tri, notes=notes,
                       unrestricted=args.unrestricted, plots=args.plots)
    line = f"wrote {out}: n={ev.n} questions"
    if generation is not None:
        acc = generation.accuracy()
        live = acc[acc["mode"] == "live"]["accuracy"]
        line += f", live answer accuracy {float(live.iloc[0]):.3f}" if len(live) else ""
    print(line)
    return 0
