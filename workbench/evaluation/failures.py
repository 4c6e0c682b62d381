"""The worst failures of one configuration, read one by one (:func:`worst_failures`), and the
questions that flipped between two (:func:`flipped`).

"Worst" is an order, not a threshold: questions whose evidence was not all found at k
(``recall@k < 1``, or ``coverage@k < 1`` for evidence items) are ranked by the lowest
``recall@k``, then the lowest ``coverage@k`` (the share of the evidence characters the
top-k chunks hold; chunk-id items: their recall), then the latest rank at which the first
evidence is found (not found within the kept hits is worst), then qid. Relevance is judged
as by :func:`workbench.evaluate` (``evidence_threshold`` for evidence spans). Each failure
carries its evidence, what was retrieved instead (top-k, with the chunks that touch the
evidence marked) and the chunk boundaries around each evidence span (``|id|`` marks in the
text form, the chunk preview's ``wb-mark`` / ``wb-gold`` / ``wb-cut`` marks in HTML; a span
no single chunk holds whole is *cut*, as :func:`workbench.chunking.split_spans` says).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass

import numpy as np

from workbench.chunking import split_spans
from workbench.corpus import Chunk, Document, Span
from workbench.corpus.reader import Reader, require_reader
from workbench.evaluation.run import Run
from workbench.golden import GoldenItem, GoldenSet, can_read_item
from workbench.metrics import DEFAULT_EVIDENCE_THRESHOLD, Relevance, parse_metric
from workbench.stats import compare_paired
from workbench.text import escape_html

#: How a retrieved chunk the reader may not read is named.
RESTRICTED = "(restricted)"
#: Characters of context shown either side of an evidence span.
CONTEXT = 80


@dataclass(frozen=True)
class Failure:
    """One failing question: its scores at ``k``, its evidence, what was retrieved (``(rank,
    chunk id, touches the evidence, text)``, best first) and, per evidence span, the window
    around it as ``(text piece, chunk id starting there or "", piece inside the span)`` and
    whether the span is cut."""

    qid: str
    question: str
    category: str
    k: int
    _: KW_ONLY
    recall: float
    coverage: float
    first_rank: int | None
    evidence: tuple[tuple[str, int, int, str], ...]
    retrieved: tuple[tuple[int, str, bool, str], ...]
    windows: tuple[tuple[tuple[tuple[str, str, bool], ...], bool], ...]

    def text(self) -> str:
        found = "not found" if self.first_rank is None else f"first found at rank {self.first_rank}"
        lines = [f"{self.qid} [{self.category}] {self.question}",
                 f"  recall@{self.k} {self.recall:.2f}, coverage@{self.k} {self.coverage:.2f}, "
                 f"evidence {found}"]
        for (doc, start, end, _), (pieces, cut) in zip(self.evidence, self.windows,
                                                       strict=True):
            body = "".join((f"|{cid}|" if cid else "") + (f"[{t}]" if inside else t)
                           for t, cid, inside in pieces).replace("\n", " ")
            lines.append(f"  evidence {doc}[{start}:{end}]{' (cut)' if cut else ''}: {body}")
        for rank, cid, touches, text in self.retrieved:
            mark = "*" if touches else " "
            lines.append(f"  {rank:>2}{mark} {cid}: {_clip(text)}")
        return "\n".join(lines)

    def html(self) -> str:
        found = "not found" if self.first_rank is None else f"first found at rank {self.first_rank}"
        parts = [f"<h4>{escape_html(self.qid)} [{escape_html(self.category)}] "
                 f"{escape_html(self.question)}</h4><p>recall@{self.k} {self.recall:.2f}, "
                 f"coverage@{self.k} {self.coverage:.2f}, evidence {found}</p>"]
        for (doc, start, end, _), (pieces, cut) in zip(self.evidence, self.windows,
                                                       strict=True):
            span_class = "wb-cut" if cut else "wb-gold"
            body = "".join(
                (f'<span class="wb-mark">[{escape_html(cid)}]</span>' if cid else "")
                + (f'<span class="{span_class}">{escape_html(t)}</span>' if inside
                   else escape_html(t)) for t, cid, inside in pieces)
            parts.append(f'<div class="wb-preview"><b>{escape_html(doc)}[{start}:{end}]'
                         f'{" cut" if cut else ""}</b> {body}</div>')
        rows = "".join(f"<tr><td>{rank}</td><td>{'evidence' if touches else ''}</td>"
                       f"<td>{escape_html(cid)}</td><td>{escape_html(_clip(text))}</td></tr>"
                       for rank, cid, touches, text in self.retrieved)
        parts.append(f"<table><tr><th>rank</th><th></th><th>retrieved</th><th>text</th></tr>"
                     f"{rows}</table>")
        return "<div class='wb-failure'>" + "".join(parts) + "</div>"


def _clip(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[:width - 1] + "…"


class Failures(tuple[Failure, ...]):
    """The worst failures, worst first: ``text()``, ``_repr_html_`` (notebooks)."""

    def text(self) -> str:
        return "\n\n".join(f.text() for f in self) or "no failing question"

    def __str__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        return "".join(f.html() for f in self) or "<p>no failing question</p>"


def _window(span: tuple[str, int, int], chunks: Sequence[Chunk]
            ) -> tuple[tuple[tuple[str, str, bool], ...], bool]:
    """The text around ``span`` rebuilt from the chunks of its document, split at chunk
    starts and at the span's edges; and whether the span is cut."""
    doc, start, end = span
    mine = [c for c in chunks if c.doc_id == doc and c.end > start - CONTEXT
            and c.start < end + CONTEXT]
    lo = max(min((c.start for c in mine), default=start), start - CONTEXT)
    hi = min(max((c.end for c in mine), default=end), end + CONTEXT)
    chars: dict[int, str] = {}
    for c in mine:
        for i in range(max(c.start, lo), min(c.end, hi)):
            chars.setdefault(i, c.text[i - c.start])
    starts = {c.start: c.id for c in sorted(mine, key=lambda c: (c.start, c.end, c.id))
              if lo <= c.start < hi}
    cuts = sorted({lo, hi, *starts, *(p for p in (start, end) if lo < p < hi)})
    pieces = []
    for a, b in itertools.pairwise(cuts):
        text = "".join(chars.get(i, "…") for i in range(a, b))
        pieces.append((text, starts.get(a, ""), start <= a and b <= end))
    cut = bool(split_spans(mine, [Span(doc, start, end)]))
    return tuple(pieces), cut


def worst_failures(run: Run, golden: GoldenSet | Sequence[GoldenItem],
                   chunks: Sequence[Chunk] | None, *, n: int = 10, k: int = 5,
                   evidence_threshold: float = DEFAULT_EVIDENCE_THRESHOLD,
                   documents: Mapping[str, Document] | None = None,
                   user_groups: Reader | Iterable[str] | str | None = None) -> Failures:
    """The ``n`` worst failing questions of ``run`` at ``k`` (see the module docstring), as
    ``user_groups`` may see them (:func:`~workbench.corpus.reader.require_reader` over
    ``documents``): a question whose evidence they may not read is left out
    (:func:`~workbench.golden.can_read_item`), and so is the text of a chunk they may not
    read."""
    docs = documents if documents is not None else {}
    reader = require_reader("worst_failures", user_groups, documents=docs, chunks=chunks)
    if reader.groups is not None:
        every = {c.id: c for c in chunks or ()}
        golden = [i for i in golden if can_read_item(reader.groups, i, every, docs)]
    relevance = Relevance(golden, chunks, evidence_threshold=evidence_threshold)
    shown = reader.chunks(chunks or (), docs) if reader.groups is not None else chunks or ()
    by_id = {c.id: c for c in shown}
    ranked = {q: [h.chunk_id for h in run.hits.get(q, ())] for q in relevance.qids}
    metrics = [parse_metric(f"recall@{k}")]
    evidence_items = [q for q in relevance.qids if relevance.items[q].evidence]
    scores = relevance.score(ranked, metrics).values[metrics[0].name]
    cover: Mapping[str, float] = {}
    if evidence_items:
        cov = parse_metric(f"coverage@{k}")
        cover = relevance.score({q: ranked[q] for q in evidence_items}, [cov]).values[cov.name]
    rows = []
    for q in relevance.qids:
        if q not in scores:
            continue
        recall, coverage = float(scores[q]), float(cover.get(q, scores[q]))
        if recall >= 1.0 and coverage >= 1.0:
            continue
        first = relevance.first_found(q, ranked[q])
        rows.append((recall, coverage, -(first or np.inf), q, first))
    rows.sort()
    out = []
    for recall, coverage, _, q, first in rows[:n]:
        item = relevance.items[q]
        touching = relevance.touching(q)
        hits = [(rank, cid if cid in by_id or reader.groups is None else RESTRICTED,
                 cid in touching, by_id[cid].text if cid in by_id else "")
                for rank, cid in enumerate(ranked[q][:k], start=1)]
        ev = tuple((e.doc_id, e.start, e.end, e.text) for e in item.evidence)
        out.append(Failure(q, item.question, item.category, k, recall=recall, coverage=coverage,
                           first_rank=first, evidence=ev,
                           retrieved=tuple(hits), windows=tuple(_window((d, s, e), shown)
                                              for d, s, e, _ in ev)))
    return Failures(out)


@dataclass(frozen=True)
class Flipped:
    """The questions whose ``metric`` changed between ``baseline`` and ``candidate``:
    ``lost`` (worse under the candidate) and ``gained``, each ``(qid, before, after)``,
    biggest change first (the paired comparison's flips)."""

    metric: str
    baseline: str
    candidate: str
    _: KW_ONLY
    lost: tuple[tuple[str, float, float], ...]
    gained: tuple[tuple[str, float, float], ...]

    def text(self) -> str:
        lines = [f"{self.metric}: {self.candidate} vs {self.baseline}: {len(self.lost)} lost, "
                 f"{len(self.gained)} gained"]
        for name, rows in (("lost", self.lost), ("gained", self.gained)):
            lines += [f"  {name} {q}: {a:.2f} -> {b:.2f}" for q, a, b in rows]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        return f"<pre>{escape_html(self.text())}</pre>"


def flipped(baseline: Mapping[str, float], candidate: Mapping[str, float], metric: str,
            names: tuple[str, str]) -> Flipped:
    """The flips of ``candidate`` against ``baseline`` (per-question values on the same
    questions), through :func:`~workbench.stats.compare_paired`."""
    comparison = compare_paired(baseline, candidate, resamples=1, bootstrap_resamples=1)
    lost = tuple((str(f.qid), f.baseline, f.candidate) for f in comparison.flipped
                 if f.direction == "lost")
    gained = tuple((str(f.qid), f.baseline, f.candidate) for f in reversed(comparison.flipped)
                   if f.direction == "gained")
    return Flipped(metric, names[0], names[1], lost=lost, gained=gained)
