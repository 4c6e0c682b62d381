"""The one ordering rule (workbench.ranking.top_k): score descending, then id descending,
checked against a plain sort, and the same order from every ranked list built on it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.corpus import Chunk
from workbench.metrics import trec_sorted
from workbench.ranking import id_ranks, top_k
from workbench.retrieval import BM25Retriever, CallableRetriever, DenseRetriever, rank_hits

# few distinct ids and scores: many ties, and ids given twice
IDS = st.sampled_from(["a", "b", "B", "a1", "a10", "a9", "é", "e\u0301", "z", "#1", ""])
SCORES = st.sampled_from([0.0, -0.0, 1.0, 1.5, -2.0, math.inf, -math.inf, 1e-300, 3.0])
ENTRIES = st.lists(st.tuples(IDS, SCORES), max_size=40)
KS = st.integers(-2, 45)


def reference(entries: list[tuple[str, float]], k: int) -> list[int]:
    """The rule written as a plain, stable sort (reverse keeps equal entries in order)."""
    order = sorted(range(len(entries)), key=lambda i: (entries[i][1], entries[i][0]),
                   reverse=True)
    return order[:max(k, 0)]


@given(ENTRIES, KS)
def test_top_k_equals_a_full_sort(entries, k):
    ids = [i for i, _ in entries]
    scores = [s for _, s in entries]
    want = reference(entries, k)
    assert top_k(ids, scores, k).tolist() == want
    assert top_k(ids, np.asarray(scores, dtype=np.float64), k,
                 id_rank=id_ranks(ids)).tolist() == want


@given(ENTRIES)
def test_k_none_or_larger_than_n_ranks_everything(entries):
    ids = [i for i, _ in entries]
    scores = [s for _, s in entries]
    everything = reference(entries, len(entries))
    assert top_k(ids, scores).tolist() == everything
    assert top_k(ids, scores, len(entries) + 7).tolist() == everything


def test_k_zero_and_negative_and_empty():
    assert top_k(["a", "b"], [1.0, 2.0], 0).tolist() == []
    assert top_k(["a", "b"], [1.0, 2.0], -3).tolist() == []
    assert top_k([], [], 5).tolist() == []


@given(ENTRIES, KS, st.randoms(use_true_random=False))
def test_the_order_does_not_depend_on_the_input_order(entries, k, rnd):
    shuffled = list(entries)
    rnd.shuffle(shuffled)

    def ordered(es):
        ids = [i for i, _ in es]
        return [es[i] for i in top_k(ids, [s for _, s in es], k)]

    assert ordered(shuffled) == ordered(entries)


@given(ENTRIES.filter(bool), st.integers(1, 45), st.data())
def test_a_nan_score_is_refused_wherever_it_is(entries, k, data):
    at = data.draw(st.integers(0, len(entries) - 1))
    scores = [s for _, s in entries]
    scores[at] = math.nan
    with pytest.raises(ValueError, match="NaN cannot be ranked"):
        top_k([i for i, _ in entries], scores, k)
    with pytest.raises(ValueError, match="NaN cannot be ranked"):
        top_k([i for i, _ in entries], np.asarray(scores, dtype=np.float32), k)


def test_ties_at_the_cut_are_broken_by_id_not_by_position():
    # four entries tied at 1.0, the cut at k=2 falls among them
    ids = ["c", "a", "z", "b", "y"]
    assert [ids[i] for i in top_k(ids, [1.0, 1.0, 0.0, 1.0, 1.0], 2)] == ["y", "c"]
    assert [ids[i] for i in top_k(ids, np.float32([0.5, 0.5, 0.9, 0.5, 0.1]), 3)] == \
        ["z", "c", "b"]
    # string order, as trec_eval's strcmp: "doc9" > "doc10"
    assert [["doc10", "doc9"][i] for i in top_k(["doc10", "doc9"], [1, 1])] == \
        ["doc9", "doc10"]


def test_scores_must_match_ids():
    with pytest.raises(ValueError, match="one score per id"):
        top_k(["a", "b"], [1.0], 1)
    with pytest.raises(ValueError, match="one score per id"):
        top_k(["a"], [[1.0]], 1)


def test_id_ranks_share_a_place_for_equal_ids():
    assert id_ranks(["b", "a", "b", "c"]).tolist() == [1, 0, 1, 2]
    assert id_ranks([]).tolist() == []


# -- every ranked list uses the one rule ------------------------------------------------

UNIQUE = st.lists(st.tuples(IDS, st.sampled_from([0.0, 1.0, 2.0])), max_size=11,
                  unique_by=lambda e: e[0])


@given(UNIQUE, st.integers(0, 12))
def test_rank_hits_and_trec_sorted_follow_the_rule(entries, k):
    want = [entries[i][0] for i in reference(entries, k)]
    assert [h.chunk_id for h in rank_hits(entries, k, "x")] == want
    assert [h.rank for h in rank_hits(entries, k, "x")] == list(range(1, len(want) + 1))
    assert trec_sorted(dict(entries))[:k] == want


@given(UNIQUE.filter(bool), st.integers(1, 12))
def test_dense_and_callable_retrievers_follow_the_rule(entries, k):
    ids = [i for i, _ in entries]
    want = [entries[i][0] for i in reference(entries, k)]
    # a vector of norm 1 at angle a scores cos(a) against [1, 0]: equal scores, equal vectors
    angle = {0.0: 1.2, 1.0: 0.7, 2.0: 0.0}
    vectors = np.float32([[math.cos(angle[s]), math.sin(angle[s])] for _, s in entries])
    dense = DenseRetriever.from_vectors(ids, vectors, index="exact")
    assert [h.chunk_id for h in dense.search_vectors(np.float32([[1, 0]]), k)[0]] == want
    best_first = [entries[i] for i in reference(entries, len(entries))]
    shuffled_ties = sorted(best_first, key=lambda e: (-e[1], e[0]))  # ties in id ascending
    callable_ = CallableRetriever(lambda q: shuffled_ties)
    assert [h.chunk_id for h in callable_.search("q", k)] == want


def test_bm25_breaks_ties_by_chunk_id():
    chunks = [Chunk(cid, "d", 0, 5, text="refund policy") for cid in ["c2", "c10", "c1", "c3"]]
    chunks.append(Chunk("c0", "d", 0, 5, text="refund refund policy"))
    bm25 = BM25Retriever(chunks)
    assert [h.chunk_id for h in bm25.search("refund", 3)] == ["c0", "c3", "c2"]
    # nothing matches: every chunk scores 0 and the order is the ids, descending
    assert [h.chunk_id for h in bm25.search("zebra", 10)] == ["c3", "c2", "c10", "c1", "c0"]


@given(UNIQUE.filter(bool), st.data())
def test_the_metrics_rank_a_scored_dict_by_the_same_rule(entries, data):
    """metrics/trec.py ranks a scored query's judged documents by counting, not sorting:
    it must give every metric the value of the list top_k orders."""
    from workbench.metrics.trec import score_queries

    judged = data.draw(st.lists(st.sampled_from([e[0] for e in entries]), min_size=1,
                                unique=True))
    qrels = {"q": {d: 1 + n % 2 for n, d in enumerate(judged)}}
    scored = {"q": dict(entries)}
    listed = {"q": trec_sorted(dict(entries))}
    metrics = ["mrr", "ndcg@3", "recall@2", "precision@1", "map"]
    a = score_queries(qrels, scored, metrics).values
    b = score_queries(qrels, listed, metrics).values
    for m in metrics:
        assert a[m].tolist() == b[m].tolist(), m
