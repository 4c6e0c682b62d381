"""Documents, spans and chunks, and loading a corpus (see :mod:`workbench.corpus.types`)."""

from __future__ import annotations

from workbench.corpus.types import (
    Chunk,
    Corpus,
    Document,
    Span,
    iter_jsonl,
    load_corpus,
    load_folder,
    load_jsonl,
    nfc,
)

__all__ = ["Chunk", "Corpus", "Document", "Span", "iter_jsonl", "load_corpus", "load_folder",
           "load_jsonl", "nfc"]
