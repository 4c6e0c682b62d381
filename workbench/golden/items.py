"""Golden items: one question and where its answer lives, parsed and validated.

The seed JSONL shape ``{"qid", "question", "relevant_chunk_ids", "answer_must_mention"}``
loads unchanged. Richer items add ``evidence`` (``[{doc_id, start, end, text}]``, half-open
code-point offsets; ``text`` detects drift after a corpus edit), ``category``, ``source``
(real | owner | synthetic), ``answerable`` and graded ``relevance`` per chunk id.
``relevant_doc_ids`` labels whole documents (TREC/BEIR document qrels): such items are scored
at document level, each document graded by its key in ``relevance`` (else 1). A
conversational item adds ``history`` (the previous turns,
``[{role: user | assistant, content}]``, oldest first; ``question`` is the last user turn) and
optionally ``gold_rewrite`` (the self-contained query a person would retrieve with); both are
written only when present, so older files round-trip unchanged.
:func:`parse_item` builds a :class:`GoldenItem` from a decoded row and collects every
:class:`Problem` (``file:line: field 'f': message``) instead of stopping at the first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, asdict, dataclass, field
from types import MappingProxyType
from typing import Any

from workbench.corpus import Chunk, Document, Span, can_read, can_read_chunk, user_groups_of
from workbench.io import WorkbenchError, find_lone_surrogate, is_int
from workbench.text import normalize_text

__all__ = ["SOURCES", "Evidence", "GoldenItem", "GoldenSetError", "Problem", "can_read_item",
           "parse_item"]

SOURCES = ("real", "owner", "synthetic")
_KNOWN_FIELDS = {
    "qid", "question", "relevant_chunk_ids", "evidence", "answer_must_mention",
    "category", "source", "answerable", "relevance", "relevant_doc_ids",
    "history", "gold_rewrite",
}
ROLES = ("user", "assistant")


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
    _: KW_ONLY
    answer_must_mention: tuple[str, ...] = ()
    category: str = "uncategorised"
    source: str = "owner"
    answerable: bool = True
    relevance: Mapping[str, int] = field(default_factory=dict, hash=False)
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False)
    relevant_doc_ids: tuple[str, ...] = ()
    history: tuple[Mapping[str, str], ...] = field(default=(), hash=False)
    gold_rewrite: str | None = None

    def doc_ids(self, chunks: Mapping[str, Chunk] | Sequence[Chunk] | None = None
                ) -> tuple[str, ...]:
        """Documents holding the answer, in order: the keys of :meth:`doc_grades`. A label
        not among ``chunks`` raises ValueError."""
        return tuple(self.doc_grades(chunks))

    def doc_grades(self, chunks: Mapping[str, Chunk] | Sequence[Chunk] | None = None,
                   labels_may_name_documents: bool = False) -> dict[str, int]:
        """Document-level judgments, ``{doc_id: grade}`` in order: the evidence's documents
        (grade 1), else the labelled documents (``relevant_doc_ids``, graded by their key in
        ``relevance``, else 1: BEIR's graded qrels), else the
        documents of the chunks labelled relevant, each taken from its chunk in ``chunks``
        (a chunk carries its document; chunk ids are never parsed) with the highest grade of
        its labelled chunks (grades <= 0 are left out). A label not among ``chunks`` raises
        ValueError, unless ``labels_may_name_documents`` (document qrels read as chunk ids,
        e.g. BEIR): then it is a document id."""
        if self.evidence or not self.chunk_labels:
            if self.evidence or not self.relevant_doc_ids:
                return dict.fromkeys([e.doc_id for e in self.evidence], 1)
            return {d: self.relevance.get(d, 1) for d in self.relevant_doc_ids}
        by_id = chunks if isinstance(chunks, Mapping) else {c.id: c for c in chunks or ()}
        grades = dict.fromkeys(self.relevant_chunk_ids, 1)
        grades.update(self.relevance)
        relevant = {c: g for c, g in grades.items() if g > 0}
        missing = [c for c in relevant if c not in by_id]
        if missing and not labels_may_name_documents:
            raise WorkbenchError(f"{self.qid}: chunk id {missing[0]!r} is not among the chunks "
                             "given; pass the chunks the labels were made on")
        out: dict[str, int] = {}
        for c, g in relevant.items():
            doc = by_id[c].doc_id if c in by_id else c
            out[doc] = max(g, out.get(doc, g))
        return out

    @property
    def judged_by_document(self) -> bool:
        """True when the only labels are whole documents (``relevant_doc_ids``)."""
        return bool(self.relevant_doc_ids) and not self.evidence and not self.chunk_labels

    @property
    def chunk_labels(self) -> tuple[str, ...]:
        """Chunk ids labelled directly (relevant_chunk_ids plus graded relevance keys; a
        relevance key naming a document of ``relevant_doc_ids`` grades that document)."""
        return tuple(dict.fromkeys([*self.relevant_chunk_ids, *(
            c for c in self.relevance if c not in self.relevant_doc_ids)]))

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
        if self.relevant_doc_ids:
            row["relevant_doc_ids"] = list(self.relevant_doc_ids)
        if self.history:
            row["history"] = [dict(turn) for turn in self.history]
        if self.gold_rewrite is not None:
            row["gold_rewrite"] = self.gold_rewrite
        row.update(self.extra)
        return row


def can_read_item(user_groups: Iterable[str] | str | None, item: GoldenItem,
                  chunks: Mapping[str, Chunk] | Sequence[Chunk] | None,
                  documents: Mapping[str, Document] | None) -> bool:
    """Whether a user in ``user_groups`` may see the facts of ``item`` (its must-mention
    strings, grade details, evidence quotes and the ids of its documents): only when every
    document holding its evidence, every chunk of ``chunks`` overlapping that evidence and
    every labelled document and chunk is readable (:func:`~workbench.corpus.can_read_chunk`).
    Fails closed: an unknown document or labelled chunk, or no ``documents``, means no.
    ``user_groups=None`` (the unrestricted view) is always yes."""
    groups = user_groups_of(user_groups)
    if groups is None:
        return True
    if documents is None:
        return False
    by_id = chunks if isinstance(chunks, Mapping) else {c.id: c for c in chunks or ()}
    for ev in item.evidence:
        doc = documents.get(ev.doc_id)
        if doc is None or not can_read(groups, doc.acl):
            return False
        if any(c.doc_id == ev.doc_id and ev.overlap(c.start, c.end)
               and not can_read_chunk(groups, c, doc) for c in by_id.values()):
            return False
    for doc_id in item.relevant_doc_ids:
        doc = documents.get(doc_id)
        if doc is None or not can_read(groups, doc.acl):
            return False
    for cid in item.chunk_labels:
        chunk = by_id.get(cid)
        if chunk is None or not can_read_chunk(groups, chunk, documents.get(chunk.doc_id)):
            return False
    return True


@dataclass(frozen=True)
class Problem:
    """One validation finding, printable as ``file:line: field 'f': message``."""

    where: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: field {self.field!r}: {self.message}"


class GoldenSetError(WorkbenchError):
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
    return tuple(normalize_text(v) for v in value if v.strip())


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
        if not all(is_int(x) for x in (start, end)):
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
        out.append(Evidence(normalize_text(doc_id), start, end, normalize_text(text)))
    return tuple(out)


def _parse_history(value: Any, where: str,
                   problems: list[Problem]) -> tuple[Mapping[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(
            isinstance(t, dict) and set(t) == {"role", "content"} and t["role"] in ROLES
            and isinstance(t["content"], str) and t["content"].strip() for t in value):
        problems.append(Problem(where, "history", "must be a list of {\"role\": \"user\" | "
                                "\"assistant\", \"content\": non-empty text}, oldest first"))
        return ()
    return tuple(MappingProxyType({"role": t["role"], "content": normalize_text(t["content"])})
                 for t in value)


def _json_type(value: Any) -> str:
    """The JSON name of a decoded value's type (``true`` is a boolean, ``1.5`` a number)."""
    return {bool: "boolean", int: "number", float: "number", str: "string", list: "list",
            dict: "object"}.get(type(value), type(value).__name__)


def parse_item(row: Any, where: str, problems: list[Problem]) -> GoldenItem | None:
    """Build one item from a decoded JSON row, appending problems instead of raising."""
    if not isinstance(row, dict):
        problems.append(Problem(where, "<line>", "each line must be a JSON object"))
        return None
    before = len(problems)
    bad_text = find_lone_surrogate(row)
    if bad_text is not None:
        problems.append(Problem(where, bad_text, "holds a lone surrogate (half of a character, "
                                "e.g. the escape \\ud800); fix the text"))
        return None
    qid, question = row.get("qid"), row.get("question")
    if qid is not None and (not isinstance(qid, str | int) or isinstance(qid, bool)):
        problems.append(Problem(where, "qid", f"is a {_json_type(qid)} ({qid!r:.40}); give each "
                                "question a unique id as text or an integer"))
    elif qid is None or not str(qid).strip():
        problems.append(Problem(where, "qid", "missing or empty; give each question a unique id"))
    elif str(qid) != str(qid).strip():
        problems.append(Problem(where, "qid", f"{qid!r} has surrounding whitespace; remove it "
                                "(it would name a different question than "
                                f"{str(qid).strip()!r})"))
    if question is not None and not isinstance(question, str):
        problems.append(Problem(where, "question", f"is a {_json_type(question)} "
                                f"({question!r:.40}); write the question as text"))
    elif question is None or not question.strip():
        problems.append(Problem(where, "question", "missing or empty; write the question text"))
    relevant = _str_list(row.get("relevant_chunk_ids"), "relevant_chunk_ids", where, problems)
    docs = _str_list(row.get("relevant_doc_ids"), "relevant_doc_ids", where, problems)
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
        is_int(g) for g in relevance.values()
    ):
        problems.append(Problem(where, "relevance", "must map chunk id -> integer grade"))
        relevance = {}
    history = _parse_history(row.get("history"), where, problems)
    gold_rewrite = row.get("gold_rewrite")
    if gold_rewrite is not None and (not isinstance(gold_rewrite, str) or not gold_rewrite.strip()):
        problems.append(Problem(where, "gold_rewrite", "must be a non-empty string when given"))
    labels_ok = len(problems) == before
    if labels_ok and answerable and not (relevant or evidence or docs
                                         or any(g > 0 for g in relevance.values())):
        problems.append(
            Problem(
                where,
                "relevant_chunk_ids",
                "empty on an answerable item: add the chunk ids or evidence spans that hold "
                "the answer, or set \"answerable\": false",
            )
        )
    if not answerable and (relevant or evidence or docs):
        problems.append(
            Problem(where, "answerable", "false, but relevant chunks/evidence are given; pick one")
        )
    if len(problems) > before:
        return None
    extra = {k: v for k, v in row.items() if k not in _KNOWN_FIELDS}
    return GoldenItem(
        qid=normalize_text(str(qid)), question=normalize_text(str(question)),
        relevant_chunk_ids=relevant, evidence=evidence, answer_must_mention=must,
        category=normalize_text(category), source=str(source), answerable=answerable,
        relevance=MappingProxyType({normalize_text(k): v for k, v in relevance.items()}),
        extra=MappingProxyType(extra), relevant_doc_ids=docs, history=history,
        gold_rewrite=normalize_text(gold_rewrite) if isinstance(gold_rewrite, str) else None,
    )
