"""LangChain: any retriever's ``invoke`` or a vector store, scored as a workbench retriever.

:func:`from_langchain` wraps a ``BaseRetriever`` (``retriever.invoke(question, k=k)``: a
``VectorStoreRetriever`` honours ``k``; a retriever that takes no arguments returns what it
is configured to, cut at ``k``; the hits carry no scores, so they rank in the order
returned) or a ``VectorStore`` (``similarity_search_with_relevance_scores(question, k=k)``:
LangChain's relevance score, higher is better). Each ``Document`` is located in the
documents (``Document.id`` is the chunk id when set; the document comes from
``metadata["doc_id"]`` or the stem of ``metadata["source"]``; ``metadata["start_index"]``,
which ``RecursiveCharacterTextSplitter(add_start_index=True)`` writes, picks among repeated
texts). :func:`chunks_from_documents` locates a whole LangChain chunking.
:func:`langchain_embeddings` makes a workbench encoder a LangChain ``Embeddings``.

The libraries are imported only when these functions run (the ``integrations`` extra).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from typing import Any

from workbench.corpus import Document, LocatedChunks, Locator
from workbench.retrieval.callable_retriever import CallableRetriever, production_chunks
from workbench.retrieval.encoders import Encoder
from workbench.retrieval.production_hits import DocIdRule

__all__ = ["chunks_from_documents", "from_langchain", "langchain_embeddings"]

Docs = Mapping[str, Document] | Iterable[Document] | Locator


def from_langchain(retriever: Any, documents: Docs, name: str | None = None, *,
                   doc_id: DocIdRule = None, unlocated: str = "raise") -> CallableRetriever:
    """A workbench retriever over a LangChain retriever or vector store (see module doc)."""
    label = name or type(retriever).__name__
    if hasattr(retriever, "similarity_search_with_relevance_scores") and not hasattr(
            retriever, "invoke"):
        store = retriever

        def search(question: str, k: int) -> list[Any]:
            with warnings.catch_warnings():  # scores outside [0, 1] are ranked all the same
                warnings.filterwarnings("ignore", message="Relevance scores must be between")
                return list(store.similarity_search_with_relevance_scores(question, k=k))

        return CallableRetriever(search, label, documents=documents, scores="similarity",
                                 doc_id=doc_id, unlocated=unlocated)
    if not hasattr(retriever, "invoke"):
        raise TypeError(f"{type(retriever).__name__} is neither a LangChain retriever (invoke) "
                        "nor a vector store (similarity_search_with_relevance_scores)")

    def invoke(question: str, k: int) -> list[Any]:
        return list(retriever.invoke(question, k=k))

    return CallableRetriever(invoke, label, documents=documents, doc_id=doc_id,
                             unlocated=unlocated)


def chunks_from_documents(docs: Iterable[Any], documents: Docs, *,
                          doc_id: DocIdRule = None, unlocated: str = "raise") -> LocatedChunks:
    """The workbench chunks of LangChain ``Document`` splits (one per distinct chunk), with
    the location counts as ``.report``; ``unlocated`` is ``"raise"``, ``"skip"`` or ``"keep"``
    (:func:`~workbench.retrieval.callable_retriever.production_chunks`)."""
    return production_chunks(docs, documents, doc_id=doc_id, name="langchain",
                             unlocated=unlocated)


def langchain_embeddings(encoder: Encoder) -> Any:
    """A LangChain ``Embeddings`` backed by a workbench encoder (``get_encoder("minilm")``):
    documents through ``encode_documents``, queries through ``encode_queries``."""
    try:
        from langchain_core.embeddings import Embeddings
    except ImportError:
        raise ImportError("langchain_embeddings needs langchain-core: pip install "
                          "'workbench[integrations]'") from None

    class WorkbenchEmbeddings(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [list(map(float, v)) for v in encoder.encode_documents(list(texts))]

        def embed_query(self, text: str) -> list[float]:
            return list(map(float, encoder.encode_queries([text])[0]))

    return WorkbenchEmbeddings()
