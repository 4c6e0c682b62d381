"""Chroma: a collection's query results, scored as a workbench retriever.

:func:`from_chroma` runs ``collection.query(query_texts=[question], n_results=k)`` (or
``query_embeddings`` from ``embed``, for a collection without an embedding function: one
built with its vectors given, as LangChain's ``Chroma`` does, is refused without ``embed=``
before Chroma is called, which would fetch its default ONNX model) and
reads ids, documents, metadatas and **distances** (lower is better: ``1 - cos`` in a cosine
space, the *squared* L2 distance in the default ``l2`` space); ``Hit.score`` is ``-distance``.
Ids are the chunk ids; each document is located in the corpus (document from
``metadata["doc_id"]`` or the stem of ``metadata["source"]``; ``metadata["start_index"]`` picks
among repeated texts). :func:`hits_from_query_result` reads a query result you already have;
:func:`collection_chunks` locates everything a collection holds (the production chunking).

Chroma itself: :func:`persistent_client` opens a collection folder with telemetry off, and
:func:`chroma_embedding_function` makes a workbench encoder a Chroma embedding function (so
no default ONNX model is downloaded). Both set ``ORT_DISABLE_TELEMETRY=1`` (unless set) just
before they import chromadb: onnxruntime, which chromadb pulls in, otherwise reports usage
when imported. Importing this module changes nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from workbench.corpus import Document, LocatedChunks, Locator
from workbench.io import WorkbenchError
from workbench.retrieval.callable_retriever import CallableRetriever, production_chunks
from workbench.retrieval.encoders import Encoder, get_encoder
from workbench.retrieval.production_hits import DocIdRule

__all__ = ["chroma_embedding_function", "collection_chunks", "from_chroma",
           "hits_from_query_result", "persistent_client"]

Docs = Mapping[str, Document] | Iterable[Document] | Locator
_INCLUDE = ["documents", "metadatas", "distances"]


def hits_from_query_result(result: Mapping[str, Any], query: int = 0) -> list[dict[str, Any]]:
    """The hits of one query of a ``collection.query`` result, best first, as
    ``{"id", "text", "metadata", "score"}`` dicts (``score`` is the distance)."""
    try:
        ids = result["ids"][query]
        texts = (result.get("documents") or [[None] * len(ids)])[query]
        metas = (result.get("metadatas") or [[None] * len(ids)])[query]
        dists = (result.get("distances") or [[None] * len(ids)])[query]
    except (KeyError, IndexError, TypeError) as exc:
        raise WorkbenchError(f"not a Chroma query result with query {query} ({exc!r}): pass what "
                         "collection.query(...) returned") from None
    hits = []
    for cid, text, meta, dist in zip(ids, texts, metas, dists, strict=True):
        hit: dict[str, Any] = {"id": str(cid), "metadata": dict(meta or {})}
        if text is not None:
            hit["text"] = text
        if dist is not None:
            hit["score"] = float(dist)
        hits.append(hit)
    return hits


def from_chroma(collection: Any, documents: Docs, name: str | None = None, *,
                embed: Callable[[str], Sequence[float]] | None = None,
                where: Mapping[str, Any] | None = None, doc_id: DocIdRule = None,
                unlocated: str = "raise") -> CallableRetriever:
    """A workbench retriever over a Chroma collection (see the module doc)."""
    if not hasattr(collection, "query"):
        raise TypeError(f"{type(collection).__name__} is not a Chroma collection (query)")
    if embed is None and not _has_embedding_function(collection):
        raise WorkbenchError(f"Chroma collection {getattr(collection, 'name', '')!r} was built "
                         "without an embedding function of its own (its vectors were given, "
                         "e.g. by LangChain's Chroma), so Chroma would embed the questions with "
                         "its default ONNX model: pass embed= (question -> vector, the model "
                         "that built it: embed=lambda q: encoder.encode_queries([q])[0]), or "
                         "wrap the LangChain vector store itself")

    def query(question: str, k: int) -> list[dict[str, Any]]:
        args: dict[str, Any] = {"n_results": k, "include": _INCLUDE}
        if where:
            args["where"] = dict(where)
        if embed is None:
            args["query_texts"] = [question]
        else:
            args["query_embeddings"] = [list(map(float, embed(question)))]
        return hits_from_query_result(collection.query(**args))

    return CallableRetriever(query, name or f"chroma:{getattr(collection, 'name', '')}",
                             documents=documents, scores="distance", doc_id=doc_id,
                             unlocated=unlocated)


def _has_embedding_function(collection: Any) -> bool:
    """Whether the collection embeds query texts with the function it was built with: it has
    one, and its stored configuration names one (a collection built with vectors given
    records none, and Chroma then falls back to its default model when it is reopened)."""
    if getattr(collection, "_embedding_function", None) is None:
        return False
    try:
        config = collection.configuration
    except Exception:  # an older Chroma without a stored configuration: trust the object
        return True
    return not isinstance(config, Mapping) or config.get("embedding_function") is not None


def collection_chunks(collection: Any, documents: Docs, *, doc_id: DocIdRule = None,
                      batch: int = 5000, unlocated: str = "raise") -> LocatedChunks:
    """Every chunk a collection holds, located in the documents (read in batches), with the
    location counts as ``.report``; ``unlocated`` is ``"raise"``, ``"skip"`` or ``"keep"``
    (:func:`~workbench.retrieval.callable_retriever.production_chunks`)."""
    items: list[dict[str, Any]] = []
    total = collection.count()
    for offset in range(0, total, batch):
        got = collection.get(include=["documents", "metadatas"], limit=batch, offset=offset)
        for cid, text, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True):
            items.append({"id": str(cid), "text": text, "metadata": dict(meta or {})})
    return production_chunks(items, documents, doc_id=doc_id, name="chroma",
                             unlocated=unlocated)


def _import_chromadb(what: str) -> None:
    """Import chromadb for ``what``, onnxruntime's telemetry turned off first (unless set);
    a missing chromadb is an ImportError naming the extra."""
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    try:
        import chromadb  # noqa: F401
    except ImportError:
        raise ImportError(f"{what} needs chromadb: pip install 'workbench[integrations]'"
                          ) from None


def persistent_client(path: str | Path) -> Any:
    """``chromadb.PersistentClient`` on ``path`` with anonymized telemetry off."""
    _import_chromadb("persistent_client")
    import chromadb
    from chromadb.config import Settings

    return chromadb.PersistentClient(path=str(path),
                                     settings=Settings(anonymized_telemetry=False))


def chroma_embedding_function(encoder: Encoder) -> Any:
    """A Chroma embedding function backed by a workbench encoder (documents through
    ``encode_documents``, queries through ``encode_queries``). Chroma stores only its name:
    pass it again as ``embedding_function=`` when reopening the collection."""
    import numpy as np

    _import_chromadb("chroma_embedding_function")
    from chromadb import Documents, EmbeddingFunction, Embeddings

    class WorkbenchEmbeddingFunction(EmbeddingFunction[Documents]):
        def __init__(self, model: Any = None) -> None:
            self.encoder = model if model is not None else encoder

        def __call__(self, input: Documents) -> Embeddings:
            return list(np.asarray(self.encoder.encode_documents(list(input)), np.float32))

        def embed_query(self, input: Documents) -> Embeddings:
            return list(np.asarray(self.encoder.encode_queries(list(input)), np.float32))

        @staticmethod
        def name() -> str:
            return "workbench-encoder"

        def get_config(self) -> dict[str, Any]:
            return {"model_id": str(getattr(self.encoder, "model_id", ""))}

        @staticmethod
        def build_from_config(config: dict[str, Any]) -> WorkbenchEmbeddingFunction:
            return WorkbenchEmbeddingFunction(get_encoder(config.get("model_id") or "minilm"))

    return WorkbenchEmbeddingFunction()
