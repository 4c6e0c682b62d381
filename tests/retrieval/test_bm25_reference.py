"""BM25Retriever against rank-bm25 on a real collection (Cranfield, 1,400 abstracts and 225
queries), as bm25s checks itself: the same tokens fed to both, every score and every ranking
compared.

The variant: ours is bm25s's "lucene" BM25 (workbench.retrieval.bm25's docstring):
idf = ln(1 + (N - df + 0.5) / (df + 0.5)) and tf / (tf + k1 (1 - b + b dl / avgdl)), no
(k1 + 1) factor. rank-bm25's ``BM25Okapi`` is another formula (idf ln((N - df + 0.5) /
(df + 0.5)), negative idfs floored at epsilon times the mean idf, the (k1 + 1) factor), so
the reference is built from rank-bm25's pieces: its ``BM25`` base counts the collection (term
frequencies per document, document frequencies, lengths, avgdl) and :class:`LuceneBM25`
adds the Lucene formulas, in float64. Okapi is kept as the negative control: a scorer of the
wrong variant fails these comparisons.

Tolerance: our scores are float32 (bm25s's dtype), so they are compared at float32's
resolution (relative 1e-6, about 8 ulps; the largest error seen is 1.8e-7), not 1e-9. The
rankings are equal exactly to depth 100 on every query (ties ordered by chunk id descending,
the one tie rule). Deeper, float32 can order two chunks whose exact scores differ by less
than its resolution (seen at k1=1.2, b=0.3: three queries, first at rank 148, one of them an
exact tie in float64 split by rounding); there the full ranking is checked to be the
reference's up to that resolution, and chunks tied in float32 to follow the tie rule.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from tests.metrics.test_qrels_grades import smart_records
from workbench.corpus import Chunk
from workbench.retrieval import BM25Retriever, tokenize

rank_bm25 = pytest.importorskip("rank_bm25")


class LuceneBM25(rank_bm25.BM25):
    """rank-bm25's collection statistics scored with the Lucene BM25 formulas (float64)."""

    def __init__(self, corpus: list[list[str]], k1: float, b: float):
        self.k1, self.b = k1, b
        super().__init__(corpus)

    def _calc_idf(self, nd: dict[str, int]) -> None:
        n = self.corpus_size
        self.idf = {w: math.log(1 + (n - df + 0.5) / (df + 0.5)) for w, df in nd.items()}

    def get_scores(self, query: list[str]) -> np.ndarray:
        score = np.zeros(self.corpus_size)
        norm = self.k1 * (1 - self.b + self.b * np.array(self.doc_len) / self.avgdl)
        for q in query:  # a repeated query term counts each time, as in bm25s
            tf = np.array([d.get(q, 0) for d in self.doc_freqs], dtype=float)
            score += self.idf.get(q, 0.0) * tf / (tf + norm)
        return score


@pytest.fixture(scope="module")
def cranfield(datasets: Path) -> tuple[list[Chunk], list[str]]:
    src = datasets / "cranfield"
    docs = smart_records((src / "cran.all.1400").read_text(encoding="utf-8"))
    queries = smart_records((src / "cran.qry").read_text(encoding="utf-8"))
    chunks = [Chunk(f"cran#{d['id']}", f"cran{d['id']}", 0, len(d.get("W", "")), text=d.get("W",
                                                                                            ""))
              for d in docs]
    assert len(chunks) == 1400 and len(queries) == 225
    return chunks, [q["W"] for q in queries]


def reference_ranking(ids: np.ndarray, scores: np.ndarray, k: int) -> list[str]:
    """Score descending, then chunk id descending."""
    order = sorted(range(len(ids)), key=lambda i: (scores[i], ids[i]), reverse=True)
    return [str(ids[i]) for i in order[:k]]


@pytest.mark.parametrize("k1, b", [(1.5, 0.75), (1.2, 0.3)])
def test_scores_and_rankings_equal_rank_bm25_lucene_on_every_cranfield_query(cranfield, k1, b):
    chunks, queries = cranfield
    ours = BM25Retriever(chunks, k1=k1, b=b)
    ref = LuceneBM25([tokenize(c.embed_text) for c in chunks], k1=k1, b=b)
    ids = np.array(ours.chunk_ids)
    for query in queries:
        expected = ref.get_scores(tokenize(query))
        scores = ours.scores(query)
        np.testing.assert_allclose(scores, expected, rtol=1e-6, atol=0, err_msg=query)
        hits = ours.search(query, len(chunks))
        assert [h.rank for h in hits] == list(range(1, len(chunks) + 1))
        ranked = [h.chunk_id for h in hits]
        assert ranked[:100] == reference_ranking(ids, expected, 100), query
        # the whole ranking: never a chunk ahead of one the reference scores higher by more
        # than float32's resolution, and float32 ties by chunk id descending
        at = {cid: i for i, cid in enumerate(ours.chunk_ids)}
        ref_sorted = expected[[at[c] for c in ranked]]
        assert np.all(np.maximum.accumulate(ref_sorted[::-1])[::-1] <= ref_sorted * (1 + 2e-6)
                      + 1e-9), query
        ours_sorted = scores[[at[c] for c in ranked]]
        assert np.all(np.diff(ours_sorted) <= 0), query
        tied = np.flatnonzero(np.diff(ours_sorted) == 0)
        assert all(ranked[i] > ranked[i + 1] for i in tied), query


def test_the_okapi_variant_is_told_apart(cranfield):
    """Negative control: rank-bm25's BM25Okapi (another idf, the epsilon floor, the (k1 + 1)
    factor) is a different scorer, and the comparisons above would fail on it."""
    chunks, queries = cranfield
    ours = BM25Retriever(chunks)
    okapi = rank_bm25.BM25Okapi([tokenize(c.embed_text) for c in chunks], k1=1.5, b=0.75)
    ids = np.array(ours.chunk_ids)
    differing = sum(
        [h.chunk_id for h in ours.search(q, 10)]
        != reference_ranking(ids, okapi.get_scores(tokenize(q)), 10) for q in queries)
    assert not np.allclose(ours.scores(queries[0]), okapi.get_scores(tokenize(queries[0])),
                           rtol=1e-6, atol=0)
    assert differing > 0
    print(f"Okapi's top 10 differs from ours on {differing} of {len(queries)} queries")
