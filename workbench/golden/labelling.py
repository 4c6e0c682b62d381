"""Labelling: a selection in a document becomes a validated golden item, saved safely.

A selection is ``(doc_id, start, end)`` in half-open code-point offsets into
``Document.text``. :func:`make_item` turns one or more selections plus must-mention strings,
a category and the answerable flag into a :class:`GoldenItem` whose evidence quotes the
document, refusing (``InputError``) offsets out of range, an unknown document, a
must-mention string that is not in the selected text and a category on an unanswerable item.
:func:`suggest_must_mention` offers values whole with their units in every script.
:func:`span_warnings` says what a labeller should see before saving: a superseded document
(:func:`is_superseded`) and another document stating a different value of the same thing
(:class:`Fact`, :func:`same_thing`: same unit, same subject words around it). The labeller
reads through a :class:`~workbench.corpus.reader.Reader` (``user_groups``): a selection in
a document they may not read is refused, and other documents are compared only when they may
read them. :class:`LabellingSession`
takes the one :class:`~workbench.golden.candidates.Candidate` (or strings and dicts made
into one), appends through :func:`add_case` (locked, re-read under the lock) with where the
question came from and how it was labelled, records skips in a sidecar
``<golden>.skips.jsonl`` and reloads both from disk, so two labellers on one file or a
kernel restart lose nothing; ``undo`` removes exactly the line its last save or skip wrote,
under the lock; ``throughput`` reads the recorded seconds and actions back.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from workbench.corpus import Corpus, is_superseded
from workbench.corpus.reader import Reader, require_reader
from workbench.golden.candidates import Candidate
from workbench.golden.exchange import qid_of
from workbench.golden.golden_set import GoldenSet, add_case
from workbench.golden.items import Evidence, GoldenItem, can_read_item
from workbench.io import InputError, atomic_write_bytes, atomic_write_text, iter_jsonl, locked
from workbench.runtime.memo import LastBuilt
from workbench.text import CJK, CJK_CHAR, HANGUL, fold

__all__ = ["LabellingSession", "Throughput", "make_item", "span_warnings", "suggest_must_mention"]

Selection = tuple[str, int, int]

_NUM = r"\d+(?:[.,]\d+)*"
#: Words that never name a unit or a product: "within 14 days" is a quantity, not a name.
_STOP = ("a|about|after|all|an|and|are|as|at|be|before|but|by|each|every|for|from|if|in|into|"
         "is|it|least|less|more|no|not|of|on|only|or|over|per|since|so|than|that|the|then|"
         "this|to|under|until|up|was|were|with|within")
_STOP_WORDS = frozenset(_STOP.split("|"))
#: Units written right after a number in Chinese and Japanese (longest first).
_CJK_UNITS = "|".join(sorted([
    "个工作日", "工作日", "个月", "ヶ月", "か月", "週間", "時間", "公里", "公斤",
    "千克", "千米", "厘米", "毫米", "平方米", "小时", "分钟", "美元", "欧元",
    "万元", "亿元", "英里", "毫升", "元", "円", "天", "日", "月",
    "年", "周", "次", "人", "岁", "米", "克", "秒", "分",
    "个", "件", "页", "倍", "名", "位", "号", "层", "台",
    "张", "份", "条", "项", "家", "种", "级", "度", "吨",
    "升", "回", "万", "亿",
], key=len, reverse=True))
#: Units common enough that a capitalised word before the number is not a name ("Within 14
#: days" at the start of a sentence).
_UNITS = (r"%|percent|per cent|(?:days?|weeks?|months?|years?|hours?|minutes?|seconds?|"
          r"characters?|times|km|kg|miles?)\b")
_LETTERS = rf"[^\W\d_{CJK}{HANGUL}]+"
#: What :func:`suggest_must_mention` offers, one named group per kind, in order of precedence.
_SUGGEST_PATTERN = (
    rf"(?P<money>[$€£¥₫]\s?{_NUM}(?:\s?(?:million|billion|bn|k)\b)?)"
    r"|(?P<code>\b[A-Z]{1,6}-?\d[\w-]*)"                                 # HR-12, ISO9001
    r"|(?P<form>\b(?:[Ff]orm|[Pp]olicy|[Ss]ection)\s+[A-Z0-9][\w.-]*)"     # Form W-4
    rf"|(?P<name>\b(?!(?i:{_STOP})\b)[A-Z][A-Za-z+#]*[a-z+#][A-Za-z+#]*\s\d+(?:\.\d+)*"
    rf"(?![.,]?\d)(?!\s?(?i:{_UNITS})))"                                    # Python 3
    r"|(?P<vidate>\b\d{1,2}\stháng\s\d{1,2}(?:\snăm\s\d{4})?)"          # 30 tháng 4
    rf"|(?P<cjk>{_NUM}\s?(?:{_CJK_UNITS})(?:{_NUM}(?:{_CJK_UNITS}))*)"   # 364.6公里, 2005年6月
    rf"|(?P<hangul>{_NUM}\s?[{HANGUL}]+)"                                   # 30일
    rf"|(?P<qty>{_NUM}\s?(?:%|‰|°[CF]?)"                                    # 30%, 30 days
    rf"|{_NUM}\s?(?:(?:business|working|calendar|school)\s)?(?!(?i:{_STOP})\b){_LETTERS})"
    rf"|(?P<num>{_NUM})"                                                  # bare numbers last
)
#: :data:`_SUGGEST_PATTERN` behind a test of the first character every one of its kinds starts
#: with (a currency sign, a capital, the f, p or s of form, policy or section, a digit): the
#: same matches as the pattern alone, found three times faster, as most characters start none.
_SUGGEST = re.compile(rf"(?=[$€£¥₫A-Zfps\d])(?:{_SUGGEST_PATTERN})")
#: The kinds of :data:`_SUGGEST` that state a value of something (a number with its unit).
_VALUES = ("money", "cjk", "hangul", "qty", "vidate")
_DIGIT = re.compile(r"\d+")
_CONTENT = re.compile(rf"{_LETTERS}|[{CJK}]+|[{HANGUL}]+")
#: A sentence: up to and with its end (a run of ``.!?`` followed by a space, one of
#: ``。！？；``, a line break) or the end of the text. ``_SENTENCE.findall(text)`` is the
#: sentences of ``text`` (and an empty one where the text ends without an end); joined they
#: are ``text``.
_SENTENCE = re.compile(r"[^.!?。！？；\n]*(?:[.!?]+(?!\s)[^.!?。！？；\n]*)*"
                       r"(?:[.!?]+(?=\s)|[。！？；\n]|\Z)")


def suggest_must_mention(text: str) -> list[str]:
    """Strings worth requiring in an answer, in order of appearance, without repeats: a
    number is offered whole with its sign or unit in every script (``$1,200``, ``30 days``,
    ``14 ngày``, ``364.6公里``, dates ``2005年6月``, ``30 tháng 4``, ``30일``), a product
    with its version (``Python 3``), codes (``HR-12``), named forms (``Form W-4``), then
    bare numbers not already inside a suggestion."""
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


def make_item(corpus: Corpus, qid: str, question: str, spans: Sequence[Selection] = (), *,
              must_mention: Iterable[str] = (), category: str = "uncategorised",
              answerable: bool = True, source: str = "real",
              extra: Mapping[str, Any] | None = None,
              user_groups: Reader | Iterable[str] | str | None = None) -> GoldenItem:
    """A golden item from selections, checked against ``corpus``: each span lies inside its
    document, in one the labeller (``user_groups``:
    :func:`~workbench.corpus.reader.require_reader`) may read, and quotes it exactly; each
    must-mention string occurs in some span's text. An answerable item needs at least one
    span; an unanswerable one carries no span and no category (``uncategorised``)."""
    where = f"question {qid!r}"
    reader = require_reader("make_item", user_groups, documents=corpus)
    if not str(question).strip():
        raise InputError(where, "the question is empty", field="question")
    evidence = tuple(_selection(corpus, s, where, reader) for s in spans)
    category = category.strip() or "uncategorised"
    if answerable and not evidence:
        raise InputError(where, "select the answer in a document, or mark it unanswerable",
                         field="evidence")
    if not answerable and evidence:
        raise InputError(where, "an unanswerable question carries no evidence; clear the "
                         "selection or mark it answerable", field="answerable")
    if not answerable and category != "uncategorised":
        raise InputError(where, f"an unanswerable question has no category, not {category!r}; "
                         "clear the category or mark it answerable", field="category")
    mentions = tuple(dict.fromkeys(m.strip() for m in must_mention if m.strip()))
    for m in mentions:
        if not any(m in ev.text for ev in evidence):
            raise InputError(where, f"must-mention {m!r} is not in the selected text; "
                             "select a span that contains it or drop it",
                             field="answer_must_mention")
    return GoldenItem(qid=qid, question=question, evidence=evidence,
                      answer_must_mention=mentions, category=category,
                      source=source, answerable=answerable, extra=dict(extra or {}))


@dataclass(frozen=True)
class Fact:
    """A value stated in a document: where (``doc_id``, ``start``, ``sentence``: the start of
    the sentence ``context``), what (``text`` as written: its ``value`` digits and ``unit``)
    and about what (:attr:`subject`, read from ``context`` when first asked for)."""

    doc_id: str
    start: int
    sentence: int
    text: str
    value: str
    unit: str
    context: str = field(repr=False)

    @functools.cached_property
    def subject(self) -> frozenset[str]:
        """The content words of the sentence within :data:`_NEAR` words of the value, the
        value itself left out."""
        at = self.start - self.sentence
        words = _words(self.context)
        return frozenset([w for i, w in words if i < at][-_NEAR:] +
                         [w for i, w in words if i >= at + len(self.text)][:_NEAR])


#: How many content words on each side of a value say what it is about.
_NEAR = 6


@functools.lru_cache(maxsize=1 << 14)  # a corpus states its values in few ways
def _unit(kind: str, text: str) -> tuple[str, str]:
    """``(value, unit)`` of a suggestion of a value kind: the digits and what they count."""
    numbers = re.findall(_NUM, text)
    unit = re.sub(_NUM, "#", fold(text)).replace(" ", "")
    if kind == "qty" and len(unit) > 4 and unit.endswith("s"):
        unit = unit[:-1]                                    # days and day are one unit
    return "/".join(numbers), unit


def _words(text: str) -> list[tuple[int, str]]:
    """Content words with their offsets: alphabetic words (not stop words), Han and kana
    bigrams, Hangul words."""
    out: list[tuple[int, str]] = []
    for m in _CONTENT.finditer(text):
        w = fold(m.group(0))
        if CJK_CHAR.match(w):
            out.extend((m.start() + i, w[i:i + 2]) for i in range(max(1, len(w) - 1)))
        elif len(w) > 1 and w not in _STOP_WORDS:
            out.append((m.start(), w))
    return out


def facts(doc_id: str, text: str) -> list[Fact]:
    """The values stated in ``text`` (numbers with a unit or sign; bare numbers, codes and
    versions such as ``Python 3`` name things and state no value), each in its sentence."""
    out = []
    start = 0
    for sentence in _SENTENCE.findall(text):
        if _DIGIT.search(sentence) is not None:  # every value holds a digit (_NUM, vidate)
            for m in _SUGGEST.finditer(sentence):
                if m.lastgroup in _VALUES:
                    value, unit = _unit(m.lastgroup, m.group(0))
                    out.append(Fact(doc_id, start + m.start(), start, m.group(0), value, unit,
                                    sentence))
        start += len(sentence)
    return out


#: Each corpus's facts by document, read at most once in this process (a second labelling
#: session over the same corpus starts without reading its values again); the last two
#: corpora are kept.
_READ: LastBuilt[dict[str, list[Fact]]] = LastBuilt(keep=2)


def _facts_by_document(corpus: Corpus) -> dict[str, list[Fact]]:
    """The dict :class:`FactIndex` fills with :func:`facts`, shared by every index of a corpus
    with the same document ids and texts."""
    return _READ.get(((d.id, d.text) for d in corpus.documents), dict)


def same_thing(a: Fact, b: Fact) -> bool:
    """Two values of the same thing: the same unit and the same subject, at least three
    content words shared making up at least 70% of the smaller subject."""
    shared = len(a.subject & b.subject)
    return (a.unit == b.unit and shared >= 3
            and shared >= 0.7 * min(len(a.subject), len(b.subject)))


class FactIndex:
    """Every :class:`Fact` of the documents of a corpus that ``reader`` may read, by document
    and by unit, read once (on first use)."""

    def __init__(self, corpus: Corpus, reader: Reader):
        self.corpus, self.reader = corpus, reader
        self._by_doc = _facts_by_document(corpus)
        self._by_unit: dict[str, list[Fact]] | None = None

    def of(self, doc_id: str) -> list[Fact]:
        if doc_id not in self._by_doc:
            self._by_doc[doc_id] = facts(doc_id, self.corpus[doc_id].text)
        return self._by_doc[doc_id]

    def by_unit(self, unit: str) -> list[Fact]:
        if self._by_unit is None:
            self._by_unit = {}
            for doc in self.reader.documents(self.corpus).values():
                for f in self.of(doc.id):
                    self._by_unit.setdefault(f.unit, []).append(f)
        return self._by_unit.get(unit, [])

    def conflicts(self, ev: Evidence) -> list[str]:
        """A different value of the same thing (:func:`same_thing`) stated in another
        document than a value in ``ev`` (within one document, values of the same thing with
        the same words around them are a table or a list of tiers, not a contradiction)."""
        mine = [f for f in self.of(ev.doc_id) if ev.start <= f.start < ev.end]
        out: list[str] = []
        for f in mine:
            for g in self.by_unit(f.unit):
                if g.value != f.value and g.doc_id != f.doc_id and same_thing(f, g):
                    out.append(f"document {g.doc_id!r} at {g.start} says {g.text!r} where the "
                               f"selection says {f.text!r} about the same thing: one fact "
                               "stated twice with two values?")
        return out


def span_warnings(corpus: Corpus, spans: Sequence[Selection],
                  user_groups: Reader | Iterable[str] | str | None = None, *,
                  index: FactIndex | None = None) -> list[str]:
    """What to check before saving these selections: a superseded document and, for each
    value in a selection, a different value of the same thing stated elsewhere
    (:meth:`FactIndex.conflicts`; pass ``index`` to read the corpus once for many calls),
    among the documents the labeller (``user_groups``:
    :func:`~workbench.corpus.reader.require_reader`) may read; a selection in a document they
    may not read is refused (:class:`~workbench.io.InputError`), never a warning."""
    reader = require_reader("span_warnings", user_groups, documents=corpus)
    index = index or FactIndex(corpus, reader)
    out: list[str] = []
    for sel in spans:
        ev = _selection(corpus, sel, "selection", reader)
        doc = corpus[ev.doc_id]
        if is_superseded(doc):
            newer = doc.metadata.get("superseded_by")
            out.append(f"document {doc.id!r} is superseded" +
                       (f" by {newer!r}: label the current version" if newer else ""))
        out.extend(index.conflicts(ev))
    return out


def _candidates(questions: Sequence[str | Mapping[str, Any] | Candidate]) -> list[Candidate]:
    """The one :class:`Candidate` per question, each with a qid: a string is ``q001``...
    by position; a line of ``workbench questions`` (a mapping with ``file`` and ``line``) is
    read back by :meth:`Candidate.from_json`; another mapping gives ``qid``, ``question``,
    ``source`` and its other keys are what was logged; an imported candidate keeps its qid,
    else gets :func:`~workbench.golden.exchange.qid_of`."""
    out = []
    for i, q in enumerate(questions, start=1):
        if isinstance(q, Candidate):
            out.append(q if q.qid else replace(q, qid=qid_of(q)))
        elif isinstance(q, str):
            out.append(Candidate(q, "", 0, qid=f"q{i:03d}"))
        elif "file" in q and "line" in q:           # a candidate as workbench questions wrote it
            c = Candidate.from_json(q)
            out.append(c if c.qid else replace(c, qid=qid_of(c)))
        else:
            logged = {k: v for k, v in q.items() if k not in ("qid", "question", "source")}
            out.append(Candidate(str(q["question"]), "", 0, str(q.get("source") or "real"),
                                 qid=str(q.get("qid") or f"q{i:03d}"),
                                 logged=MappingProxyType(logged)))
    seen = [c.qid for c in out]
    dup = next((q for q in seen if seen.count(q) > 1), None)
    if dup is not None:
        raise InputError("questions", f"qid {dup!r} is given twice; give each question its own")
    return out


def source_fields(c: Candidate) -> dict[str, Any]:
    """Where a saved item's question came from, as ``source_*`` fields: the file and line
    it was imported from and what the log said beside it (``source_user``, ...)."""
    out: dict[str, Any] = {"source_file": c.file, "source_line": c.line} if c.file else {}
    out.update({f"source_{k}": v for k, v in c.logged.items()})
    return out


@dataclass(frozen=True)
class Throughput:
    """How fast a golden file was labelled, from what each save and skip recorded
    (``labelling``: seconds and UI actions; the span's origin): questions labelled per hour
    of labelling time (skips' time counted), actions per item (median, max) and per
    answerable item, and how often a suggested span was saved unchanged."""

    labelled: int
    skipped: int
    seconds: float
    actions: tuple[int, ...]
    _: KW_ONLY
    answerable_actions: tuple[int, ...]
    origins: tuple[str, ...]

    @property
    def questions_per_hour(self) -> float:
        return self.labelled * 3600 / self.seconds if self.seconds > 0 else 0.0

    @property
    def median_actions(self) -> float:
        return _median(self.actions)

    @property
    def max_actions(self) -> int:
        return max(self.actions, default=0)

    @property
    def acceptance_rate(self) -> float:
        """Share of saved spans that were the suggestion unchanged (nan with none saved)."""
        return (self.origins.count("suggested") / len(self.origins) if self.origins
                else float("nan"))

    def summary(self) -> str:
        return (f"{self.labelled} labelled, {self.skipped} skipped in {self.seconds:.0f} s: "
                f"{self.questions_per_hour:.0f} questions/hour, median "
                f"{self.median_actions:g} actions (max {self.max_actions}), "
                f"{self.acceptance_rate:.0%} of suggested spans accepted unchanged")


def _median(xs: Sequence[int]) -> float:
    s = sorted(xs)
    if not s:
        return float("nan")
    mid = len(s) // 2
    return float(s[mid]) if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


class LabellingSession:
    """Label ``questions`` into the golden set at ``path`` (created empty if missing).
    State lives on disk: ``labelled`` and ``skipped`` are re-read by :meth:`reload` (and
    before each write), so another labeller's saves and a restart are never lost. Each
    save or skip may record how it was made (``labelling``: ``seconds``, ``actions`` and
    for a span its origin ``suggested``/``edited``/``selected``); :meth:`throughput` reads
    them back. :meth:`undo` takes back the last save or skip of this session, whichever."""

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
        self._done: list[tuple[Path, str, bytes]] = []
        self._facts = FactIndex(corpus, self.reader)
        self.labelled: dict[str, GoldenItem] = {}
        self.skipped: dict[str, list[dict[str, Any]]] = {}
        self.reload()

    def reload(self) -> None:
        """Re-read the golden set and the skips sidecar."""
        self.labelled = {i.qid: i for i in GoldenSet.load(self.path)}
        self.skipped = {}
        if self.skips_path.exists():
            for where, row in iter_jsonl(self.skips_path, "skips"):
                if not isinstance(row, dict) or not isinstance(row.get("qid"), str):
                    raise InputError(where, "each line is {\"qid\": ...}; fix or delete it",
                                     field="qid")
                self.skipped.setdefault(row["qid"], []).append(row)

    @property
    def categories(self) -> list[str]:
        """Categories already used in the golden set, sorted (``uncategorised`` left out)."""
        return sorted({i.category for i in self.labelled.values()} - {"uncategorised"})

    @property
    def pending(self) -> list[Candidate]:
        """Candidates neither labelled nor skipped, in order."""
        return [c for c in self.candidates
                if c.qid not in self.labelled and c.qid not in self.skipped]

    @property
    def skipped_queue(self) -> list[Candidate]:
        """Candidates skipped and not labelled since, in order: still to be done."""
        return [c for c in self.candidates
                if c.qid in self.skipped and c.qid not in self.labelled]

    @property
    def progress(self) -> str:
        done = sum(c.qid in self.labelled for c in self.candidates)
        return (f"{done} of {len(self.candidates)} labelled, {len(self.skipped_queue)} "
                "skipped")

    def candidate(self, qid: str) -> Candidate:
        for c in self.candidates:
            if c.qid == qid:
                return c
        raise InputError("questions", f"no candidate question {qid!r}", field="qid")

    def save(self, qid: str, spans: Sequence[Selection] = (), must_mention: Iterable[str] = (),
             category: str = "uncategorised", *, answerable: bool = True,
             labelling: Mapping[str, Any] | None = None) -> GoldenItem:
        """Validate and append one item (atomic, locked, re-read under the lock), with where
        its question came from (:func:`source_fields`) and how it was labelled."""
        c = self.candidate(qid)
        extra = source_fields(c)
        if labelling:
            extra["labelling"] = dict(labelling)
        item = make_item(self.corpus, qid, c.question, spans, must_mention=must_mention,
                         category=category, answerable=answerable, source=c.source,
                         extra=extra, user_groups=self.reader)
        updated = add_case(self.path, item, self.corpus)
        line = json.dumps(item.to_json(), ensure_ascii=False) + "\n"
        self._done.append((self.path, qid, line.encode("utf-8")))
        self.labelled = {i.qid: i for i in updated}
        return item

    def skip(self, qid: str, labelling: Mapping[str, Any] | None = None) -> None:
        """Record a skip in the sidecar file (durable, locked), with its seconds and actions."""
        self.candidate(qid)
        row = json.dumps({"qid": qid, **(labelling or {})}, ensure_ascii=False) + "\n"
        with locked(self.skips_path):
            old = self.skips_path.read_bytes() if self.skips_path.exists() else b""
            atomic_write_bytes(self.skips_path, old + row.encode("utf-8"))
        self._done.append((self.skips_path, qid, row.encode("utf-8")))
        self.reload()

    def undo(self) -> str:
        """Remove the line the last save or skip of this session wrote, byte for byte, under
        the lock; return its qid. Refuses when there is nothing to undo or the line changed."""
        if not self._done:
            raise InputError(str(self.path), "nothing to undo in this session")
        path, qid, line = self._done[-1]
        with locked(path):
            raw = path.read_bytes() if path.exists() else b""
            at = raw.rfind(line)
            if at < 0 or (at > 0 and raw[at - 1:at] != b"\n"):
                raise InputError(str(path), f"the line saved for {qid!r} is no longer in "
                                 "the file (edited elsewhere); nothing undone")
            atomic_write_bytes(path, raw[:at] + raw[at + len(line):])
        self._done.pop()
        self.reload()
        return qid

    def warnings(self, spans: Sequence[Selection]) -> list[str]:
        return span_warnings(self.corpus, spans, self.reader, index=self._facts)

    def can_see(self, item: GoldenItem) -> bool:
        """Whether this labeller may see ``item``'s question and quotes: its evidence lies in
        documents they may read (:func:`~workbench.golden.items.can_read_item`)."""
        return can_read_item(self.reader.groups, item, None, self.corpus)

    def throughput(self) -> Throughput:
        """:class:`Throughput` of this golden file, from what its saves and skips recorded
        (items saved without a record are left out)."""
        rows = [(i, i.extra["labelling"]) for i in self.labelled.values()
                if isinstance(i.extra.get("labelling"), Mapping)]
        skips = [r for rs in self.skipped.values() for r in rs if "seconds" in r]
        seconds = sum(float(r.get("seconds", 0)) for _, r in rows)
        seconds += sum(float(r["seconds"]) for r in skips)
        return Throughput(
            labelled=len(rows), skipped=len(skips), seconds=seconds,
            actions=tuple(int(r.get("actions", 0)) for _, r in rows),
            answerable_actions=tuple(int(r.get("actions", 0)) for i, r in rows if i.answerable),
            origins=tuple(str(r["span"]) for _, r in rows if "span" in r))
