"""Evidence metrics: relevance from a golden item's evidence spans, under any chunking.

The unit of relevance is the evidence span, never the chunks that happen to touch it.
For a ranked list of chunks, the *coverage* of a span at rank r is the share of the span's
non-whitespace characters that lie inside the union of the chunks at ranks 1..r. Chunk
offsets are document offsets, so text that overlapping chunks share counts once; whitespace
is not counted, so a chunker that trims the blanks between two chunks loses no evidence.
A span is *found* at the first rank where its coverage reaches ``threshold``
(default :data:`~workbench.metrics.registry.DEFAULT_EVIDENCE_THRESHOLD` = 0.75, chosen by
measurement: ``benchmarks/evidence_threshold.py``; pass 1.0 when the spans are the answers
themselves, as in SQuAD-style sets).

For an item with m spans, ``f_j`` the rank at which span j is found (never: infinity) and a
cutoff k (ranks are 1-based; a repeated chunk id keeps its first rank and the repeats occupy
ranks of their own, as the generator would receive them):

==============  ==========================================================================
recall@k        ``|{j : f_j <= k}| / m``: the share of the spans found within the top k.
hit_rate@k      1 if at least one span is found within the top k. Not recall: finding one
                of two spans gives hit rate 1 and recall 0.5.
mrr, mrr@k      ``1 / min_j f_j`` (0 when no span is found, or none within k).
precision@k     ``|useful ranks <= k| / k``. A rank is *useful* when its chunk adds coverage
                (characters no higher-ranked chunk holds) to a span found within the top k.
                A chunk that adds no new evidence (an overlapping duplicate of a relevant
                chunk, the same chunk twice) or only a fragment of a span that is never found
                is not useful, so it never raises precision.
ndcg, ndcg@k    gain 1 per span at the rank where it is found: ``DCG = sum 1/log2(f_j + 1)``.
                The ideal places the t-th span at ``L_t``, the fewest chunks of the chunking
                that together find t spans, exact for any number of chunks: no ranking finds
                its t-th span earlier, so nDCG <= 1. An ordering reaches it when the
                fewest-chunk sets nest (always when no chunk holds two spans); where they
                cannot, the best ordering scores below 1. 0 when the chunking can find no
                span.
map, ap@k       ``sum_{j: f_j <= k} precision@f_j / m``.
r_precision     recall at k = m.
coverage@k      non-whitespace evidence characters inside the top k, over all the spans'
                non-whitespace characters, each span counted on its own (the
                length-weighted mean of the spans' coverage: a span labelled twice changes
                nothing). Chroma's token-level recall, counted in characters, when the
                spans do not overlap. No threshold.
==============  ==========================================================================

A question is never dropped because of the chunking: a span that no single chunk holds is
found once the retrieved chunks together cover it, and a span the chunking cannot cover at
all simply stays unfound. When every span is exactly one chunk of a chunking whose chunks do
not overlap, these values equal trec_eval's chunk-id metrics with those chunks as the
relevant documents (tested).
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
from collections.abc import Collection, Iterable, Sequence
from dataclasses import KW_ONLY, dataclass, field

import numpy as np

from workbench.corpus import Chunk, ChunkTable
from workbench.io import WorkbenchError
from workbench.metrics.intervals import WHITESPACE, Intervals, Met

__all__ = ["EVIDENCE_KINDS", "WHITESPACE", "ChunkIndex", "EvidenceSpan", "ItemEvidence",
           "Progress", "cover_chunks", "needed_characters", "trace_ranking"]

EVIDENCE_KINDS = frozenset({"recall", "hit_rate", "mrr", "precision", "ndcg", "ap",
                            "r_precision", "coverage"})
_NEVER = math.inf


def needed_characters(size: np.ndarray, threshold: float) -> np.ndarray:
    """The one rule of when a span is found: ``ceil(threshold * size)`` of its ``size``
    non-blank characters covered, at least 1 (``1e-9`` keeps ``0.75 * 4`` at 3 under float
    error). Element-wise over an array of sizes (int64)."""
    return np.maximum(1, np.ceil(threshold * size - 1e-9)).astype(np.int64)


@dataclass(frozen=True, slots=True)
class EvidenceSpan:
    """One evidence span: its text and which whitespace characters occur in it (counts of
    non-whitespace characters are then a few C-level ``str.count`` calls)."""

    doc_id: str
    start: int
    end: int
    text: str
    _: KW_ONLY
    blank_chars: str  # the whitespace characters that occur in ``text``
    size: int  # non-whitespace characters of the span

    @classmethod
    def of(cls, doc_id: str, start: int, end: int, text: str) -> EvidenceSpan:
        if len(text) != end - start:
            raise WorkbenchError(f"evidence {doc_id}[{start}:{end}]: the quoted text has "
                             f"{len(text)} characters, the offsets {end - start}")
        size = sum(map(len, text.split()))  # str.split's whitespace is WHITESPACE
        blanks = len(text) - size
        if not blanks:
            blank = ""
        elif text.count(" ") == blanks:  # the usual span: words and spaces
            blank = " "
        else:
            blank = "".join(sorted(set(text) & WHITESPACE))
        if size == 0:
            raise WorkbenchError(f"evidence {doc_id}[{start}:{end}] holds only whitespace: "
                             "quote the words that answer the question")
        return cls(doc_id, start, end, text, blank_chars=blank, size=size)

    def count(self, start: int, end: int) -> int:
        """Non-whitespace span characters in ``[start, end)`` (document offsets)."""
        a, b = max(start, self.start), min(end, self.end)
        if a >= b:
            return 0
        if not self.blank_chars:
            return b - a
        return b - a - _blank_count(self.text[a - self.start:b - self.start], self.blank_chars)

    def needed(self, threshold: float) -> int:
        """Characters to cover before the span counts as found (:func:`needed_characters`)."""
        return int(needed_characters(np.asarray(self.size), threshold))


def _blank_count(text: str, blank_chars: str) -> int:
    if len(blank_chars) == 1:
        return text.count(blank_chars)
    return sum(text.count(ch) for ch in blank_chars)


class ChunkIndex:
    """The chunking, read by :meth:`ChunkTable.of <workbench.corpus.ChunkTable.of>`
    (``.table``): offsets by chunk id (``where``), and the chunks in document order as arrays
    (:class:`~workbench.metrics.intervals.Intervals`), so many spans are located at once. With
    ``documents``, only the table's chunks of those documents are arrayed (spans of other
    documents are refused): judging then costs what the judged documents hold, not the
    corpus. Each is built when first used; nothing is built per chunk of the whole chunking
    unless asked for by id (``where``)."""

    def __init__(self, chunks: Sequence[Chunk] | ChunkTable,
                 documents: Collection[str] | None = None):
        self.table = ChunkTable.of(chunks)
        self._documents = None if documents is None else frozenset(documents)

    @functools.cached_property
    def _ids(self) -> list[str]:
        return list(map(operator.attrgetter("id"), self.table.chunks))

    @functools.cached_property
    def where(self) -> dict[str, tuple[str, int, int]]:
        """Chunk id -> (document id, start, end), every chunk of the chunking."""
        return {cid: (c.doc_id, c.start, c.end)
                for cid, c in zip(self._ids, self.table.chunks, strict=True)}

    @functools.cached_property
    def _arrayed(self) -> tuple[Intervals, dict[str, tuple[str, int, int]]]:
        """The Intervals of the chunks of ``documents`` (all without), and their ``where``."""
        if self._documents is None:
            located: Sequence[Chunk] = self.table.chunks
            ids = self._ids
        else:
            located = self.table.of_documents(self._documents)
            ids = list(map(operator.attrgetter("id"), located))
        rows = Intervals(ids, [c.doc_id for c in located], [c.start for c in located],
                         [c.end for c in located])
        if self._documents is None:
            return rows, self.where
        return rows, {cid: (c.doc_id, c.start, c.end)
                      for cid, c in zip(ids, located, strict=True)}

    @property
    def _rows(self) -> Intervals:
        return self._arrayed[0]

    @property
    def places(self) -> dict[str, tuple[str, int, int]]:
        """Chunk id -> (document id, start, end) of the chunks of ``documents`` (every chunk
        without): what span metrics of the judged spans read."""
        return self._arrayed[1]

    def __contains__(self, cid: object) -> bool:
        return cid in self.table

    def unknown(self, ids: Iterable[str]) -> set[str]:
        """Those of ``ids`` that are no chunk of the chunking (:meth:`ChunkTable.unknown
        <workbench.corpus.ChunkTable.unknown>`)."""
        return self.table.unknown(ids)

    def meeting(self, span: EvidenceSpan) -> list[str]:
        """Ids of chunks sharing at least one non-whitespace character with ``span``."""
        return [cid for cid, _, _ in self.pieces(span)]

    def pieces(self, span: EvidenceSpan) -> list[tuple[str, int, int]]:
        """(chunk id, start, end) of each chunk sharing a non-whitespace character with
        ``span``, clipped to the span, in document order."""
        return list(self._located([span])[0])

    @property
    def row_ids(self) -> list[str]:
        """Chunk ids by row of :meth:`meet` (document order)."""
        return self._rows.ids

    def meet(self, spans: Sequence[EvidenceSpan]) -> Met:
        """Every (span, chunk) sharing a non-whitespace character, in one vectorised search
        (:meth:`Intervals.meet <workbench.metrics.intervals.Intervals.meet>`)."""
        if self._documents is not None:
            other = next((s.doc_id for s in spans if s.doc_id not in self._documents), None)
            if other is not None:
                raise WorkbenchError(f"this ChunkIndex arrays the chunks of {len(self._documents)} "
                                 f"document(s), not of {other!r}: build it with that document")
        return self._rows.meet([s.doc_id for s in spans], [s.start for s in spans],
                               [s.end for s in spans], [s.text for s in spans])

    def located(self, met: Met, lo: int, hi: int) -> list[tuple[tuple[str, int, int], ...]]:
        """:meth:`pieces` of spans ``lo..hi-1`` of those ``met`` (a :meth:`meet`) found."""
        bounds = np.searchsorted(met.which, np.arange(lo, hi + 1)).tolist()
        first, last = bounds[0], bounds[-1]
        ids = self._rows.ids
        flat = list(zip([ids[r] for r in met.row[first:last].tolist()],
                        met.a[first:last].tolist(), met.b[first:last].tolist(), strict=True))
        return [tuple(flat[x - first:y - first]) for x, y in itertools.pairwise(bounds)]

    def _located(self, spans: Sequence[EvidenceSpan]) -> list[tuple[tuple[str, int, int], ...]]:
        return self.located(self.meet(spans), 0, len(spans))

    def item(self, spans: Sequence[EvidenceSpan]) -> ItemEvidence:
        """The item evidence of ``spans`` under this chunking."""
        return self.items([spans])[0]

    def items(self, groups: Sequence[Sequence[EvidenceSpan]]) -> list[ItemEvidence]:
        """:meth:`item` of each group of spans (one golden item's), located in one search."""
        located = self._located([s for spans in groups for s in spans])
        return [self.item_of(spans, located[at - len(spans):at])
                for spans, at in zip(groups, itertools.accumulate(map(len, groups)), strict=True)]

    def item_of(self, spans: Sequence[EvidenceSpan],
                by_span: Sequence[tuple[tuple[str, int, int], ...]]) -> ItemEvidence:
        """The item evidence of ``spans`` from their :meth:`pieces` (``by_span``)."""
        candidates: dict[str, tuple[str, int, int]] = {}
        pieces: dict[str, list[tuple[int, int, int]]] = {}
        for j, held in enumerate(by_span):
            for cid, a, b in held:
                if cid not in candidates:
                    candidates[cid] = self._arrayed[1][cid]
                    pieces[cid] = [(j, a, b)]
                else:
                    pieces[cid].append((j, a, b))
        return ItemEvidence(tuple(spans), candidates,
                            pieces={c: tuple(p) for c, p in pieces.items()},
                            by_span=tuple(by_span))


@dataclass
class ItemEvidence:
    """One item's spans against one chunking: each candidate chunk (one that meets a span)
    with the pieces of the spans it holds, and, once asked for, the ideal ranks."""

    spans: tuple[EvidenceSpan, ...]
    candidates: dict[str, tuple[str, int, int]]  # chunk id -> location, for chunks meeting a span
    # chunk id -> ((span index, start, end), ...): the chunk clipped to each span it meets
    pieces: dict[str, tuple[tuple[int, int, int], ...]]
    # per span: ((chunk id, start, end), ...), the candidate chunks clipped to it
    by_span: tuple[tuple[tuple[str, int, int], ...], ...]
    _: KW_ONLY
    _needed: dict[float, tuple[int, ...]] = field(default_factory=dict)
    _ideal: dict[float, list[float]] = field(default_factory=dict)  # by threshold

    def needed(self, threshold: float) -> tuple[int, ...]:
        """Per span, the characters to cover before it counts as found."""
        cached = self._needed.get(threshold)
        if cached is None:
            cached = self._needed[threshold] = tuple(s.needed(threshold) for s in self.spans)
        return cached

    def ideal_ranks(self, threshold: float) -> list[float]:
        """``L_t`` for t = 1..m: the fewest chunks that together find t spans (inf if the
        chunking cannot)."""
        cached = self._ideal.get(threshold)
        if cached is None:
            cached = self._ideal[threshold] = _ideal_ranks(self, threshold)
        return cached


def _add(union: list[tuple[int, int]], piece: tuple[int, int], span: EvidenceSpan) -> int:
    """Merge ``piece`` into the sorted disjoint ``union`` (in place); return the
    non-whitespace characters it added."""
    a, b = piece
    added = span.count(a, b)
    keep: list[tuple[int, int]] = []
    for s, e in union:
        if e <= a or s >= b:
            keep.append((s, e))
        else:
            added -= span.count(max(s, a), min(e, b))
            a, b = min(a, s), max(b, e)
    keep.append((a, b))
    keep.sort()
    union[:] = keep
    return added


def _single_cover(span: EvidenceSpan, pieces: Iterable[tuple[str, int, int]],
                  need: int) -> list[str] | None:
    """The fewest chunks whose union holds ``need`` characters of ``span``, as chunk ids in
    document order; None when no set of them can. ``pieces`` are (chunk id, start, end)
    clipped to the span. A partial interval cover, exact: after dropping nested intervals,
    starts and ends are both sorted, and a DP over (count, last interval) keeps the most
    coverage, with back-pointers to the chunks chosen."""
    ordered = sorted(set(pieces), key=lambda p: (p[1], -p[2], p[0]))
    kept: list[tuple[str, int, int]] = []
    for piece in ordered:
        if kept and piece[2] <= kept[-1][2]:
            continue  # nested inside an earlier interval
        kept.append(piece)
    if not kept:
        return None
    best = [span.count(a, b) for _, a, b in kept]  # most coverage with c intervals ending at i
    back: list[list[int]] = [[-1] * len(kept)]
    for _ in range(len(kept)):
        top = max(range(len(kept)), key=lambda i: best[i])
        if best[top] >= need:
            chosen, i = [], top
            for layer in reversed(back):
                chosen.append(kept[i][0])
                i = layer[i]
                if i < 0:
                    break
            return chosen[::-1]
        nxt, ptr = [-1] * len(kept), [-1] * len(kept)
        for i, (_, a, b) in enumerate(kept):
            for i2 in range(i):
                if best[i2] >= 0:
                    value = best[i2] + span.count(max(a, kept[i2][2]), b)
                    if value > nxt[i]:
                        nxt[i], ptr[i] = value, i2
        best = nxt
        back.append(ptr)
    return None


def _single_cost(span: EvidenceSpan, pieces: Iterable[tuple[str, int, int]],
                 need: int) -> float:
    cover = _single_cover(span, pieces, need)
    return _NEVER if cover is None else float(len(cover))


def cover_chunks(item: ItemEvidence, threshold: float) -> list[str]:
    """Chunk ids that hold the item's evidence with the fewest chunks, span by span: each
    span whole where the chunking allows, else to ``threshold``, else as much as the
    chunking holds. The oracle context of generation reads these."""
    out: list[str] = []
    for j, span in enumerate(item.spans):
        pieces = item.by_span[j]
        cover = (_single_cover(span, pieces, span.size)
                 or _single_cover(span, pieces, span.needed(threshold))
                 or sorted({p[0] for p in pieces}, key=lambda c: item.candidates[c][1:]))
        out.extend(c for c in cover if c not in out)
    return out


def _ideal_ranks(item: ItemEvidence, threshold: float) -> list[float]:
    spans = item.spans
    needed = item.needed(threshold)
    single = []
    for j, span in enumerate(spans):
        pieces = item.by_span[j]
        # fast path: one chunk holds enough of the span
        if any(span.count(a, b) >= needed[j] for _, a, b in pieces):
            single.append(1.0)
        else:
            single.append(_single_cost(span, pieces, needed[j]))
    if all(len(parts) == 1 for parts in item.pieces.values()):
        # no chunk holds two spans: each span is found on its own, cheapest first
        ordered = sorted(single)
        return [float(sum(ordered[:t])) for t in range(1, len(spans) + 1)]
    # groups of spans that share a candidate chunk (union-find)
    parent = list(range(len(spans)))

    def root(j: int) -> int:
        while parent[j] != j:
            parent[j] = parent[parent[j]]
            j = parent[j]
        return j

    for parts in item.pieces.values():
        for j, _, _ in parts[1:]:
            parent[root(j)] = root(parts[0][0])
    groups: dict[int, list[int]] = {}
    for j in range(len(spans)):
        groups.setdefault(root(j), []).append(j)

    ideal = [0.0] + [_NEVER] * len(spans)  # ideal[t]: fewest chunks finding t spans
    for members in groups.values():
        costs = (_group_costs(members, item, needed) if len(members) > 1
                 else [0.0, single[members[0]]])
        merged = [_NEVER] * len(ideal)
        for t, base in enumerate(ideal):
            if base == _NEVER:
                continue
            for u, cost in enumerate(costs):
                if t + u < len(merged):
                    merged[t + u] = min(merged[t + u], base + cost)
        ideal = merged
    return ideal[1:]


def _group_costs(members: list[int], item: ItemEvidence, needed: Sequence[int]
                 ) -> list[float]:
    """costs[u]: the fewest chunks finding u spans of this group of spans that share chunks
    (costs[0] = 0), exact for any number of chunks.

    The group lies in one document. Chunks are clipped to the group's extent and those
    inside another dropped (a chunk holding a superset of another's characters serves every
    set the smaller one serves), so the rest, by start, also grow in end. A set of them,
    taken in that order, covers exactly ``[max(a_i, b_prev), b_i)`` anew at each chunk i,
    where ``b_prev`` is the end of the previous chosen one: what a chunk adds depends on the
    previous chunk only, and everything covered so far lies before ``b_i``. After choosing
    chunk i, a span ending by ``b_i`` is settled (found or not), one starting at or after
    ``b_i`` is untouched, and only the spans across ``b_i`` carry a partial coverage. A layer
    per chunk count c holds, per last chunk i, the states (spans found; coverage of each span
    across ``b_i``, capped at what it needs) that no other state beats in settled spans found
    and in every open span's coverage (:func:`_pareto`). Whatever follows chunk i adds the
    same characters to both states, so a beaten state never ends with more spans found:
    dropping it keeps every layer exact."""
    group = set(members)
    spans = item.spans
    lo = min(spans[j].start for j in members)
    hi = max(spans[j].end for j in members)
    clipped = {(max(item.candidates[cid][1], lo), min(item.candidates[cid][2], hi))
               for cid, parts in item.pieces.items() if any(j in group for j, _, _ in parts)}
    chunks: list[tuple[int, int]] = []
    for a, b in sorted(clipped, key=lambda ab: (ab[0], -ab[1])):
        if not chunks or b > chunks[-1][1]:
            chunks.append((a, b))  # else inside the previous (longer or equal) chunk
    order = sorted(members, key=lambda j: (spans[j].start, spans[j].end))
    across = [tuple(j for j in order if spans[j].start < b < spans[j].end) for _, b in chunks]

    def step(prev_end: int, held: dict[int, int], found: int, i: int
             ) -> tuple[int, tuple[int, ...]]:
        a, b = chunks[i]
        x = max(a, prev_end)
        for j in order:
            span = spans[j]
            if span.end <= x or span.start >= b:
                continue
            before = held.get(j, 0)
            if before < needed[j]:
                now = min(needed[j], before + span.count(x, b))
                found += now >= needed[j]
                held[j] = now
        return found, tuple(min(held.get(j, 0), needed[j]) for j in across[i])

    costs = [0.0] + [_NEVER] * len(members)
    layer: dict[int, list[tuple[int, tuple[int, ...]]]] = {}
    for i in range(len(chunks)):
        layer.setdefault(i, []).append(step(lo, {}, 0, i))
    for count in range(1, len(chunks) + 1):
        layer = {i: _pareto(states, tuple(needed[j] for j in across[i]))
                 for i, states in layer.items()}
        best = max(found for states in layer.values() for found, _ in states)
        for u in range(1, best + 1):
            costs[u] = min(costs[u], float(count))
        if best == len(members) or count == len(chunks):
            break
        nxt: dict[int, list[tuple[int, tuple[int, ...]]]] = {}
        for i, states in layer.items():
            for found, held in states:
                carried = dict(zip(across[i], held, strict=True))
                for i2 in range(i + 1, len(chunks)):
                    nxt.setdefault(i2, []).append(step(chunks[i][1], dict(carried), found, i2))
        if not nxt:
            break
        layer = nxt
    return costs


def _pareto(states: list[tuple[int, tuple[int, ...]]], needs: tuple[int, ...]
            ) -> list[tuple[int, tuple[int, ...]]]:
    """The states that no other state matches or beats in settled spans found (found, less
    the open spans already found) and in every open span's coverage. Comparing the found
    count itself would be wrong: an open span found now is counted, but one that another
    state has not found yet may still be found later."""
    def settled(found: int, held: tuple[int, ...]) -> int:
        return found - sum(h >= n for h, n in zip(held, needs, strict=True))

    kept: list[tuple[int, tuple[int, ...]]] = []
    keys: list[tuple[int, tuple[int, ...]]] = []
    for found, held in sorted(set(states), key=lambda s: (settled(*s), s[1]), reverse=True):
        done = settled(found, held)
        if not any(d >= done and all(h >= x for h, x in zip(hh, held, strict=True))
                   for d, hh in keys):
            kept.append((found, held))
            keys.append((done, held))
    return kept


@dataclass(frozen=True, slots=True)
class Progress:
    """How one ranking covers one item's spans.

    ``found[j]``: 1-based rank at which span j is found (inf: never). ``steps[j]``: the
    (rank, covered characters) after each rank that added coverage to span j.
    ``adds``: (rank, spans it added coverage to) for each rank that added any."""

    found: tuple[float, ...]
    steps: Sequence[Sequence[tuple[int, int]]]
    adds: Sequence[tuple[int, frozenset[int]]]


def trace_ranking(item: ItemEvidence, ranked: Sequence[str] | list[str], threshold: float
                  ) -> Progress:
    """Walk ``ranked`` (chunk ids, best first) and record when each span is covered."""
    spans = item.spans
    hits = []
    for cid, parts in item.pieces.items():
        try:
            hits.append((ranked.index(cid) + 1, parts))  # the first occurrence keeps its rank
        except ValueError:
            continue
    hits.sort(key=lambda hit: hit[0])
    needed = item.needed(threshold)
    unions: list[list[tuple[int, int]]] = [[] for _ in spans]
    covered = [0] * len(spans)
    found = [_NEVER] * len(spans)
    steps: list[list[tuple[int, int]]] = [[] for _ in spans]
    adds: list[tuple[int, frozenset[int]]] = []
    for rank, parts in hits:
        gained = []
        for j, a, b in parts:
            union = unions[j]
            if not union:  # the first piece of this span: nothing to merge
                union.append((a, b))
                added = spans[j].count(a, b)
            else:
                added = _add(union, (a, b), spans[j])
            if added > 0:
                covered[j] += added
                gained.append(j)
                steps[j].append((rank, covered[j]))
                if found[j] == _NEVER and covered[j] >= needed[j]:
                    found[j] = rank
        if gained:
            adds.append((rank, frozenset(gained)))
    return Progress(tuple(found), steps, adds)
