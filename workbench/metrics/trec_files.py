"""Formats: TREC qrels/run files (trec_eval semantics), BEIR folders, SQuAD-style JSON.

qrels file: ``qid iter docno rel`` (4 whitespace-separated columns).
run file:   ``qid Q0 docno rank score tag`` (6 columns; extra trailing columns are ignored,
            as in trec_eval's ``results.trunc`` fixture).

Blank lines and lines whose first non-blank character is ``#`` are skipped. A ``#`` inside a
docno is part of the docno (MS MARCO v2.1 segment ids contain one).

Ranking follows trec_eval: the ``rank`` column is ignored and each query's documents are sorted
by score descending, ties broken by docno in *descending* string order (``strcmp``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from operator import itemgetter
from pathlib import Path

from workbench.corpus import Corpus, Document, iter_jsonl, load_corpus, load_jsonl, nfc
from workbench.golden import Evidence, GoldenItem, GoldenSet, atomic_write_text

Qrels = dict[str, dict[str, int]]
ScoredRun = dict[str, dict[str, float]]
RunLike = Mapping[str, Mapping[str, float]] | Mapping[str, Sequence[str]]

__all__ = [
    "load_beir",
    "load_dataset",
    "load_squad",
    "ranked_lists",
    "read_trec_qrels",
    "read_trec_run",
    "trec_sorted",
    "write_trec_qrels",
    "write_trec_run",
]

_BY_SCORE_THEN_DOCNO = itemgetter(1, 0)


def trec_sorted(scores: Mapping[str, float]) -> list[str]:
    """Docnos of one query in trec_eval order: score descending, then docno descending."""
    return [d for d, _ in sorted(scores.items(), key=_BY_SCORE_THEN_DOCNO, reverse=True)]


def ranked_lists(run: RunLike) -> dict[str, list[str]]:
    """Turn a run into ``{qid: [docno, ...]}``, best first.

    Scored queries (``{docno: score}``) are sorted as trec_eval does (score desc, docno desc);
    queries that are already lists are copied unchanged.
    """
    out: dict[str, list[str]] = {}
    for qid, docs in run.items():
        out[qid] = trec_sorted(docs) if isinstance(docs, Mapping) else list(docs)
    return out


def _data_lines(path: Path) -> Iterator[tuple[int, list[str]]]:
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            yield lineno, stripped.split()


def read_trec_qrels(path: str | os.PathLike[str]) -> Qrels:
    """Read a TREC qrels file into ``{qid: {docno: grade}}``.

    Raises ``ValueError`` naming ``file:line`` for a line without exactly 4 columns, a
    non-integer grade, or a docno judged twice with different grades.
    """
    p = Path(path)
    qrels: Qrels = {}
    for lineno, cols in _data_lines(p):
        if len(cols) != 4:
            raise ValueError(
                f"{p}:{lineno}: expected 4 columns 'qid iter docno rel', got {len(cols)}: "
                f"{' '.join(cols)!r}. Fix the line or comment it out with '#'."
            )
        qid, _, docno, rel = cols
        try:
            grade = int(rel)
        except ValueError:
            raise ValueError(
                f"{p}:{lineno}: relevance {rel!r} is not an integer; "
                "qrels grades must be integers such as 0, 1, 2."
            ) from None
        judged = qrels.setdefault(qid, {})
        if judged.get(docno, grade) != grade:
            raise ValueError(
                f"{p}:{lineno}: {qid} {docno} is judged twice with different grades "
                f"({judged[docno]} and {grade}); keep one judgment."
            )
        judged[docno] = grade
    return qrels


def read_trec_run(path: str | os.PathLike[str]) -> ScoredRun:
    """Read a TREC run file into ``{qid: {docno: score}}``.

    Needs at least 6 columns ``qid Q0 docno rank score tag``; extra columns are ignored. The
    rank column is not used (see :func:`ranked_lists` for the order). Raises ``ValueError``
    naming ``file:line`` for too few columns, a non-numeric score, or a repeated docno.
    """
    p = Path(path)
    run: ScoredRun = {}
    for lineno, cols in _data_lines(p):
        if len(cols) < 6:
            raise ValueError(
                f"{p}:{lineno}: expected 6 columns 'qid Q0 docno rank score tag', got "
                f"{len(cols)}: {' '.join(cols)!r}. Fix the line or comment it out with '#'."
            )
        qid, docno, score = cols[0], cols[2], cols[4]
        try:
            value = float(score)
        except ValueError:
            raise ValueError(
                f"{p}:{lineno}: score {score!r} (column 5) is not a number."
            ) from None
        docs = run.setdefault(qid, {})
        if docno in docs:
            raise ValueError(
                f"{p}:{lineno}: document {docno} appears twice for query {qid}; "
                "trec_eval rejects duplicate documents, keep one line."
            )
        docs[docno] = value
    return run


def _check_token(kind: str, value: str) -> None:
    if not value or any(c.isspace() for c in value):
        raise ValueError(f"{kind} {value!r} must be non-empty and contain no whitespace.")


def write_trec_run(run: RunLike, path: str | os.PathLike[str], tag: str = "workbench") -> None:
    """Write a run atomically (temp file in the same folder, then ``os.replace``).

    Documents are written in trec_eval order with 1-based ranks. Scores are written with
    ``repr`` so they read back exactly; list-valued queries get scores ``n, n-1, ..., 1``.
    """
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

    atomic_write_text(Path(path), "".join(lines()))


def write_trec_qrels(qrels: Mapping[str, Mapping[str, int]], path: str | os.PathLike[str]) -> None:
    """Write qrels atomically as ``qid 0 docno grade`` lines."""

    def lines() -> Iterator[str]:
        for qid, judged in qrels.items():
            _check_token("qid", qid)
            for docno, grade in judged.items():
                _check_token("docno", docno)
                yield f"{qid} 0 {docno} {int(grade)}\n"

    atomic_write_text(Path(path), "".join(lines()))


# ----- whole datasets: BEIR folders and SQuAD-style JSON -> corpus + golden set ----------


def load_beir(folder: str | Path, split: str = "test") -> tuple[Corpus, GoldenSet]:
    """A BEIR folder (corpus.jsonl, queries.jsonl, qrels/{split}.tsv) as a corpus and a
    golden set. BEIR judges whole documents, so each relevant document becomes one evidence
    span covering it: score these with ``level="document"``."""
    folder = Path(folder)
    corpus = load_jsonl(folder / "corpus.jsonl")
    qrels_path = folder / "qrels" / f"{split}.tsv"
    if not qrels_path.exists():
        raise ValueError(f"{qrels_path}: BEIR qrels file not found (choose split=...)")
    judged: dict[str, dict[str, int]] = {}
    with qrels_path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            parts = line.rstrip("\n").split("\t")
            if lineno == 1 and not parts[-1].lstrip("-").isdigit():
                continue  # header row
            if len(parts) != 3 or not parts[2].lstrip("-").isdigit():
                raise ValueError(f"{qrels_path}:{lineno}: expected 'query-id<TAB>corpus-id"
                                 "<TAB>score'")
            judged.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    items = []
    for where, row in iter_jsonl(folder / "queries.jsonl"):
        if not isinstance(row, dict):
            raise ValueError(f"{where}: each line must be a JSON object {{\"_id\", \"text\"}}")
        qid = str(row.get("_id", ""))
        docs = [d for d, g in judged.get(qid, {}).items() if g > 0 and d in corpus]
        if not docs:
            continue
        evidence = tuple(Evidence(d, 0, len(corpus[d].text), "") for d in docs
                         if corpus[d].text)
        items.append(GoldenItem(qid, nfc(str(row.get("text", ""))), evidence=evidence,
                                category="beir", source="real"))
    return corpus, GoldenSet(items, qrels_path)


def _nfc_offset(raw: str, index: int) -> int:
    """Offset in NFC(raw) of code point ``index`` of ``raw``."""
    return len(nfc(raw[:index]))


def load_squad(path: str | Path) -> tuple[Corpus, GoldenSet]:
    """SQuAD-style JSON (SQuAD, XQuAD, CMRC 2018): each paragraph becomes a document
    ``{title-slug}-{article}-{paragraph}``, each answer span becomes evidence (offsets
    re-computed after NFC), its text a must-mention string; ``is_impossible`` questions
    become unanswerable items. The article title is the category."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))["data"]
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not SQuAD-style JSON with a top-level 'data' list ({exc})")\
            from None
    docs, items, skipped = [], [], 0
    for ai, article in enumerate(data):
        title = nfc(str(article.get("title", f"article-{ai}")))
        slug = re.sub(r"[^\w]+", "-", title.lower()).strip("-")[:40] or "article"
        for pi, para in enumerate(article.get("paragraphs", [])):
            raw = para["context"]
            doc = Document(f"{slug}-{ai}-{pi}", nfc(raw), title)
            docs.append(doc)
            for qa in para.get("qas", []):
                spans: list[Evidence] = []
                for ans in qa.get("answers", [])[:1]:
                    text, start = str(ans["text"]), int(ans["answer_start"])
                    if raw[start:start + len(text)] != text:
                        found = raw.find(text)
                        if found < 0:
                            continue
                        start = found
                    a, b = _nfc_offset(raw, start), _nfc_offset(raw, start + len(text))
                    spans.append(Evidence(doc.id, a, b, doc.text[a:b]))
                impossible = bool(qa.get("is_impossible")) or not qa.get("answers")
                if not spans and not impossible:
                    skipped += 1
                    continue
                items.append(GoldenItem(
                    str(qa["id"]), nfc(qa["question"]), evidence=tuple(spans),
                    answer_must_mention=tuple(s.text for s in spans), category=title,
                    source="real", answerable=not impossible))
    golden = GoldenSet(items, path)
    golden.skipped = skipped  # type: ignore[attr-defined]
    return Corpus(docs, source=str(path)), golden


def load_dataset(corpus: str | Path,
                 golden: str | Path | None = None) -> tuple[Corpus, GoldenSet]:
    """Corpus plus golden set from: a corpus path and a golden JSONL; a BEIR folder; or a
    SQuAD-style JSON file (both carry their own questions)."""
    path = Path(corpus)
    if path.suffix == ".json":
        return load_squad(path)
    if path.is_dir() and (path / "queries.jsonl").exists() and golden is None:
        return load_beir(path)
    if golden is None:
        raise ValueError(f"{path}: give --golden GOLDEN.jsonl (only BEIR folders and SQuAD "
                         "JSON files carry their own questions)")
    return load_corpus(path), GoldenSet.load(golden)
