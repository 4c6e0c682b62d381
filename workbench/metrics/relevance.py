"""Relevance judged once, for every step downstream: :class:`Relevance` says, for each golden
item under one chunking, what counts as relevant, scores rankings against it, and answers
the questions triage, the oracle context and diagnosis ask (was it found within k? at which
rank? which chunks hold the gold evidence?). Each item is judged by its own labels:

* evidence spans -> ``evidence`` relevance (:mod:`~workbench.metrics.evidence`): the spans
  are the unit, the chunking is only how they are cut;
* chunk ids only (the seed format, graded ``relevance``) -> ``chunk_id`` relevance with
  trec_eval semantics (:mod:`~workbench.metrics.trec`).

Unanswerable items, and chunk-id items with no grade at the threshold, are excluded and
counted; no item is ever excluded because of how the corpus was chunked.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from workbench.corpus import Chunk, ChunkTable, Document
from workbench.golden import GoldenItem
from workbench.io import WorkbenchError, WorkbenchWarning
from workbench.metrics.evidence import (
    ChunkIndex,
    EvidenceSpan,
    ItemEvidence,
    cover_chunks,
    trace_ranking,
)
from workbench.metrics.evidence_batch import EvidenceBatch, JudgedItems
from workbench.metrics.intervals import paused_gc
from workbench.metrics.registry import (
    DEFAULT_EVIDENCE_THRESHOLD,
    DEFAULT_GRADE_THRESHOLD,
    Metric,
    relevance_label,
)
from workbench.metrics.spans import RangeIndex, span_value
from workbench.metrics.trec import score_queries

__all__ = ["Relevance", "Scores"]


@dataclass(frozen=True)
class Scores:
    """Per-question values of each metric (``values[metric][qid]``), and the questions left
    out of a metric with the reason (``excluded[reason]``)."""

    values: Mapping[str, Mapping[str, float]]
    excluded: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


class Relevance:
    """The judgments of a golden set under one chunking (see the module docstring).

    ``chunks`` is the chunking the rankings come from: evidence items need it (a ranking is
    only chunk ids; the chunks say where they lie); given as a
    :class:`~workbench.corpus.ChunkTable` built once, judging looks up the chunks of the
    judged documents in it instead of passing over the chunking. ``documents`` (optional)
    supplies the text of evidence spans that carry no quoted text. ``evidence_threshold`` is
    the share of a span's non-whitespace characters the retrieved chunks must hold for it to
    count as found; ``grade_threshold`` the lowest grade that is relevant for chunk-id labels.
    A chunk-id label that is not among ``chunks`` can never be retrieved: a WorkbenchWarning names
    it, unless ``chunking_complete=False`` (``chunks`` are only the retrieved ones, as from
    a production run's hits).
    """

    def __init__(self, golden: Iterable[GoldenItem],
                 chunks: Sequence[Chunk] | ChunkTable | None = None,
                 *,
                 evidence_threshold: float = DEFAULT_EVIDENCE_THRESHOLD,
                 grade_threshold: int = DEFAULT_GRADE_THRESHOLD,
                 documents: Mapping[str, Document] | None = None, chunking_complete: bool = True):
        if isinstance(evidence_threshold, bool) or not isinstance(evidence_threshold,
                                                                  int | float) \
                or not 0.0 < float(evidence_threshold) <= 1.0:
            raise WorkbenchError(f"evidence_threshold must be a number in (0, 1], the share of a "
                             f"span that must be retrieved; got {evidence_threshold!r}")
        if isinstance(grade_threshold, bool) or not isinstance(grade_threshold, int) \
                or grade_threshold < 1:
            raise WorkbenchError(
                f"grade threshold must be an integer >= 1, got {grade_threshold!r}")
        self.evidence_threshold = float(evidence_threshold)
        self.grade_threshold = grade_threshold
        self.items: dict[str, GoldenItem] = {}
        self.excluded: dict[str, list[str]] = {"unanswerable": [], "no_relevant_at_threshold": []}
        self._evidence: Mapping[str, ItemEvidence] = {}
        self._batch: EvidenceBatch | None = None  # the same judgments, as arrays
        self._qrels: dict[str, dict[str, int]] = {}
        self._ranges: RangeIndex | None = None
        needs_chunks = []
        for item in golden:
            if not item.answerable:
                self.excluded["unanswerable"].append(item.qid)
            elif item.judged_by_document:
                raise WorkbenchError(f"golden item {item.qid!r} labels whole documents "
                                 "(relevant_doc_ids): score it at document level "
                                 "(level='document')")
            elif item.evidence:
                needs_chunks.append(item.qid)
                self.items[item.qid] = item
            else:
                grades = {cid: 1 for cid in item.relevant_chunk_ids}
                grades.update(item.relevance)
                if any(g >= grade_threshold for g in grades.values()):
                    self.items[item.qid] = item
                    self._qrels[item.qid] = grades
                else:
                    self.excluded["no_relevant_at_threshold"].append(item.qid)
        # only the chunks of documents holding evidence are arrayed: judging costs what
        # they hold, not the corpus
        self.index = None if chunks is None else ChunkIndex(
            chunks, documents={ev.doc_id for q in needs_chunks for ev in self.items[q].evidence})
        if self.index is not None and chunking_complete:
            self._warn_unknown_labels(self.index)
        if needs_chunks and self.index is None:
            raise WorkbenchError(
                f"{len(needs_chunks)} golden item(s) are labelled with evidence spans (e.g. "
                f"{needs_chunks[0]!r}): pass the chunks the retriever returns (chunks=... in "
                "Python, --chunks CHUNKS.jsonl or --chunker SPEC on the command line), so the "
                "spans can be found in them")
        if needs_chunks:
            assert self.index is not None
            with paused_gc():
                groups = [self._item_spans(self.items[qid], documents) for qid in needs_chunks]
                met = self.index.meet([s for spans in groups for s in spans])
                self._evidence = JudgedItems(self.index, needs_chunks, groups, met)
                self._batch = EvidenceBatch.of(groups, met, self.index.row_ids)

    def _warn_unknown_labels(self, index: ChunkIndex) -> None:
        absent = index.unknown(cid for grades in self._qrels.values()
                               for cid, g in grades.items() if g > 0)
        unknown = [(q, cid) for q, grades in self._qrels.items() for cid, g in grades.items()
                   if g > 0 and cid in absent]
        if not unknown:
            return
        docs = index.table.doc_ids
        if all(cid in docs for _, cid in unknown):
            return  # document qrels read as chunk ids: evaluate scores them at document level
        qid, cid = unknown[0]
        warnings.warn(
            f"{len(unknown)} chunk-id label(s) are not among the {len(index.table)} chunks "
            f"given (e.g. golden item {qid!r}, label {cid!r}): they can never be retrieved "
            "and score as misses. Re-label against this chunking, or anchor the labels on "
            "the chunking they were made on (GoldenSet.anchor(old_chunks)) to score any "
            "chunking from the spans", WorkbenchWarning, stacklevel=3)

    @staticmethod
    def _item_spans(item: GoldenItem,
                    documents: Mapping[str, Document] | None) -> list[EvidenceSpan]:
        spans: list[EvidenceSpan] = []
        for n, ev in enumerate(item.evidence):
            text = ev.text
            doc = documents.get(ev.doc_id) if documents is not None else None
            if doc is not None:
                if ev.end > len(doc.text):
                    raise WorkbenchError(f"{_where(item, n)}: the offsets run past the end of "
                                     f"document {ev.doc_id!r} ({len(doc.text)} characters): "
                                     "re-anchor the quote (GoldenSet.validate(corpus) lists "
                                     "them all)")
                text = doc.text[ev.start:ev.end]
            if len(text) != ev.end - ev.start:
                if documents is not None and doc is None:
                    raise WorkbenchError(f"{_where(item, n)}: document {ev.doc_id!r} is not among "
                                     f"the {len(documents)} documents given and the evidence has "
                                     "no quoted text: pass the corpus it was labelled on, or "
                                     "add its 'text'")
                raise WorkbenchError(f"{_where(item, n)} has no quoted text to score against: add "
                                 "its 'text' or pass the corpus (documents=...)")
            try:
                span = EvidenceSpan.of(ev.doc_id, ev.start, ev.end, text)
            except ValueError as e:
                raise WorkbenchError(f"golden item {item.qid!r} evidence[{n}]: {e}") from e
            if span not in spans:  # the same span listed twice is one unit
                spans.append(span)
        return spans

    @functools.cached_property
    def _order(self) -> dict[str, int]:
        """Chunk id -> its position in the chunking (the order of chunk-id gold)."""
        chunks = self.index.table.chunks if self.index is not None else ()
        return {c.id: i for i, c in enumerate(chunks)}

    # ----- what each item is judged by -------------------------------------------------------

    @property
    def qids(self) -> list[str]:
        """The questions that are scored, in golden-set order."""
        return list(self.items)

    def kind(self, qid: str) -> str:
        """``"evidence"`` or ``"chunk_id"``."""
        return "evidence" if qid in self._evidence else "chunk_id"

    def label(self, qid: str) -> str:
        """The relevance label of the item's numbers, e.g. ``evidence>=0.75``."""
        if qid in self._evidence:
            return relevance_label("evidence", self.evidence_threshold)
        return relevance_label("chunk_id", self.grade_threshold)

    # ----- questions downstream asks ---------------------------------------------------------

    def found_ranks(self, qid: str, ranked: Sequence[str]) -> list[float]:
        """For each relevant unit, the 1-based rank at which ``ranked`` finds it (inf: never).
        Evidence: the rank where the span's coverage reaches the threshold; chunk ids: the
        first rank of each relevant id."""
        if qid in self._evidence:
            return list(trace_ranking(self._evidence[qid], ranked, self.evidence_threshold).found)
        first: dict[str, int] = {}
        for rank, cid in enumerate(ranked, start=1):
            first.setdefault(cid, rank)
        return [float(first.get(cid, np.inf)) for cid, g in self._qrels[qid].items()
                if g >= self.grade_threshold]

    def first_found(self, qid: str, ranked: Sequence[str]) -> int | None:
        """The first rank at which something relevant is found (None: never)."""
        best = min(self.found_ranks(qid, ranked), default=np.inf)
        return None if best == np.inf else int(best)

    def retrieved_rank(self, qid: str, ranked: Sequence[str]) -> int | None:
        """The rank by which the question's evidence is retrieved (None: never): every
        evidence span found (each span is a part of the answer), or, for chunk-id labels
        (alternatives, as in trec_eval), the first relevant chunk. The one definition of
        "retrieved" that triage and diagnosis share."""
        ranks = self.found_ranks(qid, ranked)
        best = (max if qid in self._evidence else min)(ranks, default=np.inf)
        return None if best == np.inf else int(best)

    def found_within(self, qid: str, ranked: Sequence[str], k: int) -> bool:
        """True when something relevant is found within the top ``k`` (hit rate)."""
        first = self.first_found(qid, ranked)
        return first is not None and first <= k

    def gold(self, qid: str, k: int | None = None) -> list[str]:
        """The gold chunk ids of an item, at most ``k``: for evidence, the fewest chunks of
        this chunking that hold the spans (whole where possible), span by span; for chunk
        ids, the labelled chunks at the threshold, best grade first, then in corpus order."""
        if qid in self._evidence:
            ids = cover_chunks(self._evidence[qid], self.evidence_threshold)
        else:
            grades = self._qrels[qid]
            order = self._order
            ids = sorted((c for c, g in grades.items() if g >= self.grade_threshold),
                         key=lambda c: (-grades[c], order.get(c, len(order))))
        return ids if k is None else ids[:k]

    def unit_chunks(self, qid: str) -> list[tuple[str, ...]]:
        """For each relevant unit (evidence span or labelled chunk id), the chunk ids of this
        chunking that hold part of it, in document order (empty: the chunking lost it)."""
        if qid in self._evidence:
            assert self.index is not None
            return [tuple(self.index.meeting(span)) for span in self._evidence[qid].spans]
        return [(c,) for c, g in self._qrels[qid].items() if g >= self.grade_threshold]

    def touching(self, qid: str) -> set[str]:
        """Chunk ids that hold any part of the item's relevant content: every chunk sharing a
        non-blank character with an evidence span, or the labelled ids at the threshold
        (e.g. to keep them out of distractors)."""
        if qid in self._evidence:
            return set(self._evidence[qid].candidates)
        return {c for c, g in self._qrels[qid].items() if g >= self.grade_threshold}

    # ----- scoring ---------------------------------------------------------------------------

    def score(self, ranked: Mapping[str, Sequence[str]], metrics: Sequence[Metric]) -> Scores:
        """Per-question values of ``metrics`` for the ranking of every scored question
        (``ranked[qid]``: chunk ids, best first; a question missing from it retrieved
        nothing)."""
        values: dict[str, dict[str, float]] = {m.name: {} for m in metrics}
        excluded: dict[str, list[str]] = {}
        by_ids = [q for q in self.items if q not in self._evidence]
        id_metrics = [m for m in metrics if m.defined_for("chunk_id")]
        for m in metrics:
            if not m.defined_for("chunk_id") and by_ids:
                excluded.setdefault(f"no_evidence ({m.name})", []).extend(by_ids)
        if by_ids and id_metrics:
            trec = score_queries({q: self._qrels[q] for q in by_ids},
                                 {q: list(ranked.get(q, ())) for q in by_ids},
                                 id_metrics, grade_threshold=self.grade_threshold)
            for m in id_metrics:
                for q, v in zip(trec.qids, trec.values[m.name], strict=True):
                    values[m.name][q] = float(v)
        span_kinds = {"span_precision", "span_iou", "span_precision_omega"}
        plain = [m for m in metrics if m.defined_for("evidence") and m.kind not in span_kinds]
        by_spans = [m for m in metrics if m.kind in span_kinds]
        specs = [(m.kind, m.k) for m in plain]
        for m in metrics:
            if not m.defined_for("evidence") and self._evidence:
                excluded[f"not defined for evidence ({m.name})"] = list(self._evidence)
        if by_spans and self._evidence:
            assert self.index is not None
            if self._ranges is None:  # the chunks of the judged spans' documents
                self._ranges = RangeIndex(self.index.places.values())
        rankings = []
        for qid in self._evidence:
            got = ranked.get(qid, ())
            rankings.append(got if isinstance(got, list | tuple) else list(got))
        if plain and self._batch is not None:
            qids = list(self._evidence)
            threshold = self.evidence_threshold
            got_values = self._batch.scores(
                specs, rankings, threshold,
                lambda i: self._evidence[qids[i]].ideal_ranks(threshold))
            for m, v in zip(plain, got_values, strict=True):
                values[m.name].update(zip(qids, v.tolist(), strict=True))
        if by_spans:
            assert self.index is not None
            deepest = max(m.k or 0 for m in by_spans)
            placed = self.index.table.chunks_of(c for r in rankings for c in r[:deepest])
            for (qid, item), ranking in zip(self._evidence.items(), rankings, strict=True):
                refs = [(sp.doc_id, sp.start, sp.end) for sp in item.spans]
                for m in by_spans:
                    cut = [_place(placed, qid, c) for c in ranking[: m.k or 0]]
                    values[m.name][qid] = span_value(m.kind, cut, refs, self._ranges)
        values = {name: {q: v[q] for q in self.items if q in v} for name, v in values.items()}
        return Scores(values, {r: tuple(q) for r, q in excluded.items()})


def _place(placed: Mapping[str, Chunk], qid: str, cid: str) -> tuple[str, int, int]:
    """(document id, start, end) of chunk ``cid`` ranked for ``qid``; an unknown id named."""
    chunk = placed.get(cid)
    if chunk is None:
        raise WorkbenchError(f"the ranking of {qid!r} holds {cid!r}, which is no chunk of the "
                             "chunking judged: rank the chunks Relevance was built of")
    return chunk.doc_id, chunk.start, chunk.end


def _where(item: GoldenItem, n: int) -> str:
    """Where evidence ``n`` of ``item`` is, for an error (built only when one is raised)."""
    ev = item.evidence[n]
    return f"golden item {item.qid!r} evidence[{n}] ({ev.doc_id}[{ev.start}:{ev.end}])"
