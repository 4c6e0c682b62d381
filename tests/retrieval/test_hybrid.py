"""Hybrid fusion: RRF (with the seed's worked example), weighted fusion, provenance."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.corpus import Document
from workbench.retrieval.base import Hit, Retriever
from workbench.retrieval.callable_retriever import CallableRetriever
from workbench.retrieval.hybrid import (
    HybridRetriever,
    contribution_table,
    rrf_fuse,
    weighted_fuse,
)

BM25 = ["D7", "D2", "D9", "D4", "D1"]  # matches the exact error code
DENSE = ["D4", "D3", "D7", "D8", "D2"]  # matches the meaning


def test_rrf_seed_example():
    fused = rrf_fuse([BM25, DENSE], c=60)
    expected = [
        ("D7", 1 / 61 + 1 / 63),  # bm25 #1, dense #3
        ("D4", 1 / 64 + 1 / 61),  # bm25 #4, dense #1
        ("D2", 1 / 62 + 1 / 65),  # bm25 #2, dense #5
        ("D3", 1 / 62),  # dense #2 only
        ("D9", 1 / 63),  # bm25 #3 only
        ("D8", 1 / 64),
        ("D1", 1 / 65),
    ]
    assert [cid for cid, _ in fused] == [cid for cid, _ in expected]
    assert [round(s, 5) for _, s in fused] == [round(s, 5) for _, s in expected]
    assert [round(s, 5) for _, s in fused[:5]] == [0.03227, 0.03202, 0.03151, 0.01613, 0.01587]


def test_rrf_ties_are_broken_by_id_descending():
    tie = round(1 / 61 + 1 / 62, 12)
    assert rrf_fuse([["B", "A"], ["A", "B"]]) == [("B", tie), ("A", tie)]
    assert [cid for cid, _ in rrf_fuse([["X"], ["Y"], ["Z"]])] == ["Z", "Y", "X"]


def test_rrf_weights_and_duplicates():
    fused = dict(rrf_fuse([["A", "B"], ["B", "A"]], c=0, weights=[2.0, 1.0]))
    assert fused == {"A": 2 / 1 + 1 / 2, "B": 2 / 2 + 1 / 1}
    assert rrf_fuse([["A", "A", "B"]], c=0) == [("A", 1.0), ("B", 0.5)]  # repeat counts once
    assert rrf_fuse([]) == []
    with pytest.raises(ValueError, match="weights"):
        rrf_fuse([["A"]], weights=[1, 2])
    with pytest.raises(ValueError, match="c must"):
        rrf_fuse([["A"]], c=-1)


ids = st.sampled_from([f"D{i}" for i in range(8)])


@given(st.lists(st.lists(ids, max_size=8, unique=True), max_size=4))
def test_rrf_matches_the_definition_and_ignores_input_order(rankings):
    fused = rrf_fuse(rankings)
    expected: dict[str, float] = {}
    for ranking in rankings:
        for rank, cid in enumerate(ranking, start=1):
            expected[cid] = expected.get(cid, 0.0) + 1 / (60 + rank)
    assert dict(fused) == pytest.approx(expected)
    assert [cid for cid, _ in fused] == sorted(expected, key=lambda c: (round(expected[c], 12), c),
                                               reverse=True)
    assert [cid for cid, _ in rrf_fuse(rankings[::-1])] == [cid for cid, _ in fused]


def test_weighted_fusion():
    bm25 = [("A", 10.0), ("B", 6.0), ("C", 2.0)]  # normalises to 1, 0.5, 0
    dense = [("C", 1.0), ("A", 0.75), ("D", 0.5)]  # normalises to 1, 0.5, 0
    fused = weighted_fuse([bm25, dense], weights=[0.5, 1.0])
    assert fused == [("C", 1.0), ("A", 1.0), ("B", 0.25), ("D", 0.0)]
    assert weighted_fuse([[("A", 3.0), ("B", 3.0)]]) == [("B", 1.0), ("A", 1.0)]
    # 0.5 + (0.7 - 0.5) / (0.9 - 0.5) is 0.99999... in floating point: still a tie, by id
    noisy = weighted_fuse([bm25, [("C", 0.9), ("A", 0.7), ("D", 0.5)]], weights=[0.5, 1.0])
    assert [cid for cid, _ in noisy] == ["C", "A", "B", "D"]


def fixed(name: str, ids: list[str]) -> CallableRetriever:
    """A retriever returning ``ids`` with scores 10, 9, 8, ..."""
    return CallableRetriever(lambda q: [(cid, 10.0 - i) for i, cid in enumerate(ids)], name)


def test_hybrid_retriever_rrf_with_provenance():
    hybrid = HybridRetriever([fixed("bm25", BM25), fixed("dense", DENSE)], depth=50)
    assert isinstance(hybrid, Retriever) and hybrid.name == "hybrid"
    hits = hybrid.search("vpn ERR-4031", 5)
    assert [h.chunk_id for h in hits] == ["D7", "D4", "D2", "D3", "D9"]
    assert [h.rank for h in hits] == [1, 2, 3, 4, 5]
    assert all(isinstance(h, Hit) and h.source == "hybrid" for h in hits)
    assert round(hits[0].score, 5) == 0.03227
    assert hits[0].details["ranks"] == {"bm25": 1, "dense": 3}
    assert hits[3].details["ranks"] == {"bm25": None, "dense": 2}
    assert hits[3].details["scores"] == {"bm25": None, "dense": 9.0}
    search = hybrid.search_inputs("vpn ERR-4031", 5)
    assert search.fused == tuple(hits)
    assert set(search.input_s) == {"bm25", "dense"} and min(search.input_s.values()) >= 0
    assert [h.chunk_id for h in search.inputs["dense"]] == DENSE
    assert hybrid.search("q", 0) == []
    assert len(hybrid.search("q", 100)) == 7


def test_hybrid_fetches_depth_from_each_input():
    asked: list[int] = []

    class Recording:
        name = "rec"

        def search(self, query: str, k: int) -> list[Hit]:
            asked.append(k)
            return [Hit(f"x{i}", 1.0 / (i + 1), i + 1, "rec") for i in range(k)]

    HybridRetriever([Recording(), Recording()], depth=20).search("q", 5)
    assert asked == [20, 20]
    HybridRetriever([Recording()], depth=20).search("q", 30)  # never fewer than k
    assert asked[-1] == 30


def test_hybrid_weighted_method():
    hybrid = HybridRetriever(
        [fixed("bm25", ["A", "B", "C"]), fixed("dense", ["C", "A", "D"])],
        method="weighted",
        weights=[0.5, 1.0],
    )
    hits = hybrid.search("q", 4)
    assert [(h.chunk_id, h.score) for h in hits] == [
        ("C", 1.0),
        ("A", 1.0),
        ("B", 0.25),
        ("D", 0.0),
    ]
    assert hits[0].details["ranks"] == {"bm25": 3, "dense": 1}


def test_hybrid_names_and_validation():
    hybrid = HybridRetriever([fixed("dense", ["A"]), fixed("dense", ["B"])])
    assert hybrid.input_names == ["dense", "dense-2"]
    assert hybrid.search("q", 2)[1].details["ranks"] == {"dense": 1, "dense-2": None}
    with pytest.raises(ValueError, match="method"):
        HybridRetriever([fixed("a", [])], method="max")
    with pytest.raises(ValueError, match="at least one"):
        HybridRetriever([])
    with pytest.raises(ValueError, match="weights"):
        HybridRetriever([fixed("a", [])], weights=[1, 1])


def test_contribution_table():
    hybrid = HybridRetriever([fixed("bm25", BM25), fixed("dense", DENSE)])
    hits = hybrid.search("q", 3)
    rows = contribution_table(hits, ["D4", "D7", "D3"])
    assert rows == [
        {"chunk_id": "D4", "fused_rank": 2, "bm25": 4, "dense": 1, "found_by": ["bm25", "dense"]},
        {"chunk_id": "D7", "fused_rank": 1, "bm25": 1, "dense": 3, "found_by": ["bm25", "dense"]},
        {"chunk_id": "D3", "fused_rank": None, "bm25": None, "dense": None, "found_by": []},
    ]


def test_fused_hits_keep_the_chunk_their_inputs_located():
    docs = [Document("vpn", "Restart the VPN client. Error ERR-4031 means a stale token.")]
    texts = ["Restart the VPN client.", "Error ERR-4031 means a stale token."]

    def production(order: list[int], name: str) -> CallableRetriever:
        return CallableRetriever(lambda q: [{"doc_id": "vpn", "text": texts[i]} for i in order],
                                 name, documents=docs)

    for method in ("rrf", "weighted"):
        hybrid = HybridRetriever([production([0, 1], "bm25"), production([1], "dense")],
                                 method=method)
        hits = hybrid.search("ERR-4031", 2)
        assert {h.chunk_id for h in hits} == {"vpn@0-23", "vpn@24-59"}
        assert all(h.chunk is not None and h.chunk.id == h.chunk_id for h in hits)
        assert {h.chunk.text for h in hits if h.chunk is not None} == set(texts)
