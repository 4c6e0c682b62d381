"""LlamaIndex: any retriever's ``retrieve`` (``NodeWithScore`` lists), scored as ours.

:func:`from_llamaindex` calls ``retriever.retrieve(question)``; when the retriever has a
``similarity_top_k`` (vector index retrievers do) it is set to ``k`` for the call (under a
lock, then restored), otherwise the result is cut at ``k``. ``NodeWithScore.score`` is a
similarity (higher is better). Each node is located in the documents: ``node_id`` is the
chunk id; the document is ``metadata["doc_id"]``, the node's ``ref_doc_id``, or the stem of
``metadata["file_path"]`` / ``["source"]``; ``start_char_idx`` picks among repeated texts
(LlamaIndex sets it; a ``ChromaVectorStore`` loses it, and ``metadata["start_index"]`` is read
instead). :func:`chunks_from_nodes` locates a whole LlamaIndex chunking;
:func:`llamaindex_embedding` makes a workbench encoder a LlamaIndex ``BaseEmbedding``.

LlamaIndex embeds a node's metadata with its text by default (``"source: x.md\n\n" +
text``): to compare with a store that embeds the text alone, exclude the metadata keys
(``excluded_embed_metadata_keys``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

from workbench.corpus import Document, LocatedChunks, Locator
from workbench.retrieval.callable_retriever import CallableRetriever, production_chunks
from workbench.retrieval.encoders import Encoder
from workbench.retrieval.production_hits import DocIdRule

__all__ = ["chunks_from_nodes", "from_llamaindex", "llamaindex_embedding"]

Docs = Mapping[str, Document] | Iterable[Document] | Locator


def from_llamaindex(retriever: Any, documents: Docs, name: str | None = None, *,
                    doc_id: DocIdRule = None, unlocated: str = "raise") -> CallableRetriever:
    """A workbench retriever over a LlamaIndex retriever (see the module doc)."""
    if not hasattr(retriever, "retrieve"):
        raise TypeError(f"{type(retriever).__name__} is not a LlamaIndex retriever (retrieve)")
    lock = threading.Lock()

    def retrieve(question: str, k: int) -> list[Any]:
        if not hasattr(retriever, "similarity_top_k"):
            return list(retriever.retrieve(question))
        with lock:
            before = retriever.similarity_top_k
            retriever.similarity_top_k = k
            try:
                return list(retriever.retrieve(question))
            finally:
                retriever.similarity_top_k = before

    return CallableRetriever(retrieve, name or type(retriever).__name__, documents=documents,
                             doc_id=doc_id, unlocated=unlocated)


def chunks_from_nodes(nodes: Iterable[Any], documents: Docs, *,
                      doc_id: DocIdRule = None, unlocated: str = "raise") -> LocatedChunks:
    """The workbench chunks of LlamaIndex nodes (one per distinct chunk), with the location
    counts as ``.report``; ``unlocated`` is ``"raise"``, ``"skip"`` or ``"keep"``
    (:func:`~workbench.retrieval.callable_retriever.production_chunks`)."""
    return production_chunks(nodes, documents, doc_id=doc_id, name="llamaindex",
                             unlocated=unlocated)


def llamaindex_embedding(encoder: Encoder) -> Any:
    """A LlamaIndex ``BaseEmbedding`` backed by a workbench encoder."""
    try:
        from llama_index.core.embeddings import BaseEmbedding
    except ImportError:
        raise ImportError("llamaindex_embedding needs llama-index-core: pip install "
                          "'workbench[integrations]'") from None

    class WorkbenchEmbedding(BaseEmbedding):
        def _get_query_embedding(self, query: str) -> list[float]:
            return list(map(float, encoder.encode_queries([query])[0]))

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return list(map(float, encoder.encode_documents([text])[0]))

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return [list(map(float, v)) for v in encoder.encode_documents(list(texts))]

    return WorkbenchEmbedding(model_name=str(getattr(encoder, "model_id", "workbench")))
