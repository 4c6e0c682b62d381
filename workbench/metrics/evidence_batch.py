"""Evidence metrics of a whole golden set at once: the definitions of
:mod:`~workbench.metrics.evidence` (its docstring is the spec), computed with array work
instead of a walk per item (:func:`~workbench.metrics.evidence.trace_ranking` is the walk
of one ranking, kept for found ranks).

Judging (once per chunking) cuts each span at every end of the chunks that meet it, into
*segments*: the union of any set of those chunks, inside the span, is a union of whole
segments, so the coverage of a span by the top r chunks is the sum of the non-blank
characters of the segments whose *first rank* (the best rank among the chunks holding it)
is <= r. Scoring a run is then: the rank of each candidate chunk (its first occurrence in
the ranking: one Python lookup per candidate), the first rank of each segment (a minimum
per segment), and per span a running sum in rank order. A rank *adds* coverage to span j
exactly when some non-blank segment of j has it as first rank; precision and AP count the
useful ranks from those (rank, span) pairs.

Sums of floats run in the order the per-item definitions sum them (spans by found rank,
with ``np.add.at``, which adds in index order), so every value is the same number.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass

import numpy as np

from workbench.io import WorkbenchError
from workbench.metrics.evidence import (
    EVIDENCE_KINDS,
    ChunkIndex,
    EvidenceSpan,
    ItemEvidence,
    needed_characters,
)
from workbench.metrics.intervals import Met

__all__ = ["EvidenceBatch", "JudgedItems"]

_NEVER = np.iinfo(np.int64).max  # rank of what a ranking never finds


@dataclass(frozen=True, eq=False)
class EvidenceBatch:
    """The judgments of many items under one chunking, as flat arrays (built by :meth:`of`).

    Items are numbered 0..n-1 and their spans are contiguous; candidates (a chunk meeting a
    span of the item) are per item; segments are sorted by span, then position."""

    span_item: np.ndarray  # per span: its item
    span_size: np.ndarray  # per span: non-blank characters
    item_start: np.ndarray  # the first span of each item (n + 1 entries)
    candidates: list[list[str]]  # per item: the ids of its candidate chunks
    _: KW_ONLY
    seg_span: np.ndarray  # per segment: its span
    seg_chars: np.ndarray  # per segment: non-blank characters (> 0)
    inc_cand: np.ndarray  # (segment, candidate holding it) pairs, by segment: the candidate
    inc_start: np.ndarray  # the first pair of each segment

    @classmethod
    def of(cls, groups: Sequence[Sequence[EvidenceSpan]], met: Met, row_ids: Sequence[str]
           ) -> EvidenceBatch:
        """From each item's spans and their :meth:`ChunkIndex.meet
        <workbench.metrics.evidence.ChunkIndex.meet>` (of the spans of every group, in
        order); ``row_ids``: the chunk id of each row."""
        sizes = [len(g) for g in groups]
        n_items, n_spans = len(groups), sum(sizes)
        span_item = np.repeat(np.arange(n_items, dtype=np.int64), sizes)
        item_start = np.zeros(n_items + 1, dtype=np.int64)
        np.cumsum(sizes, out=item_start[1:])
        span_size = np.fromiter((s.size for g in groups for s in g), np.int64, n_spans)
        which, row, a, b = met.which, met.row, met.a, met.b
        # candidates: one per (item, chunk row), in item order
        n_rows = max(len(row_ids), 1)
        cand_key, piece_cand = np.unique(span_item[which] * n_rows + row, return_inverse=True)
        cand_item, cand_row = np.divmod(cand_key, n_rows)
        bounds = np.searchsorted(cand_item, np.arange(n_items + 1)).tolist()
        ids = [row_ids[r] for r in cand_row.tolist()]
        candidates = [ids[lo:hi] for lo, hi in itertools.pairwise(bounds)]
        # segment boundaries: every clip end, per span, with its running non-blank count
        width = int(b.max(initial=0)) + 1
        ends, first = np.unique(np.concatenate([which * width + a, which * width + b]),
                                return_index=True)
        solid = np.concatenate([met.solid_a, met.solid_b])[first]
        lo = np.searchsorted(ends, which * width + a)
        hi = np.searchsorted(ends, which * width + b)
        counts = hi - lo  # boundary segments lo..hi-1 lie inside the piece
        inc_piece = np.repeat(np.arange(len(which)), counts)
        inc_seg = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts - lo,
                                                           counts)
        chars = solid[inc_seg + 1] - solid[inc_seg]  # inc_seg + 1 <= hi: same span
        keep = chars > 0  # blank segments never add coverage
        inc_piece, inc_seg, chars = inc_piece[keep], inc_seg[keep], chars[keep]
        order = np.argsort(inc_seg, kind="stable")
        inc_piece, inc_seg, chars = inc_piece[order], inc_seg[order], chars[order]
        segs, inc_start = np.unique(inc_seg, return_index=True)
        return cls(span_item, span_size, item_start, candidates,
                   seg_span=ends[segs] // width, seg_chars=chars[inc_start],
                   inc_cand=piece_cand.reshape(-1)[inc_piece], inc_start=inc_start)

    def found(self, rankings: Sequence[Sequence[str]], needed: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
        """Per span, the rank at which it is found (``_NEVER``: not), and per segment its
        first rank. ``needed``: per span, the characters to cover."""
        ranks: list[int] = []
        add = ranks.append
        for ranking, cands in zip(rankings, self.candidates, strict=True):
            for c in cands:  # the first occurrence keeps its rank
                add(ranking.index(c) + 1 if c in ranking else _NEVER)
        cand_rank = np.array(ranks, dtype=np.int64)
        seg_rank = (np.minimum.reduceat(cand_rank[self.inc_cand], self.inc_start)
                    if len(self.inc_start) else np.zeros(0, dtype=np.int64))
        order = np.lexsort((seg_rank, self.seg_span))
        span, rank, chars = self.seg_span[order], seg_rank[order], self.seg_chars[order]
        running = np.cumsum(chars)
        start = np.searchsorted(span, span, "left")  # the span's first segment
        covered = running - (running[start] - chars[start])
        reached = np.flatnonzero((rank != _NEVER) & (covered >= needed[span]))
        found = np.full(len(self.span_size), _NEVER, dtype=np.int64)
        spans, first = np.unique(span[reached], return_index=True)
        found[spans] = rank[reached[first]]
        return found, seg_rank

    def scores(self, specs: Sequence[tuple[str, int | None]],
               rankings: Sequence[Sequence[str]], threshold: float,
               ideal_ranks: Callable[[int], list[float]]) -> list[np.ndarray]:
        """Per item, the evidence metric ``(kind, k)`` of its ranking (``rankings[i]``, chunk
        ids best first; ``k=None``: the whole ranking), for each spec. ``ideal_ranks(i)``:
        item i's ideal ranks at ``threshold`` (nDCG asks only where something is found)."""
        for kind, _ in specs:
            if kind not in EVIDENCE_KINDS:
                raise WorkbenchError(f"{kind!r} is not an evidence metric; evidence metrics: "
                                     f"{', '.join(sorted(EVIDENCE_KINDS))}")
        n = len(self.item_start) - 1
        needed = needed_characters(self.span_size, threshold)
        found, seg_rank = self.found(rankings, needed)
        depth = np.fromiter((max(len(r), 1) for r in rankings), np.int64, n)
        deepest = int(depth.max(initial=1))  # no rank lies deeper, whatever k is asked
        width = deepest + 2
        m = np.diff(self.item_start)
        by_rank = np.lexsort((found, self.span_item))  # spans of each item, by found rank
        f, fi = found[by_rank], self.span_item[by_rank]
        useful = _Useful(self, found, seg_rank, width)
        discount = np.array([0.0] + [1.0 / math.log2(r + 1.0) for r in range(1, width)])
        out = []
        for kind, k in specs:
            cut = depth if k is None else np.full(n, k, dtype=np.int64)
            within = f <= cut[fi]
            n_found = np.add.reduceat(within.astype(np.int64), self.item_start[:-1]) \
                if n else np.zeros(0, dtype=np.int64)
            if kind == "recall":
                out.append(n_found / m)
            elif kind == "hit_rate":
                out.append((n_found > 0).astype(np.float64))
            elif kind == "mrr":
                best = f[self.item_start[:-1]]
                out.append(np.where(n_found > 0, 1.0 / np.minimum(best, width), 0.0))
            elif kind == "precision":
                out.append(useful.at(np.arange(n), np.minimum(cut, deepest)) / cut)
            elif kind == "r_precision":
                out.append(np.bincount(fi, weights=f <= m[fi], minlength=n) / m)
            elif kind == "ap":
                total = np.zeros(n)
                np.add.at(total, fi[within], useful.at(fi[within], f[within]) / f[within])
                out.append(total / m)
            elif kind == "ndcg":
                dcg = np.zeros(n)
                np.add.at(dcg, fi[within], discount[f[within]])
                value = np.zeros(n)
                ideal_cut = math.inf if k is None else k  # uncut: the ideal finds every span
                for i in np.flatnonzero(dcg > 0).tolist():  # dcg 0: the value is 0 anyway
                    ideal = sum(1.0 / math.log2(r + 1.0)
                                for r in ideal_ranks(i) if r <= ideal_cut)
                    value[i] = dcg[i] / ideal if ideal > 0 else 0.0
                out.append(value)
            else:  # coverage
                seg_item = self.span_item[self.seg_span]
                held = np.bincount(seg_item, weights=self.seg_chars * (seg_rank <= cut[seg_item]),
                                   minlength=n)
                out.append(held / np.bincount(self.span_item, weights=self.span_size,
                                              minlength=n))
        return out


class _Useful:
    """Useful ranks (see the evidence module): rank r of an item is useful at cutoff K when
    r <= K and r adds coverage to a span found within K, i.e. when ``max(r, f_j) <= K`` for
    some span j that r adds to. Per item and rank, the least such value is kept, sorted, so
    the count at any K is one binary search."""

    def __init__(self, batch: EvidenceBatch, found: np.ndarray, seg_rank: np.ndarray,
                 width: int):
        adds = seg_rank != _NEVER
        span, rank = batch.seg_span[adds], seg_rank[adds]
        f = found[span]
        ok = f != _NEVER
        item, rank, least = batch.span_item[span[ok]], rank[ok], np.maximum(rank[ok], f[ok])
        key = item * width + rank
        order = np.lexsort((least, key))
        key, least = key[order], least[order]
        first = np.flatnonzero(np.diff(key, prepend=-1))  # one per (item, rank)
        self.keys = np.sort(key[first] // width * width + least[first])
        self.width = width

    def at(self, item: np.ndarray, k: np.ndarray) -> np.ndarray:
        """The number of useful ranks of ``item`` at cutoff ``k`` (elementwise; ``k`` at most
        the deepest rank, ``width - 2``)."""
        base = item * self.width
        count: np.ndarray = (np.searchsorted(self.keys, base + k, "right")
                             - np.searchsorted(self.keys, base, "right"))
        return count.astype(np.float64)


class JudgedItems(Mapping[str, ItemEvidence]):
    """qid -> :class:`~workbench.metrics.evidence.ItemEvidence` under one chunking, each
    built on first access from the one search of every span (``met``, of the spans of
    ``groups`` in order): scoring needs none of them, a found rank or a gold list one."""

    def __init__(self, index: ChunkIndex, qids: Sequence[str],
                 groups: Sequence[Sequence[EvidenceSpan]], met: Met):
        self._index, self._groups, self._met = index, groups, met
        self._at = {q: i for i, q in enumerate(qids)}
        self._first = [0, *itertools.accumulate(map(len, groups))]
        self._built: dict[str, ItemEvidence] = {}

    def __getitem__(self, qid: str) -> ItemEvidence:
        item = self._built.get(qid)
        if item is None:
            i = self._at[qid]
            by_span = self._index.located(self._met, self._first[i], self._first[i + 1])
            item = self._built[qid] = self._index.item_of(self._groups[i], by_span)
        return item

    def __contains__(self, qid: object) -> bool:
        return qid in self._at

    def __iter__(self) -> Iterator[str]:
        return iter(self._at)

    def __len__(self) -> int:
        return len(self._at)
