"""Candidate questions from real sources: logs, text files, run logs and trace exports.

:func:`import_questions` reads one or more files (format from the suffix or ``format=``):

* ``csv``: the column ``field`` (default ``question``); lines are the CSV's physical lines;
* ``jsonl``: the field ``field`` of each object (a dotted path such as ``request.text``);
* ``txt``: one question per line;
* ``run``: a run log in the ``--run`` format (``{"qid", "query", "hits": [...]}``, see
  :mod:`workbench.evaluation.run_files`). Golden sits below evaluation, so the log is read
  here minimally: the question as asked (``query``), the logged hits as they are, and their
  scores (``scores="similarity"`` or ``"distance"``); the hits are scored, located and checked
  only when the run is read by ``read_run``;
* ``spans``: OpenTelemetry / OpenInference span exports (:mod:`workbench.golden.otel`).

Every question gets the one normal form (:func:`~workbench.text.normalize_text`) and keeps
where it came from (``source="real"``, ``file``, ``line``) and what the log said beside it
(``logged``: a CSV row's other columns, a JSONL object's other top-level values, such as
``user``, ``time``, ``session``; a ``qid`` column or field is the candidate's qid). A
:class:`Candidate` is also what the labeller takes
(:class:`~workbench.golden.labelling.LabellingSession`): ``logged`` travels into the saved
item as ``source_*`` fields. Duplicates are merged into the
first occurrence (:func:`dedupe`): exact duplicates share a :func:`question_key` (NFKC,
case, punctuation and whitespace folded); near duplicates have a rapidfuzz ``ratio`` of their
keys >= ``threshold`` *and the same numbers* (``14 days`` and ``30 days`` are two questions).
Each kept candidate lists what was merged into it. :func:`sample_candidates` picks the next
questions to label: ``novelty`` (not already in a golden set, in file order), ``confidence``
(lowest production top score first) or ``random`` (seeded). Bad input raises
:class:`~workbench.io.InputError` naming file, line and field.
"""

from __future__ import annotations

import csv
import io
import json
import math
import random
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from rapidfuzz import fuzz, process

from workbench.golden.golden_set import GoldenSet
from workbench.golden.otel import read_spans
from workbench.io import (
    InputError,
    WorkbenchError,
    atomic_write_text,
    iter_jsonl,
    read_text,
    target_path,
)
from workbench.text import fold, normalize_text

__all__ = ["FORMATS", "NEAR_THRESHOLD", "Candidate", "Candidates", "Merge", "dedupe",
           "import_questions", "question_key", "read_questions", "sample_candidates",
           "save_candidates"]

FORMATS = ("csv", "jsonl", "txt", "run", "spans")
#: Default rapidfuzz ``ratio`` (0-100) of two question keys above which they are one question.
NEAR_THRESHOLD = 90.0
_SUFFIX = {".csv": "csv", ".jsonl": "jsonl", ".txt": "txt", ".json": "spans"}
_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True)
class Candidate:
    """One real question and where it came from. ``line`` is the file's line (for a JSON
    trace export: the 1-based position of the trace); ``merged_from`` the ``file:line`` of
    each duplicate merged into it; ``top_score`` the best logged retrieval score (run logs
    and traces; ``score_kind`` says whether higher is better: ``similarity``, or lower:
    ``distance``); ``hits`` the logged hits as they were written; ``logged`` the log's
    other columns or fields for this question (``user``, ``time``, ``session``, ...)."""

    question: str
    file: str
    line: int
    source: str = "real"
    _: KW_ONLY
    qid: str | None = None
    merged_from: tuple[str, ...] = ()
    top_score: float | None = None
    score_kind: str = "similarity"
    hits: tuple[Mapping[str, Any], ...] = field(default=(), hash=False)
    logged: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}),
                                      hash=False)

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    @property
    def confidence(self) -> float | None:
        """The top score with higher meaning more confident (a distance is negated)."""
        if self.top_score is None:
            return None
        return self.top_score if self.score_kind == "similarity" else -self.top_score

    @classmethod
    def from_json(cls, row: Mapping[str, Any]) -> Candidate:
        """The candidate :meth:`to_json` wrote (a line of ``workbench questions``' output)."""
        top = row.get("top_score")
        return cls(str(row["question"]), str(row.get("file", "")), int(row.get("line", 0)),
                   str(row.get("source") or "real"),
                   qid=None if row.get("qid") is None else str(row["qid"]),
                   merged_from=tuple(row.get("merged_from", ())),
                   top_score=None if top is None else float(top),
                   score_kind=str(row.get("score_kind", "similarity")),
                   hits=tuple(MappingProxyType(dict(h)) for h in row.get("hits", ())),
                   logged=MappingProxyType(dict(row.get("logged", {}))))

    def to_json(self) -> dict[str, Any]:
        row: dict[str, Any] = {"question": self.question, "source": self.source,
                               "file": self.file, "line": self.line}
        if self.qid is not None:
            row["qid"] = self.qid
        if self.merged_from:
            row["merged_from"] = list(self.merged_from)
        if self.top_score is not None:
            row.update(top_score=self.top_score, score_kind=self.score_kind)
        if self.hits:
            row["hits"] = [dict(h) for h in self.hits]
        if self.logged:
            row["logged"] = dict(self.logged)
        return row


@dataclass(frozen=True)
class Merge:
    """One duplicate dropped: ``dropped`` (``file:line``) merged into ``kept``; ``method``
    is ``exact`` (same key) or ``near`` (``score`` = rapidfuzz ratio of the keys)."""

    kept: str
    dropped: str
    question: str
    method: str
    _: KW_ONLY
    score: float


@dataclass(frozen=True)
class Candidates(Sequence[Candidate]):
    """The candidates kept after de-duplication, the merges made, and the blank entries
    skipped (``file:line``)."""

    items: tuple[Candidate, ...]
    merges: tuple[Merge, ...] = ()
    blank: tuple[str, ...] = ()

    def __getitem__(self, i: Any) -> Any:
        return self.items[i]

    def __len__(self) -> int:
        return len(self.items)

    def summary(self) -> str:
        exact = sum(m.method == "exact" for m in self.merges)
        return (f"{len(self.items) + len(self.merges)} questions read, {exact} exact and "
                f"{len(self.merges) - exact} near duplicates merged, {len(self.blank)} blank "
                f"skipped: {len(self.items)} candidates")

    def __repr__(self) -> str:
        return f"Candidates({self.summary()})"


def question_key(question: str) -> str:
    """What duplicates share: NFKC + casefold, punctuation and symbols dropped, whitespace
    runs folded to one space."""
    kept = "".join(" " if unicodedata.category(c)[0] in "PSZ" or c.isspace() else c
                   for c in fold(question))
    return " ".join(kept.split())


def _field(row: Any, name: str, where: str) -> Any:
    value = row
    for part in name.split("."):
        if not isinstance(value, dict) or part not in value:
            keys = sorted(row) if isinstance(row, dict) else []
            raise InputError(where, f"no field {name!r} here (the line has {keys}); pass "
                             "field= naming the question's field", field=name)
        value = value[part]
    return value


def _text(value: Any, where: str, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(where, f"must be text, not {type(value).__name__}", field=name)
    text = " ".join(normalize_text(value).split())
    return text or None


Row = tuple[int, str | None, Mapping[str, Any]]


def _read_csv(path: Path, name: str) -> Iterable[Row]:
    """Rows read strictly: a quote never closed (which would make the rest of the file one
    field) or text after a closing quote is refused at the line where its row starts. Each
    row's other non-empty columns travel with it (``logged``)."""
    reader = csv.DictReader(io.StringIO(read_text(path, "CSV"), newline=""), strict=True)
    start = 1
    try:
        if reader.fieldnames is None or name not in reader.fieldnames:
            raise InputError(f"{path}:1", f"no column {name!r}; the columns are "
                             f"{reader.fieldnames or []}: pass field= naming one", field=name)
        start = 2
        for row in reader:
            logged = {k: v for k, v in row.items()
                      if k not in (name, None) and v not in (None, "")}
            yield start, _text(row.get(name), f"{path}:{start}", name), logged
            start = reader.line_num + 1
    except csv.Error as exc:
        raise InputError(f"{path}:{start}", f"malformed CSV ({exc}): a quote opened in this "
                         "row is never closed, or text follows a closing quote; close the "
                         'quote, or double a quote inside a quoted field ("")') from None


def _read_jsonl(path: Path, name: str) -> Iterable[Row]:
    top = name.split(".", 1)[0]
    for where, row in iter_jsonl(path):
        text = _text(_field(row, name, where), where, name)
        logged = {k: v for k, v in row.items() if k != top and v is not None
                  and isinstance(v, str | int | float | bool)}
        yield int(where.rsplit(":", 1)[1]), text, logged


def _read_txt(path: Path) -> Iterable[Row]:
    lines = read_text(path, "text").split("\n")
    if lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    for n, line in enumerate(lines, start=1):
        yield n, _text(line, f"{path}:{n}", "line"), {}


def _score(value: Any, where: str, n: int) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(where, f"hit {n}: score must be a finite number, not {value!r}",
                         field="hits")
    return float(value)


def _read_run(path: Path, scores: str) -> list[Candidate | str]:
    if scores not in ("similarity", "distance"):
        raise WorkbenchError(f"scores must be 'similarity' or 'distance', not {scores!r}")
    out: list[Candidate | str] = []
    for where, row in iter_jsonl(path, "run log"):
        if not isinstance(row, dict):
            raise InputError(where, 'each line must be an object {"qid", "query", "hits"}')
        qid = _field(row, "qid", where)
        question = _text(_field(row, "query", where), where, "query")
        hits = row.get("hits", [])
        if not isinstance(hits, list) or not all(isinstance(h, dict) for h in hits):
            raise InputError(where, "must be a list of hit objects", field="hits")
        found = [s for n, h in enumerate(hits, 1) if (s := _score(h.get("score"), where, n))
                 is not None]
        top = (max(found) if scores == "similarity" else min(found)) if found else None
        if question is None:
            out.append(where)
            continue
        out.append(Candidate(question, str(path), int(where.rsplit(":", 1)[1]),
                             qid=str(qid), top_score=top, score_kind=scores,
                             hits=tuple(MappingProxyType(dict(h)) for h in hits)))
    return out


def read_questions(path: str | Path, field: str | None = None, *, format: str | None = None,
                   scores: str = "similarity") -> list[Candidate | str]:
    """The questions of one file in order, without de-duplication: a :class:`Candidate`
    per question and the ``file:line`` of each blank entry. ``field`` names the CSV column,
    JSONL field (dotted path) or span attribute holding the question (defaults: ``question``;
    for spans, the OpenInference input); ``format`` is one of :data:`FORMATS` (default: from
    the suffix; ``.json`` is a span export)."""
    path = Path(path)
    fmt = format or _SUFFIX.get(path.suffix.lower())
    if fmt not in FORMATS:
        raise InputError(str(path), f"cannot tell the format from {path.suffix!r}: pass "
                         f"format= one of {', '.join(FORMATS)}")
    if fmt == "run":
        return _read_run(path, scores)
    if fmt == "spans":
        return [Candidate(normalize_text(q.question), str(path), q.position, qid=q.trace_id,
                          top_score=q.top_score, hits=q.hits) if q.question else
                f"{path}:{q.position}" for q in read_spans(path, field)]
    rows = (_read_csv(path, field or "question") if fmt == "csv" else
            _read_jsonl(path, field or "question") if fmt == "jsonl" else _read_txt(path))
    return [_logged(text, str(path), line, logged) if text else f"{path}:{line}"
            for line, text, logged in rows]


def _logged(question: str, file: str, line: int, logged: Mapping[str, Any]) -> Candidate:
    """A CSV or JSONL question with its row's other values; a ``qid`` there is its qid."""
    rest = {k: v for k, v in logged.items() if k != "qid"}
    qid = logged.get("qid")
    return Candidate(question, file, line, qid=None if qid is None else str(qid),
                     logged=MappingProxyType(rest))


def dedupe(candidates: Iterable[Candidate], threshold: float = NEAR_THRESHOLD) -> Candidates:
    """Merge duplicates into their first occurrence (see the module doc); ``threshold`` is
    the rapidfuzz ratio (0-100) for near duplicates, 100 keeps only exact merging."""
    kept: list[Candidate] = []
    keys: list[str] = []
    numbers: list[list[str]] = []
    exact: dict[str, int] = {}
    merged: dict[int, list[str]] = {}
    merges: list[Merge] = []
    for cand in candidates:
        key = question_key(cand.question)
        digits = _DIGITS.findall(key)
        hit = exact.get(key)
        method, score = "exact", 100.0
        if hit is None and threshold < 100:
            for _, s, i in process.extract(key, keys, scorer=fuzz.ratio, score_cutoff=threshold,
                                           limit=None):
                if numbers[i] == digits:
                    hit, method, score = i, "near", float(s)
                    break
        if hit is None:
            exact[key] = len(kept)
            kept.append(cand)
            keys.append(key)
            numbers.append(digits)
            continue
        merged.setdefault(hit, []).extend([cand.where, *cand.merged_from])
        merges.append(Merge(kept[hit].where, cand.where, cand.question, method, score=score))
    items = tuple(replace(c, merged_from=(*c.merged_from, *merged.get(i, ())))
                  for i, c in enumerate(kept))
    return Candidates(items, tuple(merges))


def import_questions(*paths: str | Path, field: str | None = None, format: str | None = None,
                     threshold: float = NEAR_THRESHOLD, scores: str = "similarity"
                     ) -> Candidates:
    """Candidate questions from ``paths`` (read by :func:`read_questions`), normalised and
    de-duplicated across all files (:func:`dedupe`), in file order."""
    read = [q for p in paths for q in read_questions(p, field, format=format, scores=scores)]
    found = dedupe((q for q in read if isinstance(q, Candidate)), threshold)
    return Candidates(found.items, found.merges, tuple(q for q in read if isinstance(q, str)))


def sample_candidates(candidates: Iterable[Candidate], n: int | None = None, *,
                      by: str = "novelty", golden: GoldenSet | Iterable[str] | None = None,
                      seed: int = 0, threshold: float = NEAR_THRESHOLD) -> list[Candidate]:
    """Up to ``n`` candidates to label next (all when ``n`` is None), never one already in
    ``golden`` (a golden set or its questions; same key, or a near duplicate as in
    :func:`dedupe`). ``by``: ``novelty`` (file order), ``confidence`` (the lowest
    :attr:`Candidate.confidence` first, ties in file order; candidates without a score go
    last) or ``random`` (``random.Random(seed)``: the same seed gives the same sample)."""
    if by not in ("novelty", "confidence", "random"):
        raise WorkbenchError(f"by must be 'novelty', 'confidence' or 'random', not {by!r}")
    if n is not None and n < 0:
        raise WorkbenchError(f"n must be >= 0, not {n}")
    known = [question_key(q.question if not isinstance(q, str) else q)
             for q in (golden or ())]
    pool = [c for c in candidates if not _known(question_key(c.question), known, threshold)]
    if by == "confidence":
        pool.sort(key=lambda c: (c.confidence is None, c.confidence or 0.0))
    elif by == "random":
        pool = random.Random(seed).sample(pool, len(pool))
    return pool if n is None else pool[:n]


def _known(key: str, known: Sequence[str], threshold: float) -> bool:
    digits = _DIGITS.findall(key)
    return any(k == key or (_DIGITS.findall(k) == digits and fuzz.ratio(k, key) >= threshold)
               for k in known)


def save_candidates(path: str | Path, candidates: Iterable[Candidate]) -> Path:
    """Write candidates to ``path`` as JSONL (one :meth:`Candidate.to_json` per line),
    atomically."""
    path = target_path(path, "save_candidates")
    text = "".join(json.dumps(c.to_json(), ensure_ascii=False) + "\n" for c in candidates)
    atomic_write_text(path, text)
    return path
