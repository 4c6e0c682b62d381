"""Model-written chunk context: the sentence is indexed (embed_text) while text stays the
clean slice; unchanged chunks never pay twice; the cost is reported."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from workbench.chunking import RecursiveChunker, chunk_corpus
from workbench.corpus import Corpus, Document
from workbench.generation import ExtractiveReader, GenerationCache
from workbench.generation.chunk_context import CONTEXT_QUESTION, ContextCost, contextualize

DOC = Document("leave", "# Leave policy\n\nStaff get twelve days of annual leave. Unused days "
               "expire in March.\n\n## Sick leave\n\nSick leave needs a note after two days.",
               "Leave policy")


def test_context_is_indexed_text_stays_clean_and_cache_pays_once(tmp_path: Path) -> None:
    corpus = Corpus([DOC])
    chunks = chunk_corpus(RecursiveChunker(60), corpus)
    cache = GenerationCache(tmp_path)
    out, cost = contextualize(chunks, corpus, ExtractiveReader(), cache=cache)
    assert [c.text for c in out] == [c.text for c in chunks]
    assert all(DOC.text[c.start:c.end] == c.text for c in out)
    for c in out:
        assert c.embed_text == f"{c.metadata['context']}\n\n{c.text}"
        assert c.metadata["context"] and "[P1]" not in c.metadata["context"]
    assert cost.chunks == cost.calls == len(chunks) and cost.cached == 0 and cost.tokens > 0
    again, cost2 = contextualize(chunks, corpus, ExtractiveReader(), cache=cache)
    assert again == out and cost2.calls == 0 and cost2.cached == len(chunks)
    assert cost2.tokens == 0
    # an edited chunk is a new key: only it pays
    edited = [dataclasses.replace(chunks[0], text=chunks[0].text + " Edited."), *chunks[1:]]
    _, cost3 = contextualize(edited, corpus, ExtractiveReader(), cache=cache)
    assert (cost3.calls, cost3.cached) == (1, len(chunks) - 1)


def test_static_header_costs_nothing_and_rows_report_cost() -> None:
    row = ContextCost.static_header(7).as_row("static header")
    assert row == {"context": "static header", "chunks": 7, "calls": 0, "cached": 0,
                   "tokens": 0, "seconds": 0.0, "errors": 0}
    assert "{chunk}" in CONTEXT_QUESTION


def test_missing_document_is_named(tmp_path: Path) -> None:
    chunks = RecursiveChunker(60).chunk(DOC)
    with pytest.raises(ValueError, match="document 'leave' is not among"):
        contextualize(chunks, {}, ExtractiveReader(), cache=tmp_path)
