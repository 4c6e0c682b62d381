"""The questions the real-tool tests send: handbook questions with their evidence passages, and
a document written to trip offsets (emoji, an astral Han character, CJK, CRLF, a tab, a span
across a line break), with the spans a labeller marks in it."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.chunking import RecursiveChunker, chunk_corpus
from workbench.corpus import Corpus, Document, Span
from workbench.golden import GoldenItem, GoldenSet

TRICKY = Document("tricky", "Refunds 😀 policy.\r\nThe refund window is\n30 days 𠮷 from "
                  "delivery.\tGift cards: 礼品卡五年有效。 Café staff 🧾 keep receipts.")


@dataclass(frozen=True)
class Mark:
    """A labeller's selection: the question, the text selected, its label."""

    qid: str
    quote: str
    label: str = "answer"


# u1 crosses a line break; u2 and u3 follow an emoji and an astral character; u4 is marked
# unanswerable; u5 carries a label that is not in the config (refused by name).
TRICKY_MARKS = (Mark("u1", "The refund window is\n30 days"), Mark("u1", "30 days", "must_mention"),
                Mark("u2", "礼品卡五年有效"), Mark("u3", "from delivery"),
                Mark("u3", "keep receipts"), Mark("u5", "Café staff", "Other"))
TRICKY_QUESTIONS = {"u1": "How long is the refund window?", "u2": "How long do gift cards last?",
                    "u3": "What must staff keep?", "u4": "What is the weather tomorrow?",
                    "u5": "Who works at the café?"}


def utf16(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (what a browser's selection counts)."""
    return len(text.encode("utf-16-le")) // 2


def sent(handbook: tuple[Corpus, GoldenSet], n: int = 8
         ) -> tuple[Corpus, GoldenSet, dict[str, list[Span]], list[Mark]]:
    """Documents, the questions (unlabelled), each question's passages, and the marks a
    labeller makes: ``n`` handbook questions' evidence (and must-mentions inside it) and the
    tricky document's."""
    corpus, golden = handbook
    chunks = chunk_corpus(RecursiveChunker(size=400, overlap=0), corpus)
    marks, passages, questions = list(TRICKY_MARKS), {}, []
    for item in golden:
        if len(questions) == n:
            break
        holding = [c for e in item.evidence for c in chunks
                   if c.doc_id == e.doc_id and c.start <= e.start and e.end <= c.end]
        if not item.answerable or not item.evidence or len(holding) != len(item.evidence):
            continue
        passages[item.qid] = list(dict.fromkeys(Span(c.doc_id, c.start, c.end)
                                                for c in holding))
        questions.append(GoldenItem(item.qid, item.question, answerable=False,
                                    category=item.category, source="real"))
        for e in item.evidence:
            marks.append(Mark(item.qid, e.text))
            marks += [Mark(item.qid, m, "must_mention") for m in item.answer_must_mention
                      if m in e.text][:1]
    whole = Span(TRICKY.id, 0, len(TRICKY.text))
    for qid, question in TRICKY_QUESTIONS.items():
        passages[qid] = [whole]
        questions.append(GoldenItem(qid, question, answerable=False, source="real"))
    docs = Corpus([*corpus.documents, TRICKY])
    return docs, GoldenSet(questions), passages, marks


def expected(documents: Corpus, passages: dict[str, list[Span]], marks: list[Mark]
             ) -> dict[str, tuple[list[tuple[str, int, int]], list[str]]]:
    """What each labelled question must come back as: evidence (doc, start, end) sorted, and
    must-mentions, for the marks with a configured label."""
    out: dict[str, tuple[list[tuple[str, int, int]], list[str]]] = {}
    for m in marks:
        if m.label == "Other":
            continue
        spans = [(p.doc_id, documents[p.doc_id].text.find(m.quote, p.start)) for p in
                 passages[m.qid] if m.quote in documents[p.doc_id].text[p.start:p.end]]
        doc_id, at = spans[0]
        ev, must = out.setdefault(m.qid, ([], []))
        if m.label == "answer":
            ev.append((doc_id, at, at + len(m.quote)))
        else:
            must.append(m.quote)
    return {q: (sorted(set(ev)), must) for q, (ev, must) in out.items()}
