"""``workbench questions``: candidate questions from logs, run logs and trace exports, merged
and sampled, written as JSONL (:mod:`workbench.golden.candidates`)."""

from __future__ import annotations

import argparse

from workbench.golden import GoldenSet
from workbench.golden.candidates import import_questions, sample_candidates, save_candidates

__all__ = ["run_questions_command"]


def run_questions_command(args: argparse.Namespace) -> int:
    found = import_questions(*args.files, field=args.field, format=args.format,
                             threshold=args.threshold, scores=args.scores)
    golden = GoldenSet.load(args.golden) if args.golden else None
    picked = sample_candidates(found, args.sample, by=args.by, golden=golden, seed=args.seed,
                               threshold=args.threshold)
    save_candidates(args.out, picked)
    print(found.summary())
    for merge in found.merges:
        print(f"  merged {merge.dropped} into {merge.kept} ({merge.method}, "
              f"{merge.score:.0f}): {merge.question}")
    known = f", {len(found) - len(picked)} left out" if len(picked) < len(found) else ""
    print(f"wrote {len(picked)} candidates ({args.by}{known}) to {args.out}")
    return 0
