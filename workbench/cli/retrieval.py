"""``workbench trec | validate | eval | chunks``: retrieval on the command line.

``trec`` prints trec_eval-style scores of a TREC run against TREC qrels; ``validate`` checks
a golden set against a corpus (and a chunking); ``eval`` evaluates a retriever on a golden
set (a table that fits a terminal, or ``--json``), or a logged production run (``--run
RUN.jsonl``), and can write the run it scored (``--export-run``: run JSONL or TREC);
``chunks`` prints chunking diagnostics and the extraction warnings of PDF / HTML / DOCX
documents (scanned pages, columns read across, hyphenation).
The helpers shared with ``report`` pick the chunker (BEIR folders: whole documents with
their titles), the encoder (for the language) and the cache folder (``--cache``). Heavy
modules are imported inside each command, so ``import workbench.cli`` stays fast and never
imports torch. ``trec`` reads TREC qrels and BEIR ``qrels/*.tsv`` alike.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from workbench.cli.args import check_cutoffs, require_answerable
from workbench.io import WorkbenchError

__all__ = ["DEFAULT_TREC_MEASURES", "run_chunks_command", "run_eval_command", "run_trec_command",
           "run_validate_command"]

DEFAULT_TREC_MEASURES = ("map", "recip_rank", "P_5", "P_10", "recall_10", "ndcg_cut_10")


def run_trec_command(args: argparse.Namespace) -> int:
    from workbench.metrics import parse_metric, score_queries, trec_name
    from workbench.metrics.trec_files import read_trec_qrels, read_trec_run

    qrels = read_trec_qrels(args.qrels)
    run = read_trec_run(args.run)
    if not run:
        raise WorkbenchError(f"{args.run}: the run holds no results; nothing to score")
    shared = set(qrels) & set(run)
    if not shared:
        raise WorkbenchError(f"{args.run}: none of its {len(run)} topics is in {args.qrels} "
                         f"(e.g. run topic {next(iter(run))!r}, qrels topic "
                         f"{next(iter(qrels), None)!r}); check that the files belong together")
    _warn_unjudged(args, qrels, run, shared)
    names = list(dict.fromkeys(args.measure or DEFAULT_TREC_MEASURES))
    deepest = max((len(docs) for docs in run.values()), default=0)
    check_cutoffs(None, names, deepest, "documents of the run's deepest ranking")
    labels = []
    for name in names:
        try:
            labels.append(trec_name(parse_metric(name)))
        except ValueError:  # no trec_eval equivalent (mrr@k, ndcg_retrieved@k): keep ours
            labels.append(name)
    # trec_eval's semantics under trec_eval's labels: topics without a relevant document are
    # averaged in as zeros (the workbench elsewhere excludes and counts them)
    scores = score_queries(qrels, run, names, grade_threshold=args.threshold, no_relevant="zero")
    means = scores.mean()
    print(_trec_line("num_q", str(len(scores.qids))))
    for name, label in zip(names, labels, strict=True):
        print(_trec_line(label, f"{means[name]:.4f}"))
    _note_no_relevant(qrels, run, names, labels, args.threshold)
    return 0


def _note_no_relevant(qrels: Any, run: Any, names: list[str], labels: list[str],
                      threshold: int) -> None:
    """When some topics have no relevant document at the threshold, say so on stderr with
    the figures ``workbench eval`` reports for the same run and qrels: its n and means over
    the other topics (eval excludes and counts them; trec_eval averages them in as 0)."""
    from workbench.metrics import score_queries

    kept = score_queries(qrels, run, names, grade_threshold=threshold)
    if not kept.excluded_no_relevant:
        return
    means = kept.mean()
    figures = ", ".join(f"{label} {means[name]:.4f}"
                        for name, label in zip(names, labels, strict=True))
    print(f"note: {len(kept.excluded_no_relevant)} of "
          f"{len(kept.qids) + len(kept.excluded_no_relevant)} topics have no relevant document "
          f"at threshold {threshold}; num_q and the means above count them as 0 (trec_eval; "
          f"nDCG keeps their graded gains). workbench eval excludes them: n={len(kept.qids)}"
          + (f": {figures}" if kept.qids else ""), file=sys.stderr)


def _trec_line(label: str, value: str) -> str:
    """One summary line in trec_eval's columns (measure, ``all``, value) and its layout, with
    spaces where trec_eval puts tabs, so it reads aligned anywhere and splits on whitespace."""
    return f"{label:<23} all     {value}"


def _warn_unjudged(args: argparse.Namespace, qrels: Any, run: Any, shared: set[str]) -> None:
    """A warning when no document the run retrieves is judged in the qrels: every measure
    is then 0, which is almost always a run of other ids (chunk ids against document qrels)."""
    judged = {d for q in shared for d in qrels[q]}
    retrieved = {d for q in shared for d in run[q]}
    if retrieved & judged:
        return
    print(f"warning: none of the {len(retrieved)} document ids the run retrieves is judged in "
          f"{args.qrels} (e.g. run {min(retrieved)!r}, qrels {min(judged, default=None)!r}): "
          "every measure is 0. Are these the ids the qrels use (document ids, not chunk "
          "ids: workbench eval --level document --export-run writes document ids)?",
          file=sys.stderr)


def _load_inputs(args: argparse.Namespace) -> tuple[Any, Any]:
    from workbench.golden import load_dataset

    return load_dataset(args.corpus, getattr(args, "golden", None))


def _chunk_labels_note(golden: Any) -> str | None:
    labelled = sum(1 for item in golden if item.chunk_labels)
    if not labelled:
        return None
    return (f"note: {labelled} question(s) are labelled by chunk id; give --chunker SPEC (the "
            "chunking the labels were made on) to check those ids")


def show_progress() -> bool:
    """Progress bars on the command line: when stderr is a terminal."""
    return sys.stderr.isatty()


def chunker_spec(args: argparse.Namespace, corpus: Any) -> tuple[str, str]:
    """The chunker spec to use and a note on it: ``--chunker``, else ``document:title=true``
    for a BEIR folder (title + text, whole documents, as BEIR scores them), else fixed
    800-character windows."""
    from workbench.evaluation.pipeline import dataset_defaults
    from workbench.golden.datasets import dataset_kind

    beir = dataset_kind(args.corpus, getattr(args, "golden", None)) == "beir"
    default = dataset_defaults(args.corpus, getattr(args, "golden", None))[0]
    if args.chunker:
        titled = beir and any(d.title for d in corpus.documents) and "title" not in args.chunker
        note = (" (BEIR titles are not indexed by this chunker: use document:title=true, or "
                "add header=title)" if titled else "")
        return args.chunker, note
    if beir:
        return default, " (the BEIR default: whole documents, title + text indexed)"
    return default, " (the default)"


def chunk_with_progress(spec: str, corpus: Any, args: argparse.Namespace | None = None
                        ) -> list[Any]:
    """The chunks of ``corpus`` under ``spec`` (a semantic chunker embeds through the
    ``--cache`` of ``args``)."""
    from tqdm.auto import tqdm

    from workbench.chunking import chunk_corpus
    from workbench.retrieval import with_embedder

    docs = tqdm(corpus.documents, desc="chunking", unit="doc", delay=1.0,
                disable=not show_progress(), dynamic_ncols=True)
    cache = embedding_cache(args) if args is not None else None
    return chunk_corpus(with_embedder(spec, cache), docs)


def embedding_cache(args: argparse.Namespace) -> Any:
    from workbench.retrieval import EmbeddingCache
    from workbench.runtime import EMBEDDINGS_DIR, cache_dir

    return EmbeddingCache(cache_dir(getattr(args, "cache", None)) / EMBEDDINGS_DIR)


def pick_encoder(args: argparse.Namespace, chunks: list[Any], golden: Any
                 ) -> tuple[str | None, str]:
    """The encoder ``--encoder`` names or the one chosen for the language (None for BM25),
    and a line saying which encoder it is (and why)."""
    from workbench.retrieval import choose_encoder, get_encoder

    if args.retriever == "bm25":
        return None, ""
    encoder, why = args.encoder, "given with --encoder"
    if encoder is None:
        encoder, why = choose_encoder([c.embed_text for c in chunks],
                                      [i.question for i in golden])
    return encoder, f"encoder {get_encoder(encoder).model_id}: {why}"


def build_retriever(args: argparse.Namespace, chunks: list[Any], golden: Any) -> tuple[Any, str]:
    """The retriever ``--retriever`` names, with the encoder :func:`pick_encoder` picks; and
    the line saying which encoder it uses."""
    from workbench.retrieval import make_retriever

    encoder, line = pick_encoder(args, chunks, golden)
    retriever = make_retriever(args.retriever, chunks, encoder=encoder,
                               cache=embedding_cache(args),
                               queries=[i.question for i in golden], progress=show_progress())
    return retriever, line


def reanchored(args: argparse.Namespace, golden: Any, corpus: Any) -> Any:
    """``--reanchor``: the golden set with its drifted spans re-anchored by quote (the drift
    report on stderr); a span left to review is an error naming it."""
    if not getattr(args, "reanchor", False):
        return golden
    from workbench.golden import reanchor

    report = reanchor(golden, corpus)
    print(f"--reanchor: {report.summary()}", file=sys.stderr)
    if report.review:
        first = report.review[0]
        raise WorkbenchError(f"--reanchor: {len(report.review)} evidence span(s) need review, the "
                         f"first {first.qid} in {first.doc_id!r} ({first.reason}): re-anchor "
                         "them with workbench.golden.reanchor and save the golden set")
    return report.golden


def print_table(table: Any) -> None:
    """A table wrapped to the terminal's width."""
    import shutil

    print(table.to_string(line_width=shutil.get_terminal_size((100, 24)).columns))


def run_validate_command(args: argparse.Namespace) -> int:
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
    golden = reanchored(args, golden, corpus)
    chunks = None
    if args.chunker:
        chunks = chunk_with_progress(args.chunker, corpus, args)
    problems = golden.problems(corpus, chunks)
    note = None if chunks is not None else _chunk_labels_note(golden)
    if note:
        print(note)
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


MAX_CATEGORY_ROWS = 12


def run_eval_command(args: argparse.Namespace) -> int:
    from workbench.evaluation import INTERVAL_NOTE, describe_relevance, evaluate
    from workbench.evaluation.pipeline import Pipeline, dataset_defaults, run_pipeline
    from workbench.metrics import default_metrics

    corpus, golden = _load_inputs(args)
    require_answerable(golden, args.golden or args.corpus)
    golden = reanchored(args, golden, corpus)
    golden.validate(corpus)
    if getattr(args, "chunks", None):
        from workbench.evaluation.run_files import read_chunks

        if args.chunker:
            raise WorkbenchError("give --chunks (the production chunking) or --chunker, not both")
        located = read_chunks(args.chunks, corpus)
        print(f"{args.chunks}: {located.report.summary()}", file=sys.stderr)
        chunks: list[Any] = located
        spec, note = f"the chunks of {args.chunks}", ""
    else:
        spec, note = chunker_spec(args, corpus)
        chunks = chunk_with_progress(spec, corpus, args)
    check_cutoffs(args.k, args.metric, len(chunks), "chunks in this corpus")
    metrics = args.metric or default_metrics(args.k)
    level = args.level or dataset_defaults(args.corpus, args.golden)[1]
    retriever: Any = None
    if args.run:  # logged results: the hits carry their located chunks
        source: Any = _logged_run(args, corpus, chunks)  # refused before any note is printed
        metrics = _loggable(metrics, given=bool(args.metric))
        name, encoder_line = source.system, ""
        described = f"logged run {args.run} ({name})"
        ev = evaluate(source, golden, None, metrics=metrics, k=args.k, level=level,
                      evidence_threshold=args.evidence_threshold, system=name,
                      grade_threshold=args.relevance_threshold, progress=show_progress())
    else:  # the one pipeline the gate, the sweep and notebooks build too
        encoder, encoder_line = pick_encoder(args, chunks, golden)
        pipeline = Pipeline(spec, args.retriever, encoder, args.k, metrics=tuple(metrics),
                            level=level,
                            grade_threshold=args.relevance_threshold,
                            evidence_threshold=args.evidence_threshold)
        built = run_pipeline(pipeline, corpus, golden, chunks=chunks,
                             cache=embedding_cache(args), progress=show_progress(),
                             source=args.golden or args.corpus)
        ev, retriever, name = built.evaluation, built.retriever, args.retriever
        described = f"{args.retriever} over {len(chunks):,} chunks, {spec}{note}"
    summary: list[dict[Any, Any]] = ev.summary().to_dict("records")
    by_cat: list[dict[Any, Any]] = ev.by("category").to_dict("records")
    excluded = {k: len(v) for k, v in ev.excluded.items()}
    # evaluate scores document labels at document level by itself (with a warning)
    level = "document" if all(r.startswith("document") for r in ev.relevance) else level
    if args.json:
        latency = [{k: v for k, v in row.items() if k != "system"}
                   for row in ev.latency().to_dict("records")]  # a logged run has none
        out: dict[str, Any] = {
            "n": ev.n, "k": args.k, **({"run": args.run, "system": name} if args.run else {
                "chunker": spec, "retriever": args.retriever,
                "encoder": getattr(getattr(retriever, "encoder", None), "model_id", None),
                "chunks": len(chunks)}),
            "level": level,
            "metrics": {r["metric"]: _jsonable(r["mean"]) for r in summary},
            "intervals": {r["metric"]: [_jsonable(r["ci_low"]), _jsonable(r["ci_high"])]
                          for r in summary},
            "relevance": {r["metric"]: r["relevance"] for r in summary},
            "interval": INTERVAL_NOTE,
            "by_category": {},
            "excluded": excluded,
            "latency_ms": latency[0] if latency else None,
        }
        for r in by_cat:
            cat = out["by_category"].setdefault(str(r["category"]), {"n": int(r["n"])})
            cat[str(r["metric"])] = _jsonable(float(r["mean"]))
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return _export_run(args, ev.runs[name], chunks, level)
    dropped = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in excluded.items() if v)
    print(f"{described}; k={args.k}, {level} level")
    if encoder_line:
        print(encoder_line)
    print(f"n={ev.n} questions" + (f"; excluded: {dropped}" if dropped else "")
          + (" (workbench trec and trec_eval average those with no relevant document in as 0)"
             if excluded.get("no_relevant_at_threshold") else ""))
    for label in ev.relevance:
        print(f"relevance {label}: {describe_relevance(label)}")
    print(f"mean [{INTERVAL_NOTE}]")
    summary_table = ev.table(column=None).T  # one column per system: fits a terminal
    summary_table.index.name = summary_table.columns.name = None
    print_table(summary_table)
    categories = len({r["category"] for r in by_cat})
    if args.by_category or 2 <= categories <= MAX_CATEGORY_ROWS:
        print()
        print_table(ev.table(column="category"))
    elif categories > MAX_CATEGORY_ROWS:
        print(f"({categories} categories: --by-category prints the per-category table)")
    return _export_run(args, ev.runs[name], chunks, level)


def _export_run(args: argparse.Namespace, run: Any, chunks: list[Any], level: str) -> int:
    """``--export-run``: the run as it was scored (document ids at document level), written
    after the scores are printed, so a run the format refuses never loses them."""
    if not args.export_run:
        return 0
    from workbench.evaluation.run_files import write_run

    sys.stdout.flush()
    if level == "document" and not args.export_run.endswith((".trec", ".txt", ".run")):
        print(f"note: {args.export_run} holds the chunks; the documents scored at document "
              "level are written to a .trec file", file=sys.stderr)
        level = "chunk"
    written = write_run(args.export_run, run, chunks=chunks, level=level)
    print(f"run of {len(run.hits)} questions written to {written}"
          + (" (document ids, as scored)" if level == "document" else ""), file=sys.stderr)
    return 0


def _loggable(metrics: list[str], given: bool) -> list[str]:
    """The metrics a run log can be scored on: those the registry marks ``needs_chunking``
    (nDCG's ideal ranking, omega precision) need every chunk of the production chunking,
    not only the logged ones; asked for, they are refused; by default, left out."""
    from workbench.metrics import parse_metric

    needs = [m for m in metrics if parse_metric(m).spec.needs_chunking]
    if needs and given:
        raise WorkbenchError(f"{', '.join(needs)} cannot be scored from a run log: the ideal "
                         "ranking needs the production system's whole chunking, and a log "
                         "holds only the chunks it retrieved. Score the log on the other "
                         "metrics, or wrap the retriever (workbench.retrieval.adapters) and "
                         "pass its chunking")
    if needs:
        print(f"note: {', '.join(needs)} left out: a run log does not hold the whole "
              "production chunking its ideal ranking needs", file=sys.stderr)
    return [m for m in metrics if m not in needs]


def _logged_run(args: argparse.Namespace, corpus: Any, chunking: Any) -> Any:
    """The run of ``--run``: text and offsets located in the corpus, the offsets read in
    ``--run-offsets``' convention (``auto``: detected from the hit texts; the raw files are
    those of a --corpus folder), cut texts located by their prefix and extended to the
    ``--chunks`` chunking; chunk ids resolved in the chunking. The report goes to stderr."""
    from pathlib import Path

    from workbench.corpus import raw_texts
    from workbench.corpus.conventions import parse_convention
    from workbench.evaluation.run_files import read_log

    offsets = args.run_offsets
    if offsets != "auto":
        offsets = parse_convention(offsets)
    raw = raw_texts(args.corpus, corpus.documents) if Path(args.corpus).is_dir() else {}
    if offsets != "auto" and offsets.reference != "text" and not raw:
        raise WorkbenchError(f"--run-offsets {args.run_offsets} needs --corpus to be the folder of "
                         f"the raw files, not {args.corpus}")
    run, report = read_log(args.run, corpus, chunks=chunking, scores=args.run_scores,
                           raw=raw, offsets=offsets,
                           extend_to=chunking if getattr(args, "chunks", None) else None)
    for line in report.lines():
        print(f"note: {line}", file=sys.stderr)
    return run


def run_chunks_command(args: argparse.Namespace) -> int:
    from workbench.chunking import diagnose_chunking
    from workbench.corpus import extraction_warnings
    from workbench.retrieval import with_embedder

    corpus, golden = _load_inputs(args)
    spans = [ev for item in golden for ev in item.evidence]
    warnings = [w for doc in corpus.documents for w in extraction_warnings(doc)]
    rows = []
    for spec in args.chunker:
        d = diagnose_chunking(with_embedder(spec, embedding_cache(args)), corpus.documents,
                              spans)
        rows.append({"chunker": spec, "chunks": d.n_chunks, "mean_tokens": round(d.mean_tokens, 1),
                     "max_tokens": d.max_tokens, "index_tokens": d.index_tokens,
                     "cost_multiplier": round(d.cost_multiplier, 3),
                     "split_rate": round(d.split_rate, 4), "near_duplicates": d.near_duplicates})
    if args.json:
        listed = [{"doc_id": w.doc_id, "kind": w.kind, "pages": list(w.pages),
                   "message": w.message} for w in warnings]
        print(json.dumps([{**row, "extraction_warnings": listed} for row in rows], indent=2,
                         ensure_ascii=False))
    else:
        import pandas as pd

        print(pd.DataFrame(rows).to_string(index=False))
        if warnings:
            print(f"\n{len(warnings)} extraction warning(s): chunks of these pages or "
                  "documents may miss or misorder text")
            for w in warnings:
                print(f"  {w}")
    return 0
