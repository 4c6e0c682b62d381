"""The handbook chunked, and synthetic items made from it by the deterministic writer."""

from __future__ import annotations

import pytest

from tests.conftest import HANDBOOK
from workbench.chunking import RecursiveChunker, chunk_corpus
from workbench.corpus import UNRESTRICTED, load_folder
from workbench.retrieval import BM25Retriever
from workbench.synthetic.questions import CopyingQuestionWriter, generate_synthetic, sample_chunks


@pytest.fixture(scope="package")
def book():
    docs = load_folder(HANDBOOK / "docs")
    chunks = chunk_corpus(RecursiveChunker(size=600), docs)
    return docs, chunks, BM25Retriever(chunks)


@pytest.fixture(scope="package")
def made(book):
    docs, chunks, bm25 = book
    targets = sample_chunks(chunks, 25, docs, seed=3, user_groups=UNRESTRICTED)
    return targets, generate_synthetic(CopyingQuestionWriter(), targets, docs, chunks=chunks,
                                       distractors=[("bm25", bm25)], user_groups=UNRESTRICTED)
