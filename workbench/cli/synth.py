"""``workbench synth DOCS --out FILE.jsonl (--llm-url URL | --local)``: synthetic questions.

A chat model (an OpenAI-compatible endpoint, the local server, or the offline SmolLM2 with
``--local``) writes an easy question (and with ``--hard`` one in its distractors' words) for
each of ``--n`` target chunks (:func:`~workbench.synthetic.questions.generate_synthetic`).
The targets are a seeded order of the eligible chunks, so ``--n 20`` after ``--n 10``
continues with the same first ten.

Files: ``FILE.jsonl`` holds the kept items (a golden set: quoted facts located in the
documents, ``source: synthetic``, the model and prompt version in ``extra``);
``FILE.rejected.jsonl`` one line per rejected target and kind, with the reason and the
model's reply. Each target's outcome is written as soon as it is known, atomically and under
the files' locks, so a killed run loses at most the target in flight. A rerun with the same
``--out`` continues: targets with an outcome are skipped, those that failed with a model error
are retried (their error line is replaced), and no item is written twice, even by two runs
at once. A file written with another model, prompt version or chunker is refused. Replies go
through the generation cache (``--cache``), so a resumed target costs nothing.

``--readers GROUPS`` (or ``unrestricted``) names who the golden set is for; it is required
when the corpus declares access: targets and distractors come only from documents they may
read, and a distractor only when every reader of its target may read it too.

``--judge-with SCORES.jsonl`` (``{"qid", "score": 1-5}`` lines a person wrote for some items)
filters the items with a :class:`~workbench.synthetic.realism.RealismJudge` on the
same model: its agreement with the person is measured on their scores held out
(:func:`~workbench.synthetic.realism.realism_agreement`) and printed; a judge not
shown to beat chance is refused (exit 2); otherwise ``FILE.kept.jsonl`` holds the items scored
at or above ``--threshold`` and ``FILE.realism.jsonl`` every item's score and who gave it.
"""

from __future__ import annotations

import argparse
import json
import os
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from workbench.cli.args import chunker_spec as spec_arg
from workbench.cli.args import cutoff
from workbench.cli.retrieval import chunk_with_progress, chunker_spec, show_progress
from workbench.io import (
    InputError,
    WorkbenchError,
    atomic_write_text,
    iter_jsonl,
    locked,
    read_text,
)

__all__ = ["add_synth_parser", "rejected_path", "run_synth_command"]

MODEL_ERROR = "model error"


def add_synth_parser(sub: Any, chunker_help: str, cache_arg: Any) -> None:
    """The ``synth`` subcommand's arguments, added to the ``workbench`` parser's ``sub`` (this
    module imports only the light CLI helpers at the top; the command's own imports run on
    use, so building the parser stays fast); ``chunker_help`` and ``cache_arg`` are the
    ``--chunker`` help and the ``--cache`` option the other commands share."""
    p = sub.add_parser("synth", help="synthetic questions from a chat model: located facts, "
                                     "easy / hard questions, rejections with reasons; resumable")
    p.add_argument("corpus", metavar="DOCS", help="folder of .md/.txt or documents .jsonl")
    p.add_argument("--out", required=True, help="kept items JSONL (rejections go beside it in "
                                                "FILE.rejected.jsonl); a rerun continues it")
    model = p.add_mutually_exclusive_group(required=True)
    model.add_argument("--llm-url", help="an OpenAI-compatible endpoint, e.g. the local server "
                                         "(python -m workbench.generation.server)")
    model.add_argument("--local", action="store_true", help="the offline SmolLM2, in process")
    p.add_argument("--llm-model", default=os.environ.get("WORKBENCH_LLM_MODEL", "default"),
                   help="the endpoint's model name (default: $WORKBENCH_LLM_MODEL, else default)")
    p.add_argument("--api-key-env", default="OPENAI_API_KEY",
                   help="environment variable holding the endpoint's key (default "
                        "OPENAI_API_KEY; none is sent when it is unset)")
    p.add_argument("--timeout", type=cutoff, default=120, help="seconds per request (120)")
    p.add_argument("--n", type=cutoff, default=20, help="target chunks (default 20)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the target order and of the judge's folds (default 0)")
    p.add_argument("--chunker", type=spec_arg, default=None, help=chunker_help)
    p.add_argument("--hard", action="store_true",
                   help="also a hard question per target, in its distractors' words")
    p.add_argument("--distractors", default="bm25",
                   help="with --hard: bm25, dense or bm25,dense (default bm25)")
    p.add_argument("--encoder", default="minilm", help="the dense distractors' encoder")
    p.add_argument("--max-tokens", type=cutoff, default=96, help="reply budget (default 96)")
    p.add_argument("--readers", metavar="GROUPS",
                   help="who the golden set is for: comma-separated groups (targets and "
                        "distractors only from documents they may read; 'all': everyone, so "
                        "public documents only), or 'unrestricted'; required when the corpus "
                        "declares access (acl)")
    p.add_argument("--judge-with", metavar="SCORES.jsonl",
                   help='a person\'s {"qid", "score": 1-5} lines: filter with a realism judge '
                        "on the same model, refused when it does not beat chance")
    p.add_argument("--threshold", type=float, default=3.0, help="realism to keep (default 3)")
    p.add_argument("--folds", type=cutoff, default=2,
                   help="folds of the person's scores to measure the judge on (default 2)")
    cache_arg(p)
    p.set_defaults(fn=run_synth_command)


def rejected_path(out: Path) -> Path:
    """Where the rejections of ``out`` go: ``FILE.rejected.jsonl`` beside it."""
    return _sibling(out, "rejected")


def _sibling(out: Path, what: str) -> Path:
    """``FILE.WHAT.jsonl`` beside ``out`` (rejected, kept, realism)."""
    return out.with_name(f"{out.stem}.{what}.jsonl")


def _rows(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    rows = []
    for where, row in iter_jsonl(path, "synthetic output"):
        if not isinstance(row, dict):
            raise InputError(where, "each line must be a JSON object")
        rows.append(row)
    return rows


def _check_settings(path: Path, rows: list[dict[str, Any]], pins: dict[str, str]) -> None:
    """Refuse a file written with another model, prompt version or chunker."""
    for n, row in enumerate(rows, 1):
        got = {k: row.get(k) for k in pins}  # an item's extra is flattened into its row
        if got != pins:
            diff = {k: (got[k], v) for k, v in pins.items() if got[k] != v}
            name, (was, now) = next(iter(diff.items()))
            raise InputError(f"{path}:{n}", f"was written with {name}={was!r}, this run uses "
                             f"{now!r}; give another --out (or the same {name})", field=name)


def _record(out: Path, rejected: Path, items: list[Any], rejections: list[dict[str, Any]]
            ) -> int:
    """Append one target's outcome to both files under their locks, re-reading them there:
    an item whose qid is already written is skipped, and a rejection line for the same chunk
    and kind is replaced by the new outcome (a retried model error). Returns items written."""
    with locked(out), locked(rejected):
        written = {r.get("qid") for r in _rows(out)}
        new = [i for i in items if i.qid not in written]
        keys = {(i.extra["target_chunk"], i.extra["kind"]) for i in items} | {
            (r["chunk_id"], r["kind"]) for r in rejections}
        before = _rows(rejected)
        old = [r for r in before if (r.get("chunk_id"), r.get("kind")) not in keys]
        if new:
            text = read_text(out, "synthetic output") if out.exists() else ""
            text += "".join(json.dumps(i.to_json(), ensure_ascii=False) + "\n" for i in new)
            atomic_write_text(out, text, lock=False)
        lines = [*old, *rejections]
        if rejections or len(old) != len(before):
            atomic_write_text(rejected, "".join(json.dumps(r, ensure_ascii=False) + "\n"
                                                for r in lines), lock=False)
    return len(new)


def _client(args: argparse.Namespace) -> Any:
    if args.local:
        from workbench.generation.local import LocalGenerator

        return LocalGenerator(max_new_tokens=args.max_tokens)
    from workbench.generation.openai_client import OpenAIChatGenerator

    return OpenAIChatGenerator(args.llm_url, args.llm_model, api_key_env=args.api_key_env,
                               max_retries=2, timeout=args.timeout, max_tokens=args.max_tokens)


def _pending(targets: list[Any], items: list[dict[str, Any]], rejections: list[dict[str, Any]],
             hard: bool) -> list[Any]:
    """The targets with no outcome yet, a model error, or (``hard``) an easy item and no hard
    outcome (a run without ``--hard`` wrote them)."""
    outcome: dict[tuple[str, str], str] = {}
    for row in items:
        outcome[(row["target_chunk"], row["kind"])] = "item"
    for row in rejections:
        outcome.setdefault((row["chunk_id"], row["kind"]), row["reason"])
    def todo(chunk_id: str) -> bool:
        easy, later = outcome.get((chunk_id, "easy")), outcome.get((chunk_id, "hard"))
        if easy is None or easy.startswith(MODEL_ERROR):
            return True
        if later is not None and later.startswith(MODEL_ERROR):
            return True
        return hard and later is None and easy == "item"
    return [t for t in targets if todo(t.id)]


def run_synth_command(args: argparse.Namespace) -> int:
    from tqdm.auto import tqdm

    from workbench.corpus import load_corpus
    from workbench.generation.answer_cache import GenerationCache
    from workbench.golden import GoldenSet
    from workbench.runtime import GENERATIONS_DIR, cache_dir
    from workbench.synthetic.questions import (
        SYNTHETIC_PROMPT_VERSION,
        generate_synthetic,
        sample_chunks,
    )

    out = Path(args.out)
    if out.suffix != ".jsonl":
        raise InputError(str(out), "--out must be a .jsonl file (the kept items, a golden set)")
    rejected = rejected_path(out)
    corpus = load_corpus(args.corpus)
    readers = _readers(args.readers, corpus)
    spec, _ = chunker_spec(args, corpus)
    chunks = chunk_with_progress(spec, corpus, args)
    client = _client(args)
    pins = {"model_id": client.model_id, "prompt_version": SYNTHETIC_PROMPT_VERSION,
            "chunker": spec}
    if out.exists():
        GoldenSet.load(out)  # a file that is not a golden set is refused before any work
    old_items, old_rejected = _rows(out), _rows(rejected)
    _check_settings(out, old_items, pins)
    _check_settings(rejected, old_rejected, pins)
    order = sample_chunks(chunks, len(chunks), corpus, seed=args.seed, user_groups=readers)
    targets = _pending(order[:args.n], old_items, old_rejected, args.hard)
    retrievers = _distractor_retrievers(args, chunks) if args.hard else []
    cache = GenerationCache(cache_dir(args.cache) / GENERATIONS_DIR)
    print(f"{len(order[:args.n])} target chunks ({spec}, seed {args.seed}), {len(targets)} to "
          f"generate with {client.model_id} (prompt {SYNTHETIC_PROMPT_VERSION})")
    written, reasons, calls, errors = 0, Counter[str](), 0, 0
    for target in tqdm(targets, desc="synth", unit="chunk", disable=not show_progress(),
                       dynamic_ncols=True):
        run = generate_synthetic(client, [target], corpus, chunks=chunks if retrievers else (),
                                 distractors=retrievers, cache=cache,
                                 max_tokens=args.max_tokens, user_groups=readers)
        calls += run.calls
        items = [replace(i, extra={**i.extra, "chunker": spec}) for i in run.items]
        rows = [{**vars(r), **pins} for r in run.rejected]
        reasons.update(r.reason.split(":", 1)[0] for r in run.rejected)
        errors += sum(r.reason.startswith(MODEL_ERROR) for r in run.rejected)
        written += _record(out, rejected, items, rows)
    total_items, total_rejected = _rows(out), _rows(rejected)
    print(f"wrote {written} new items ({calls} model calls); {out}: {len(total_items)} items, "
          f"{rejected}: {len(total_rejected)} rejected")
    for reason, count in reasons.most_common(5):
        print(f"  rejected {count}: {reason}")
    if targets and errors == sum(reasons.values()) and not written:
        first = next(r["reason"] for r in reversed(total_rejected)
                     if r["reason"].startswith(MODEL_ERROR))
        print(f"workbench synth: every reply failed ({first}); a rerun retries them")
        return 1
    if args.judge_with:
        _filter(args, out, client, GoldenSet.load(out))
    return 0


def _readers(value: str | None, corpus: Any) -> Any:
    """``--readers`` as a reader (:func:`~workbench.corpus.reader.require_reader`): groups,
    ``unrestricted``, or nothing where no document declares access."""
    from workbench.corpus.reader import UNRESTRICTED, declared_access

    if value is None:
        declared = declared_access(corpus)
        if declared is not None:
            raise InputError("--readers", f"document {declared!r} declares access (acl): name "
                             "who the golden set is for, e.g. --readers engineering,hr, or "
                             "--readers unrestricted")
        return UNRESTRICTED
    if value.strip().casefold() == "unrestricted":
        return UNRESTRICTED
    groups = [g.strip() for g in value.split(",")]
    if not all(groups):
        raise InputError("--readers", f"{value!r} has an empty group name; give "
                         "comma-separated groups")
    return groups


def _distractor_retrievers(args: argparse.Namespace, chunks: list[Any]) -> list[Any]:
    from workbench.cli.retrieval import embedding_cache
    from workbench.retrieval import make_retriever

    names = [n.strip() for n in args.distractors.split(",") if n.strip()]
    bad = [n for n in names if n not in ("bm25", "dense")]
    if bad or not names:
        raise WorkbenchError(f"--distractors: {bad or names} is not bm25, dense or "
                             "bm25,dense")
    return [(n, make_retriever(n, chunks, encoder=args.encoder if n == "dense" else None,
                               cache=embedding_cache(args), progress=show_progress()))
            for n in names]


def _scores(path: str) -> dict[str, int]:
    scores: dict[str, int] = {}
    for where, row in iter_jsonl(path, "realism scores"):
        if not isinstance(row, dict) or not isinstance(row.get("qid"), str):
            raise InputError(where, 'each line must be {"qid": ..., "score": 1-5}', field="qid")
        score = row.get("score")
        if isinstance(score, bool) or not isinstance(score, int) or not 1 <= score <= 5:
            raise InputError(where, f"must be an integer 1-5, got {score!r}", field="score")
        if row["qid"] in scores:
            raise InputError(where, f"{row['qid']!r} is scored twice", field="qid")
        scores[row["qid"]] = score
    return scores


def _filter(args: argparse.Namespace, out: Path, client: Any, golden: Any) -> None:
    """``--judge-with``: measure the realism judge against the person, then filter."""
    from workbench.synthetic.realism import (
        RealismJudge,
        filter_synthetic,
        realism_agreement,
    )

    human = _scores(args.judge_with)
    by_qid = {i.qid: i for i in golden}
    unknown = sorted(set(human) - set(by_qid))
    if unknown:
        raise InputError(args.judge_with, f"scores items not in {out}: {unknown[:5]}",
                         field="qid")
    scored = [(by_qid[q].question, s) for q, s in human.items()]
    agreement = realism_agreement(client, scored, folds=args.folds, seed=args.seed)
    print(f"realism judge: {agreement.summary()}")
    result = filter_synthetic(golden, human, RealismJudge(client, scored), args.threshold,
                              agreement=agreement)
    kept, table = _sibling(out, "kept"), _sibling(out, "realism")
    atomic_write_text(kept, "".join(json.dumps(i.to_json(), ensure_ascii=False) + "\n"
                                    for i in result.kept))
    atomic_write_text(table, result.table.to_json(orient="records", lines=True,
                                                  force_ascii=False))
    print(f"kept {len(result.kept)} of {len(golden)} at realism >= {args.threshold:g}: {kept} "
          f"(scores in {table})")
