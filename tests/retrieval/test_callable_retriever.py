"""CallableRetriever: the shapes a production hit may take, located into chunks, and the
ranking rules (order kept, duplicates kept and cut at k, declared scores checked, ties by
chunk id descending)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.corpus import Chunk, Document
from workbench.retrieval.base import Hit
from workbench.retrieval.callable_retriever import CallableRetriever
from workbench.retrieval.production_hits import UnreadableHit

DOCS = [Document("refunds", "# Refunds\n\nRefunds are paid within 30 days.\n\nKeep the "
                            "receipt.\n\nRefunds are paid within 30 days.\n"),
        Document("leave", "Annual leave is 25 days. Carry over up to 5 days.")]


def ids(hits: list[Hit]) -> list[str]:
    return [h.chunk_id for h in hits]


def test_duplicates_are_kept_as_ranks_and_cut_at_k():
    wrapped = CallableRetriever(lambda q: ["junk#0"] * 10 + ["gold#0"], name="prod")
    hits = wrapped.search("q", 2)
    assert ids(hits) == ["junk#0", "junk#0"]
    assert [h.rank for h in hits] == [1, 2] and {h.source for h in hits} == {"prod"}
    assert ids(wrapped.search("q", 11))[-1] == "gold#0"


def test_the_callable_receives_k_when_it_takes_it():
    seen = []

    def search(question, k):
        seen.append(k)
        return [f"d#{i}" for i in range(k + 3)]

    assert len(CallableRetriever(search).search("q", 4)) == 4 and seen == [4]
    assert len(CallableRetriever(lambda q, k=10: ["a#0"] * k).search("q", 3)) == 3
    assert ids(CallableRetriever(lambda q: ["a#0", "b#0"]).search("q", 5)) == ["a#0", "b#0"]
    # a default under another name is the callable's own (a closure idiom), never k
    best = {"q": "c#0"}
    holder = CallableRetriever(lambda q, b=best: [b[q]] if q in b else [])
    assert ids(holder.search("q", 5)) == ["c#0"]


def test_ties_are_ordered_by_chunk_id_descending_before_the_cut():
    hits = CallableRetriever(lambda q: [("a#0", 0.9), ("b#0", 0.5), ("d#0", 0.5),
                                        ("c#0", 0.5), ("e#0", 0.1)]).search("q", 3)
    assert ids(hits) == ["a#0", "d#0", "c#0"]
    assert [h.score for h in hits] == [0.9, 0.5, 0.5]


def test_distances_are_declared_and_turned_into_higher_is_better():
    wrapped = CallableRetriever(lambda q: [("a#0", 0.2), ("b#0", 0.4), ("c#0", 0.4)],
                                scores="distance")
    hits = wrapped.search("q", 3)
    assert ids(hits) == ["a#0", "c#0", "b#0"]
    assert [h.score for h in hits] == [-0.2, -0.4, -0.4]
    assert [h.details["distance"] for h in hits] == [0.2, 0.4, 0.4]


def test_scores_that_contradict_the_order_are_refused_with_the_fix():
    distances = CallableRetriever(lambda q: [("a#0", 0.2), ("b#0", 0.4)], name="chroma")
    with pytest.raises(UnreadableHit, match="scores='distance'"):
        distances.search("q", 2)
    with pytest.raises(UnreadableHit, match="scores='similarity'"):
        CallableRetriever(lambda q: [("a#0", 0.9), ("b#0", 0.8)], scores="distance").search(
            "q", 2)
    reranked = CallableRetriever(lambda q: [("a#0", 0.2), ("b#0", 0.4)], scores="ignore")
    assert ids(reranked.search("q", 2)) == ["a#0", "b#0"]


def test_mixed_or_broken_scores_are_errors():
    with pytest.raises(UnreadableHit, match="with and without scores"):
        CallableRetriever(lambda q: [("a#0", 0.9), "b#0"]).search("q", 2)
    with pytest.raises(UnreadableHit, match="NaN"):
        CallableRetriever(lambda q: [("a#0", float("nan"))]).search("q", 2)
    with pytest.raises(ValueError, match="scores must be one of"):
        CallableRetriever(lambda q: [], scores="relevance")


@pytest.mark.parametrize("bad, message", [
    ([3.5], "float is not a hit"),
    ([("a", "b", "c")], "tuple of 3 items"),
    (["page_content='Refunds are paid' metadata={'source': 'x.md'}"], "LangChain Document"),
    ([{"doc_id": "refunds"}], "needs 'start' and 'end'"),
    ([{"text": 5}], "'text' must be a string"),
    ([{"chunk_id": "a", "score": "high"}], "'score'"),
    ([{"doc_id": "refunds", "start": 0.5, "end": 3}], "integer offset"),
])
def test_objects_it_cannot_read_are_errors_naming_the_hit(bad, message):
    with pytest.raises(UnreadableHit, match=message) as err:
        CallableRetriever(lambda q: bad, name="prod", documents=DOCS).search("where?", 3)
    assert "retriever 'prod', question 'where?', hit 1" in str(err.value)


def test_a_result_that_is_not_a_list_is_an_error():
    for out in ("refunds#0", None, {"ids": []}):
        with pytest.raises(UnreadableHit, match="return a list of hits"):
            CallableRetriever(lambda q, out=out: out).search("q", 3)


def test_text_and_offset_hits_become_located_chunks():
    wrapped = CallableRetriever(lambda q: [
        {"doc_id": "leave", "text": "Carry over up to 5 days.", "score": 0.9},
        {"doc_id": "leave", "start": 0, "end": 24, "score": 0.8},
        {"doc_id": "refunds", "text": "Keep the\nreceipt.", "id": "uuid-1", "score": 0.7},
        {"text": "Annual leave is 25 days.", "score": 0.6},
    ], documents=DOCS)
    hits = wrapped.search("q", 5)
    assert ids(hits) == ["leave@25-49", "leave@0-24", "uuid-1", "leave@0-24"]
    for h in hits:
        assert h.chunk is not None and h.chunk.id == h.chunk_id
        doc = next(d for d in DOCS if d.id == h.chunk.doc_id)
        assert doc.text[h.chunk.start:h.chunk.end] == h.chunk.text
    # the same passage found by offsets and by its text is one chunk
    assert hits[3].chunk is hits[1].chunk
    assert [h.chunk.metadata["located"] for h in hits[:3]] == ["exact", "offsets", "normalised"]
    assert len(wrapped.located_chunks) == 3


def test_an_ambiguous_text_is_an_error_unless_its_offset_decides():
    text = "Refunds are paid within 30 days."
    with pytest.raises(UnreadableHit, match="occurs 2 times"):
        CallableRetriever(lambda q: [{"doc_id": "refunds", "text": text}],
                          documents=DOCS).search("q", 1)
    second = DOCS[0].text.rindex(text)
    hit, = CallableRetriever(lambda q: [{"doc_id": "refunds", "text": text, "start": second}],
                             documents=DOCS).search("q", 1)
    assert hit.chunk.start == second


def test_unlocated_hits_raise_or_are_kept_as_ranks_without_evidence():
    hits = [{"doc_id": "leave", "text": "Parental leave is 16 weeks."},
            {"doc_id": "leave", "text": "Annual leave is 25 days."}]
    with pytest.raises(UnreadableHit, match="hit 1: text 'Parental leave"):
        CallableRetriever(lambda q: hits, documents=DOCS).search("q", 2)
    kept = CallableRetriever(lambda q: hits, documents=DOCS, unlocated="keep").search("q", 2)
    assert kept[0].details["unlocated"] == "missing"
    assert (kept[0].chunk.start, kept[0].chunk.end, kept[0].chunk.text) == (0, 0, "")
    assert kept[1].chunk.text == "Annual leave is 25 days." and kept[1].rank == 2


def test_text_hits_need_the_documents():
    with pytest.raises(UnreadableHit, match="pass documents="):
        CallableRetriever(lambda q: [{"doc_id": "leave", "text": "x"}]).search("q", 1)


def test_chunk_ids_are_resolved_against_the_chunks_given():
    chunk = Chunk("leave#0", "leave", 0, 24, text=DOCS[1].text[:24])
    wrapped = CallableRetriever(lambda q: ["leave#0", "leave#7"], chunks=[chunk])
    with pytest.raises(UnreadableHit, match=r"'leave#7' is not among the chunks given \(1\)"):
        wrapped.search("q", 2)
    hit, = wrapped.search("q", 1)
    assert hit.chunk is chunk
    assert CallableRetriever(lambda q: [chunk, chunk]).search("q", 2)[1].chunk is chunk
    ours = CallableRetriever(lambda q: [Hit("x#0", 2.0, 1, "bm25", chunk=chunk),
                                        Hit("y#0", 1.0, 2, "bm25")]).search("q", 2)
    assert ours[0].chunk is chunk and ours[1].chunk is None


def test_one_production_id_must_name_one_passage():
    out = iter([[{"id": "u1", "doc_id": "leave", "text": "Annual leave is 25 days."}],
                [{"id": "u1", "doc_id": "leave", "text": "Carry over up to 5 days."}]])
    wrapped = CallableRetriever(lambda q: next(out), documents=DOCS)
    wrapped.search("q", 1)
    with pytest.raises(UnreadableHit, match="'u1' was located at leave"):
        wrapped.search("q", 1)


def test_langchain_documents_are_read_with_their_metadata(tmp_path):
    document = pytest.importorskip("langchain_core.documents").Document
    raw = "---\nid: refunds\n---\n" + DOCS[0].text
    (tmp_path / "refunds.md").write_text(raw, encoding="utf-8")
    text = "Refunds are paid within 30 days."
    start = raw.rindex(text)
    docs = [document(page_content=text, metadata={"source": str(tmp_path / "refunds.md"),
                                                  "start_index": start}, id="lc-1"),
            document(page_content=raw[:40], metadata={"source": str(tmp_path / "refunds.md"),
                                                      "start_index": 0}, id="lc-0")]
    hits = CallableRetriever(lambda q: docs, documents=DOCS).search("q", 2)
    assert [(h.chunk_id, h.chunk.doc_id) for h in hits] == [("lc-1", "refunds"),
                                                           ("lc-0", "refunds")]
    assert hits[0].chunk.start == DOCS[0].text.rindex(text)  # raw offset mapped to the body
    assert hits[1].chunk.start == 0 and hits[1].chunk.text == DOCS[0].text[:20]
    with pytest.raises(UnreadableHit, match="LangChain Document turned into str"):
        CallableRetriever(lambda q: [str(d) for d in docs], documents=DOCS).search("q", 1)
    by_key = CallableRetriever(lambda q: [document(page_content="Annual leave is 25 days.",
                                                   metadata={"doc": "leave"})],
                               documents=DOCS, doc_id="doc").search("q", 1)
    assert by_key[0].chunk.doc_id == "leave"


def test_production_chunks_locates_a_whole_chunking_once_per_chunk():
    from workbench.retrieval.callable_retriever import production_chunks

    items = [{"id": "u1", "doc_id": "leave", "text": "Annual leave is 25 days."},
             {"id": "u2", "text": "Carry over up to 5 days."},
             {"id": "u1", "doc_id": "leave", "text": "Annual leave is 25 days."}]
    chunks = production_chunks(items, DOCS)
    assert [(c.id, c.doc_id, c.start, c.end) for c in chunks] == [("u1", "leave", 0, 24),
                                                                  ("u2", "leave", 25, 49)]
    with pytest.raises(UnreadableHit, match="production, chunk 1: text 'nowhere'"):
        production_chunks([{"doc_id": "leave", "text": "nowhere"}], DOCS)


def test_ties_between_id_less_hits_follow_the_located_chunk_id():
    # the text of a sorts after b's, the chunk ids the other way: the id decides
    docs = [Document("a", "Zebras graze on the open plain."),
            Document("b", "Antelopes drink at the river bank.")]
    wrapped = CallableRetriever(lambda q: [{"text": docs[0].text, "score": 0.5},
                                           {"text": docs[1].text, "score": 0.5}],
                                documents=docs)
    assert ids(wrapped.search("q", 2)) == ["b@0-34", "a@0-31"]
    assert ids(wrapped.search("q", 1)) == ["b@0-34"]  # the cut comes after the tie is ordered


_PASSAGES = {"a": ["Zebras graze.", "Owls hunt at night."],
             "b": ["Antelopes drink.", "Moles dig."],
             "c": ["Kestrels hover.", "Bees dance."]}
_TIE_DOCS = [Document(d, " ".join(texts)) for d, texts in _PASSAGES.items()]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([(d, t) for d, ts in _PASSAGES.items() for t in ts]),
                          st.sampled_from([0.9, 0.5, 0.1]), st.booleans()),
                min_size=1, max_size=8),
       st.integers(1, 9))
def test_ties_of_located_hits_are_ordered_by_score_then_chunk_id_then_cut(picks, k):
    picks = sorted(picks, key=lambda p: -p[1])  # a similarity list, best first
    items = [{"text": text, "score": score, **({"doc_id": doc} if named else {})}
             for (doc, text), score, named in picks]
    hits = CallableRetriever(lambda q: items, documents=_TIE_DOCS).search("q", k)
    located = []
    for (doc, text), score, _ in picks:
        start = next(d.text for d in _TIE_DOCS if d.id == doc).index(text)
        located.append((score, f"{doc}@{start}-{start + len(text)}"))
    expected = sorted(located, reverse=True)[:k]
    assert [(h.score, h.chunk_id) for h in hits] == expected
    assert [h.rank for h in hits] == list(range(1, len(expected) + 1))
    assert all(h.chunk is not None and h.chunk.id == h.chunk_id for h in hits)


def test_wrap_is_the_way_in_for_a_callable():
    """``wb.wrap`` takes a callable with or without the corpus (chunk-id hits need none) and
    gives the CallableRetriever the rules above (the type it returns)."""
    import workbench as wb

    wrapped = wb.wrap(lambda q: [("b#0", 1.0), ("a#0", 1.0), ("c#0", 0.5)], name="prod")
    assert [h.chunk_id for h in wrapped.search("q", 2)] == ["b#0", "a#0"]
    assert wrapped.name == "prod" and type(wrapped) is CallableRetriever
