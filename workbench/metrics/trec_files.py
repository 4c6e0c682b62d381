"""TREC qrels and run files, read and written with trec_eval semantics.

qrels file: ``qid iter docno rel`` (4 whitespace-separated columns), or BEIR's
            ``qrels/*.tsv``: ``query-id<TAB>corpus-id<TAB>score`` (3 tab-separated columns,
            an optional header row first). Grades are integers; ``1.000000`` reads as 1.
run file:   ``qid Q0 docno rank score tag`` (6 columns; extra trailing columns are ignored,
            as in trec_eval's ``results.trunc`` fixture).

Blank lines and lines whose first non-blank character is ``#`` are skipped. A ``#`` inside a
docno is part of the docno (MS MARCO v2.1 segment ids contain one).

Ranking follows trec_eval: the ``rank`` column is ignored and each query's documents are sorted
by score descending, ties broken by docno in *descending* string order (``strcmp``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from workbench.golden.datasets import parse_relevance, read_beir_qrels
from workbench.io import WorkbenchError, atomic_write_text, read_text, target_path
from workbench.ranking import top_k
from workbench.text import normalize_text

Qrels = dict[str, dict[str, int]]
ScoredRun = dict[str, dict[str, float]]
RunLike = Mapping[str, Mapping[str, float]] | Mapping[str, Sequence[str]]

__all__ = [
    "ranked_lists",
    "read_trec_qrels",
    "read_trec_run",
    "trec_sorted",
    "write_trec_qrels",
    "write_trec_run",
]

def trec_sorted(scores: Mapping[str, float]) -> list[str]:
    """Docnos of one query in trec_eval order: score descending, then docno descending
    (:func:`workbench.ranking.top_k`)."""
    docnos = list(scores)
    return [docnos[i] for i in top_k(docnos, list(scores.values()))]


def ranked_lists(run: RunLike) -> dict[str, list[str]]:
    """Turn a run into ``{qid: [docno, ...]}``, best first.

    Scored queries (``{docno: score}``) are sorted as trec_eval does (score desc, docno desc);
    queries that are already lists are copied unchanged.
    """
    out: dict[str, list[str]] = {}
    for qid, docs in run.items():
        out[qid] = trec_sorted(docs) if isinstance(docs, Mapping) else list(docs)
    return out


def _raw_data_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Non-blank lines that are not ``#`` comments, stripped, with their line numbers."""
    for lineno, line in enumerate(read_text(path, "TREC").split("\n"), start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            yield lineno, stripped


def _data_lines(path: Path) -> Iterator[tuple[int, list[str]]]:
    for lineno, line in _raw_data_lines(path):
        yield lineno, line.split()


def read_trec_qrels(path: str | os.PathLike[str]) -> Qrels:
    """Read a TREC qrels file, or a BEIR qrels TSV, into ``{qid: {docno: grade}}``.

    The format is decided by the first data line: three tab-separated columns is BEIR, read
    by :func:`~workbench.golden.datasets.read_beir_qrels` (its header row ``query-id
    corpus-id score`` is skipped), anything else TREC. Raises
    ``ValueError`` naming ``file:line`` for a line with the wrong number of columns, a grade
    that is not an integer, or a docno judged twice with different grades. Ids are read in
    the one normal form of loaded text (NFC, :func:`~workbench.text.normalize_text`), as the
    run's and the corpus's are.
    """
    p = Path(path)
    qrels: Qrels = {}
    for n, (lineno, line) in enumerate(_raw_data_lines(p)):
        if n == 0 and len(line.split("\t")) == 3:
            return read_beir_qrels(p)
        cols = line.split()
        if len(cols) != 4:
            raise WorkbenchError(
                f"{p}:{lineno}: expected 4 columns 'qid iter docno rel', got {len(cols)}: "
                f"{' '.join(cols)!r}. Fix the line or comment it out with '#'."
            )
        qid, docno, rel = normalize_text(cols[0]), normalize_text(cols[2]), cols[3]
        grade = parse_relevance(rel, f"{p}:{lineno}")
        judged = qrels.setdefault(qid, {})
        if judged.get(docno, grade) != grade:
            raise WorkbenchError(
                f"{p}:{lineno}: {qid} {docno} is judged twice with different grades "
                f"({judged[docno]} and {grade}); keep one judgment."
            )
        judged[docno] = grade
    return qrels


def read_trec_run(path: str | os.PathLike[str]) -> ScoredRun:
    """Read a TREC run file into ``{qid: {docno: score}}``.

    Needs at least 6 columns ``qid Q0 docno rank score tag``; extra columns are ignored. The
    rank column is not used (see :func:`ranked_lists` for the order); ids are read in NFC.
    Raises ``ValueError`` naming ``file:line`` for too few columns, a non-numeric score, or a
    repeated docno.
    """
    p = Path(path)
    run: ScoredRun = {}
    for lineno, cols in _data_lines(p):
        if len(cols) < 6:
            raise WorkbenchError(
                f"{p}:{lineno}: expected 6 columns 'qid Q0 docno rank score tag', got "
                f"{len(cols)}: {' '.join(cols)!r}. Fix the line or comment it out with '#'."
            )
        qid, docno, score = normalize_text(cols[0]), normalize_text(cols[2]), cols[4]
        try:
            value = float(score)
        except ValueError:
            raise WorkbenchError(
                f"{p}:{lineno}: score {score!r} (column 5) is not a number."
            ) from None
        docs = run.setdefault(qid, {})
        if docno in docs:
            raise WorkbenchError(
                f"{p}:{lineno}: document {docno} appears twice for query {qid}; "
                "trec_eval rejects duplicate documents, keep one line."
            )
        docs[docno] = value
    return run


def _check_token(kind: str, value: str) -> None:
    if not value or any(c.isspace() for c in value):
        raise WorkbenchError(f"{kind} {value!r} must be non-empty and contain no whitespace.")


def write_trec_run(path: str | os.PathLike[str], run: RunLike, tag: str = "workbench") -> None:
    """Write a run to ``path`` atomically (temp file in the same folder, then ``os.replace``).

    Documents are written in trec_eval order with 1-based ranks. Scores are written with
    ``repr`` so they read back exactly; list-valued queries get scores ``n, n-1, ..., 1``.
    """
    target = target_path(path, "write_trec_run")
    _check_token("tag", tag)

    def lines() -> Iterator[str]:
        for qid, docs in run.items():
            _check_token("qid", qid)
            if isinstance(docs, Mapping):
                scored = [(d, float(docs[d])) for d in trec_sorted(docs)]
            else:
                scored = [(d, float(len(docs) - i)) for i, d in enumerate(docs)]
            for rank, (docno, score) in enumerate(scored, start=1):
                _check_token("docno", docno)
                yield f"{qid} Q0 {docno} {rank} {score!r} {tag}\n"

    atomic_write_text(target, "".join(lines()))


def write_trec_qrels(path: str | os.PathLike[str], qrels: Mapping[str, Mapping[str, int]]) -> None:
    """Write qrels to ``path`` atomically as ``qid 0 docno grade`` lines."""
    target = target_path(path, "write_trec_qrels")

    def lines() -> Iterator[str]:
        for qid, judged in qrels.items():
            _check_token("qid", qid)
            for docno, grade in judged.items():
                _check_token("docno", docno)
                yield f"{qid} 0 {docno} {int(grade)}\n"

    atomic_write_text(target, "".join(lines()))
