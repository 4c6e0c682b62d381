"""Failure-trace viewer: what one question went through, from retrieval to the answer.

``trace_viewer_html`` is the static form (reports, tests): the question, the golden evidence
(quoted), the diagnosis labels and per-fact statuses, the answer with each ``[Pn]`` citation
linked to its passage, the context the model saw (labels, versions, gold marked, what was
dropped and why) and the ranked retrieved chunks with the point where the context budget cut.
Document text is re-read from ``chunks`` / ``corpus`` (traces hold ids only), always
HTML-escaped, with bidirectional controls shown as ``[U+202E]``
(:func:`~workbench.text.neutralise_bidi`). For a trace recorded as a user
(``trace.user_groups`` set) only recorded chunks are shown, and each one only when
:func:`~workbench.corpus.can_read_chunk` allows it (the chunk's own ``acl`` as well as its
document's). When the golden item's evidence is not readable for that user
(:func:`~workbench.golden.can_read_item`, or the trace says ``evidence_withheld``), its
quotes, must-mention strings, grade details, gold marks and the ids of its documents are left
out, and the view says only that evidence was withheld. ``TraceViewer`` adds filters (triage
cell, category, diagnosis label) and prev/next, and exposes ``selected_qid``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import ipywidgets as widgets

from workbench.corpus import Chunk, Document, can_read, can_read_chunk
from workbench.corpus.reader import UNRESTRICTED, Reader, require_reader
from workbench.diagnose import (
    LABELS,
    WITHHELD,
    Diagnosis,
    Trace,
    Triage,
    diagnose_trace,
    quadrant,
    trace_relevance,
)
from workbench.evaluation.failures import Failures
from workbench.generation.context import RESTRICTED, citation_marks
from workbench.golden import GoldenItem, can_read_item
from workbench.metrics import DEFAULT_EVIDENCE_THRESHOLD
from workbench.text import escape_html as _esc
from workbench.widgets.keywords import refuse_unknown_keywords
from workbench.widgets.trace_viewer_worst import worst_traces

__all__ = ["ANSWER_WITHHELD", "TraceViewer", "trace_viewer_html", "viewed_as",
           "worst_traces_html"]

#: What the viewer shows for an answer that rests on a passage its reader may not read.
ANSWER_WITHHELD = "(answer withheld: it rests on a passage this reader may not read)"

STYLE = """<style>
.wb-trace{font-family:system-ui,sans-serif;font-size:13px;line-height:1.45;border:1px solid #ccc;
  padding:8px 10px;margin:6px 0;max-width:1100px}
.wb-trace h4{margin:10px 0 4px;font-size:13px;color:#333}
.wb-trace table{border-collapse:collapse;font-size:12px}
.wb-trace td,.wb-trace th{border-bottom:1px solid #eee;padding:2px 6px;text-align:left;
  vertical-align:top}
.wb-text{white-space:pre-wrap;font-family:ui-monospace,monospace;font-size:12px;
  background:#fafafa;border-left:3px solid #ccc;padding:3px 6px;margin:2px 0 6px}
.wb-gold-row{background:#e6f4ea}.wb-old{color:#b06000}.wb-bad{color:#d93025;font-weight:bold}
.wb-ok{color:#188038;font-weight:bold}.wb-cut td{color:#d93025;border-top:2px dashed #d93025}
.wb-chip{display:inline-block;border-radius:9px;padding:0 8px;margin:0 4px 2px 0;
  background:#fce8e6;color:#a50e0e;font-size:12px}
.wb-chip.wb-fine{background:#e6f4ea;color:#137333}
.wb-answer{font-size:14px;background:#f1f3f4;padding:4px 8px}
.wb-unknown{color:#d93025;text-decoration:line-through}
.wb-trace summary{cursor:pointer;margin:2px 0}
</style>"""

def _uid(trace: Trace) -> str:
    slug = re.sub(r"[^A-Za-z0-9_-]", "_", f"{trace.qid}-{trace.mode}")[:40]
    digest = hashlib.sha1(f"{trace.qid}|{trace.mode}|{trace.system}".encode()).hexdigest()
    return f"{slug}-{digest[:6]}"


def _text(trace: Trace, cid: str, doc_id: str, start: int | None, end: int | None,
          chunks: Mapping[str, Chunk], corpus: Mapping[str, Document]) -> str | None:
    """A recorded chunk's text (from the chunks, else the corpus by recorded offsets), or
    None when it is unknown or, for a trace recorded as a user, not readable by them."""
    doc = corpus.get(chunks[cid].doc_id if cid in chunks else doc_id)
    groups = trace.user_groups
    if cid in chunks:
        chunk = chunks[cid]
        return chunk.text if can_read_chunk(groups, chunk, doc) else None
    if doc is None or start is None or end is None:
        return None
    if groups is not None and (not can_read(groups, doc.acl) or any(
            c.doc_id == doc.id and c.start < end and start < c.end
            and not can_read_chunk(groups, c, doc) for c in chunks.values())):
        return None
    return doc.text[start:end]


def _version(trace: Trace, doc_id: str) -> str:
    meta = trace.doc_versions.get(doc_id, {})
    parts = [f"v{meta['version']}" if "version" in meta else "",
             f"superseded by {meta['superseded_by']}" if meta.get("superseded_by")
             else str(meta.get("status", ""))]
    shown = ", ".join(p for p in parts if p)
    css = ' class="wb-old"' if trace.is_superseded(doc_id) else ""
    return f"<span{css}>{_esc(shown)}</span>" if shown else ""


def _marked(text: str, start: int | None, doc_id: str, item: GoldenItem | None) -> str:
    """Escaped ``text`` (a chunk starting at ``start`` in ``doc_id``) with the golden
    evidence inside it highlighted."""
    if item is None or start is None:
        return _esc(text)
    cuts = sorted((max(ev.start - start, 0), min(ev.end - start, len(text)))
                  for ev in item.evidence if ev.doc_id == doc_id)
    out, pos = [], 0
    for a, b in cuts:
        if b <= a or b <= pos:
            continue
        a = max(a, pos)
        out += [_esc(text[pos:a]), f'<mark title="golden evidence">{_esc(text[a:b])}</mark>']
        pos = b
    return "".join(out) + _esc(text[pos:])


def _answer_html(trace: Trace, uid: str) -> str:
    """The escaped answer, each citation label linked to its passage anchor."""
    out, pos = [], 0
    text = trace.answer
    for mark in citation_marks(text):
        out.append(_esc(text[pos:mark.start]))
        links = []
        for lab in mark.labels:
            if lab in trace.labels:
                links.append(f'<a href="#wb-{uid}-{lab}" title="{_esc(trace.labels[lab])}">'
                             f"{lab}</a>")
            else:
                links.append(f'<span class="wb-unknown" title="not in the context">{lab}</span>')
        out.append("[" + ", ".join(links) + "]")
        pos = mark.end
    out.append(_esc(text[pos:]))
    return "".join(out) or "<i>(empty answer)</i>"


def _grade_html(trace: Trace, diagnosis: Diagnosis | None, withheld: bool) -> str:
    passed = trace.passed if trace.grade is not None else (diagnosis.passed if diagnosis
                                                          else None)
    verdict = {True: '<span class="wb-ok">passed</span>',
               False: '<span class="wb-bad">failed</span>', None: "<i>undecided</i>"}[passed]
    grade = trace.grade or {}
    details = WITHHELD if withheld else grade_details(grade.get("details") or {})
    method = f" by {_esc(grade['method'])}" if grade.get("method") else ""
    error = f' · <span class="wb-bad">error: {_esc(trace.error)}</span>' if trace.error else ""
    return f"<div>{verdict}{method} <small>{_esc(details)}</small>{error}</div>"


def grade_details(details: Mapping[str, Any], width: int = 300) -> str:
    """A grade's details as a person reads them: the must-mention facts missing out of those
    required (``missing "14 days" (1 of 1 required)``), other fields as ``name: value`` with
    lists joined and numbers rounded; cut at a word, never mid-word, past ``width``."""
    details = dict(details)
    parts = []
    if isinstance(details.get("missing"), list) and isinstance(details.get("required"), list):
        missing, required = details.pop("missing"), details.pop("required")
        parts.append(f"missing {', '.join(_quoted(m) for m in missing)} "
                     f"({len(missing)} of {len(required)} required)" if missing
                     else f"all {len(required)} required mentioned")
    for name, value in details.items():
        if isinstance(value, list):
            value = ", ".join(_quoted(v) if isinstance(v, str) else _pairs(v) for v in value)
        elif isinstance(value, float):
            value = f"{value:.3f}"
        parts.append(f"{name}: {value}")
    text = " ".join("; ".join(parts).split())
    if len(text) <= width:
        return text
    return text[:width - 1].rsplit(" ", 1)[0] + " …"  # cut at a word


def _quoted(text: object) -> str:
    return f"“{text}”"


def _pairs(value: object) -> str:
    if isinstance(value, Mapping):
        return " ".join(f"{k}={_quoted(v) if isinstance(v, str) else v}" for k, v in value.items())
    return str(value)


def _diagnosis_html(d: Diagnosis | None, trace: Trace, chunks: Mapping[str, Chunk],
                    corpus: Mapping[str, Document], withheld: bool) -> str:
    if d is None:
        return "<div><i>no golden item: nothing to diagnose against</i></div>"
    if withheld:
        return f"<div><i>{_esc(WITHHELD)}</i></div>"

    def shown(cid: str) -> str:  # a chunk the user may not read is never named
        chunk = chunks.get(cid)
        if chunk is None:
            return cid if trace.user_groups is None or cid in trace.labels else RESTRICTED
        return cid if can_read_chunk(trace.user_groups, chunk, corpus.get(chunk.doc_id)) \
            else RESTRICTED

    chips = [f'<span class="wb-chip" title="{_esc(LABELS[lab])}">{_esc(lab)}: '
             f"{_esc(', '.join(dict.fromkeys(map(shown, d.evidence.get(lab, ())))))}</span>"
             for lab in d.labels]
    if not chips:
        chips = ['<span class="wb-chip wb-fine">ids line up (retrieval, context and '
                 "citations)</span>"]
    rows = "".join(f"<tr><td>{_esc(f.fact)}</td>"
                   f'<td class="{"wb-ok" if f.status == "cited" else "wb-bad"}">'
                   f"{_esc(f.status)}</td><td>{_esc(', '.join(f.chunk_ids) or '-')}</td></tr>"
                   for f in d.facts)
    facts = (f"<table><tr><th>must mention</th><th>status</th><th>recorded chunks holding it"
             f"</th></tr>{rows}</table>") if rows else ""
    return f"<div>{''.join(chips)}</div>{facts}"


def _evidence_html(item: GoldenItem | None, corpus: Mapping[str, Document],
                   withheld: bool) -> str:
    if item is None:
        return "<i>not in the golden set</i>"
    if not item.answerable:
        return "<i>unanswerable: the documents do not answer this; a refusal passes</i>"
    if withheld:
        return f"<i>{_esc(WITHHELD)}</i>"
    parts = []
    for ev in item.evidence:
        doc = corpus.get(ev.doc_id)
        quote = doc.text[ev.start:ev.end] if doc is not None else ev.text
        parts.append(f"<div><b>{_esc(ev.doc_id)}</b> [{ev.start}:{ev.end}]"
                     f'<div class="wb-text">{_esc(quote)}</div></div>')
    if not item.evidence:
        parts.append(f"<div>labelled chunks: {_esc(', '.join(item.chunk_labels))}</div>")
    if item.answer_must_mention:
        parts.append("<div>answer must mention: "
                     + ", ".join(f"<code>{_esc(s)}</code>" for s in item.answer_must_mention)
                     + "</div>")
    return "".join(parts)


def viewed_as(trace: Trace, user_groups: Reader | Iterable[str] | str | None,
              chunks: Mapping[str, Chunk], corpus: Mapping[str, Document],
              *, surface: str = "trace_viewer_html") -> Trace:
    """``trace`` as its reader sees it: the reader is ``user_groups``, else the user the
    trace was recorded for, else :func:`~workbench.corpus.reader.require_reader` decides
    (refused where the corpus declares access). The answer is withheld when it rests on a
    passage this reader may not read."""
    if user_groups is None and trace.user_groups is not None:
        return trace
    reader = require_reader(surface, user_groups, documents=corpus, chunks=chunks.values())
    if reader.groups is None:
        return replace(trace, user_groups=None)
    viewed = replace(trace, user_groups=tuple(sorted(reader.groups)))
    if any(_text(viewed, p.chunk_id, p.doc_id, p.start, p.end, chunks, corpus) is None
           for p in trace.context):
        viewed = replace(viewed, answer=ANSWER_WITHHELD, citations={})
    return viewed


def trace_viewer_html(trace: Trace, item: GoldenItem | None,
                      chunks: Sequence[Chunk] | Mapping[str, Chunk],
                      corpus: Mapping[str, Document], *, diagnosis: Diagnosis | None = None,
                      quadrant: str | None = None, snippet: int = 220,
                      user_groups: Reader | Iterable[str] | str | None = None) -> str:
    """Static HTML of one trace (see module doc) as ``user_groups`` sees it
    (:func:`viewed_as`). ``diagnosis`` is computed when not given."""
    by_id = chunks if isinstance(chunks, Mapping) else {c.id: c for c in chunks}
    trace = viewed_as(trace, user_groups, by_id, corpus)
    if diagnosis is None and item is not None:
        diagnosis = diagnose_trace(trace, item, list(by_id.values()), corpus)
    withheld = item is not None and (trace.evidence_withheld or not can_read_item(
        trace.user_groups, item, by_id, corpus))
    marked_item = None if withheld else item
    uid = _uid(trace)
    gold = set() if withheld else {c for unit in (diagnosis.required if diagnosis else ())
                                   for c in unit}
    star = '<span class="wb-ok" title="holds golden evidence">★</span>'
    head = " · ".join(_esc(x) for x in (trace.category, trace.mode, trace.model_id,
                                        trace.prompt_version) if x)
    quad = f' · triage <b>{_esc(quadrant)}</b>' if quadrant else ""
    question = f"<div><b>Question:</b> {_esc(WITHHELD if withheld else trace.query)}</div>"
    if trace.rewritten_query and not withheld:
        question += f"<div><b>Rewritten:</b> {_esc(trace.rewritten_query)}</div>"

    passages = []
    for p in trace.context:
        text = _text(trace, p.chunk_id, p.doc_id, p.start, p.end, by_id, corpus)
        body = (_marked(text, p.start, p.doc_id, marked_item) if text is not None
                else "<i>(text not available)</i>")
        first = " ".join((text or "").split())[:snippet // 2]
        passages.append(f'<details id="wb-{uid}-{_esc(p.label)}"><summary><b>'
                        f"[{_esc(p.label)}]</b> {_esc(p.chunk_id)} {_version(trace, p.doc_id)} "
                        f"{star if p.chunk_id in gold else ''} <small>{_esc(first)}…</small>"
                        f'</summary><div class="wb-text">{body}</div></details>')
    restricted = sum(1 for c, _ in trace.dropped if c == RESTRICTED)
    dropped = [f"{_esc(c)}: {_esc(w)}" for c, w in trace.dropped if c != RESTRICTED]
    if restricted:
        dropped.append(f"{restricted} chunk(s) withheld by access control")
    budget = (f"budget {trace.budget_tokens} tokens, used {trace.tokens_used}"
              if trace.budget_tokens is not None else f"no budget, {trace.tokens_used} tokens")
    context = ("".join(passages) or "<i>(empty context)</i>") + (
        f"<div><b>dropped</b> ({_esc(budget)}): {'; '.join(dropped)}</div>" if dropped
        else f"<div><small>{_esc(budget)}; nothing dropped</small></div>")

    rows, cut_shown = [], False
    fate = {p.chunk_id: p.label for p in trace.context}
    for h in trace.retrieved:
        why = trace.drop_reason(h.chunk_id)
        if why == "budget" and not cut_shown:
            rows.append(f'<tr class="wb-cut"><td colspan="6">context budget cut here '
                        f"({_esc(budget)})</td></tr>")
            cut_shown = True
        text = _text(trace, h.chunk_id, h.doc_id, h.start, h.end, by_id, corpus) or ""
        short = text[:snippet] + ("…" if len(text) > snippet else "")
        where = (f'<a href="#wb-{uid}-{fate[h.chunk_id]}">{fate[h.chunk_id]}</a>'
                 if h.chunk_id in fate else f'<span class="wb-bad">{_esc(why or "not sent")}'
                                             "</span>")
        rank = h.rank if h.source != "expansion" else "exp"
        score = f"{h.score:.3f}" if h.score is not None else ""
        css = ' class="wb-gold-row"' if h.chunk_id in gold else ""
        rows.append(f"<tr{css}><td>{_esc(rank)}</td><td>{_esc(h.chunk_id)} "
                    f"{star if h.chunk_id in gold else ''}<br>{_version(trace, h.doc_id)}</td>"
                    f"<td>{score}</td><td>{where}</td><td><small>{_esc(short)}</small></td></tr>")
    ranked = (f"<table><tr><th>rank</th><th>chunk</th><th>score</th><th>in context</th>"
              f"<th>text</th></tr>{''.join(rows)}</table>" if rows
              else "<i>(nothing recorded)</i>")
    timing = ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in trace.timing.items())
    return (f'{STYLE}<div class="wb-trace" data-qid="{_esc(trace.qid)}">'
            f"<div><b>{_esc(trace.qid)}</b> · {head}{quad}</div>{question}"
            f"<h4>Diagnosis</h4>{_diagnosis_html(diagnosis, trace, by_id, corpus, withheld)}"
            f"<h4>Answer</h4><div class=\"wb-answer\">{_answer_html(trace, uid)}</div>"
            f"{_grade_html(trace, diagnosis, withheld)}"
            f"<h4>Golden evidence</h4>{_evidence_html(item, corpus, withheld)}"
            f"<h4>Context the model saw</h4><small>each passage is folded: click it to read "
            f"it</small>{context}"
            f"<h4>Retrieved (ranked)</h4>{ranked}"
            f"<div><small>{_esc(timing)}</small></div></div>")


def worst_traces_html(traces: Sequence[Trace], golden: Iterable[GoldenItem],
                      chunks: Sequence[Chunk], corpus: Mapping[str, Document], *, n: int = 10,
                      k: int = 5, evidence_threshold: float = DEFAULT_EVIDENCE_THRESHOLD,
                      user_groups: Reader | Iterable[str] | str | None = None) -> str:
    """Static HTML: the ``n`` worst failures, each followed by its trace as ``user_groups``
    sees it (:func:`viewed_as`)."""
    by_id = {c.id: c for c in chunks}
    traces = [viewed_as(t, user_groups, by_id, corpus, surface="worst_traces_html") for t in traces]
    items = {i.qid: i for i in golden}
    reader = user_groups if user_groups is not None else _reader_of(traces)
    worst = worst_traces(traces, items.values(), chunks, n=n, k=k,
                         evidence_threshold=evidence_threshold,
                         documents=corpus, user_groups=reader)
    if not worst:
        return f"<p>no traced question fails at k={k}</p>"
    first: dict[str, Trace] = {}
    for t in traces:
        first.setdefault(t.qid, t)
    parts = [f"<p>The {len(worst)} worst of {len(first)} traced questions at k={k}, worst "
             "first (lowest recall, then coverage, then the latest first find)</p>"]
    for rank, failure in enumerate(worst, start=1):
        trace = first[failure.qid]
        parts.append(f'<section class="wb-worst"><h3>{rank}. {_esc(failure.qid)}</h3>'
                     f"{failure.html()}"
                     + trace_viewer_html(trace, items.get(trace.qid), chunks, corpus,
                                         user_groups=reader) +
                     "</section>")
    return "".join(parts)


def _reader_of(traces: Sequence[Trace]) -> Reader:
    """The one reader of traces already viewed (:func:`viewed_as`): a mix of readers is
    read as a user in no group (nothing restricted shown)."""
    views = {t.user_groups for t in traces}
    if len(views) == 1:
        (groups,) = views
        return UNRESTRICTED if groups is None else Reader(frozenset(groups))
    return Reader(frozenset())


ALL = "all"
NO_LABEL = "(no label)"
RECORDED, WORST = "recorded", "worst"
NA_LABEL = "n/a (no verdict)"
NA_NOTE = ("triage n/a: no verdict for the question: it is not in the golden set, its "
           "answer was not graded, or whether its evidence was retrieved is undecided")


@refuse_unknown_keywords
class TraceViewer(widgets.VBox):  # type: ignore[misc]  # ipywidgets ships no types
    """Browse traces with filters and prev/next (above and below the trace); it opens at the
    first trace that passes the filters. ``selected_qid`` / ``selected_trace`` are readable
    from Python; ``select(qid)``, ``next()`` and ``prev()`` move the selection; the filters
    are ``quadrant``, ``category`` and ``label`` dropdowns, and ``order`` shows the traces
    as recorded or the ``worst`` worst failures at ``k`` first, each with its failure
    (:mod:`~workbench.widgets.trace_viewer_worst`)."""

    def __init__(self, traces: Iterable[Trace], golden: Iterable[GoldenItem],
                 chunks: Sequence[Chunk], corpus: Mapping[str, Document],
                 *, triage: Triage | Mapping[str, str] | None = None, only_failing: bool = False,
                 worst: int = 10, k: int = 5,
                 evidence_threshold: float = DEFAULT_EVIDENCE_THRESHOLD,
                 user_groups: Reader | Iterable[str] | str | None = None):
        self.corpus, self.chunks = corpus, {c.id: c for c in chunks}
        self.traces = [viewed_as(t, user_groups, self.chunks, corpus, surface="TraceViewer")
                       for t in traces]
        self.reader = user_groups if user_groups is not None else _reader_of(self.traces)
        self.items = {i.qid: i for i in golden}
        relevance = trace_relevance(self.traces, self.items.values(), chunks)
        self.diagnoses = [diagnose_trace(t, self.items[t.qid], chunks, corpus,
                                         relevance=relevance)
                          if t.qid in self.items else None for t in self.traces]
        cells = _quadrants(triage)
        self.quadrants = [cells.get(t.qid) or _derived(d) for t, d in
                          zip(self.traces, self.diagnoses, strict=True)]
        labels = [lab for lab in LABELS if any(d and lab in d.labels for d in self.diagnoses)]
        self.quadrant = widgets.Dropdown(
            options=[(NA_LABEL if q == "n/a" else q, q) for q in [ALL, *sorted(set(
                self.quadrants))]], description="triage")
        self._worst_args = (list(chunks), worst, k, evidence_threshold)
        self._failures: Failures | None = None
        self.order = widgets.Dropdown(options=[("as recorded", RECORDED), (
            f"worst {worst} failures first (k={k})", WORST)], description="order")
        cats = sorted({t.category for t in self.traces})
        self.category = widgets.Dropdown(options=[ALL, *cats], description="category")
        self.label = widgets.Dropdown(options=[ALL, *labels, NO_LABEL], description="diagnosis")
        self.failing = widgets.Checkbox(value=only_failing, description="failing only",
                                        indent=False)
        self.prev_button, self.next_button, self.position = self._nav()
        below = self._nav()  # the same controls again under the trace
        self.view = widgets.HTML()
        self.errors = widgets.Output()
        self.filtered: list[int] = []
        self._at = 0
        self.position_below = below[2]
        for control in (self.quadrant, self.category, self.label, self.failing, self.order):
            control.observe(self._refilter, names="value")
        na = (f"<small>{_esc(NA_NOTE)}</small>" if "n/a" in self.quadrants else "")
        super().__init__([widgets.HBox([self.quadrant, self.category, self.label,
                                        self.failing]),
                          widgets.HBox([self.order, widgets.HTML(na)]),
                          widgets.HBox([self.prev_button, self.next_button, self.position]),
                          self.view, widgets.HBox(list(below)), self.errors])
        self._refilter()

    def _nav(self) -> tuple[Any, Any, Any]:
        back = widgets.Button(description="◀ prev", layout={"width": "80px"})
        forward = widgets.Button(description="next ▶", layout={"width": "80px"})
        back.on_click(lambda _: self.prev())
        forward.on_click(lambda _: self.next())
        return back, forward, widgets.HTML()

    @property
    def failures(self) -> Failures:
        """The worst failures among the traces (computed when first asked for)."""
        if self._failures is None:
            chunks, n, k, threshold = self._worst_args
            self._failures = worst_traces(self.traces, self.items.values(), chunks, n=n, k=k,
                                          evidence_threshold=threshold, documents=self.corpus,
                                          user_groups=self.reader)
        return self._failures

    @property
    def selected_trace(self) -> Trace | None:
        return self.traces[self.filtered[self._at]] if self.filtered else None

    @property
    def selected_qid(self) -> str | None:
        trace = self.selected_trace
        return trace.qid if trace else None

    @property
    def qids(self) -> list[str]:
        """The qids that pass the filters, in order."""
        return [self.traces[i].qid for i in self.filtered]

    def _keep(self, i: int) -> bool:
        d, q = self.diagnoses[i], self.quadrants[i]
        if self.quadrant.value != ALL and q != self.quadrant.value:
            return False
        if self.category.value != ALL and self.traces[i].category != self.category.value:
            return False
        if self.failing.value and (d is None or (d.passed is not False and not d.labels)):
            return False
        if self.label.value == NO_LABEL:
            return d is not None and not d.labels
        return self.label.value == ALL or (d is not None and self.label.value in d.labels)

    def _refilter(self, _change: Any = None) -> None:
        with self.errors:
            current = self.filtered[self._at] if self.filtered else None
            kept = [i for i in range(len(self.traces)) if self._keep(i)]
            if self.order.value == WORST:
                first: dict[str, int] = {}
                for i in kept:
                    first.setdefault(self.traces[i].qid, i)
                kept = [first[f.qid] for f in self.failures if f.qid in first]
            self.filtered = kept
            self._at = self._first_failure() if _change is not None else (
                self.filtered.index(current) if current in self.filtered else 0)
            self._repaint()

    def _first_failure(self) -> int:
        """Where a newly chosen filter opens: its first failed trace (else its first)."""
        return next((n for n, i in enumerate(self.filtered) if self.traces[i].passed is False),
                    0)

    def select(self, qid: str) -> None:
        """Show ``qid`` (clearing filters that hide it)."""
        where = [n for n, i in enumerate(self.filtered) if self.traces[i].qid == qid]
        if not where:
            if qid not in {t.qid for t in self.traces}:
                raise KeyError(f"qid {qid!r} has no trace here")
            for control in (self.quadrant, self.category, self.label):
                control.value = ALL
            self.failing.value = False
            where = [n for n, i in enumerate(self.filtered) if self.traces[i].qid == qid]
        self._at = where[0]
        self._repaint()

    def next(self) -> None:
        if self.filtered:
            self._at = (self._at + 1) % len(self.filtered)
            self._repaint()

    def prev(self) -> None:
        if self.filtered:
            self._at = (self._at - 1) % len(self.filtered)
            self._repaint()

    def to_html(self) -> str:
        if not self.filtered:
            return "<div class=\"wb-trace\"><i>no trace matches these filters</i></div>"
        i = self.filtered[self._at]
        trace = self.traces[i]
        failure = "".join(f.html() for f in self.failures if f.qid == trace.qid) \
            if self.order.value == WORST else ""
        return failure + trace_viewer_html(trace, self.items.get(trace.qid), self.chunks,
                                           self.corpus, diagnosis=self.diagnoses[i],
                                           quadrant=self.quadrants[i],
                                           user_groups=self.reader)

    def _repaint(self) -> None:
        with self.errors:
            n = len(self.filtered)
            self.position.value = (f"{self._at + 1} of {n} · <b>{_esc(self.selected_qid)}</b>"
                                   if n else "0 of 0")
            self.position_below.value = self.position.value
            self.view.value = self.to_html()


def _quadrants(triage: Triage | Mapping[str, str] | None) -> dict[str, str]:
    if triage is None:
        return {}
    if isinstance(triage, Mapping):
        return {str(k): str(v) for k, v in triage.items()}
    rows = triage.rows
    return {str(q): str(c) for q, c in zip(rows["qid"], rows["quadrant"], strict=True)}


def _derived(d: Diagnosis | None) -> str:
    """The 2x2 cell from a diagnosis when no triage is given (n/a when undecided)."""
    if d is None or d.passed is None or d.retrieved_ok is None:
        return "n/a"
    return quadrant(d.retrieved_ok, d.passed)
