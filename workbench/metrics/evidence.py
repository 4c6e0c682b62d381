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
                that together find t spans: no ranking finds its t-th span earlier, so
                nDCG <= 1, and the ideal is the best ordering the chunking allows. 0 when the
                chunking can find no span.
map, ap@k       ``sum_{j: f_j <= k} precision@f_j / m``.
r_precision     recall at k = m.
coverage@k      non-whitespace evidence characters inside the top k, over all the spans'
                non-whitespace characters (Chroma's token-level recall, counted in
                characters). No threshold.
==============  ==========================================================================

A question is never dropped because of the chunking: a span that no single chunk holds is
found once the retrieved chunks together cover it, and a span the chunking cannot cover at
all simply stays unfound. When every span is exactly one chunk of a chunking whose chunks do
not overlap, these values equal trec_eval's chunk-id metrics with those chunks as the
relevant documents (tested).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate, combinations
from typing import Protocol

import numpy as np

__all__ = ["ChunkIndex", "EvidenceSpan", "ItemEvidence", "Progress", "cover_chunks",
           "metric_value", "trace_ranking"]

EVIDENCE_KINDS = frozenset({"recall", "hit_rate", "mrr", "precision", "ndcg", "ap",
                            "r_precision", "coverage"})
_EXACT_IDEAL_LIMIT = 12  # candidate chunks of one group of spans searched exhaustively
_NEVER = math.inf


class Located(Protocol):
    """Anything with a document id and half-open document offsets (a Chunk, a Span)."""

    @property
    def doc_id(self) -> str: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...


@dataclass(frozen=True)
class EvidenceSpan:
    """One evidence span with the prefix counts of its non-whitespace characters."""

    doc_id: str
    start: int
    end: int
    nonblank: tuple[int, ...]  # nonblank[i] = non-whitespace characters in [start, start + i)

    @classmethod
    def of(cls, doc_id: str, start: int, end: int, text: str) -> EvidenceSpan:
        if len(text) != end - start:
            raise ValueError(f"evidence {doc_id}[{start}:{end}]: the quoted text has "
                             f"{len(text)} characters, the offsets {end - start}")
        counts = tuple(accumulate((not ch.isspace() for ch in text), initial=0))
        if counts[-1] == 0:
            raise ValueError(f"evidence {doc_id}[{start}:{end}] holds only whitespace: "
                             "quote the words that answer the question")
        return cls(doc_id, start, end, counts)

    @property
    def size(self) -> int:
        """Non-whitespace characters of the span."""
        return self.nonblank[-1]

    def count(self, start: int, end: int) -> int:
        """Non-whitespace span characters in ``[start, end)`` (document offsets)."""
        a, b = max(start, self.start), min(end, self.end)
        return self.nonblank[b - self.start] - self.nonblank[a - self.start] if a < b else 0

    def needed(self, threshold: float) -> int:
        """Characters to cover before the span counts as found."""
        return max(1, math.ceil(threshold * self.size - 1e-9))


class ChunkIndex:
    """The chunking: offsets by chunk id, and the chunks of each document sorted by start."""

    def __init__(self, chunks: Iterable[tuple[str, Located]]):
        self.where: dict[str, tuple[str, int, int]] = {}
        by_doc: dict[str, list[tuple[int, int, str]]] = {}
        for cid, c in chunks:
            self.where[cid] = (c.doc_id, c.start, c.end)
            by_doc.setdefault(c.doc_id, []).append((c.start, c.end, cid))
        self._docs: dict[str, tuple[np.ndarray, np.ndarray, list[str], int]] = {}
        for doc, rows in by_doc.items():
            rows.sort()
            starts = np.array([r[0] for r in rows], dtype=np.int64)
            ends = np.array([r[1] for r in rows], dtype=np.int64)
            longest = int((ends - starts).max()) if len(rows) else 0
            self._docs[doc] = (starts, ends, [r[2] for r in rows], longest)

    def __contains__(self, cid: object) -> bool:
        return cid in self.where

    def meeting(self, span: EvidenceSpan) -> list[str]:
        """Ids of chunks sharing at least one non-whitespace character with ``span``."""
        if span.doc_id not in self._docs:
            return []
        starts, ends, ids, longest = self._docs[span.doc_id]
        lo = int(np.searchsorted(starts, span.start - longest, side="left"))
        hi = int(np.searchsorted(starts, span.end, side="left"))
        return [ids[i] for i in range(lo, hi)
                if ends[i] > span.start and span.count(int(starts[i]), int(ends[i])) > 0]


@dataclass
class ItemEvidence:
    """One item's spans against one chunking: candidate chunks and the ideal ranks."""

    spans: tuple[EvidenceSpan, ...]
    candidates: dict[str, tuple[str, int, int]]  # chunk id -> location, for chunks meeting a span
    _ideal: list[float] | None = None

    def ideal_ranks(self, threshold: float) -> list[float]:
        """``L_t`` for t = 1..m: the fewest chunks that together find t spans (inf if the
        chunking cannot)."""
        if self._ideal is None:
            self._ideal = _ideal_ranks(self.spans, self.candidates, threshold)
        return self._ideal


def _clip(span: EvidenceSpan, start: int, end: int) -> tuple[int, int] | None:
    a, b = max(start, span.start), min(end, span.end)
    return (a, b) if a < b and span.count(a, b) > 0 else None


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


def _found_count(spans: Sequence[EvidenceSpan], chosen: Iterable[tuple[str, int, int]],
                 needed: Sequence[int]) -> int:
    unions: list[list[tuple[int, int]]] = [[] for _ in spans]
    covered = [0] * len(spans)
    for doc, s, e in chosen:
        for j, span in enumerate(spans):
            if span.doc_id == doc and (piece := _clip(span, s, e)) is not None:
                covered[j] += _add(unions[j], piece, span)
    return sum(c >= n for c, n in zip(covered, needed, strict=True))


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


def _pieces(span: EvidenceSpan, candidates: Mapping[str, tuple[str, int, int]]
            ) -> list[tuple[str, int, int]]:
    """(chunk id, start, end) of each candidate chunk clipped to ``span``."""
    out = []
    for cid, (doc, s, e) in candidates.items():
        if doc == span.doc_id and (p := _clip(span, s, e)) is not None:
            out.append((cid, *p))
    return out


def cover_chunks(item: ItemEvidence, threshold: float) -> list[str]:
    """Chunk ids that hold the item's evidence with the fewest chunks, span by span: each
    span whole where the chunking allows, else to ``threshold``, else as much as the
    chunking holds. The oracle context of generation reads these."""
    out: list[str] = []
    for span in item.spans:
        pieces = _pieces(span, item.candidates)
        cover = (_single_cover(span, pieces, span.size)
                 or _single_cover(span, pieces, span.needed(threshold))
                 or sorted({p[0] for p in pieces}, key=lambda c: item.candidates[c][1:]))
        out.extend(c for c in cover if c not in out)
    return out


def _ideal_ranks(spans: Sequence[EvidenceSpan], candidates: Mapping[str, tuple[str, int, int]],
                 threshold: float) -> list[float]:
    needed = [s.needed(threshold) for s in spans]
    meets = {cid: {j for j, s in enumerate(spans) if s.doc_id == loc[0]
                   and _clip(s, loc[1], loc[2]) is not None}
             for cid, loc in candidates.items()}
    # groups of spans that share a candidate chunk (union-find)
    parent = list(range(len(spans)))

    def root(j: int) -> int:
        while parent[j] != j:
            parent[j] = parent[parent[j]]
            j = parent[j]
        return j

    for js in meets.values():
        first, *rest = sorted(js)
        for j in rest:
            parent[root(j)] = root(first)
    groups: dict[int, list[int]] = {}
    for j in range(len(spans)):
        groups.setdefault(root(j), []).append(j)

    single = [_single_cost(span, _pieces(span, candidates), needed[j])
              for j, span in enumerate(spans)]

    ideal = [0.0] + [_NEVER] * len(spans)  # ideal[t]: fewest chunks finding t spans
    for members in groups.values():
        costs = _group_costs(members, spans, candidates, meets, needed, single)
        merged = [_NEVER] * len(ideal)
        for t, base in enumerate(ideal):
            if base == _NEVER:
                continue
            for u, cost in enumerate(costs):
                if t + u < len(merged):
                    merged[t + u] = min(merged[t + u], base + cost)
        ideal = merged
    return ideal[1:]


def _group_costs(members: list[int], spans: Sequence[EvidenceSpan],
                 candidates: Mapping[str, tuple[str, int, int]], meets: Mapping[str, set[int]],
                 needed: Sequence[int], single: Sequence[float]) -> list[float]:
    """costs[u]: the fewest chunks finding u spans of this group (costs[0] = 0)."""
    if len(members) == 1:
        return [0.0, single[members[0]]]
    local = [spans[j] for j in members]
    need = [needed[j] for j in members]
    pool = [candidates[cid] for cid, js in meets.items() if js & set(members)]
    pool = _undominated(pool, local)
    costs = [0.0] + [_NEVER] * len(members)
    if len(pool) > _EXACT_IDEAL_LIMIT:
        # a lower bound (any set finding u spans finds each of them alone): keeps nDCG <= 1
        for u, q in enumerate(sorted(single[j] for j in members), start=1):
            costs[u] = q
        return costs
    for size in range(1, len(pool) + 1):
        for combo in combinations(pool, size):
            found = _found_count(local, combo, need)
            for u in range(1, found + 1):
                costs[u] = min(costs[u], size)
        if costs[-1] != _NEVER:
            break
    return costs


def _undominated(pool: list[tuple[str, int, int]],
                 spans: Sequence[EvidenceSpan]) -> list[tuple[str, int, int]]:
    """Drop chunks whose evidence another chunk holds entirely (never needed by an ideal)."""
    def pieces(loc: tuple[str, int, int]) -> tuple[tuple[int, int] | None, ...]:
        return tuple(_clip(s, loc[1], loc[2]) if s.doc_id == loc[0] else None for s in spans)

    shapes = list(dict.fromkeys(pieces(loc) for loc in pool))
    by_shape = {pieces(loc): loc for loc in pool}

    def inside(a: tuple[tuple[int, int] | None, ...], b: tuple[tuple[int, int] | None, ...]
               ) -> bool:
        return all(x is None or (y is not None and y[0] <= x[0] and x[1] <= y[1])
                   for x, y in zip(a, b, strict=True))

    kept = [s for s in shapes if not any(o != s and inside(s, o) for o in shapes)]
    return [by_shape[s] for s in kept]


@dataclass(frozen=True)
class Progress:
    """How one ranking covers one item's spans.

    ``found[j]``: 1-based rank at which span j is found (inf: never). ``steps[j]``: the
    (rank, covered characters) after each rank that added coverage to span j.
    ``adds``: (rank, spans it added coverage to) for each rank that added any."""

    found: tuple[float, ...]
    steps: tuple[tuple[tuple[int, int], ...], ...]
    adds: tuple[tuple[int, frozenset[int]], ...]


def trace_ranking(item: ItemEvidence, ranked: Sequence[str], threshold: float) -> Progress:
    """Walk ``ranked`` (chunk ids, best first) and record when each span is covered."""
    spans = item.spans
    at = dict(zip(reversed(ranked), range(len(ranked), 0, -1), strict=True))  # first wins
    first = {cid: rank for cid in item.candidates if (rank := at.get(cid)) is not None}
    needed = [s.needed(threshold) for s in spans]
    unions: list[list[tuple[int, int]]] = [[] for _ in spans]
    covered = [0] * len(spans)
    found = [_NEVER] * len(spans)
    steps: list[list[tuple[int, int]]] = [[] for _ in spans]
    adds: list[tuple[int, frozenset[int]]] = []
    for cid, rank in sorted(first.items(), key=lambda pair: pair[1]):
        doc, s, e = item.candidates[cid]
        gained = set()
        for j, span in enumerate(spans):
            if span.doc_id != doc or (piece := _clip(span, s, e)) is None:
                continue
            added = _add(unions[j], piece, span)
            if added > 0:
                covered[j] += added
                gained.add(j)
                steps[j].append((rank, covered[j]))
                if found[j] == _NEVER and covered[j] >= needed[j]:
                    found[j] = rank
        if gained:
            adds.append((rank, frozenset(gained)))
    return Progress(tuple(found), tuple(tuple(s) for s in steps), tuple(adds))


def _discount(rank: float) -> float:
    return 1.0 / math.log2(rank + 1.0)


def _useful(progress: Progress, k: int) -> int:
    hit = {j for j, f in enumerate(progress.found) if f <= k}
    return sum(1 for rank, js in progress.adds if rank <= k and js & hit)


def metric_value(kind: str, k: int | None, item: ItemEvidence, progress: Progress,
                 threshold: float, depth: int) -> float:
    """One evidence metric of one ranking; ``k=None`` means the whole ranking (``depth``)."""
    cut = depth if k is None else k
    found = progress.found
    m = len(found)
    if kind == "recall":
        return sum(f <= cut for f in found) / m
    if kind == "hit_rate":
        return float(any(f <= cut for f in found))
    if kind == "mrr":
        best = min(found)
        return 1.0 / best if best <= cut else 0.0
    if kind == "precision":
        return _useful(progress, cut) / cut
    if kind == "r_precision":
        return sum(f <= m for f in found) / m
    if kind == "ap":
        return sum(_useful(progress, int(f)) / f for f in found if f <= cut) / m
    if kind == "ndcg":
        dcg = sum(_discount(f) for f in found if f <= cut)
        ideal_cut = _NEVER if k is None else k  # uncut nDCG: the ideal finds every span
        ideal = sum(_discount(r) for r in item.ideal_ranks(threshold) if r <= ideal_cut)
        return dcg / ideal if ideal > 0 else 0.0
    if kind == "coverage":
        total = sum(s.size for s in item.spans)
        held = 0
        for steps in progress.steps:
            within = [c for r, c in steps if r <= cut]
            held += within[-1] if within else 0
        return held / total
    raise ValueError(f"{kind!r} is not an evidence metric; evidence metrics: "
                     f"{', '.join(sorted(EVIDENCE_KINDS))}")
