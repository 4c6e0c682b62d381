"""Golden sets: an ordered, qid-unique list of golden items with where each came from.

:class:`GoldenSet` loads and saves JSONL (atomically: temporary file, then rename), validates
itself against a corpus (unknown ids, offsets outside a document, label drift), gives the
chunk-id judgments of chunk-labelled items (``qrels``) and anchors chunk-id labels to
evidence spans once (``anchor``): from then on relevance comes from the spans under any
chunking (:class:`workbench.metrics.Relevance`). :func:`add_case` appends one case (e.g.
from a bug report). Every problem names file:line and field.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from workbench.corpus import Chunk, Corpus
from workbench.golden.items import Evidence, GoldenItem, GoldenSetError, Problem, parse_item
from workbench.io import atomic_write_text

__all__ = ["GoldenSet", "add_case"]


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

    def qrels(self) -> dict[str, dict[str, int]]:
        """qid -> {chunk_id: grade} for the answerable items labelled with chunk ids (graded
        ``relevance``, else 1 per listed id): trec_eval-style judgments, e.g. to write a
        TREC qrels file. Items with evidence spans have no chunk grades: their relevance
        comes from the spans under any chunking (:class:`workbench.metrics.Relevance`)."""
        out: dict[str, dict[str, int]] = {}
        for item in self.answerable:
            if item.evidence:
                continue
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
