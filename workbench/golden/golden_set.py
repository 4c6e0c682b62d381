"""Golden sets: questions -> where the answer lives.

The seed JSONL shape ``{"qid", "question", "relevant_chunk_ids", "answer_must_mention"}``
loads unchanged. Richer items add ``evidence`` (``[{doc_id, start, end, text}]``, half-open
code-point offsets; ``text`` detects drift after a corpus edit), ``category``, ``source``
(real | owner | synthetic), ``answerable`` and graded ``relevance`` per chunk id.
Relevance for any chunking is derived from evidence spans: a chunk holding a whole span
gets ``full_grade`` (2), one holding part of it ``partial_grade`` (1).
Every problem names file:line and field; saves are atomic (temp file, then rename).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from workbench.corpus import Chunk, Corpus, Span, nfc

SOURCES = ("real", "owner", "synthetic")
_KNOWN_FIELDS = {
    "qid", "question", "relevant_chunk_ids", "evidence", "answer_must_mention",
    "category", "source", "answerable", "relevance",
}


@dataclass(frozen=True)
class Evidence(Span):
    """An evidence span plus the quoted text it had when labelled (for drift checks)."""

    text: str = ""


@dataclass(frozen=True)
class GoldenItem:
    qid: str
    question: str
    relevant_chunk_ids: tuple[str, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    answer_must_mention: tuple[str, ...] = ()
    category: str = "uncategorised"
    source: str = "owner"
    answerable: bool = True
    relevance: Mapping[str, int] = field(default_factory=dict, hash=False)
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False)

    @property
    def doc_ids(self) -> tuple[str, ...]:
        """Documents holding the answer (from evidence, else from chunk ids), in order."""
        ids = [e.doc_id for e in self.evidence] or [c.split("#", 1)[0]
                                                     for c in self.chunk_labels]
        return tuple(dict.fromkeys(ids))

    @property
    def chunk_labels(self) -> tuple[str, ...]:
        """Chunk ids labelled directly (relevant_chunk_ids plus graded relevance keys)."""
        return tuple(dict.fromkeys([*self.relevant_chunk_ids, *self.relevance]))

    def to_json(self) -> dict[str, Any]:
        row: dict[str, Any] = {
            "qid": self.qid,
            "question": self.question,
            "relevant_chunk_ids": list(self.relevant_chunk_ids),
            "answer_must_mention": list(self.answer_must_mention),
        }
        if self.evidence:
            row["evidence"] = [asdict(e) for e in self.evidence]
        row.update(category=self.category, source=self.source, answerable=self.answerable)
        if self.relevance:
            row["relevance"] = dict(self.relevance)
        row.update(self.extra)
        return row


@dataclass(frozen=True)
class Problem:
    """One validation finding, printable as ``file:line: field 'f': message``."""

    where: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: field {self.field!r}: {self.message}"


class GoldenSetError(ValueError):
    """Raised with every problem found (not just the first)."""

    def __init__(self, problems: Sequence[Problem]):
        self.problems = list(problems)
        lines = "\n".join(f"  {p}" for p in self.problems)
        super().__init__(f"{len(self.problems)} problem(s) in the golden set:\n{lines}")


def _str_list(value: Any, name: str, where: str, problems: list[Problem]) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.append(Problem(where, name, "must be a list of strings"))
        return ()
    empty = [i for i, v in enumerate(value) if not v.strip()]
    if empty:
        problems.append(Problem(where, name, f"empty string at position(s) {empty}; remove it"))
    return tuple(nfc(v) for v in value if v.strip())


def _parse_evidence(value: Any, where: str, problems: list[Problem]) -> tuple[Evidence, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        problems.append(Problem(where, "evidence", "must be a list of {doc_id, start, end, text}"))
        return ()
    out = []
    for i, ev in enumerate(value):
        name = f"evidence[{i}]"
        if not isinstance(ev, dict):
            problems.append(Problem(where, name, "must be an object {doc_id, start, end, text}"))
            continue
        doc_id, start, end = ev.get("doc_id"), ev.get("start"), ev.get("end")
        if not isinstance(doc_id, str) or not doc_id:
            problems.append(Problem(where, f"{name}.doc_id", "must be a non-empty string"))
            continue
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in (start, end)):
            problems.append(Problem(where, f"{name}.start/end", "must be integers (code points)"))
            continue
        assert isinstance(start, int) and isinstance(end, int)
        if not 0 <= start < end:
            problems.append(
                Problem(where, name, f"offsets [{start}, {end}) are empty or negative")
            )
            continue
        text = ev.get("text", "")
        if not isinstance(text, str):
            problems.append(Problem(where, f"{name}.text", "must be a string"))
            continue
        out.append(Evidence(nfc(doc_id), start, end, nfc(text)))
    return tuple(out)


def parse_item(row: Any, where: str, problems: list[Problem]) -> GoldenItem | None:
    """Build one item from a decoded JSON row, appending problems instead of raising."""
    if not isinstance(row, dict):
        problems.append(Problem(where, "<line>", "each line must be a JSON object"))
        return None
    before = len(problems)
    qid, question = row.get("qid"), row.get("question")
    if not isinstance(qid, str | int) or isinstance(qid, bool) or not str(qid).strip():
        problems.append(Problem(where, "qid", "missing or empty; give each question a unique id"))
    if not isinstance(question, str) or not question.strip():
        problems.append(Problem(where, "question", "missing or empty; write the question text"))
    relevant = _str_list(row.get("relevant_chunk_ids"), "relevant_chunk_ids", where, problems)
    must = _str_list(row.get("answer_must_mention"), "answer_must_mention", where, problems)
    evidence = _parse_evidence(row.get("evidence"), where, problems)
    answerable = row.get("answerable", True)
    if not isinstance(answerable, bool):
        problems.append(Problem(where, "answerable", "must be true or false"))
        answerable = True
    category = row.get("category", "uncategorised")
    if not isinstance(category, str) or not category.strip():
        problems.append(Problem(where, "category", "must be a non-empty string"))
        category = "uncategorised"
    source = row.get("source", "owner")
    if source not in SOURCES:
        problems.append(Problem(where, "source", f"{source!r} is not one of {SOURCES}"))
    relevance = row.get("relevance") or {}
    if not isinstance(relevance, dict) or not all(
        isinstance(g, int) and not isinstance(g, bool) for g in relevance.values()
    ):
        problems.append(Problem(where, "relevance", "must map chunk id -> integer grade"))
        relevance = {}
    labels_ok = len(problems) == before
    if labels_ok and answerable and not (relevant or evidence
                                         or any(g > 0 for g in relevance.values())):
        problems.append(
            Problem(
                where,
                "relevant_chunk_ids",
                "empty on an answerable item: add the chunk ids or evidence spans that hold "
                "the answer, or set \"answerable\": false",
            )
        )
    if not answerable and (relevant or evidence):
        problems.append(
            Problem(where, "answerable", "false, but relevant chunks/evidence are given; pick one")
        )
    if len(problems) > before:
        return None
    extra = {k: v for k, v in row.items() if k not in _KNOWN_FIELDS}
    return GoldenItem(
        qid=str(qid), question=nfc(str(question)), relevant_chunk_ids=relevant, evidence=evidence,
        answer_must_mention=must, category=nfc(category), source=str(source),
        answerable=answerable,
        relevance=MappingProxyType({nfc(k): v for k, v in relevance.items()}),
        extra=MappingProxyType(extra),
    )


class GoldenSet(Sequence[GoldenItem]):
    """An ordered, qid-unique list of golden items, with where each came from."""

    def __init__(self, items: Iterable[GoldenItem], path: str | Path | None = None):
        self.items = list(items)
        self.path = Path(path) if path else None
        self._lines: dict[str, int] = {}
        dupes = [q for q, n in Counter(i.qid for i in self.items).items() if n > 1]
        if dupes:
            raise GoldenSetError([Problem(self._where(q), "qid", "duplicate qid") for q in dupes])

    def __getitem__(self, i: Any) -> Any:
        return self.items[i]

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[GoldenItem]:
        return iter(self.items)

    def __repr__(self) -> str:
        cats = Counter(i.category for i in self.items)
        return f"GoldenSet({len(self)} items, {len(cats)} categories, from {self.path or 'memory'})"

    def _where(self, qid: str) -> str:
        line = self._lines.get(qid)
        return f"{self.path or '<golden>'}:{line}" if line else f"{self.path or '<golden>'} [{qid}]"

    def get(self, qid: str) -> GoldenItem:
        for item in self.items:
            if item.qid == qid:
                return item
        raise KeyError(f"qid {qid!r} is not in the golden set")

    @property
    def answerable(self) -> list[GoldenItem]:
        return [i for i in self.items if i.answerable]

    @property
    def content_hash(self) -> str:
        """sha256 of the canonical JSON of all items (detects an edited golden set)."""
        blob = "\n".join(json.dumps(i.to_json(), sort_keys=True, ensure_ascii=False) for i in self)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    # ----- loading and saving -----------------------------------------------------------

    @classmethod
    def load(cls, path: str | Path) -> GoldenSet:
        """Load JSONL; raises GoldenSetError listing every malformed line and field."""
        path = Path(path)
        if not path.exists():
            raise ValueError(f"{path}: golden set file not found")
        problems: list[Problem] = []
        items: list[GoldenItem] = []
        lines: dict[str, int] = {}
        with path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                where = f"{path}:{lineno}"
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    problems.append(Problem(where, "<line>", f"malformed JSON ({exc.msg}, "
                                            f"column {exc.colno}); fix or delete the line"))
                    continue
                item = parse_item(row, where, problems)
                if item is None:
                    continue
                if item.qid in lines:
                    problems.append(Problem(where, "qid", f"duplicate qid {item.qid!r} (first on "
                                                          f"line {lines[item.qid]}); rename one"))
                    continue
                lines[item.qid] = lineno
                items.append(item)
        if problems:
            raise GoldenSetError(problems)
        gs = cls(items, path)
        gs._lines = lines
        return gs

    def save(self, path: str | Path | None = None) -> Path:
        """Write JSONL atomically (temp file in the same folder, then rename)."""
        target = Path(path or self.path or "golden.jsonl")
        text = "".join(json.dumps(i.to_json(), ensure_ascii=False) + "\n" for i in self.items)
        atomic_write_text(target, text)
        return target

    # ----- validation against a corpus --------------------------------------------------

    def problems(self, corpus: Corpus | None = None,
                 chunks: Sequence[Chunk] | None = None) -> list[Problem]:
        """Every reference problem: unknown doc/chunk ids, offsets outside a document,
        evidence whose quoted text no longer matches the document (label drift)."""
        found: list[Problem] = []
        chunk_ids = {c.id for c in chunks} if chunks is not None else None
        for item in self.items:
            where = self._where(item.qid)
            for cid in item.chunk_labels:
                if chunk_ids is not None:
                    if cid not in chunk_ids:
                        found.append(Problem(where, "relevant_chunk_ids",
                                             f"chunk id {cid!r} is not in the chunked corpus"))
                elif corpus is not None and cid.split("#", 1)[0] not in corpus:
                    found.append(Problem(where, "relevant_chunk_ids",
                                         f"chunk id {cid!r}: document {cid.split('#', 1)[0]!r} "
                                         "is not in the corpus"))
            if corpus is None:
                continue
            for i, ev in enumerate(item.evidence):
                name = f"evidence[{i}]"
                doc = corpus.get(ev.doc_id)
                if doc is None:
                    found.append(Problem(where, f"{name}.doc_id",
                                         f"document {ev.doc_id!r} is not in the corpus"))
                elif ev.end > len(doc.text):
                    found.append(Problem(where, name, f"offsets [{ev.start}, {ev.end}) lie outside "
                                                      f"document {ev.doc_id!r} ({len(doc.text)} "
                                                      "characters); re-anchor the quote"))
                elif ev.text and doc.text[ev.start:ev.end] != ev.text:
                    now = doc.text[ev.start:ev.end]
                    moved = doc.text.find(ev.text)
                    hint = (f"the quote now starts at {moved}: update the offsets" if moved >= 0
                            else "the quote is gone from the document: relabel this item")
                    found.append(Problem(where, f"{name}.text",
                                         f"label drift: document {ev.doc_id!r} now reads "
                                         f"{now[:50]!r} there, not {ev.text[:50]!r}; {hint}"))
        return found

    def validate(self, corpus: Corpus | None = None,
                 chunks: Sequence[Chunk] | None = None) -> GoldenSet:
        """Raise GoldenSetError with every problem; return self when clean."""
        found = self.problems(corpus, chunks)
        if found:
            raise GoldenSetError(found)
        return self

    # ----- relevance ----------------------------------------------------------------------

    def qrels(self, chunks: Sequence[Chunk] | None = None, full_grade: int = 2,
              partial_grade: int = 1) -> dict[str, dict[str, int]]:
        """qid -> {chunk_id: grade} for answerable items.

        Items with evidence are graded from spans against ``chunks`` (see module doc);
        items with only chunk-id labels use ``relevance`` grades, else 1 per listed id.
        """
        by_doc: dict[str, list[Chunk]] = {}
        for c in chunks or ():
            by_doc.setdefault(c.doc_id, []).append(c)
        out: dict[str, dict[str, int]] = {}
        for item in self.answerable:
            if item.evidence and chunks is not None:
                out[item.qid] = span_grades(item.evidence, by_doc, full_grade, partial_grade)
            else:
                grades = {cid: 1 for cid in item.relevant_chunk_ids}
                grades.update(item.relevance)
                out[item.qid] = grades
        return out

    def doc_qrels(self) -> dict[str, dict[str, int]]:
        """qid -> {doc_id: 1}: document-level judgments (robust to any re-chunking)."""
        return {i.qid: dict.fromkeys(i.doc_ids, 1) for i in self.answerable}

    def anchor(self, chunks: Sequence[Chunk]) -> GoldenSet:
        """Turn chunk-id labels into evidence spans once, from the chunking they were made
        on; from then on any chunking is scored from the spans."""
        by_id = {c.id: c for c in chunks}
        missing = [(i.qid, c) for i in self.items for c in i.chunk_labels if c not in by_id]
        if missing:
            raise GoldenSetError([Problem(self._where(q), "relevant_chunk_ids",
                                          f"chunk id {c!r} is not in the given chunks")
                                  for q, c in missing])
        items = []
        for item in self.items:
            if item.evidence or not item.chunk_labels:
                items.append(item)
                continue
            graded = [c for c in item.chunk_labels if item.relevance.get(c, 1) > 0]
            ev = tuple(Evidence(by_id[c].doc_id, by_id[c].start, by_id[c].end, by_id[c].text)
                       for c in graded)
            items.append(replace(item, evidence=ev))
        anchored = GoldenSet(items, self.path)
        anchored._lines = dict(self._lines)
        return anchored


def span_grades(spans: Iterable[Span], chunks_by_doc: Mapping[str, Sequence[Chunk]],
                full_grade: int = 2, partial_grade: int = 1) -> dict[str, int]:
    """Grade chunks against evidence spans: whole span inside -> full, part -> partial.
    A chunk's grade is its best over all spans."""
    grades: dict[str, int] = {}
    for span in spans:
        for c in chunks_by_doc.get(span.doc_id, ()):
            shared = span.overlap(c.start, c.end)
            if shared == 0:
                continue
            grade = full_grade if shared == len(span) else partial_grade
            if grade > 0:
                grades[c.id] = max(grades.get(c.id, 0), grade)
    return grades


def _file_mode(path: Path) -> int:
    """The mode a plain write would give: the existing file's, else 0o666 minus the umask."""
    if path.exists():
        return path.stat().st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a crash leaves either the old file or the new one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, _file_mode(path))
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def add_case(path: str | Path, item: GoldenItem | Mapping[str, Any],
             corpus: Corpus | None = None) -> GoldenSet:
    """Append one case (e.g. from a bug report) to the golden set at ``path``, atomically.
    Refuses a duplicate qid and, given ``corpus``, evidence that does not match it."""
    path = Path(path)
    current = GoldenSet.load(path) if path.exists() else GoldenSet([], path)
    if not isinstance(item, GoldenItem):
        problems: list[Problem] = []
        parsed = parse_item(dict(item), f"{path} (new case)", problems)
        if parsed is None:
            raise GoldenSetError(problems)
        item = parsed
    if any(i.qid == item.qid for i in current):
        raise ValueError(f"{path}: qid {item.qid!r} already exists; choose a new qid")
    updated = GoldenSet([*current.items, item], path)
    updated._lines = {**current._lines, item.qid: len(current) + 1}
    if corpus is not None:
        updated.validate(corpus)
    updated.save(path)
    return updated
