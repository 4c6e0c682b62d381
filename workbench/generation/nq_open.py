"""The NQ-open slice of "Lost in the Middle" (Liu et al., 2023) as position items, and the
paper's published position curves for comparison.

:func:`find_lost_in_the_middle` looks for the ``lost_in_the_middle`` dataset folder
(``$WORKBENCH_DATASETS``, then ``shared/datasets`` beside the working directory or the
repository); :func:`load_nq_open` turns ``nq-open-oracle.jsonl.gz`` into
:class:`~workbench.generation.position.PositionItem` s (gold = the one oracle passage,
distractors = other questions' passages without any of the answers; the published
multi-document files with Contriever distractors are not in the snapshot);
:func:`load_reference_curves` reads the published 20-document numbers.
"""

from __future__ import annotations

import gzip
import json
import os
import random
from pathlib import Path
from typing import Any

from workbench.generation.context import Passage
from workbench.generation.position import PositionItem
from workbench.io import WorkbenchError

__all__ = ["NQ_ORACLE", "REFERENCE_FILE", "find_lost_in_the_middle", "load_nq_open",
           "load_reference_curves"]

NQ_ORACLE = Path("qa_data") / "nq-open-oracle.jsonl.gz"
REFERENCE_FILE = "reference_results_from_EXPERIMENTS_md.json"


def find_lost_in_the_middle(start: str | Path | None = None) -> Path | None:
    """The ``lost_in_the_middle`` dataset folder, looked for in ``$WORKBENCH_DATASETS``,
    then ``shared/datasets`` beside the working directory or the repository; None if absent."""
    roots = []
    if os.environ.get("WORKBENCH_DATASETS"):
        roots.append(Path(os.environ["WORKBENCH_DATASETS"]))
    here = Path(start) if start else Path.cwd()
    repo = Path(__file__).resolve().parents[2]
    for base in (here, here.parent, repo):
        roots.append(base.parent / "shared" / "datasets")
    for root in roots:
        folder = root / "lost_in_the_middle"
        if (folder / NQ_ORACLE).exists() or (folder / REFERENCE_FILE).exists():
            return folder
    return None


def load_nq_open(path: str | Path | None = None, limit: int = 20, *, n_distractors: int = 29,
                 pool: int = 300, seed: int = 0) -> list[PositionItem]:
    """The first ``limit`` questions of ``nq-open-oracle.jsonl.gz`` as position items.

    ``path`` is the file or the ``lost_in_the_middle`` folder (default: found by
    :func:`find_lost_in_the_middle`). Distractors for each question are gold passages of
    the first ``pool`` other questions that contain none of its answers, in a seeded
    order. Raises FileNotFoundError when the file is absent (callers skip on that).
    """
    if path is None:
        folder = find_lost_in_the_middle()
        if folder is None:
            raise FileNotFoundError("lost_in_the_middle dataset not found beside the repo "
                                    "(../shared/datasets/lost_in_the_middle)")
        path = folder
    path = Path(path)
    file = path / NQ_ORACLE if path.is_dir() else path
    if not file.exists():
        raise FileNotFoundError(f"{file}: NQ-open oracle file not found")
    records: list[tuple[str, str, tuple[str, ...], Passage]] = []
    with gzip.open(file, "rt", encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if len(records) >= max(limit, pool):
                break
            try:
                row = json.loads(line)
                ctx = row["ctxs"][0]
                records.append((f"nq{lineno:04d}", row["question"], tuple(row["answers"]),
                                Passage("", f"nq{lineno:04d}#0", f"nq{lineno:04d}",
                                        ctx["text"], title=ctx.get("title", ""))))
            except (json.JSONDecodeError, KeyError, IndexError, TypeError) as exc:
                raise WorkbenchError(f"{file}:{lineno}: not a lost-in-the-middle QA record "
                                 f"({type(exc).__name__}: {exc})") from None
    rng = random.Random(seed)
    items = []
    for qid, question, answers, gold in records[:limit]:
        probe = PositionItem(qid, question, gold, (), answers=answers, match="any",
                             category="nq-open")
        others = [r[3] for r in records if r[0] != qid]
        rng.shuffle(others)
        chosen: list[Passage] = []
        for p in others:
            if len(chosen) == n_distractors:
                break
            if not probe.passes(p.text):
                chosen.append(p)
        items.append(PositionItem(qid, question, gold, tuple(chosen), answers=answers, match="any",
                                  category="nq-open"))
    return items


def load_reference_curves(path: str | Path | None = None) -> dict[str, Any]:
    """The published position curves (20 documents, NQ-open, best-subspan EM) from the
    dataset's reference JSON: ``{"source", "n_documents", "curves": {model: {pos: acc}},
    "closedbook": {model: acc}, "oracle": {model: acc}}``."""
    if path is None:
        folder = find_lost_in_the_middle()
        if folder is None:
            raise FileNotFoundError("lost_in_the_middle dataset not found")
        path = folder
    path = Path(path)
    file = path / REFERENCE_FILE if path.is_dir() else path
    data = json.loads(file.read_text(encoding="utf-8"))
    qa = data.get("multi_doc_qa_nq_open", {})
    curves = {m: {int(k): float(v) for k, v in d.get("20_docs_by_gold_index", {}).items()}
              for m, d in qa.items()}
    return {"source": data.get("_source", str(file)), "n_documents": 20, "curves": curves,
            "closedbook": {m: d.get("closedbook") for m, d in qa.items()},
            "oracle": {m: d.get("oracle") for m, d in qa.items()}}
