"""The synthetic measures against their rules, on generated chunkings and rankings:
``overlap_table`` takes the chunk sharing the most characters with an item's first evidence
span (none when no chunk shares one: touching is not overlapping), and ``fooled_by`` names
exactly the item's distractors ranked at or above ``k``."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.corpus import Chunk
from workbench.evaluation import Run
from workbench.golden import Evidence, GoldenItem
from workbench.retrieval import Hit
from workbench.synthetic.measures import fooled_by, lexical_overlap, overlap_table

TEXT = "refund policy travel hotel days boots tent cap " * 3


@st.composite
def chunkings(draw):
    """Chunks of document d over TEXT: consecutive cuts, some chunks left out."""
    cuts = sorted(draw(st.sets(st.integers(1, len(TEXT) - 1), max_size=6)))
    bounds = [0, *cuts, len(TEXT)]
    pieces = list(itertools.pairwise(bounds))
    kept = [p for p in pieces if draw(st.booleans())] or pieces[:1]
    return [Chunk(f"d#{i}", "d", a, b, text=TEXT[a:b]) for i, (a, b) in enumerate(kept)]


@settings(max_examples=200)
@given(chunkings(), st.integers(0, len(TEXT) - 1).flatmap(
    lambda s: st.tuples(st.just(s), st.integers(s + 1, len(TEXT)))))
def test_overlap_table_takes_the_chunk_sharing_most_characters(chunks, span):
    s, e = span
    item = GoldenItem("q", "refund days for travel", evidence=(Evidence("d", s, e, TEXT[s:e]),))
    shared = [(min(c.end, e) - max(c.start, s), c) for c in chunks]
    best = max((n for n, _ in shared), default=0)
    table = overlap_table([item], chunks)
    if best <= 0:
        assert table.empty
        return
    (row,) = table.itertuples()
    winners = [c for n, c in shared if n == best]
    assert row.chunk_id == winners[0].id  # ties: the first chunk
    assert row.overlap == lexical_overlap(item.question, winners[0].text)


@settings(max_examples=200)
@given(st.lists(st.sampled_from([f"c{i}" for i in range(8)]), min_size=1, max_size=8,
                unique=True),
       st.sets(st.sampled_from([f"c{i}" for i in range(10)]), min_size=1, max_size=4),
       st.integers(1, 9))
def test_fooled_by_names_the_distractors_ranked_within_k(ranked, distractors, k):
    item = GoldenItem("q", "how long", extra={"kind": "hard", "distractors": [
        {"chunk_id": d} for d in sorted(distractors)]})
    hits = [Hit(cid, 1.0 - r / 10, r, "bm25") for r, cid in enumerate(ranked, start=1)]
    run = Run("bm25", {"q": tuple(hits)})
    (row,) = fooled_by(run, [item], k=k).itertuples()
    want = [(r, c) for r, c in enumerate(ranked, start=1) if r <= k and c in distractors]
    assert row.fooled == [c for _, c in want]
    assert row.first_rank == min((r for r, _ in want), default=0)
