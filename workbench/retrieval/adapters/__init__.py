"""Adapters for the production stacks people run: LangChain, LlamaIndex and Chroma.

One line wraps a production retriever as a workbench retriever, scored exactly like ours:
``wrap(retriever, corpus)``, the one way in (``workbench.wrap``), takes a LangChain
retriever or vector store (:mod:`~workbench.retrieval.adapters.langchain`), a LlamaIndex retriever
(:mod:`~workbench.retrieval.adapters.llamaindex`), a Chroma collection
(:mod:`~workbench.retrieval.adapters.chroma`) or any callable
(:class:`~workbench.retrieval.callable_retriever.CallableRetriever`). The production chunks the
retriever returns are located in ``corpus`` and carried by the hits (``Hit.chunk``), so
evidence, diagnosis, traces and the chunk preview work on the production chunking.

The libraries come with the ``integrations`` extra and are imported only when an adapter
runs. Layer: part of :mod:`workbench.retrieval`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from workbench.corpus import Document, Locator
from workbench.retrieval.adapters.chroma import (
    chroma_embedding_function,
    collection_chunks,
    from_chroma,
    hits_from_query_result,
    persistent_client,
)
from workbench.retrieval.adapters.langchain import (
    chunks_from_documents,
    from_langchain,
    langchain_embeddings,
)
from workbench.retrieval.adapters.llamaindex import (
    chunks_from_nodes,
    from_llamaindex,
    llamaindex_embedding,
)
from workbench.retrieval.callable_retriever import CallableRetriever

__all__ = ["chroma_embedding_function", "chunks_from_documents", "chunks_from_nodes",
           "collection_chunks", "from_chroma", "from_langchain", "from_llamaindex",
           "hits_from_query_result", "langchain_embeddings", "llamaindex_embedding",
           "persistent_client", "wrap"]


_LIBRARIES = ("chromadb", "langchain", "llama_index")


def _library(obj: Any) -> str:
    """The production library ``obj`` belongs to: the first class in its hierarchy defined
    in Chroma, LangChain or LlamaIndex (so a user's own subclass, defined anywhere, counts),
    else the module of its own class."""
    for cls in type(obj).__mro__:
        top = cls.__module__.split(".", 1)[0]
        if top.startswith(_LIBRARIES):
            return top
    return type(obj).__module__.split(".", 1)[0]


def wrap(retriever: Any,
         documents: Mapping[str, Document] | Iterable[Document] | Locator | None = None,
         name: str | None = None, **options: Any) -> CallableRetriever:
    """A production retriever as a workbench retriever: a Chroma collection, a LangChain
    retriever or vector store, a LlamaIndex retriever, or any callable ``question[, k] ->
    hits``. ``documents`` is the corpus it indexed (needed by the libraries' retrievers and
    by a callable returning text or offsets; a callable returning chunk ids needs none);
    ``options`` go to the adapter (e.g. ``scores="distance"`` for a callable returning
    distances, ``doc_id="key"``, ``chunks=`` for chunk-id hits)."""
    library = _library(retriever)
    if library.startswith(_LIBRARIES):
        if documents is None:
            raise TypeError(f"wrapping a {type(retriever).__name__} ({library}) needs the "
                            "corpus it indexed: wrap(retriever, corpus)")
        if library == "chromadb":
            return from_chroma(retriever, documents, name, **options)
        if library.startswith("langchain"):
            return from_langchain(retriever, documents, name, **options)
        return from_llamaindex(retriever, documents, name, **options)
    if callable(retriever):
        return CallableRetriever(retriever, name or str(getattr(retriever, "__name__", "callable")),
                                 documents=documents, **options)
    raise TypeError(f"cannot wrap {type(retriever).__name__} ({library}): pass a Chroma "
                    "collection, a LangChain or LlamaIndex retriever, or a callable")
