"""Real-model retrieval on the bundled handbook: BM25, MiniLM dense and hybrid (RRF) over
``fixed:size=800,overlap=100`` chunks (175), scored from the golden set's evidence spans.

Per category, lexical and semantic retrieval fail differently: BM25 wins on exact error
codes (ERR-4031 is one token to BM25, noise to MiniLM), dense wins or ties on colloquial
questions that share no words with the policy text. Embeddings go through the embedding
cache (the test run's one cache folder, ``.workbench_cache`` at the repository root), shared by
one module-scoped fixture, so only the first run embeds (~175 chunks, 15-50 s on 2 busy cores).
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.conftest import ROOT
from workbench.chunking import FixedChunker, chunk_corpus
from workbench.evaluation import Evaluation, evaluate
from workbench.metrics import Relevance
from workbench.retrieval import LanguageWarning, Retriever, make_retriever
from workbench.retrieval.cache import EmbeddingCache
from workbench.retrieval.hybrid import HybridRetriever, contribution_table

pytestmark = pytest.mark.slow

METRICS = ["hit_rate@5", "recall@5", "mrr@5"]


@pytest.fixture(scope="module")
def systems(handbook):
    corpus, golden = handbook
    golden = golden.validate(corpus)
    chunks = chunk_corpus(FixedChunker(800, 100), corpus.documents)
    cache = EmbeddingCache()  # the run's one cache folder (conftest)
    # MiniLM chosen by hand: the handbook is 31% Chinese and Vietnamese (by words), which it
    # does not read, so it is warned about (by default the corpus would get multilingual-e5)
    with pytest.warns(LanguageWarning, match="Chinese"):
        retrievers = {name: make_retriever(name, chunks, encoder="minilm", cache=cache)
                      for name in ("bm25", "dense", "hybrid")}
    ev: Evaluation | None = None
    for retriever in retrievers.values():
        part = evaluate(retriever, golden, chunks, metrics=METRICS, k=5)
        ev = part if ev is None else ev + part
    assert ev is not None
    return {"chunks": chunks, "golden": golden, "cache": cache, "ev": ev, **retrievers}


def by_category(ev: Evaluation, metric: str = "hit_rate@5") -> pd.DataFrame:
    table = ev.by("category")
    return table[table["metric"] == metric].pivot(index="category", columns="system",
                                                  values="mean")


def test_chunking_and_cache(systems):
    assert len(systems["chunks"]) == 175
    # every chunk was embedded once (now or by an earlier run) and is served from the cache
    with pytest.warns(LanguageWarning):
        again = make_retriever("dense", systems["chunks"], encoder="minilm",
                               cache=systems["cache"])
    assert systems["cache"].stats.embedded == 0
    assert again.search("how long is parental leave", 5)


def test_bm25_wins_exact_codes_dense_wins_colloquial(systems):
    table = by_category(systems["ev"])
    assert table.loc["exact-code", "bm25"] > table.loc["exact-code", "dense"], table
    assert table.loc["colloquial", "dense"] >= table.loc["colloquial", "bm25"], table
    # the fusion keeps most of both strengths overall
    overall = systems["ev"].summary().set_index(["system", "metric"])["mean"]
    assert overall["hybrid", "hit_rate@5"] >= max(overall["bm25", "hit_rate@5"],
                                                  overall["dense", "hit_rate@5"]) - 0.05


def test_hybrid_is_a_retriever_with_provenance(systems):
    hybrid = systems["hybrid"]
    assert isinstance(hybrid, Retriever) and isinstance(hybrid, HybridRetriever)
    assert hybrid.input_names == ["bm25", "dense"]
    hits = hybrid.search("what does ERR-4031 mean", 5)
    assert [h.rank for h in hits] == [1, 2, 3, 4, 5]
    assert all(set(h.details["ranks"]) == {"bm25", "dense"} for h in hits)


def top5_by(row: dict) -> str:
    """Which inputs ranked this chunk in their own top 5 ("fusion" when neither did).
    ``found_by`` itself lists every input that returned it at any depth (here 50 of 175)."""
    names = [n for n in ("bm25", "dense") if row[n] is not None and row[n] <= 5]
    return "+".join(names) or "fusion"


def test_contribution_table_shows_who_found_each_relevant_hit(systems):
    golden, chunks, ev = systems["golden"], systems["chunks"], systems["ev"]
    judged = Relevance(golden, chunks)  # chunks that hold part of each item's evidence
    qrels = {q: dict.fromkeys(judged.touching(q), 1) for q in judged.qids}
    run = ev.runs["hybrid"]
    found: dict[str, dict[str, int]] = {}
    for item in golden.answerable:
        rows = contribution_table(run.hits[item.qid], qrels[item.qid], ["bm25", "dense"])
        assert {r["chunk_id"] for r in rows} == set(qrels[item.qid])
        for row in rows:
            if row["fused_rank"] is None:
                assert row["found_by"] == [] and row["bm25"] is None
                continue
            assert row["found_by"], row  # a fused hit always comes from some input list
            if row["fused_rank"] <= 5:
                counts = found.setdefault(item.category, {})
                counts[top5_by(row)] = counts.get(top5_by(row), 0) + 1
    everywhere = {k for counts in found.values() for k in counts}
    assert {"bm25", "dense", "bm25+dense"} <= everywhere, found
    # exact codes come from BM25's top 5; colloquial questions need dense retrieval
    assert found["exact-code"].get("bm25", 0) > found["exact-code"].get("dense", 0), found
    assert found["colloquial"].get("dense", 0) > found["colloquial"].get("bm25", 0), found


def test_latency_recorded_per_query(systems):
    ev, golden = systems["ev"], systems["golden"]
    latency = ev.latency().set_index("system")
    assert set(latency.index) == {"bm25", "dense", "hybrid"}
    assert (latency["n"] == len(golden)).all()
    assert (latency["p95_ms"] >= latency["p50_ms"]).all() and (latency["p50_ms"] > 0).all()
    # dense search encodes the query with MiniLM: slower than a BM25 lookup
    assert latency.loc["dense", "p50_ms"] > latency.loc["bm25", "p50_ms"]


@pytest.mark.parametrize("retriever", ["dense", "hybrid"])
def test_cli_eval_json(systems, retriever, capsys, monkeypatch):
    from workbench.cli import main
    from workbench.retrieval.encoders import LanguageWarning

    monkeypatch.chdir(ROOT)
    # the handbook is a third Chinese and Vietnamese: MiniLM given by name is warned about
    with pytest.warns(LanguageWarning, match="Chinese"):
        code = main(["eval", "--corpus", "data/handbook/docs", "--golden",
                     "data/handbook/golden.jsonl", "--retriever", retriever, "--encoder",
                     "minilm", "-k", "5", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["retriever"] == retriever and out["chunks"] == 175
    mine = systems["ev"].summary().set_index(["system", "metric"])["mean"]
    assert out["metrics"]["hit_rate@5"] == pytest.approx(mine[retriever, "hit_rate@5"], abs=1e-6)
    assert out["latency_ms"]["p50_ms"] > 0 and out["latency_ms"]["n"] == out["n"] + 7


def test_the_same_language_warning_is_shown_once_per_session():
    """A notebook that builds dense, hybrid and reranked indexes over the same chunks gets the
    warning once (warnings' "once" action: per message text), and a different problem still
    gets its own."""
    import subprocess
    import sys

    code = ("import warnings\n"
            "from workbench.retrieval import LanguageWarning\n"
            "for where in range(3):\n"
            "    warnings.warn('the chunks are 31% Chinese', LanguageWarning)\n"
            "warnings.warn('the questions are 50% Vietnamese', LanguageWarning)\n")
    err = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stderr
    assert err.count("31% Chinese") == 1 and err.count("50% Vietnamese") == 1
