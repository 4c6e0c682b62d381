"""Chunking: cut documents into retrievable chunks, offset-exact, and diagnose the result.

Every chunker here obeys the invariants of :mod:`workbench.corpus`:

* ``document.text[c.start:c.end] == c.text`` (offsets are code points);
* chunk ids are ``{doc_id}#{ordinal}``, ordinals from 0 in document order;
* ``c.text`` is the clean slice the generator reads; ``c.embed_text`` is what gets
  embedded and may carry extra context (a repeated table header, a contextual header);
* no chunk is empty or whitespace only, and every non-whitespace character of a document
  lies in at least one chunk;
* chunking is deterministic, and structure-based chunkers (recursive, markdown) never let a
  chunk cross a heading, so editing one section leaves the other sections' chunks (text and
  ``content_hash``) unchanged.

Budgets (``size``) are counted in ``unit="chars"`` (code points) or ``unit="tokens"`` of a
token counter (``counter="minilm"`` by default; see :mod:`workbench.text.tokens`). A chunk may
exceed its budget only when a single unit (a sentence, a word, a table row) is larger than
the budget by itself: it is then cut into fixed windows and those chunks carry
``metadata["fallback"] == "fixed"``.

Every chunker is a frozen dataclass whose ``repr`` / ``label`` is a spec string that
:func:`parse_chunker` turns back into an equal chunker, e.g.
``fixed:size=800,overlap=100,unit=chars`` or
``recursive:size=300,overlap=0,unit=tokens,header=true``.

Parent/child ids: :class:`ParentChildChunker` returns the *child* chunks (the ones to
index); they are numbered ``{doc_id}#{i}`` like any chunks and carry ``parent_id``. Its
``parents(document)`` returns the enclosing parent chunks with ids
``{doc_id}#parent#{j}``, and ``Chunk.doc_id`` is the real document. Document ids may
contain ``#``: ids stay unique within a chunking (two documents' ``{doc_id}#{i}`` can only
meet if one ordinal is not a number), and nothing reads the document out of an id, because
every chunk carries its ``doc_id``.

The package is split by concern: :mod:`~workbench.chunking.base` (the :class:`Chunker`
protocol, :func:`chunk_corpus`, the chunker base and the shared option checks),
:mod:`~workbench.chunking.units` (windows, sentences, paragraphs, markdown structure, as exact
offsets), :mod:`~workbench.chunking.packing` (measuring in chars or tokens, packing units into
chunks), :mod:`~workbench.chunking.chunkers` (the whole-document, fixed, sentence and recursive
chunkers),
:mod:`~workbench.chunking.structured` (markdown, contextual header, parent/child),
the content-type chunkers :mod:`~workbench.chunking.conversation` (chat logs and tickets, by
turn), :mod:`~workbench.chunking.glossary` (one entry per chunk) and
:mod:`~workbench.chunking.source_code` (Python by function and class),
:mod:`~workbench.chunking.semantic` (cuts where neighbouring sentences' embeddings drift),
:mod:`~workbench.chunking.specs` (spec strings) and :mod:`~workbench.chunking.diagnostics`
(split rate, cost, near duplicates). The building blocks of units and packing (``Ruler``,
``Piece``, ``pack``, ``descend``, ``sentence_units``, ...) are public in their modules for
writing new chunkers; they are not re-exported here.

Layer: may import :mod:`workbench.golden`, :mod:`workbench.corpus`, :mod:`workbench.text`
and :mod:`workbench.io` (in practice corpus and text).
"""

from __future__ import annotations

from workbench.chunking.base import (
    DEFAULT_COUNTER,
    UNITS,
    BudgetedChunker,
    Chunker,
    ChunkerBase,
    Docs,
    check_budget,
    check_overlap,
    chunk_corpus,
    unit_spec,
)
from workbench.chunking.chunkers import (
    DocumentChunker,
    FixedChunker,
    RecursiveChunker,
    SentenceChunker,
)
from workbench.chunking.conversation import ConversationChunker
from workbench.chunking.diagnostics import (
    ChunkingDiagnostics,
    diagnose_chunking,
    near_duplicate_pairs,
    split_rate,
    split_spans,
    without_overlap,
)
from workbench.chunking.glossary import GlossaryChunker
from workbench.chunking.packing import Splitter
from workbench.chunking.semantic import SemanticChunker
from workbench.chunking.source_code import CodeChunker
from workbench.chunking.specs import CHUNKER_KINDS, SPEC_HELP, attach_embedders, parse_chunker
from workbench.chunking.structured import (
    HEADER_FIELDS,
    ContextualHeader,
    MarkdownChunker,
    ParentChildChunker,
)
from workbench.chunking.units import (
    Heading,
    markdown_headings,
    section_path_at,
    sentence_spans,
    window_spans,
)

__all__ = [
    "CHUNKER_KINDS",
    "DEFAULT_COUNTER",
    "HEADER_FIELDS",
    "SPEC_HELP",
    "UNITS",
    "BudgetedChunker",
    "Chunker",
    "ChunkerBase",
    "ChunkingDiagnostics",
    "CodeChunker",
    "ContextualHeader",
    "ConversationChunker",
    "Docs",
    "DocumentChunker",
    "FixedChunker",
    "GlossaryChunker",
    "Heading",
    "MarkdownChunker",
    "ParentChildChunker",
    "RecursiveChunker",
    "SemanticChunker",
    "SentenceChunker",
    "Splitter",
    "attach_embedders",
    "check_budget",
    "check_overlap",
    "chunk_corpus",
    "diagnose_chunking",
    "markdown_headings",
    "near_duplicate_pairs",
    "parse_chunker",
    "section_path_at",
    "sentence_spans",
    "split_rate",
    "split_spans",
    "unit_spec",
    "window_spans",
    "without_overlap",
]
