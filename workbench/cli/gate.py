"""``workbench gate``: options not given on the command line are taken from the baseline's
recorded config; prints the gate report (or JSON) and returns the exit code."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from workbench.cli.args import check_cutoffs
from workbench.cli.retrieval import embedding_cache, show_progress
from workbench.evaluation.pipeline import evaluate_pipeline, pipeline_config
from workbench.gate import BaselineRefused, check_gate, update_baseline
from workbench.gate.baseline import Baseline
from workbench.gate.history import changelog_path, read_history
from workbench.io import InputError


def run_gate_command(args: argparse.Namespace) -> int:
    """``workbench gate``: 0 pass, 1 regression (or ratchet refusal), 2 user error.
    Options not given are taken from the baseline's recorded config."""
    path = Path(args.baseline)
    if args.history:
        if not path.is_file():
            raise InputError(str(path), "baseline not found (or not a file), so it has no "
                             "changelog; check the path")
        history = read_history(path)
        print(history.rstrip("\n") if history else
              f"{changelog_path(path)}: no changelog yet (it grows with each --update-baseline)")
        return 0
    if args.generation:
        return _generation_gate(args, path)
    check_cutoffs(args.k, args.metric, None)
    if not path.exists() and not args.update_baseline:
        raise InputError(str(path), "baseline not found; create it with "
                         f"`workbench gate --baseline {path} --update-baseline`")
    base = Baseline.load(path, pipeline=True) if path.exists() else None
    given = {k: getattr(args, k, None) for k in ("corpus", "golden", "chunker", "retriever",
                                                 "encoder", "k", "level")}
    requested = getattr(args, "metric", None)
    given["metrics"] = list(dict.fromkeys([*(base.metrics if base else []), *requested])
                            ) if requested else None
    merged = {**(base.config if base else {}), **{k: v for k, v in given.items() if v is not None}}
    config = pipeline_config(merged, "gate options")
    ev, golden = evaluate_pipeline(config, progress=show_progress(), cache=embedding_cache(args))
    forced = bool(args.update_baseline and args.force)
    out: dict[str, Any] = {"baseline": str(path), "config": config}
    code, result = 0, None
    try:
        if base is not None:
            gated = [m for m in requested or base.metrics if not forced or m in base.metrics]
            result = check_gate(ev, base, args.alpha, metrics=gated or None, golden=golden,
                                allow_golden_change=args.golden_changed or forced,
                                config=config)
            code = 0 if result.passed or forced else 1
            out.update(result.to_dict())
        if args.update_baseline and code == 0:
            update_baseline(path, ev, config, golden, force=args.force,
                            golden_changed=args.golden_changed)
            out["baseline_updated"] = True
    except BaselineRefused as exc:
        code = 1 if exc.reason == "lower" else 2
        out.update(error=str(exc), reason=exc.reason)
    if args.json:
        print(json.dumps({"exit_code": code, **out}, indent=2, ensure_ascii=False, default=str))
        return code
    if result is not None:
        print(result.report())
    if "error" in out:
        print(f"workbench gate: {out['error']}")
    elif out.get("baseline_updated"):
        print(f"{'updated' if base else 'created'} baseline {path} (n={ev.n} questions)")
    return code


def _generation_gate(args: argparse.Namespace, path: Path) -> int:
    """``workbench gate --generation``: answer accuracy of the local generator over the
    recorded (or given) pipeline, against a generation baseline (see
    :mod:`workbench.gate.generation`); answers are cached under the cache folder."""
    from workbench.gate.generation import (
        check_generation_gate,
        evaluate_generation,
        update_generation_baseline,
    )
    from workbench.generation.local import LocalGenerator
    from workbench.runtime import GENERATIONS_DIR, cache_dir

    if not path.exists() and not args.update_baseline:
        raise InputError(str(path), "generation baseline not found; create it with "
                         f"`workbench gate --generation --baseline {path} --update-baseline`")
    base = Baseline.load(path) if path.exists() else None
    given = {k: getattr(args, k, None) for k in ("corpus", "golden", "chunker", "retriever",
                                                 "encoder", "k", "level")}
    merged = {**(base.config if base else {}), **{k: v for k, v in given.items() if v is not None}}
    qids = [q.strip() for q in args.questions.split(",") if q.strip()] if args.questions \
        else None
    ev, golden, config = evaluate_generation(
        LocalGenerator(), merged, cache=cache_dir(getattr(args, "cache", None)) / GENERATIONS_DIR,
        qids=qids, progress=show_progress())
    code, out = 0, dict[str, Any](baseline=str(path), config=config)
    try:
        if base is not None:
            result = check_generation_gate(ev, path, config, golden, alpha=args.alpha,
                                           allow_golden_change=args.golden_changed or
                                           bool(args.force))
            code = 0 if result.passed or (args.update_baseline and args.force) else 1
            out.update(result.to_dict())
            if not args.json:
                print(result.report())
        if args.update_baseline and code == 0:
            update_generation_baseline(path, ev, config, golden, force=args.force,
                                       golden_changed=args.golden_changed)
            out["baseline_updated"] = True
    except BaselineRefused as exc:
        code = 1 if exc.reason in ("lower", "pins") else 2
        out.update(error=str(exc), reason=exc.reason)
    if args.json:
        print(json.dumps({"exit_code": code, **out}, indent=2, ensure_ascii=False, default=str))
    elif "error" in out:
        print(f"workbench gate --generation: {out['error']}")
    elif out.get("baseline_updated"):
        print(f"{'updated' if base else 'created'} generation baseline {path} (n={ev.n})")
    return code
