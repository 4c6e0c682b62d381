"""Labelling: a selection in a document becomes a validated golden item, saved safely.

A selection is ``(doc_id, start, end)`` in half-open code-point offsets into
``Document.text``. :func:`make_item` turns one or more selections plus must-mention strings,
a category and the answerable flag into a :class:`GoldenItem` whose evidence quotes the
document, refusing (``InputError``) offsets out of range, an unknown document and a
must-mention string that is not in the selected text. :func:`span_warnings` says what a
labeller should see before saving: a superseded document (:func:`is_superseded`) and the
same sentence elsewhere in the corpus with a different number. The labeller reads through a
:class:`~workbench.corpus.reader.Reader` (``user_groups``): a selection in a document they
may not read is refused, and other documents are compared only when they may read them.
:class:`LabellingSession` appends through :func:`add_case` (locked, re-read under the
lock), records skips in a sidecar ``<golden>.skips.jsonl`` and reloads both from disk, so
two labellers on one file or a kernel restart lose nothing; ``undo`` removes exactly the
line it wrote, under the lock.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.corpus import Corpus, is_superseded
from workbench.corpus.reader import Reader, require_reader
from workbench.golden.golden_set import GoldenSet, add_case
from workbench.golden.items import Evidence, GoldenItem, can_read_item
from workbench.io import InputError, atomic_write_bytes, atomic_write_text, iter_jsonl, locked

__all__ = ["Candidate", "LabellingSession", "make_item", "span_warnings",
           "suggest_must_mention"]

Selection = tuple[str, int, int]

_NUMBER = r"\d+(?:[.,]\d+)*"
_SUGGEST = re.compile(
    r"(?:[$€£¥₫]\s?" + _NUMBER + r")"                       # money with a sign
    r"|(?:" + _NUMBER + r"\s?(?:%|percent|per cent|"
    r"(?:business |working |calendar )?(?:days?|weeks?|months?|years?|hours?|minutes?)"
    r"|USD|EUR|GBP|VND|đồng|ngày|tháng|năm|giờ|天|个月|月|年|小时|元|美元))"  # durations, money
    r"|(?:\b[A-Z]{1,6}-?\d[\w-]*)"                          # codes: HR-12, ISO9001, F-104
    r"|(?:\b(?:[Ff]orm|[Pp]olicy|[Ss]ection)\s+[A-Z0-9][\w.-]*)"  # named forms
    r"|(?:" + _NUMBER + r")",                               # bare numbers last
)
_WORD = re.compile(r"\w+")


def suggest_must_mention(text: str) -> list[str]:
    """Strings worth requiring in an answer, in order of appearance, without repeats: money,
    durations and percentages (with their unit), codes (``HR-12``), named forms
    (``Form W-4``), then bare numbers not already inside a suggestion."""
    out: list[str] = []
    for m in _SUGGEST.finditer(text):
        s = m.group(0).strip()
        if s and s not in out and not any(s in o for o in out):
            out.append(s)
    return out


def _selection(corpus: Corpus, sel: Selection, where: str, reader: Reader) -> Evidence:
    doc_id, start, end = sel
    doc = corpus.get(doc_id)
    if doc is None:
        raise InputError(where, f"document {doc_id!r} is not in the corpus", field="doc_id")
    if not reader.can_read(doc):
        raise InputError(where, f"document {doc_id!r} is not readable by this labeller's "
                         f"groups {sorted(reader.groups or ())}; label from a document they "
                         "may read", field="doc_id")
    if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(doc.text)):
        raise InputError(where, f"selection [{start}, {end}) is not a non-empty range inside "
                         f"document {doc_id!r} ({len(doc.text)} characters); select again",
                         field="evidence")
    return Evidence(doc_id, start, end, doc.text[start:end])


def make_item(corpus: Corpus, qid: str, question: str, spans: Sequence[Selection] = (),
              must_mention: Iterable[str] = (), category: str = "uncategorised",
              answerable: bool = True, source: str = "real",
              extra: Mapping[str, Any] | None = None, *,
              user_groups: Reader | Iterable[str] | str | None = None) -> GoldenItem:
    """A golden item from selections, checked against ``corpus``: each span lies inside its
    document, in one the labeller (``user_groups``:
    :func:`~workbench.corpus.reader.require_reader`) may read, and quotes it exactly; each
    must-mention string occurs in some span's text. An answerable item needs at least one
    span; an unanswerable one carries none."""
    where = f"question {qid!r}"
    reader = require_reader("make_item", user_groups, documents=corpus)
    if not str(question).strip():
        raise InputError(where, "the question is empty", field="question")
    evidence = tuple(_selection(corpus, s, where, reader) for s in spans)
    if answerable and not evidence:
        raise InputError(where, "select the answer in a document, or mark it unanswerable",
                         field="evidence")
    if not answerable and evidence:
        raise InputError(where, "an unanswerable question carries no evidence; clear the "
                         "selection or mark it answerable", field="answerable")
    mentions = tuple(dict.fromkeys(m.strip() for m in must_mention if m.strip()))
    for m in mentions:
        if not any(m in ev.text for ev in evidence):
            raise InputError(where, f"must-mention {m!r} is not in the selected text; "
                             "select a span that contains it or drop it",
                             field="answer_must_mention")
    return GoldenItem(qid=qid, question=question, evidence=evidence,
                      answer_must_mention=mentions, category=category.strip() or "uncategorised",
                      source=source, answerable=answerable, extra=dict(extra or {}))


def _frames(text: str) -> list[tuple[int, str, tuple[str, ...], tuple[str, ...]]]:
    """Each number in ``text``: its offset, itself, and the three words before and after."""
    out = []
    for m in re.finditer(_NUMBER, text):
        before = tuple(w.casefold() for w in _WORD.findall(text[max(0, m.start() - 80):m.start()]))
        after = tuple(w.casefold() for w in _WORD.findall(text[m.end():m.end() + 80]))
        out.append((m.start(), m.group(0), before[-3:], after[:3]))
    return out


def _same_frame(a: tuple[tuple[str, ...], tuple[str, ...]],
                b: tuple[tuple[str, ...], tuple[str, ...]]) -> bool:
    """Same sentence frame: three equal words on one side of the number and the nearest two
    on the other (e.g. ``must be submitted within N days of``)."""
    (b1, a1), (b2, a2) = a, b
    return bool((len(b1) == 3 and b1 == b2 and len(a1) >= 2 and a1[:2] == a2[:2])
                or (len(a1) == 3 and a1 == a2 and len(b1) >= 2 and b1[-2:] == b2[-2:]))


def _conflicts(corpus: Corpus, ev: Evidence, reader: Reader) -> list[str]:
    mine = [f for f in _frames(corpus[ev.doc_id].text) if ev.start <= f[0] < ev.end]
    if not mine:
        return []
    out = []
    for doc in reader.documents(corpus).values():
        for at, number, before, after in _frames(doc.text):
            for _, n, b, a in mine:
                if number != n and _same_frame((b, a), (before, after)):
                    out.append(f"document {doc.id!r} at {at} says {number!r} where the "
                               f"selection says {n!r} (same words around it): one fact "
                               "stated twice with two numbers?")
    return out


def span_warnings(corpus: Corpus, spans: Sequence[Selection],
                  user_groups: Reader | Iterable[str] | str | None = None) -> list[str]:
    """What to check before saving these selections: a superseded document and, for each
    number in a selection, another number elsewhere in the same sentence frame
    (:func:`_same_frame`), among the documents the labeller (``user_groups``:
    :func:`~workbench.corpus.reader.require_reader`) may read; a selection in a document they
    may not read is refused (:class:`~workbench.io.InputError`), never a warning."""
    reader = require_reader("span_warnings", user_groups, documents=corpus)
    out: list[str] = []
    for sel in spans:
        ev = _selection(corpus, sel, "selection", reader)
        doc = corpus[ev.doc_id]
        if is_superseded(doc):
            newer = doc.metadata.get("superseded_by")
            out.append(f"document {doc.id!r} is superseded" +
                       (f" by {newer!r}: label the current version" if newer else ""))
        out.extend(_conflicts(corpus, ev, reader))
    return out


@dataclass(frozen=True)
class Candidate:
    """A question to label: ``qid``, ``question`` and where it came from (``source``)."""

    qid: str
    question: str
    source: str = "real"


def _candidates(questions: Sequence[str | Mapping[str, Any] | Candidate]) -> list[Candidate]:
    out = []
    for i, q in enumerate(questions, start=1):
        if isinstance(q, Candidate):
            out.append(q)
        elif isinstance(q, str):
            out.append(Candidate(f"q{i:03d}", q))
        else:
            out.append(Candidate(str(q.get("qid") or f"q{i:03d}"), str(q["question"]),
                                 str(q.get("source") or "real")))
    seen = [c.qid for c in out]
    dup = next((q for q in seen if seen.count(q) > 1), None)
    if dup is not None:
        raise InputError("questions", f"qid {dup!r} is given twice; give each question its own")
    return out


class LabellingSession:
    """Label ``questions`` into the golden set at ``path`` (created empty if missing).
    State lives on disk: ``labelled`` and ``skipped`` are re-read by :meth:`reload` (and
    before each write), so another labeller's saves and a restart are never lost."""

    def __init__(self, path: str | Path, corpus: Corpus,
                 questions: Sequence[str | Mapping[str, Any] | Candidate],
                 user_groups: Reader | Iterable[str] | str | None = None):
        self.path, self.corpus = Path(path), corpus
        self.reader = require_reader("LabellingSession", user_groups, documents=corpus)
        self.candidates = _candidates(questions)
        self.skips_path = self.path.with_name(self.path.name + ".skips.jsonl")
        if not self.path.exists():
            with locked(self.path):
                if not self.path.exists():
                    atomic_write_text(self.path, "", make_parents=True)
        self._last: tuple[str, bytes] | None = None
        self.labelled: dict[str, GoldenItem] = {}
        self.skipped: set[str] = set()
        self.reload()

    def reload(self) -> None:
        """Re-read the golden set and the skips sidecar."""
        self.labelled = {i.qid: i for i in GoldenSet.load(self.path)}
        self.skipped = set()
        if self.skips_path.exists():
            for where, row in iter_jsonl(self.skips_path, "skips"):
                if not isinstance(row, dict) or not isinstance(row.get("qid"), str):
                    raise InputError(where, "each line is {\"qid\": ...}; fix or delete it",
                                     field="qid")
                self.skipped.add(row["qid"])

    @property
    def categories(self) -> list[str]:
        """Categories already used in the golden set, sorted."""
        return sorted({i.category for i in self.labelled.values()})

    @property
    def pending(self) -> list[Candidate]:
        """Candidates neither labelled nor skipped, in order."""
        return [c for c in self.candidates
                if c.qid not in self.labelled and c.qid not in self.skipped]

    @property
    def progress(self) -> str:
        done = sum(c.qid in self.labelled for c in self.candidates)
        skipped = sum(c.qid in self.skipped and c.qid not in self.labelled
                      for c in self.candidates)
        return f"{done} of {len(self.candidates)} labelled, {skipped} skipped"

    def candidate(self, qid: str) -> Candidate:
        for c in self.candidates:
            if c.qid == qid:
                return c
        raise InputError("questions", f"no candidate question {qid!r}", field="qid")

    def save(self, qid: str, spans: Sequence[Selection] = (), must_mention: Iterable[str] = (),
             category: str = "uncategorised", answerable: bool = True) -> GoldenItem:
        """Validate and append one item (atomic, locked, re-read under the lock)."""
        c = self.candidate(qid)
        item = make_item(self.corpus, c.qid, c.question, spans, must_mention, category,
                         answerable, c.source, user_groups=self.reader)
        updated = add_case(self.path, item, self.corpus)
        line = json.dumps(item.to_json(), ensure_ascii=False) + "\n"
        self._last = (qid, line.encode("utf-8"))
        self.labelled = {i.qid: i for i in updated}
        return item

    def skip(self, qid: str) -> None:
        """Record a skip in the sidecar file (durable, locked)."""
        self.candidate(qid)
        with locked(self.skips_path):
            old = self.skips_path.read_bytes() if self.skips_path.exists() else b""
            row = json.dumps({"qid": qid}, ensure_ascii=False) + "\n"
            atomic_write_bytes(self.skips_path, old + row.encode("utf-8"))
        self.reload()

    def undo(self) -> str:
        """Remove the line the last :meth:`save` of this session wrote, byte for byte, under
        the lock; return its qid. Refuses when there is nothing to undo or the line changed."""
        if self._last is None:
            raise InputError(str(self.path), "nothing to undo in this session")
        qid, line = self._last
        with locked(self.path):
            raw = self.path.read_bytes()
            at = raw.rfind(line)
            if at < 0 or (at > 0 and raw[at - 1:at] != b"\n"):
                raise InputError(str(self.path), f"the line saved for {qid!r} is no longer in "
                                 "the file (edited elsewhere); nothing undone")
            atomic_write_bytes(self.path, raw[:at] + raw[at + len(line):])
        self._last = None
        self.reload()
        return qid

    def warnings(self, spans: Sequence[Selection]) -> list[str]:
        return span_warnings(self.corpus, spans, self.reader)

    def can_see(self, item: GoldenItem) -> bool:
        """Whether this labeller may see ``item``'s question and quotes: its evidence lies in
        documents they may read (:func:`~workbench.golden.items.can_read_item`)."""
        return can_read_item(self.reader.groups, item, None, self.corpus)
