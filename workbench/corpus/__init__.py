"""Corpus: the documents the answers live in, and who may read which version of them.

Owns :class:`Document`, :class:`Span`, :class:`Chunk`, :class:`Corpus`
(:mod:`~workbench.corpus.types`), the chunking as an index built once
(:class:`ChunkTable`: what scoring looks up, at no cost per chunk), the one door every
document enters by (:func:`admit`, :mod:`~workbench.corpus.admission`: a Document with
access is built nowhere else), the loaders (:mod:`~workbench.corpus.loaders`: folders of
md/txt with front matter, documents JSONL, BEIR ``corpus.jsonl``), the PDF / HTML / DOCX
extractors with their page numbers, heading paths and warnings
(:mod:`~workbench.corpus.extract`), documents as a production system extracted them
(:mod:`~workbench.corpus.production`, :func:`load_documents`), locating production chunks in
the documents (:mod:`~workbench.corpus.locate`, :mod:`~workbench.corpus.align`, counted by
:mod:`~workbench.corpus.location_report`) and the access and version rules
(:mod:`~workbench.corpus.access`), and the reader view every surface reads documents
through, with the inventory of those surfaces (:mod:`~workbench.corpus.reader`). Public
datasets that bring their own questions
(BEIR, SQuAD) load in :mod:`workbench.golden.datasets`, one layer up.

Layer: may import :mod:`workbench.io` and :mod:`workbench.text` only.
"""

from __future__ import annotations

from workbench.corpus.access import (
    EVERYONE,
    HasMetadata,
    acl_of,
    can_read,
    can_read_chunk,
    is_superseded,
    parse_acl,
    user_groups_of,
)
from workbench.corpus.admission import (
    FACT_KEYS,
    HEADER_KEYS,
    STATUSES,
    Declaration,
    FrontMatterWarning,
    admit,
)
from workbench.corpus.chunk_table import ChunkList, ChunkTable
from workbench.corpus.extract import (
    EXTRACTED_SUFFIXES,
    ExtractionWarning,
    extraction_warnings,
    load_document,
    provenance,
)
from workbench.corpus.loaders import (
    load_corpus,
    load_documents,
    load_folder,
    load_jsonl,
)
from workbench.corpus.locate import LocateError, Location, Locator, RawOffsets, raw_texts
from workbench.corpus.location_report import LocatedChunks, LocationReport
from workbench.corpus.reader import (
    UNRESTRICTED,
    Reader,
    ReaderRequired,
    declared_access,
    reaches_readers_of,
    require_reader,
)
from workbench.corpus.types import Chunk, Corpus, Document, Located, Span

__all__ = [
    "EVERYONE",
    "EXTRACTED_SUFFIXES",
    "FACT_KEYS",
    "HEADER_KEYS",
    "STATUSES",
    "UNRESTRICTED",
    "Chunk",
    "ChunkList",
    "ChunkTable",
    "Corpus",
    "Declaration",
    "Document",
    "ExtractionWarning",
    "FrontMatterWarning",
    "HasMetadata",
    "LocateError",
    "Located",
    "LocatedChunks",
    "Location",
    "LocationReport",
    "Locator",
    "RawOffsets",
    "Reader",
    "ReaderRequired",
    "Span",
    "acl_of",
    "admit",
    "can_read",
    "can_read_chunk",
    "declared_access",
    "extraction_warnings",
    "is_superseded",
    "load_corpus",
    "load_document",
    "load_documents",
    "load_folder",
    "load_jsonl",
    "parse_acl",
    "provenance",
    "raw_texts",
    "reaches_readers_of",
    "require_reader",
    "user_groups_of",
]
