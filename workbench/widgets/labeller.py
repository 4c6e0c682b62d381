"""Labeller: label candidate questions at the speed of reading; the machine proposes, the
person decides, one key per decision.

Each question opens with its text searched (BM25 and dense hits side by side, hits scoring 0
left out) and the most likely answer already selected: :func:`propose_span` picks the
sentence of the hits closest to the question (by the dense encoder, else by shared terms).
``Enter`` or ``s`` saves it; ``]``/``[`` grow or shrink its end by a word, ``}``/``{`` by a
sentence, ``(``/``)`` its start by a sentence; the mouse still selects anything. Selecting
text inside the answer marks it (painted, whatever has the focus), ``m`` adds it as a
must-mention, ``x`` makes it the answer; ``1``-``9`` toggle a suggested must-mention (numbers
kept whole with their units). The category starts empty for every question (``c`` types one,
``=`` takes the last one); ``u`` marks unanswerable (no category), ``k`` skips (the
"skipped (N)" queue, ``r``, brings them back), ``g`` opens any question by qid, ``a`` keeps the
span and starts another, ``z`` undoes the last action whatever it was (a save, a skip, a grown
span, a must-mention). Each save records how its span was made (``suggested``, ``edited`` or
``selected``), the seconds spent and the UI actions taken (:meth:`LabellingSession.throughput
<workbench.golden.labelling.LabellingSession.throughput>`).

Python computes (:mod:`workbench.golden.labelling`: validation, warnings, suggestions, the
on-disk session), the view only paints: document text is set as text nodes, never as HTML,
and the browser's UTF-16 offsets are mapped to code points in ``labeller_static/labeller.js``.
The dense index is embedded through the embedding cache (a progress bar while it runs, reused
by the next session). The labeller reads through the session's
:class:`~workbench.corpus.reader.Reader` (``user_groups``, required where the corpus declares
access): hits come only from chunks they may read, a document they may not read does not
open, a selection in one is refused at save, and an item whose evidence they may not read
shows neither question nor quote. :func:`labeller_html` is the static form.
:meth:`Labeller.for_review` opens the spans that re-anchoring could not place
(:mod:`workbench.golden.reanchor`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from workbench.chunking import RecursiveChunker, chunk_corpus, sentence_spans
from workbench.chunking.units import word_units
from workbench.corpus import Chunk, Corpus, Document
from workbench.corpus.reader import Reader, require_reader
from workbench.golden.candidates import Candidate
from workbench.golden.items import can_read_item
from workbench.golden.labelling import LabellingSession, suggest_must_mention
from workbench.golden.reanchor import Reanchored, ReanchorReport
from workbench.io import InputError
from workbench.retrieval import (
    DenseRetriever,
    EmbeddingCache,
    Encoder,
    Retriever,
    bm25_for,
    unit_vectors,
)
from workbench.retrieval.bm25 import tokenize
from workbench.text import escape_html
from workbench.widgets.keywords import refuse_unknown_keywords

__all__ = ["PROPOSE_FROM", "WITHHELD", "Labeller", "labeller_html", "propose_span"]

_HERE = Path(__file__).with_name("labeller_static")
#: Hits whose sentences the encoder ranks for a proposal (the best two of each pane).
PROPOSE_FROM = 4
#: What stands for the question and quotes of an item the labeller may not read.
WITHHELD = "(withheld: its evidence is in a document this labeller may not read)"
#: The widget state an action changes and :meth:`Labeller.undo` restores.
_STATE = ("doc_id", "doc_title", "doc_text", "highlight", "selection", "spans", "marked",
          "must_mention", "category", "origin")


def labeller_html(session: LabellingSession) -> str:
    """Static form: progress and the labelled items with their quotes (escaped); an item
    whose evidence the session's labeller may not read shows neither its question nor its
    quote (:meth:`~workbench.golden.labelling.LabellingSession.can_see`)."""
    rows = []
    for c in session.candidates:
        item = session.labelled.get(c.qid or "")
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


def propose_span(question: str, hits: Sequence[Mapping[str, Any]], corpus: Corpus, *,
                 encoder: Encoder | None = None, cache: EmbeddingCache | None = None
                 ) -> tuple[str, int, int] | None:
    """The sentence most likely to answer ``question`` among the sentences of ``hits``
    (``doc_id``, ``start``, ``end``, best first). With ``encoder``: the highest cosine of
    the question's and the sentence's vectors (sentences embedded through ``cache`` when
    given); without: the most distinct question terms (BM25's tokeniser) it contains. Ties
    go to the better-ranked hit, then the earlier sentence; a Markdown heading is a title,
    never proposed. None when nothing qualifies (no sentence, or none sharing a term). On
    the handbook golden set the encoder (e5, over the best :data:`PROPOSE_FROM` hits) puts
    the proposal on the gold evidence for 45% of the answerable questions, term overlap
    (over all hits) for 34% (``benchmarks/bench_labeller.py``)."""
    found: list[tuple[str, int, int]] = []
    for h in hits:
        text = corpus[h["doc_id"]].text
        for a, b in sentence_spans(text[h["start"]:h["end"]]):
            span = (h["doc_id"], h["start"] + a, h["start"] + b)
            if span not in found and not text.startswith("#", span[1]):
                found.append(span)
    if not found:
        return None
    texts = [corpus[d].text[a:b] for d, a, b in found]
    if encoder is not None:
        q = unit_vectors(encoder.encode_queries([question]))[0]
        vecs = (cache.embed(encoder, texts, progress=False) if cache is not None
                else encoder.encode_documents(texts))
        scores = [float(x) for x in unit_vectors(vecs) @ q]
    else:
        terms = set(tokenize(question))
        scores = [float(len(terms & set(tokenize(t)))) for t in texts]
        if not max(scores):
            return None
    return found[max(range(len(found)), key=lambda i: (scores[i], -i))]


def _grown(text: str, start: int, end: int, unit: str, side: str, by: int) -> tuple[int, int]:
    """``[start, end)`` with ``side`` moved out (``by`` 1) or in (-1) by one word or sentence."""
    cuts = word_units(text, 0, len(text)) if unit == "word" else sentence_spans(text)
    if side == "end":
        ends = [b for _, b in cuts]
        nxt = ([b for b in ends if b > end][:1] if by > 0 else
               [b for b in ends if start < b < end][-1:])
        return start, nxt[0] if nxt else end
    starts = [a for a, _ in cuts]
    nxt = ([a for a in starts if a < start][-1:] if by > 0 else
           [a for a in starts if start < a < end][:1])
    return (nxt[0] if nxt else start), end


@refuse_unknown_keywords
class Labeller(anywidget.AnyWidget):
    """Label ``questions`` (what :func:`~workbench.golden.candidates.import_questions`
    returns, strings, or dicts with qid/question/source) into the golden set at ``path``.
    ``dense``: True embeds the chunks through ``cache`` (default :class:`EmbeddingCache`
    ``()``), False shows BM25 only, or a built retriever. ``retriever``: the lexical retriever
    you already built over these chunks (your evaluation's BM25), else BM25 is built once per
    chunking in this process (:func:`~workbench.retrieval.bm25_for`)."""

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
    marked: traitlets.List[Any] = traitlets.List().tag(sync=True)
    origin = traitlets.Unicode("").tag(sync=True)
    spans: traitlets.List[Any] = traitlets.List().tag(sync=True)
    suggestions: traitlets.List[Any] = traitlets.List().tag(sync=True)
    must_mention: traitlets.List[Any] = traitlets.List().tag(sync=True)
    category = traitlets.Unicode("").tag(sync=True)
    last_category = traitlets.Unicode("").tag(sync=True)
    categories: traitlets.List[Any] = traitlets.List().tag(sync=True)
    skipped: traitlets.List[Any] = traitlets.List().tag(sync=True)
    warnings: traitlets.List[Any] = traitlets.List().tag(sync=True)
    progress = traitlets.Unicode("").tag(sync=True)
    status = traitlets.Unicode("").tag(sync=True)
    actions = traitlets.Int(0).tag(sync=True)

    def __init__(self, corpus: Corpus, questions: Sequence[str | Mapping[str, Any] | Candidate],
                 path: str | Path, *, chunks: Sequence[Chunk] | None = None,
                 dense: Retriever | bool = True, cache: EmbeddingCache | None = None,
                 user_groups: Reader | Iterable[str] | str | None = None, k: int = 5,
                 review: ReanchorReport | None = None, retriever: Retriever | None = None):
        super().__init__()
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
        # an already built lexical retriever over these chunks, else BM25 built once per
        # chunking in this process (a second labeller on the same corpus starts at once)
        self.bm25 = retriever if retriever is not None else bm25_for(self.chunks)
        self._cache = cache if cache is not None else EmbeddingCache() if dense else None
        self.dense: Retriever | None = (dense if not isinstance(dense, bool) else
                                        self._embedded() if dense else None)
        self._encoder: Encoder | None = getattr(self.dense, "encoder", None)
        self._undo: list[tuple[str, dict[str, Any]]] = []
        self._started = time.monotonic()
        self.on_msg(self._on_msg)
        self.next_question()

    def _embedded(self) -> DenseRetriever:
        """The dense index, embedded through the cache: a progress bar while it embeds, the
        next session over the same chunks and encoder reads it back."""
        return DenseRetriever(self.chunks, cache=self._cache, progress=True)

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
        questions = [Candidate(items[q].question if can_read_item(reader.groups, items[q], None,
                                                                  corpus) else WITHHELD,
                               "", 0, items[q].source, qid=q) for q in qids]
        return cls(corpus, questions, path, review=report, **kwargs)

    # ----- state and its undo ---------------------------------------------------------

    def _act(self) -> None:
        """One UI action: counted for this question and undoable."""
        self.actions += 1
        self._undo.append(("state", {n: getattr(self, n) for n in _STATE}))

    def _restore(self, state: Mapping[str, Any]) -> None:
        with self.hold_sync():
            for n in _STATE:
                setattr(self, n, state[n])
        self._refresh()

    def _record(self) -> dict[str, Any]:
        return {"seconds": round(time.monotonic() - self._started, 1), "actions": self.actions}

    # ----- Python API (the view calls the same) --------------------------------------

    def _hits(self, retriever: Retriever, query: str) -> list[dict[str, Any]]:
        out = []
        for h in retriever.search(query, self.k):
            c = self._by_id.get(h.chunk_id) or h.chunk
            # a retriever given from outside may hold chunks this labeller may not read
            if c is None or not h.score > 0 or not self.reader.can_read_chunk(
                    c, self.corpus.get(c.doc_id)):
                continue
            out.append({"chunk_id": c.id, "doc_id": c.doc_id, "start": c.start, "end": c.end,
                        "rank": h.rank, "score": round(float(h.score), 3),
                        "title": self.corpus[c.doc_id].title, "snippet": c.text[:200]})
        return out

    def search(self, query: str) -> None:
        """Fill ``bm25_hits`` and ``dense_hits`` for ``query`` and open the proposed answer
        (:func:`propose_span`) selected, else the top hit, else nothing."""
        self._act()
        self._search(query)

    def _search(self, query: str) -> None:
        self.query = query
        self.bm25_hits = self._hits(self.bm25, query) if query.strip() else []
        self.dense_hits = (self._hits(self.dense, query)
                           if self.dense is not None and query.strip() else [])
        hits = [h for pair in zip(self.bm25_hits, self.dense_hits, strict=False) for h in pair]
        hits += self.bm25_hits[len(hits) // 2:] + self.dense_hits[len(hits) // 2:]
        # with an encoder, the sentences of the best two hits of each pane are embedded (the
        # rest would cost more than they win: see benchmarks/bench_labeller.py)
        proposal = propose_span(query, hits if self._encoder is None else hits[:PROPOSE_FROM],
                                self.corpus, encoder=self._encoder, cache=self._cache)
        if proposal is not None:
            doc_id, start, end = proposal
            hit = next(h for h in hits if h["doc_id"] == doc_id and h["start"] <= start
                       and end <= h["end"])
            self._show(doc_id, hit["start"], hit["end"])
            self.selection, self.marked, self.origin = [doc_id, start, end], [], "suggested"
        elif hits:
            self._show(hits[0]["doc_id"], hits[0]["start"], hits[0]["end"])
        else:
            self._show("")
        self._refresh()

    def show_document(self, doc_id: str, start: int = 0, end: int = 0) -> None:
        """Show document ``doc_id``, highlighting ``[start, end)`` (a hit's chunk)."""
        self._act()
        self._show(doc_id, start, end)

    def _show(self, doc_id: str, start: int = 0, end: int = 0) -> None:
        doc = self._readable(doc_id) if doc_id else None
        self.doc_id, self.doc_title, self.doc_text = ((doc.id, doc.title, doc.text) if doc
                                                      else ("", "", ""))
        self.highlight = [start, end] if end > start else []

    def select(self, start: int, end: int, doc_id: str | None = None) -> None:
        """Make ``[start, end)`` of the shown document the answer."""
        self._act()
        self.selection, self.marked, self.origin = [doc_id or self.doc_id, start, end], [], \
            "selected"
        self._refresh()

    def mark(self, start: int, end: int) -> None:
        """What a mouse selection does: inside the answer it marks ``[start, end)`` (``m``
        makes it a must-mention, ``x`` the answer), elsewhere it selects it as the answer."""
        sel = self.selection
        if not (len(sel) == 3 and sel[0] == self.doc_id and sel[1] <= start < end <= sel[2]):
            self.select(start, end)
            return
        self._act()
        self.marked = [start, end]

    def mention_marked(self) -> None:
        """Add the marked text as a must-mention (it lies inside the answer)."""
        if len(self.marked) != 2:
            self.status = "select the words inside the answer first, then press m"
            return
        text = self._readable(self.selection[0]).text[self.marked[0]:self.marked[1]].strip()
        self._act()
        self.must_mention = list(dict.fromkeys([*self.must_mention, text]))
        self.marked = []

    def answer_marked(self) -> None:
        """Make the marked text the answer."""
        if len(self.marked) == 2:
            self.select(self.marked[0], self.marked[1], self.selection[0])

    def grow(self, unit: str = "word", by: int = 1, side: str = "end") -> None:
        """Move the answer's ``side`` (``start``/``end``) out (``by`` 1) or in (-1) by one
        ``word`` or ``sentence``."""
        if len(self.selection) != 3 or unit not in ("word", "sentence") or side not in (
                "start", "end"):
            return
        doc_id, start, end = self.selection
        new = _grown(self._readable(doc_id).text, start, end, unit, side, by)
        if new != (start, end):
            self._act()
            self.selection, self.marked = [doc_id, *new], []
            self.origin = "selected" if self.origin == "selected" else "edited"
            self._refresh()

    def add_span(self) -> None:
        """Keep the current answer as a span and start another (multi-chunk answers)."""
        self._act()
        if len(self.selection) == 3 and list(self.selection) not in [s[:3] for s in self.spans]:
            self.spans = [*self.spans, [*self.selection, self.origin]]
        self.selection, self.marked = [], []

    def toggle_must_mention(self, text: str) -> None:
        self._act()
        self.must_mention = ([m for m in self.must_mention if m != text]
                             if text in self.must_mention else [*self.must_mention, text])

    def set_category(self, category: str) -> None:
        """Set this question's category (it starts empty for every question)."""
        self._act()
        self.category = category.strip()

    def same_as_last(self) -> None:
        """This question's category is the last saved one."""
        self.set_category(self.last_category)

    def _all_spans(self) -> list[list[Any]]:
        out = [list(s) for s in self.spans]
        if len(self.selection) == 3 and list(self.selection) not in [s[:3] for s in out]:
            out.append([*self.selection, self.origin])
        return out

    def _refresh(self) -> None:
        """Suggestions and warnings for the current spans."""
        spans = self._all_spans()
        texts = [self._readable(d).text[a:b] for d, a, b, _ in spans]
        self.suggestions = list(dict.fromkeys(
            [*(m for m in self.must_mention if any(m in t for t in texts)),
             *(s for t in texts[::-1] for s in suggest_must_mention(t))]))
        try:
            self.warnings = self.session.warnings([(d, a, b) for d, a, b, _ in spans])
        except InputError as exc:
            self.warnings = [str(exc)]

    def save(self, answerable: bool = True) -> None:
        """Validate and append the current question (with how it was labelled); open the
        next one."""
        spans = self._all_spans() if answerable else []
        origins = {o for *_, o in spans}
        record = self._record() | {"actions": self.actions + 1}
        if answerable:
            record["span"] = ("suggested" if origins == {"suggested"} else
                              "selected" if "selected" in origins else "edited")
        before = {n: getattr(self, n) for n in _STATE}
        try:
            self.session.save(self.current_qid, [(d, a, b) for d, a, b, _ in spans],
                              self.must_mention if answerable else (),
                              self.category if answerable else "", answerable=answerable,
                              labelling=record)
        except (InputError, ValueError) as exc:
            self.actions += 1
            self.status = str(exc)
            return
        qid = self.current_qid
        self._undo.append(("disk", {"qid": qid, "state": before}))
        if answerable and self.category:
            self.last_category = self.category
        self.next_question()
        self.status = self.status or f"saved {qid}"

    def unanswerable(self) -> None:
        self.save(answerable=False)

    def skip(self) -> None:
        """Skip this question (it waits in the skipped queue); open the next one."""
        qid, before = self.current_qid, {n: getattr(self, n) for n in _STATE}
        self.session.skip(qid, self._record() | {"actions": self.actions + 1})
        self._undo.append(("disk", {"qid": qid, "state": before}))
        self.next_question()
        self.status = self.status or f"skipped {qid}"

    def open_skipped(self) -> None:
        """Open the first question of the skipped queue."""
        queue = self.session.skipped_queue
        if queue:
            self.next_question(queue[0].qid)
        else:
            self.status = "no skipped questions"

    def undo(self) -> None:
        """Undo the last action, whatever it was: a save or a skip comes off the disk and
        its question comes back as it was; anything else is put back as it was."""
        if not self._undo:
            self.status = "nothing to undo"
            return
        kind, what = self._undo[-1]
        if kind == "state":
            self._undo.pop()
            self._restore(what)
            self.actions += 1
            self.status = "undone"
            return
        try:
            qid = self.session.undo()
        except InputError as exc:
            self.status = str(exc)
            return
        self._undo.pop()
        self._open(qid)
        self._restore(what["state"])
        self.status = f"undid {qid}"

    def next_question(self, qid: str | None = None) -> None:
        """Reload the session from disk and show ``qid`` or the first pending question: its
        text searched, the proposed answer selected, nothing carried over from the last
        (edits of the question left are no longer undoable; its save or skip still is)."""
        while self._undo and self._undo[-1][0] == "state":
            self._undo.pop()
        self._open(qid)

    def _open(self, qid: str | None) -> None:
        self.session.reload()
        pending = self.session.pending
        c = self.session.candidate(qid) if qid else (pending[0] if pending else None)
        with self.hold_sync():
            self.spans, self.selection, self.marked, self.must_mention = [], [], [], []
            self.category, self.origin, self.warnings, self.status = "", "", [], ""
            self.categories, self.progress = self.session.categories, self.session.progress
            self.skipped = [s.qid for s in self.session.skipped_queue]
            self.current_qid, self.question = (c.qid or "", c.question) if c else ("", "")
            self.actions = 0
            self._started = time.monotonic()
            if c is None:
                self._show("")
                self.query, self.bm25_hits, self.dense_hits = "", [], []
                self.suggestions = []
                self.status = "all questions labelled or skipped"
            elif c.qid in self._review:
                self._open_review(c.qid or "")
            else:
                self._search(c.question)

    def _readable(self, doc_id: str) -> Document:
        """Document ``doc_id``, refused (one line) when this labeller may not read it."""
        doc = self.corpus.get(doc_id)
        if doc is None or not self.reader.can_read(doc):
            raise InputError(f"document {doc_id!r}", "is not a document this labeller may read",
                             field="doc_id")
        return doc

    def _open_review(self, qid: str) -> None:
        """Show a drifted item at its suggestion, with what its quote was (see for_review)."""
        moves, item = self._review[qid], self._originals[qid]
        if not self.session.can_see(item):
            self.status = f"review {qid}: {WITHHELD}; skip it"
            return
        self.category, self.must_mention = item.category, list(item.answer_must_mention)
        self.query, self.bm25_hits, self.dense_hits = "", [], []
        first = next((m for m in moves if m.new_start is not None), moves[0])
        if first.doc_id not in self.corpus:
            self._show("")
            self.status = f"review {qid}: {first.reason}; mark it unanswerable or skip it"
            return
        start, end = first.new_start or 0, first.new_end or 0
        self._show(first.doc_id, start, end)
        if end > start:
            self.selection, self.origin = [first.doc_id, start, end], "suggested"
        self._refresh()
        quotes = "; ".join(f"'{m.quote}' ({m.method} {m.score:.0f}: {m.reason or 'review'})"
                           for m in moves)
        self.status = (f"review {qid}: the quote no longer matches its document: {quotes}. "
                       + ("The suggestion is selected: save confirms it, or select where it "
                          "is now" if end > start else "Select where it is now")
                       + "; unanswerable if the document no longer says it.")

    def _on_msg(self, _: Any, content: Mapping[str, Any], _buffers: Any) -> None:
        cmd = str(content.get("cmd"))
        simple = {"save": self.save, "unanswerable": self.unanswerable, "skip": self.skip,
                  "undo": self.undo, "add_span": self.add_span, "mention": self.mention_marked,
                  "answer_marked": self.answer_marked, "same_as_last": self.same_as_last,
                  "open_skipped": self.open_skipped}
        try:
            if cmd == "search":
                self.search(str(content.get("query", "")))
            elif cmd == "open":
                self.show_document(str(content["doc_id"]), int(content.get("start", 0)),
                                   int(content.get("end", 0)))
            elif cmd in ("select", "mark"):
                getattr(self, cmd)(int(content["start"]), int(content["end"]))
            elif cmd == "grow":
                self.grow(str(content["unit"]), int(content["by"]), str(content["side"]))
            elif cmd == "toggle":
                self.toggle_must_mention(str(content["text"]))
            elif cmd == "category":
                self.set_category(str(content["value"]))
            elif cmd == "goto":
                self.next_question(str(content["qid"]).strip())
            elif cmd in simple:
                simple[cmd]()
        except Exception as exc:  # shown in the view, never lost
            self.status = f"{cmd}: {exc}"

    def _repr_html_(self) -> str:
        return labeller_html(self.session)
