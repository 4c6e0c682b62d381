"""Labeller: label candidate questions by selecting their answers in the documents.

One question at a time: BM25 and dense hits side by side (dense built on first search), a
hit opens its document, the mouse selection is reported as code-point offsets into
``Document.text`` (the view converts from the browser's UTF-16), a second span can be added,
suggested must-mention strings are marked, a category picked or typed, and the item saved,
marked unanswerable, skipped or undone. Python computes (:mod:`workbench.golden.labelling`:
validation, warnings, suggestions, the on-disk session), the view only paints: document text
is set as text nodes, never as HTML. Readable state: ``selection`` (``[doc_id, start, end]``
or ``[]``), ``spans``, ``current_qid``, ``must_mention``, ``category``, ``warnings``,
``progress``. Keys: ``/`` search, ``a`` add span, ``1``-``9`` toggle a suggestion, ``c``
category, ``s`` save, ``u`` unanswerable, ``k`` skip, ``z`` undo, ``n``/``p`` next/previous
hit. :func:`labeller_html` is the static form. The labeller reads through the session's
:class:`~workbench.corpus.reader.Reader` (``user_groups``, required where the corpus declares
access): hits come only from chunks they may read, a document they may not read does not
open, a selection in one is refused at save, and an item whose evidence they may not read
shows neither question nor quote. :meth:`Labeller.for_review` opens the spans
that re-anchoring could not place (:mod:`workbench.golden.reanchor`) for a person to confirm.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from workbench.chunking import RecursiveChunker, chunk_corpus
from workbench.corpus import Chunk, Corpus, Document
from workbench.corpus.reader import Reader, require_reader
from workbench.golden.items import can_read_item
from workbench.golden.labelling import Candidate, LabellingSession, suggest_must_mention
from workbench.golden.reanchor import Reanchored, ReanchorReport
from workbench.io import InputError
from workbench.retrieval import BM25Retriever, DenseRetriever, Retriever
from workbench.text import escape_html

__all__ = ["Labeller", "labeller_html"]

_HERE = Path(__file__).with_name("labeller_static")
#: What stands for the question and quotes of an item the labeller may not read.
WITHHELD = "(withheld: its evidence is in a document this labeller may not read)"


def labeller_html(session: LabellingSession) -> str:
    """Static form: progress and the labelled items with their quotes (escaped); an item
    whose evidence the session's labeller may not read shows neither its question nor its
    quote (:meth:`~workbench.golden.labelling.LabellingSession.can_see`)."""
    rows = []
    for c in session.candidates:
        item = session.labelled.get(c.qid)
        state = ("skipped" if c.qid in session.skipped and item is None else
                 "pending" if item is None else
                 "unanswerable" if not item.answerable else item.category)
        quote = " | ".join(e.text[:120] for e in item.evidence) if item else ""
        question = c.question
        if item is not None and not session.can_see(item):
            question, quote, state = WITHHELD, WITHHELD, "labelled"
        rows.append(f"<tr><td>{escape_html(c.qid)}</td><td>{escape_html(question)}</td>"
                    f"<td>{escape_html(state)}</td><td>{escape_html(quote)}</td></tr>")
    return (f"<div class='wb-labeller-static'><p>{escape_html(session.progress)}</p><table>"
            "<tr><th>qid</th><th>question</th><th>label</th><th>evidence</th></tr>"
            + "".join(rows) + "</table></div>")


class Labeller(anywidget.AnyWidget):
    """Label ``questions`` (strings, or dicts with qid/question/source) into ``path``."""

    _esm = _HERE / "labeller.js"
    _css = _HERE / "labeller.css"

    current_qid = traitlets.Unicode("").tag(sync=True)
    question = traitlets.Unicode("").tag(sync=True)
    query = traitlets.Unicode("").tag(sync=True)
    bm25_hits: traitlets.List[Any] = traitlets.List().tag(sync=True)
    dense_hits: traitlets.List[Any] = traitlets.List().tag(sync=True)
    doc_id = traitlets.Unicode("").tag(sync=True)
    doc_title = traitlets.Unicode("").tag(sync=True)
    doc_text = traitlets.Unicode("").tag(sync=True)
    highlight: traitlets.List[Any] = traitlets.List().tag(sync=True)
    selection: traitlets.List[Any] = traitlets.List().tag(sync=True)
    spans: traitlets.List[Any] = traitlets.List().tag(sync=True)
    suggestions: traitlets.List[Any] = traitlets.List().tag(sync=True)
    must_mention: traitlets.List[Any] = traitlets.List().tag(sync=True)
    category = traitlets.Unicode("").tag(sync=True)
    categories: traitlets.List[Any] = traitlets.List().tag(sync=True)
    warnings: traitlets.List[Any] = traitlets.List().tag(sync=True)
    progress = traitlets.Unicode("").tag(sync=True)
    status = traitlets.Unicode("").tag(sync=True)

    def __init__(self, corpus: Corpus, questions: Sequence[str | Mapping[str, Any] | Candidate],
                 path: str | Path, chunks: Sequence[Chunk] | None = None,
                 dense: Retriever | bool = True,
                 user_groups: Reader | Iterable[str] | str | None = None,
                 k: int = 5, review: ReanchorReport | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self._review: dict[str, list[Reanchored]] = {}
        for move in review.review if review is not None else ():
            self._review.setdefault(move.qid, []).append(move)
        self._originals = {i.qid: i for i in review.golden} if review is not None else {}
        self.session = LabellingSession(path, corpus, questions, user_groups)
        self.reader = self.session.reader
        self.corpus, self.k = corpus, k
        every = list(chunks) if chunks is not None else chunk_corpus(RecursiveChunker(), corpus)
        self.chunks = self.reader.chunks(every, corpus)  # hits never show what they may not read
        self._by_id = {c.id: c for c in self.chunks}
        self.bm25 = BM25Retriever(self.chunks)
        self._dense: Retriever | None = dense if not isinstance(dense, bool) else None
        self._want_dense = dense is not False
        self.on_msg(self._on_msg)
        self.observe(self._selected, names=["selection"])
        self.next_question()

    @classmethod
    def for_review(cls, report: ReanchorReport, corpus: Corpus, path: str | Path,
                   **kwargs: Any) -> Labeller:
        """Confirm the drifted spans that :func:`~workbench.golden.reanchor.reanchor` left to
        review, one item at a time: its document opens at the best suggestion (selected, so
        ``save`` confirms it) or at the top, its category and must-mention strings are
        filled in, and ``status`` says what the quote was. Saves go to ``path``; apply them
        with :func:`~workbench.golden.reanchor.apply_confirmed`."""
        items = {i.qid: i for i in report.golden}
        qids = dict.fromkeys(m.qid for m in report.review)
        reader = require_reader("Labeller.for_review", kwargs.get("user_groups"),
                                documents=corpus)
        questions = [Candidate(q, items[q].question if can_read_item(
            reader.groups, items[q], None, corpus) else WITHHELD, items[q].source)
            for q in qids]
        return cls(corpus, questions, path, review=report, **kwargs)

    # ----- Python API (the view calls the same) --------------------------------------

    @property
    def dense(self) -> Retriever | None:
        """The dense retriever, built on first use (None when ``dense=False``)."""
        if self._dense is None and self._want_dense:
            self._dense = DenseRetriever(self.chunks, progress=False)
        return self._dense

    def _hits(self, retriever: Retriever, query: str) -> list[dict[str, Any]]:
        out = []
        for h in retriever.search(query, self.k):
            c = self._by_id.get(h.chunk_id) or h.chunk
            if c is None:
                continue
            out.append({"chunk_id": c.id, "doc_id": c.doc_id, "start": c.start, "end": c.end,
                        "rank": h.rank, "score": round(float(h.score), 3),
                        "title": self.corpus[c.doc_id].title, "snippet": c.text[:200]})
        return out

    def search(self, query: str) -> None:
        """Fill ``bm25_hits`` and ``dense_hits`` for ``query``; open the top BM25 hit."""
        self.query = query
        self.bm25_hits = self._hits(self.bm25, query) if query.strip() else []
        dense = self.dense
        self.dense_hits = self._hits(dense, query) if dense is not None and query.strip() else []
        if self.bm25_hits:
            h = self.bm25_hits[0]
            self.show_document(h["doc_id"], h["start"], h["end"])

    def show_document(self, doc_id: str, start: int = 0, end: int = 0) -> None:
        """Show document ``doc_id``, highlighting ``[start, end)`` (a hit's chunk); a document
        the labeller may not read is refused."""
        doc = self._readable(doc_id)
        self.doc_id, self.doc_title, self.doc_text = doc.id, doc.title, doc.text
        self.highlight = [start, end] if end > start else []

    def _readable(self, doc_id: str) -> Document:
        doc = self.corpus.get(doc_id)
        if doc is None or not self.reader.can_read(doc):
            raise InputError(f"document {doc_id!r}", "is not a document this labeller may read",
                             field="doc_id")
        return doc

    def select(self, start: int, end: int, doc_id: str | None = None) -> None:
        """Set the selection (what the mouse does in the view)."""
        self.selection = [doc_id or self.doc_id, start, end]

    def _selected(self, _change: Any = None) -> None:
        sel = self.selection
        text = self._readable(sel[0]).text[sel[1]:sel[2]] if len(sel) == 3 else ""
        marked = [s for s in self.must_mention if any(s in t for t in self._texts())]
        self.suggestions = list(dict.fromkeys(
            [*marked, *suggest_must_mention(text),
             *(s for t in self._texts() for s in suggest_must_mention(t))]))
        self._warn()

    def _all_spans(self) -> list[tuple[str, int, int]]:
        out = [(s[0], int(s[1]), int(s[2])) for s in self.spans]
        if len(self.selection) == 3 and list(self.selection) not in [list(s) for s in self.spans]:
            out.append((self.selection[0], int(self.selection[1]), int(self.selection[2])))
        return out

    def _texts(self) -> list[str]:
        return [self._readable(d).text[a:b] for d, a, b in self._all_spans()]

    def _warn(self) -> None:
        try:
            self.warnings = self.session.warnings(self._all_spans())
        except InputError as exc:
            self.warnings = [str(exc)]

    def add_span(self) -> None:
        """Keep the current selection as a span and start another (multi-chunk answers)."""
        if len(self.selection) == 3 and list(self.selection) not in [list(s) for s in self.spans]:
            self.spans = [*self.spans, list(self.selection)]
        self.selection = []

    def toggle_must_mention(self, text: str) -> None:
        self.must_mention = ([m for m in self.must_mention if m != text]
                             if text in self.must_mention else [*self.must_mention, text])

    def save(self, answerable: bool = True) -> None:
        """Validate and append the current question; move to the next one."""
        try:
            self.session.save(self.current_qid, self._all_spans() if answerable else (),
                              self.must_mention if answerable else (),
                              self.category or "uncategorised", answerable)
        except (InputError, ValueError) as exc:
            self.status = str(exc)
            return
        self.status = f"saved {self.current_qid}"
        self.next_question()

    def unanswerable(self) -> None:
        self.save(answerable=False)

    def skip(self) -> None:
        self.session.skip(self.current_qid)
        self.status = f"skipped {self.current_qid}"
        self.next_question()

    def undo(self) -> None:
        try:
            qid = self.session.undo()
        except InputError as exc:
            self.status = str(exc)
            return
        self.status = f"undid {qid}"
        self.next_question(qid)

    def next_question(self, qid: str | None = None) -> None:
        """Reload the session from disk and show ``qid`` or the first pending question."""
        self.session.reload()
        pending = self.session.pending
        c = self.session.candidate(qid) if qid else (pending[0] if pending else None)
        self.spans, self.selection, self.must_mention, self.warnings = [], [], [], []
        self.categories, self.progress = self.session.categories, self.session.progress
        self.current_qid, self.question = (c.qid, c.question) if c else ("", "")
        self.bm25_hits, self.dense_hits, self.highlight = [], [], []
        if c is None:
            self.status = "all questions labelled or skipped"
        elif c.qid in self._review:
            self._open_review(c.qid)

    def _open_review(self, qid: str) -> None:
        """Show a drifted item at its suggestion, with what its quote was (see for_review)."""
        moves, item = self._review[qid], self._originals[qid]
        if not self.session.can_see(item):
            self.status = f"review {qid}: {WITHHELD}; skip it"
            return
        self.category, self.must_mention = item.category, list(item.answer_must_mention)
        first = next((m for m in moves if m.new_start is not None), moves[0])
        if first.doc_id not in self.corpus:
            self.status = f"review {qid}: {first.reason}; mark it unanswerable or skip it"
            return
        start, end = first.new_start or 0, first.new_end or 0
        self.show_document(first.doc_id, start, end)
        if end > start:
            self.selection = [first.doc_id, start, end]
        quotes = "; ".join(f"'{m.quote}' ({m.method} {m.score:.0f}: {m.reason or 'review'})"
                           for m in moves)
        self.status = (f"review {qid}: the quote no longer matches its document: {quotes}. "
                       + ("The suggestion is selected: save confirms it, or select where it "
                          "is now" if end > start else "Select where it is now")
                       + "; unanswerable if the document no longer says it.")

    def _on_msg(self, _: Any, content: Mapping[str, Any], _buffers: Any) -> None:
        cmd = content.get("cmd")
        try:
            if cmd == "search":
                self.search(str(content.get("query", "")))
            elif cmd == "open":
                self.show_document(str(content["doc_id"]), int(content.get("start", 0)),
                          int(content.get("end", 0)))
            elif cmd == "add_span":
                self.add_span()
            elif cmd == "mention":
                self.toggle_must_mention(str(content["text"]))
            elif cmd in ("save", "unanswerable", "skip", "undo"):
                getattr(self, cmd)()
        except Exception as exc:  # shown in the view, never lost
            self.status = f"{cmd}: {exc}"

    def _repr_html_(self) -> str:
        return labeller_html(self.session)
