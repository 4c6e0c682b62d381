"""A production RAG system as the issue's user has it, built for real (no mocks): the
handbook's files split by LangChain's ``RecursiveCharacterTextSplitter`` (500/50, over the raw
files, front matter included), uuid chunk ids, a persistent Chroma collection on disk with the
packaged MiniLM, the same collection behind LangChain's ``Chroma`` vector store, and a
LlamaIndex vector index over the same splits.

Also :func:`reference_chunks`: the same splits as workbench chunks computed by hand from
LangChain's ``start_index`` and each file's front-matter length, independent of the locator.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import HANDBOOK

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

DOCS = HANDBOOK / "docs"


@dataclass
class Production:
    corpus: Any
    golden: Any
    raw: dict[str, str]
    splits: list[Any]
    encoder: Any
    collection: Any
    client: Any
    path: Path

    def langchain_store(self) -> Any:
        from langchain_chroma import Chroma

        from workbench.retrieval.adapters import langchain_embeddings

        return Chroma(client=self.client, collection_name=self.collection.name,
                      embedding_function=langchain_embeddings(self.encoder))

    def llamaindex_retriever(self, k: int = 5) -> Any:
        from llama_index.core import Settings, VectorStoreIndex

        from workbench.retrieval.adapters import llamaindex_embedding

        Settings.llm = None
        index = VectorStoreIndex(self.llamaindex_nodes(),
                                 embed_model=llamaindex_embedding(self.encoder))
        return index.as_retriever(similarity_top_k=k)

    def llamaindex_nodes(self) -> list[Any]:
        """The splits as LlamaIndex nodes with their vectors (metadata not embedded)."""
        from llama_index.core.schema import TextNode

        got = self.collection.get(include=["embeddings", "documents", "metadatas"])
        nodes = []
        for cid, text, meta, vector in zip(got["ids"], got["documents"], got["metadatas"],
                                           got["embeddings"], strict=True):
            nodes.append(TextNode(id_=cid, text=text, metadata=dict(meta),
                                  start_char_idx=meta["start_index"],
                                  end_char_idx=meta["start_index"] + len(text),
                                  excluded_embed_metadata_keys=list(meta),
                                  excluded_llm_metadata_keys=list(meta),
                                  embedding=[float(x) for x in vector]))
        return nodes


def chunk_id(source: str, start: int) -> str:
    """A uuid per chunk, as a vector store would give it (uuid5: the same on every run)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{source}:{start}"))


def build(path: Path) -> Production:
    """Split, embed (through the workbench embedding cache) and store the handbook in a
    persistent Chroma collection at ``path``."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    from workbench.corpus import load_folder
    from workbench.golden import GoldenSet
    from workbench.retrieval import EmbeddingCache, get_encoder
    from workbench.retrieval.adapters import chroma_embedding_function, persistent_client

    corpus = load_folder(DOCS)
    golden = GoldenSet.load(HANDBOOK / "golden.jsonl")
    raw = {p.stem: p.read_text(encoding="utf-8") for p in sorted(DOCS.glob("*.md"))}
    splitter = RecursiveCharacterTextSplitter(chunk_size=500, chunk_overlap=50,
                                              add_start_index=True)
    splits = splitter.create_documents(list(raw.values()),
                                       metadatas=[{"source": str(DOCS / f"{s}.md")} for s in raw])
    for d in splits:
        d.id = chunk_id(d.metadata["source"], d.metadata["start_index"])
    encoder = get_encoder("minilm")
    vectors = EmbeddingCache().embed(encoder, [d.page_content for d in splits], progress=False)
    client = persistent_client(path)
    collection = client.get_or_create_collection(
        "handbook", embedding_function=chroma_embedding_function(encoder),
        configuration={"hnsw": {"space": "cosine"}})
    if collection.count() == 0:
        collection.add(ids=[d.id for d in splits], documents=[d.page_content for d in splits],
                       metadatas=[d.metadata for d in splits],
                       embeddings=[v.tolist() for v in vectors])
    return Production(corpus, golden, raw, splits, encoder, collection, client, path)


def reference_chunks(production: Production) -> list[Any]:
    """The splits as workbench chunks, by hand: body offset = LangChain's start_index minus
    the file's front-matter length (a split that starts in the header starts the body)."""
    from workbench.corpus import Chunk

    out = []
    for d in production.splits:
        doc_id = Path(d.metadata["source"]).stem
        raw = production.raw[doc_id]
        header = raw.index("\n---\n", 3) + len("\n---\n")
        start = max(d.metadata["start_index"] - header, 0)
        end = d.metadata["start_index"] + len(d.page_content) - header
        body = production.corpus[doc_id].text
        assert raw[header:] == body
        out.append(Chunk(d.id, doc_id, start, end, text=body[start:end]))
    return out
