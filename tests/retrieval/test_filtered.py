"""Filters before search: the filtered retriever ranks only passing chunks (exactly as a
retriever built on them would), and the comparison reports evidence the filter excluded as
such, not as a retrieval miss."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.chunking import RecursiveChunker, chunk_corpus
from workbench.corpus import Corpus, Document
from workbench.evaluation.filtered import EXCLUDED, PARTLY, compare_filtered
from workbench.golden import Evidence, GoldenItem
from workbench.retrieval import BM25Retriever
from workbench.retrieval.filtered import FilteredRetriever, chunk_fields, filter_key, passes

TEXT = {
    "sync": "To reset the sync token open Settings and choose Reset token.",
    "login": "Login fails when the password expired; ask an admin to unlock it.",
    "export": "Export a report as CSV from the Reports page, then Download.",
}
DOCS = [
    Document(f"{topic}-{product}-{version}", f"{TEXT[topic]} ({product} {version})", topic,
             {"product": product, "version": version,
              "filters": {"audience": "admin" if topic == "login" else "user"}})
    for topic in TEXT for product in ("Acme", "Globex") for version in ("2", "3")
]
CORPUS = Corpus(DOCS)
CHUNKS = chunk_corpus(RecursiveChunker(200), CORPUS)


def _filtered() -> FilteredRetriever:
    return FilteredRetriever(CHUNKS, BM25Retriever, {"product": "acme"}, documents=CORPUS)


filters = st.dictionaries(st.sampled_from(["product", "version", "audience"]),
                          st.lists(st.sampled_from(["Acme", "globex", "2", "3", "user", "admin",
                                                    " ACME "]), min_size=1, max_size=2),
                          max_size=3)


@settings(max_examples=25, deadline=None)
@given(where=filters, query=st.sampled_from(["reset sync token", "password expired",
                                              "csv report", "acme"]), k=st.integers(1, 12))
def test_filtered_search_equals_search_over_the_passing_chunks(where: dict[str, list[str]],
                                                              query: str, k: int) -> None:
    view = _filtered().with_filter(where)
    allowed = [c for c in CHUNKS if passes(chunk_fields(c, CORPUS), where)]
    assert view.candidates() == allowed
    hits = view.search(query, k)
    assert {h.chunk_id for h in hits} <= {c.id for c in allowed}
    expected = BM25Retriever(allowed).search(query, k) if allowed else []
    assert [(h.chunk_id, h.score) for h in hits] == [(h.chunk_id, h.score) for h in expected]


def test_filter_values_fold_and_missing_fields_deny() -> None:
    assert filter_key({"product": [" ACME ", "acme"]}) == (("product", ("acme",)),)
    assert passes({"product": "Acme", "version": 3}, {"version": "3"})
    assert not passes({"product": "Acme"}, {"language": "en"})  # no field: excluded
    assert passes({"product": ["Acme", "Globex"]}, {"product": "globex"})


def test_retrievers_are_built_once_per_filter() -> None:
    calls = []

    def build(chunks: list) -> BM25Retriever:  # type: ignore[type-arg]
        calls.append(len(chunks))
        return BM25Retriever(chunks)

    base = FilteredRetriever(CHUNKS, build, {"product": "acme"}, documents=CORPUS)
    base.search("token", 3)
    base.with_filter({"product": ["ACME"]}).search("csv", 3)
    base.with_filter({"product": "globex"}).search("csv", 3)
    assert calls == [6, 6]
    assert base.with_filter({"product": "initech"}).search("csv", 3) == []


def _item(qid: str, doc_id: str, quote: str, **extra: str) -> GoldenItem:
    doc = CORPUS[doc_id]
    start = doc.text.index(quote)
    return GoldenItem(qid, quote, evidence=(Evidence(doc_id, start, start + len(quote), quote),),
                      extra=extra)


def test_comparison_reports_excluded_evidence_not_a_miss() -> None:
    items = [
        _item("q-ok", "sync-Acme-3", "Reset token", product="acme", version="3"),
        _item("q-wrong-version", "export-Acme-2", "as CSV", product="acme", version="3"),
        _item("q-globex", "login-Globex-2", "unlock it", product="globex", version="2"),
    ]
    table = compare_filtered(BM25Retriever(CHUNKS), _filtered(), items,
                             lambda i: dict(i.extra), chunks=CHUNKS, k=3)
    rows = table.set_index("qid")
    assert list(table["qid"]) == ["q-ok", "q-wrong-version", "q-globex"]
    assert rows.loc["q-wrong-version", "status"] == EXCLUDED
    assert math.isnan(rows.loc["q-wrong-version", "filtered"])
    assert rows.loc["q-wrong-version", "excluded_evidence"] == "1/1"
    assert rows.loc["q-ok", "status"] == "compared" and rows.loc["q-ok", "filtered"] == 1.0
    # "unlock it" is in four near-identical documents: unfiltered BM25 may rank another
    # product's copy first; the filter leaves only the right ones
    assert rows.loc["q-globex", "filtered"] >= rows.loc["q-globex", "unfiltered"]
    assert PARTLY not in set(table["status"])
