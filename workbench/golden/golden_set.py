"""Golden sets: an ordered, qid-unique list of golden items with where each came from.

:class:`GoldenSet` loads and saves JSONL (atomically and locked: :mod:`workbench.io`), validates
itself against a corpus (unknown ids, offsets outside a document, label drift), gives the
chunk-id judgments of chunk-labelled items (``qrels``) and anchors chunk-id labels to
evidence spans once (``anchor``): from then on relevance comes from the spans under any
chunking (:class:`workbench.metrics.Relevance`). :func:`add_case` appends one case (e.g.
from a bug report) without touching the other lines' bytes, re-reading the file under its
lock. Every problem names file:line and field.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, overload

from workbench.corpus import Chunk, Corpus
from workbench.golden.items import Evidence, GoldenItem, GoldenSetError, Problem, parse_item
from workbench.io import (
    FileStamp,
    InputError,
    StaleFileError,
    WorkbenchError,
    atomic_write_bytes,
    atomic_write_text,
    decode_json_line,
    encode_text,
    locked,
    read_text,
    read_text_stamped,
    target_path,
    write_unless_changed,
)

__all__ = ["GoldenSet", "add_case"]


class GoldenSet(Sequence[GoldenItem]):
    """An ordered, qid-unique, immutable sequence of golden items, with where each came
    from: ``path`` (the file, if any) and ``lines`` (qid -> line in it, for messages)."""

    def __init__(self, items: Iterable[GoldenItem], path: str | Path | None = None,
                 lines: Mapping[str, int] | None = None):
        self._items = tuple(items)
        self._path = Path(path) if path else None
        self._lines = dict(lines or {})
        self._stamp: FileStamp | None = None  # what ``path`` held when loaded (or saved)
        dupes = [q for q, n in Counter(i.qid for i in self._items).items() if n > 1]
        if dupes:
            raise GoldenSetError([Problem(self._where(q), "qid", "duplicate qid") for q in dupes])

    @property
    def items(self) -> tuple[GoldenItem, ...]:
        return self._items

    @property
    def path(self) -> Path | None:
        return self._path

    @property
    def lines(self) -> Mapping[str, int]:
        """qid -> the line of ``path`` it was read from (empty for a set built in memory)."""
        return MappingProxyType(self._lines)

    @overload
    def __getitem__(self, i: int) -> GoldenItem: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[GoldenItem, ...]: ...

    def __getitem__(self, i: int | slice) -> GoldenItem | tuple[GoldenItem, ...]:
        return self._items[i]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[GoldenItem]:
        return iter(self._items)

    def __repr__(self) -> str:
        cats = Counter(i.category for i in self._items)
        return f"GoldenSet({len(self)} items, {len(cats)} categories, from {self.path or 'memory'})"

    def _where(self, qid: str) -> str:
        line = self._lines.get(qid)
        return f"{self.path or '<golden>'}:{line}" if line else f"{self.path or '<golden>'} [{qid}]"

    def get(self, qid: str) -> GoldenItem:
        for item in self._items:
            if item.qid == qid:
                return item
        raise KeyError(f"qid {qid!r} is not in the golden set")

    @property
    def answerable(self) -> list[GoldenItem]:
        return [i for i in self._items if i.answerable]

    @property
    def content_hash(self) -> str:
        """sha256 of the canonical JSON of all items (detects an edited golden set)."""
        blob = "\n".join(json.dumps(i.to_json(), sort_keys=True, ensure_ascii=False) for i in self)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    # ----- loading and saving -----------------------------------------------------------

    @classmethod
    def load(cls, path: str | Path) -> GoldenSet:
        """Load JSONL; raises GoldenSetError listing every malformed line and field (bad JSON,
        a key given twice, a lone surrogate, a duplicate qid, ...); a missing file, a folder
        or bytes that are not UTF-8 raise :class:`~workbench.io.InputError`."""
        path = Path(path)
        text, stamp = read_text_stamped(path, "golden set")
        loaded = cls._parse(text, path)
        loaded._stamp = stamp
        return loaded

    @classmethod
    def _parse(cls, text: str, path: Path) -> GoldenSet:
        problems: list[Problem] = []
        items: list[GoldenItem] = []
        lines: dict[str, int] = {}
        for lineno, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                row = decode_json_line(line, where)
            except InputError as exc:
                problems.append(Problem(where, exc.field or "<line>", exc.reason))
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
        return cls(items, path, lines)

    def save(self, path: str | Path | None = None) -> Path:
        """Write JSONL atomically and locked (temp file in the same folder, then rename);
        ``path`` defaults to the file the set was loaded from. The folder must exist. A save
        to the file the set was loaded from (or last saved to) never overwrites a newer
        file (:func:`~workbench.io.write_unless_changed`): cases appended since (``add_case``
        by another process) are kept after this set's, and any other change, or an
        appended qid this set also holds, is refused with
        :class:`~workbench.io.StaleFileError`."""
        target = Path(path) if path is not None else self.path
        if target is None:
            raise WorkbenchError("GoldenSet.save(): give a path; this golden set was not loaded "
                             "from a file")
        text = "".join(json.dumps(i.to_json(), ensure_ascii=False) + "\n" for i in self._items)
        if self._stamp is not None and self.path is not None and (
                target.resolve() == self.path.resolve()):
            write_unless_changed(target, encode_text(text, target), self._stamp,
                                 what="golden set", merge_appended=self._merge(text, target))
        else:
            atomic_write_text(target, text)
        if self.path is not None and target.resolve() == self.path.resolve():
            self._stamp = FileStamp.of(encode_text(text, target))
        return target

    def _merge(self, text: str, target: Path) -> Callable[[bytes], bytes]:
        """The merge of the cases appended to ``target`` since it was read: after ours."""
        def merge(appended: bytes) -> bytes:
            try:
                added = GoldenSet._parse(appended.decode("utf-8"), target)
            except (UnicodeDecodeError, GoldenSetError) as exc:
                raise StaleFileError(str(target), f"lines appended since the golden set was "
                                     f"loaded do not parse ({exc}); nothing written: load it "
                                     "again and redo your edits") from None
            clash = sorted({i.qid for i in added} & {i.qid for i in self._items})
            if clash:
                raise StaleFileError(str(target), f"cases appended since the golden set was "
                                     f"loaded reuse qids this set holds ({', '.join(clash)}): "
                                     "nothing written; load it again and redo your edits")
            return encode_text(text + "".join(json.dumps(i.to_json(), ensure_ascii=False) + "\n"
                                           for i in added), target)
        return merge

    # ----- validation against a corpus --------------------------------------------------

    def problems(self, corpus: Corpus | None = None,
                 chunks: Sequence[Chunk] | None = None) -> list[Problem]:
        """Every reference problem: unknown doc/chunk ids, offsets outside a document,
        evidence whose quoted text no longer matches the document (label drift). Chunk-id
        labels are checked only against ``chunks`` (the chunking they were made on): a chunk
        id says nothing reliable about its document without its chunk."""
        found: list[Problem] = []
        by_id = {c.id: c for c in chunks or ()}
        for item in self._items:
            where = self._where(item.qid)
            for cid in item.chunk_labels if chunks is not None else ():
                chunk = by_id.get(cid)
                if chunk is None:
                    found.append(Problem(where, "relevant_chunk_ids",
                                         f"chunk id {cid!r} is not in the chunked corpus"))
                elif corpus is not None and chunk.doc_id not in corpus:
                    found.append(Problem(where, "relevant_chunk_ids",
                                         f"chunk id {cid!r}: document {chunk.doc_id!r} is not "
                                         "in the corpus"))
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
            grades.update({c: g for c, g in item.relevance.items() if c in item.chunk_labels})
            out[item.qid] = grades
        return out

    def doc_qrels(self, chunks: Sequence[Chunk] | None = None) -> dict[str, dict[str, int]]:
        """qid -> {doc_id: 1}: which documents hold each answer (robust to any re-chunking).
        Items labelled by chunk id take their documents from ``chunks``; the grades of the
        documents are :meth:`GoldenItem.doc_grades`, as document-level scoring reads them."""
        by_id = {c.id: c for c in chunks or ()}
        return {i.qid: dict.fromkeys(i.doc_grades(by_id), 1) for i in self.answerable}

    def anchor(self, chunks: Sequence[Chunk]) -> GoldenSet:
        """Turn chunk-id labels into evidence spans once, from the chunking they were made
        on; from then on any chunking is scored from the spans."""
        by_id = {c.id: c for c in chunks}
        missing = [(i.qid, c) for i in self._items for c in i.chunk_labels if c not in by_id]
        if missing:
            raise GoldenSetError([Problem(self._where(q), "relevant_chunk_ids",
                                          f"chunk id {c!r} is not in the given chunks")
                                  for q, c in missing])
        items = []
        for item in self._items:
            if item.evidence or not item.chunk_labels:
                items.append(item)
                continue
            graded = [c for c in item.chunk_labels if item.relevance.get(c, 1) > 0]
            ev = tuple(Evidence(by_id[c].doc_id, by_id[c].start, by_id[c].end, by_id[c].text)
                       for c in graded)
            items.append(replace(item, evidence=ev))
        return GoldenSet(items, self.path, self._lines)


def add_case(path: str | Path, item: GoldenItem | Mapping[str, Any],
             corpus: Corpus | None = None) -> GoldenSet:
    """Append one case (e.g. from a bug report) to the existing golden set at ``path`` and
    return the updated set. The other lines keep their bytes; the write is atomic and holds
    the file's lock, and the file is re-read under the lock, so concurrent calls lose no
    case. Refuses a missing file (a typo'd path), a duplicate qid, a case that does not
    parse and, given ``corpus``, evidence that does not match it."""
    path = target_path(path, "add_case")
    if path.is_dir():
        raise InputError(str(path), "is a folder; give the golden set's .jsonl file")
    if not path.exists():
        raise InputError(str(path), "golden set file not found; add_case appends to an "
                         "existing file (check the path, or start one with "
                         "GoldenSet([item]).save(path))")
    row = item.to_json() if isinstance(item, GoldenItem) else dict(item)
    with locked(path):
        raw = path.read_bytes()
        current = GoldenSet._parse(read_text(path, "golden set"), path)
        line = raw.count(b"\n") + (0 if not raw or raw.endswith(b"\n") else 1) + 1
        where = f"{path}:{line} (new case)"
        problems: list[Problem] = []
        parsed = parse_item(row, where, problems)
        if parsed is None:
            raise GoldenSetError(problems)
        if parsed.qid in current.lines:
            raise InputError(where, f"{parsed.qid!r} already exists (line "
                             f"{current.lines[parsed.qid]}); choose a new qid", field="qid")
        if corpus is not None:
            GoldenSet([parsed], path, {parsed.qid: line}).validate(corpus)
        sep = b"" if not raw or raw.endswith(b"\n") else b"\n"
        text = json.dumps(parsed.to_json(), ensure_ascii=False) + "\n"
        data = raw + sep + text.encode("utf-8")
        atomic_write_bytes(path, data, lock=False)
    updated = GoldenSet([*current.items, parsed], path, {**current.lines, parsed.qid: line})
    updated._stamp = FileStamp.of(data)
    return updated
