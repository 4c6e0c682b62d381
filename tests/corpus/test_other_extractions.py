"""Production data extracted by other tools (issue 21, parts 1 and 3), with the real libraries:
handbook files written as PDF / DOCX / HTML, extracted by pypdf, python-docx and
BeautifulSoup, split by LangChain and stored in Chroma; LlamaIndex's SimpleDirectoryReader
and SentenceSplitter over the markdown files.

Located by alignment where our extraction differs, at the same spans under extraction noise
(metamorphic), never at a wrong place (property); or loaded as the production system
extracted it, where every chunk is found exactly and golden spans are re-anchored by quote.
"""

from __future__ import annotations

import random
import re
import uuid

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import HANDBOOK, load_benchmark
from workbench.corpus import (
    LocateError,
    Locator,
    load_corpus,
    load_documents,
    load_folder,
)
from workbench.corpus.align import ALIGN_THRESHOLD
from workbench.golden import GoldenSet, reanchor
from workbench.io import InputError
from workbench.retrieval.adapters import (
    chunks_from_documents,
    chunks_from_nodes,
    collection_chunks,
    from_chroma,
    wrap,
)
from workbench.retrieval.production_hits import UnreadableHit

pytest.importorskip("pypdf")
pytest.importorskip("chromadb")
bench = load_benchmark("bench_other_extractors")
DOCS = HANDBOOK / "docs"


@pytest.fixture(scope="module")
def extracted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("files")
    paths = bench.build(folder)
    documents = bench.production_documents(paths)
    return load_folder(folder), documents, bench.production_splits(documents)


def _client():
    import chromadb
    from chromadb.config import Settings

    return chromadb.EphemeralClient(settings=Settings(anonymized_telemetry=False))


def _vectors(texts: list[str], dim: int = 16) -> list[list[float]]:
    """Unit vectors per text (what is stored beside the texts; these tests read the
    collection's texts, not its vectors)."""
    rng = np.random.default_rng(0)
    v = rng.normal(size=(len(texts), dim))
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).tolist()


def test_chunks_of_other_extractors_are_located_by_alignment_in_our_extraction(extracted):
    ours, _, splits = extracted
    before = chunks_from_documents(splits, Locator(ours, align=None), unlocated="skip")
    after = chunks_from_documents(splits, ours, unlocated="skip")
    assert before.report.counts["unlocated"] > len(splits) / 2  # the 135 of 238
    counts = after.report.counts
    assert counts["aligned"] > len(splits) / 2 and counts["unlocated"] <= 2
    assert sum(counts.values()) == len(splits) == after.report.total
    assert after.report.lowest_score is not None and after.report.lowest_score >= ALIGN_THRESHOLD
    assert "by alignment" in repr(after.report) and "<table>" in after._repr_html_()
    starts: dict[str, int] = {}
    from rapidfuzz import fuzz

    from workbench.corpus.locate import matching_form

    for chunk in after:  # in document order, each aligned text the production text
        assert chunk.start >= starts.get(chunk.doc_id, 0)
        starts[chunk.doc_id] = chunk.start
        assert chunk.text == ours[chunk.doc_id].text[chunk.start:chunk.end]
        if chunk.metadata["located"] == "aligned":
            assert fuzz.ratio(matching_form(chunk.text), matching_form(chunk.embed_text)) >= 90


def test_the_production_extraction_locates_every_chunk_exactly(extracted):
    _, documents, splits = extracted
    corpus = load_documents(documents)
    assert len(corpus) == len({d.metadata["source"] for d in documents})
    pages = [d for d in documents if d.metadata["source"].endswith(".pdf")]
    assert len(pages) > len({d.metadata["source"] for d in pages})  # several pages, one doc
    report = chunks_from_documents(splits, corpus).report
    assert report.counts == {"exact": len(splits), "normalised": 0, "aligned": 0,
                             "unlocated": 0}


def test_collection_chunks_of_an_in_memory_chroma_report_and_obey_unlocated(extracted):
    ours, _, splits = extracted
    collection = _client().create_collection(f"c{uuid.uuid4().hex[:8]}")
    collection.add(ids=[str(uuid.uuid5(uuid.NAMESPACE_URL, f"{i}")) for i in range(len(splits))],
                   documents=[d.page_content for d in splits],
                   metadatas=[d.metadata for d in splits],
                   embeddings=_vectors([d.page_content for d in splits]))
    skipped = collection_chunks(collection, ours, unlocated="skip")
    assert skipped.report == chunks_from_documents(splits, ours, unlocated="skip").report
    missing = skipped.report.counts["unlocated"]
    assert len(skipped) == len(splits) - missing
    kept = collection_chunks(collection, ours, unlocated="keep")
    assert len(kept) == len(splits)
    empty = [c for c in kept if "unlocated_kind" in c.metadata]
    assert len(empty) == missing and all(c.start == c.end and c.embed_text for c in empty)
    if missing:
        with pytest.raises(UnreadableHit, match=r"chroma, chunk \d+: .*unlocated='skip'"):
            collection_chunks(collection, ours)
    with pytest.raises(ValueError, match="unlocated must be one of"):
        collection_chunks(collection, ours, unlocated="drop")


def test_front_matter_only_and_repeated_chunks_never_refuse_the_chunking():
    from langchain_core.documents import Document as LCDocument
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    para = "Returned items are inspected within two business days of arrival."
    header = ("---\nid: repeats\ntitle: Repeats\nversion: 3\neffective_date: 2026-03-01\n"
              "acl: public\n---\n")
    body = (f"# Repeats\n\n{para}\n\nSome other words in between the two copies.\n\n{para}"
            "\n\nThe end.\n")
    corpus = load_documents([{"doc_id": "repeats", "text": body,
                              "metadata": {"acl": "public"}}])
    splitter = RecursiveCharacterTextSplitter(chunk_size=70, chunk_overlap=0)
    splits = splitter.split_documents([LCDocument(header + "\n" + body,
                                                  metadata={"source": "repeats.md"})])
    in_header = [d for d in splits if d.page_content in header]
    assert len(in_header) >= 2  # the header cut in pieces, each front matter only
    chunks = chunks_from_documents(splits, corpus)  # no start_index, no ids: no refusal
    copies = [c for c in chunks if c.text == para]
    text = corpus["repeats"].text
    assert [c.start for c in copies] == [text.find(para), text.rfind(para)]
    assert chunks.report.problems == {"front_matter": len(in_header)}
    assert len(chunks) == len(splits) - len(in_header)
    assert [c.start for c in chunks] == sorted(c.start for c in chunks)


def _word_chunks(text: str, seed: int, n: int = 6) -> list[tuple[int, int]]:
    """``n`` spans of ``text`` that begin and end at words (30 to 70 words each)."""
    words = [m.span() for m in re.finditer(r"\S+", text)]
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        i = rng.randrange(0, len(words) - 80)
        out.append((words[i][0], words[i + rng.randrange(30, 70)][1]))
    return out


def _noisy(text: str, seed: int) -> str:
    """``text`` as another extractor might give it: other whitespace, words hyphenated
    across a line end, fi/fl ligatures, curly quotes."""
    rng = random.Random(seed)
    out = []
    for k, word in enumerate(text.split()):
        if k > 0 and len(word) > 7 and word.isalpha() and rng.random() < 0.3:
            cut = rng.randrange(3, len(word) - 3)
            word = f"{word[:cut]}-\n{word[cut:]}"
        out.append(word.replace("fi", "\ufb01").replace("fl", "\ufb02").replace("'", "\u2019"))
    seps = [rng.choice([" ", "  ", "\n", " \n "]) for _ in out]
    return "".join(w + s for w, s in zip(out, seps, strict=True)).strip()


@pytest.mark.parametrize("name", ["policy-refunds", "it-security", "leave-parental"])
def test_chunks_with_extraction_noise_are_located_at_the_same_spans(name):
    corpus = load_folder(DOCS)
    text = corpus[name].text
    locator = Locator(corpus)
    for seed, (start, end) in enumerate(_word_chunks(text, len(name))):
        noisy = _noisy(text[start:end], seed)
        found = locator.locate(noisy, name)
        assert (found.start, found.end) == (start, end), found.how
        assert found.how in ("normalised", "aligned")
        if seed < 2:  # without its document: searched in the documents that hold its words
            anywhere = locator.locate(noisy)
            assert (anywhere.doc_id, anywhere.start, anywhere.end) == (name, start, end)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_chunk_not_in_the_text_is_never_aligned(data):
    corpus = _handbook()
    name = data.draw(st.sampled_from(["policy-refunds", "support-sla", "onboarding"]))
    text = corpus[name].text
    vocabulary = sorted(set(re.findall(r"\w+", text)))
    words = data.draw(st.lists(st.sampled_from(vocabulary), min_size=8, max_size=60))
    other = data.draw(st.sampled_from(["care-boots", "api-webhooks", "gift-cards"]))
    start = data.draw(st.integers(0, max(0, len(corpus[other].text) - 400)))
    for chunk in (" ".join(words), corpus[other].text[start:start + 400]):
        if chunk.strip() and " ".join(chunk.split()) not in " ".join(text.split()):
            try:
                found = Locator([corpus[name]]).locate(chunk, name)
            except LocateError:
                continue
            assert found.how != "aligned", (chunk, found)


_CORPUS: list = []


def _handbook():
    if not _CORPUS:
        _CORPUS.append(load_folder(DOCS))
    return _CORPUS[0]


def test_llamaindex_reader_documents_load_as_indexed_and_golden_spans_reanchor(tmp_path):
    from llama_index.core import SimpleDirectoryReader
    from llama_index.core.node_parser import SentenceSplitter

    documents = SimpleDirectoryReader(str(DOCS)).load_data()
    assert all(len(d.doc_id) == 36 for d in documents)  # the reader's uuids
    corpus = load_documents(documents)
    ours = load_folder(DOCS)
    assert set(corpus) == set(ours)
    assert corpus["policy-refunds"].text.startswith("---\nid: policy-refunds")  # as indexed
    assert corpus["policy-refunds"].acl == ours["policy-refunds"].acl
    assert {d: corpus[d].acl for d in corpus} == {d: ours[d].acl for d in ours}
    golden = GoldenSet.load(HANDBOOK / "golden.jsonl")
    report = reanchor(golden, corpus)
    assert report.moves and not report.review  # moved by the front matter, all by quote
    assert all(m.method == "exact" for m in report.moves)
    report.golden.validate(corpus)
    nodes = SentenceSplitter(chunk_size=200, chunk_overlap=20).get_nodes_from_documents(documents)
    assert all(n.ref_doc_id in {d.doc_id for d in documents} for n in nodes)
    chunks = chunks_from_nodes(nodes, corpus)  # uuid ref_doc_id -> the document by file_path
    assert chunks.report.counts["exact"] == len(nodes)
    assert {c.doc_id for c in chunks} <= set(corpus)
    with pytest.raises(UnreadableHit, match="uuid ref_doc_id: keep the file's path"):
        chunks_from_nodes([{"text": "Refunds", "metadata": {"ref_doc_id": str(uuid.uuid4())}}
                           for _ in range(1)], corpus)


def test_production_documents_go_through_the_same_access_rules(tmp_path):
    from langchain_core.documents import Document as LCDocument

    raw = (DOCS / "policy-refunds.md").read_text(encoding="utf-8")
    restricted = raw.replace("acl: [all]", "acl: [finance]")
    corpus = load_documents([LCDocument(restricted, metadata={"source": "a/policy-refunds.md"}),
                             LCDocument("Open text.", metadata={"source": "b.md",
                                                                "acl": "public"})])
    assert corpus["policy-refunds"].acl == ("finance",)
    with pytest.raises(InputError, match="declares no access"):  # deny by default
        load_documents([LCDocument(restricted, metadata={"source": "a.md"}),
                        LCDocument("Open text.", metadata={"source": "b.md"})])
    with pytest.raises(InputError, match="looks like a list of readers"):
        load_documents([LCDocument("Text.", metadata={"source": "a.md", "groups": ["hr"]})])
    with pytest.raises(InputError, match="acl"):  # an acl line the header does not read
        load_documents([LCDocument("Intro\nacl: finance\nText.", metadata={"source": "a.md"})])
    with pytest.raises(InputError, match="different acl"):
        load_documents([LCDocument(restricted, metadata={"source": "a.md", "acl": "hr"})])
    with pytest.raises(InputError, match="different acl"):  # pages of one document
        load_documents([{"doc_id": "p", "text": "one", "metadata": {"acl": "hr", "page": 0}},
                        {"doc_id": "p", "text": "two", "metadata": {"acl": "all", "page": 1}}])


def test_a_production_jsonl_loads_wherever_a_corpus_is_given(tmp_path, capsys):
    import json

    from workbench.cli import main

    rows = [{"doc_id": p.stem, "text": p.read_text(encoding="utf-8"),
             "metadata": {"source": str(p), "page": 0}} for p in sorted(DOCS.glob("*.md"))]
    rows.append({"doc_id": "policy-refunds", "text": "A second page.",
                 "metadata": {"source": str(DOCS / "policy-refunds.md"), "page": 1}})
    path = tmp_path / "production.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    corpus = load_corpus(path)
    assert corpus["policy-refunds"].text.endswith("\n\nA second page.")
    assert corpus["policy-refunds"].text.startswith("---\nid: policy-refunds")
    golden = str(HANDBOOK / "golden.jsonl")
    assert main(["validate", golden, "--corpus", str(path)]) == 1  # labelled on our text
    capsys.readouterr()
    assert main(["validate", golden, "--corpus", str(path), "--reanchor"]) == 0
    err = capsys.readouterr().err
    assert re.search(r"--reanchor: (\d+) evidence spans checked, \1 drifted: \1 re-anchored, "
                     r"0 to review", err), err
    chunks = tmp_path / "chunks.jsonl"
    chunks.write_text("".join(json.dumps({"chunk_id": f"c{i}", "doc_id": d, "text": t})
                              + "\n" for i, (d, t) in enumerate(
                                  [("policy-refunds", "A second page."),
                                   ("policy-refunds", _noisy(corpus["policy-refunds"].text[
                                       200:700], 1))])), encoding="utf-8")
    from workbench.evaluation.run_files import read_chunks

    assert read_chunks(chunks, corpus).report.counts == {"exact": 1, "normalised": 0,
                                                         "aligned": 1, "unlocated": 0}


def test_a_chroma_collection_without_its_embedding_function_asks_for_embed(extracted):
    from langchain_chroma import Chroma
    from langchain_core.embeddings import Embeddings

    class HashEmbeddings(Embeddings):  # a deterministic model: what matters is who embeds
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return _vectors(texts)

        def embed_query(self, text: str) -> list[float]:
            return _vectors([text])[0]

    ours, _, splits = extracted
    client = _client()
    name = f"lc{uuid.uuid4().hex[:8]}"
    store = Chroma(client=client, collection_name=name, embedding_function=HashEmbeddings())
    store.add_documents(splits[:20])
    reopened = client.get_collection(name)  # Chroma would embed with its default ONNX model
    for collection in (reopened, store._collection):
        with pytest.raises(ValueError, match="pass embed=") as err:
            wrap(collection, ours)
        assert "\n" not in str(err.value)
    hits = from_chroma(reopened, ours, embed=HashEmbeddings().embed_query,
                       unlocated="keep").search("refund", 3)
    assert len(hits) == 3
    assert len(wrap(store, ours, unlocated="keep").search("refund", 3)) == 3


def test_documents_of_unknown_shape_are_one_clear_line():
    with pytest.raises(InputError, match="is not a document"):
        load_documents([42])
    with pytest.raises(InputError, match="no document id"):
        load_documents([{"text": "x", "metadata": {}}])


def test_a_wrapped_retriever_reports_how_its_hits_were_located(extracted):
    ours, _, splits = extracted
    retriever = wrap(lambda q, k: splits[:k], ours, unlocated="keep")
    hits = retriever.search("anything", 40)
    report = retriever.location_report
    assert report.total == len({h.chunk_id for h in hits}) == 40
    assert report.counts == chunks_from_documents(splits[:40], ours, unlocated="keep"
                                                  ).report.counts


def test_chunks_kept_unlocated_hold_no_evidence_and_change_no_number():
    import workbench as wb
    from workbench.retrieval.callable_retriever import production_chunks

    corpus, golden = _handbook(), GoldenSet.load(HANDBOOK / "golden.jsonl")
    ours = wb.chunk_corpus(wb.FixedChunker(size=800, overlap=100), corpus.documents)
    items = [{"id": c.id, "doc_id": c.doc_id, "text": c.text} for c in ours]
    junk = [{"id": "junk", "doc_id": "policy-refunds", "text": "Words found nowhere at all, "
             "in any document of this handbook."}, {"id": "junk2", "text": "Nor this one, "
             "which names no document and appears in none of them."}]
    kept = production_chunks(items + junk, corpus, unlocated="keep")
    assert kept.report.problems == {"missing": 2} and len(kept) == len(ours) + 2
    with_junk = wb.evaluate(wb.BM25Retriever(kept), golden, kept, k=5).summary()
    plain = wb.evaluate(wb.BM25Retriever(ours), golden, ours, k=5).summary()
    assert with_junk["mean"].tolist() == plain["mean"].tolist()
