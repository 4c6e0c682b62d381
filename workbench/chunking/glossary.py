"""Glossaries and reference lists, one entry per chunk (:class:`GlossaryChunker`).

Entries (:func:`glossary_entries`) are found line by line, in Markdown and in the text the
HTML / DOCX extractors write (a table row is one line, cells joined by ``" | "``):

* a definition list: a term line followed by lines starting ``: `` (Markdown extra);
* ``Term: definition`` lines, also ``**Term**: ...``, ``**Term:** ...``, ``- Term — ...`` and
  ``Term - definition`` (a term is at most 60 characters and 8 words);
* a row of a two-column table: ``| term | definition |`` under a Markdown header row and
  separator, or ``term | definition`` lines (two or more in a row: the first is the header).

An entry runs on over the lines that follow it until a blank line, a heading or the next
entry. Everything else (headings, table headers, prose) is not an entry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from workbench.chunking.base import DEFAULT_COUNTER, BudgetedChunker
from workbench.chunking.packing import Piece, Ruler, descend, pack, settle, to_chunks
from workbench.chunking.units import (
    line_spans,
    paragraph_units,
    sentence_units,
    trim_span,
    word_units,
)
from workbench.corpus import Chunk, Document

__all__ = ["Entry", "GlossaryChunker", "glossary_entries"]

_TERM_LINE = re.compile(
    r"^[ \t]*(?:[-*+][ \t]+)?"
    r"(?:\*\*(?P<bold>[^*\n]{1,60}?):?\*\*:?|(?P<plain>[^:|\n#>`*-][^:|\n]{0,59}?)"
    r"(?:[ \t]*:|[ \t]+[—–-]))"
    r"[ \t]+\S"
)
_DD = re.compile(r"^[ \t]*:[ \t]+\S")
_ROW2 = re.compile(r"^[ \t]*\|?(?P<a>[^|\n]+)\|(?P<b>[^|\n]+)\|?[ \t]*$")
_SEPARATOR = re.compile(r"^[ \t]*\|?[ \t]*:?-{2,}:?[ \t]*\|[ \t]*:?-{2,}:?[ \t]*\|?[ \t]*$")
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]")


@dataclass(frozen=True)
class Entry:
    """One glossary entry: ``text[start:end]``, its term."""

    term: str
    start: int
    end: int


def _term(line: str) -> str | None:
    if _HEADING.match(line) or "://" in line.split(" ", 1)[0]:
        return None
    m = _TERM_LINE.match(line)
    if not m:
        return None
    term = (m.group("bold") or m.group("plain") or "").strip().strip("*").strip()
    return term if term and len(term.split()) <= 8 else None


def glossary_entries(text: str) -> list[Entry]:
    """The entries of ``text`` in order (module docstring), trimmed."""
    lines = line_spans(text)
    rows = [text[a:b] for a, b in lines]
    kinds: list[str | None] = [None] * len(rows)  # "entry" | "more" | None
    terms: dict[int, str] = {}
    in_table = False  # inside the body of a Markdown table
    for i, line in enumerate(rows):
        if not line.strip():
            in_table = False
            continue
        if _DD.match(line) and i > 0 and rows[i - 1].strip():
            j = i - 1  # the term line of a definition list, above its ': ' lines
            while j > 0 and _DD.match(rows[j]):
                j -= 1
            if kinds[j] != "entry" and not _DD.match(rows[j]) and not _HEADING.match(rows[j]):
                kinds[j] = "entry"
                terms[j] = rows[j].strip().strip("*").strip()
            kinds[i] = "more"
            continue
        row = _ROW2.match(line)
        if _SEPARATOR.match(line):
            in_table = i > 0 and _ROW2.match(rows[i - 1]) is not None
            continue
        if row:
            run = i > 0 and _ROW2.match(rows[i - 1]) is not None  # not the header row
            if in_table or run:
                kinds[i] = "entry"
                terms[i] = row.group("a").strip()
            continue
        in_table = False
        term = _term(line)
        if term is not None:
            kinds[i] = "entry"
            terms[i] = term
        elif i > 0 and kinds[i - 1] in ("entry", "more") and not _HEADING.match(line):
            kinds[i] = "more"
    entries: list[Entry] = []
    for i, kind in enumerate(kinds):
        if kind == "entry":
            j = i + 1
            while j < len(rows) and kinds[j] == "more":
                j += 1
            start, end = trim_span(text, lines[i][0], lines[j - 1][1])
            entries.append(Entry(terms[i], start, end))
    return entries


@dataclass(frozen=True, repr=False)
class GlossaryChunker(BudgetedChunker):
    """One chunk per glossary entry (:func:`glossary_entries`), never two entries in one
    chunk; ``metadata["term"]`` is the entry's term. An entry over ``size`` is cut by
    sentences, then words, and the later pieces get ``"{term}: "`` in front of their
    ``embed_text``. Text between entries (headings, introductions, table headers) is packed
    by paragraphs, sentences and words up to ``size``, never with an entry. A document
    without entries is cut like that throughout.
    """

    size: int = 800
    unit: str = "chars"
    counter: str = DEFAULT_COUNTER
    kind: ClassVar[str] = "glossary"

    def chunk(self, document: Document) -> list[Chunk]:
        text = document.text
        r = Ruler(text, self.unit, self.counter)
        splitters = (paragraph_units, sentence_units, word_units)
        pieces: list[Piece] = []
        pos = 0
        for entry in glossary_entries(text):
            pieces += settle(pack(descend(r, pos, entry.start, self.size, overlap=0,
                                          splitters=splitters), r,
                                  self.size), r, self.size)
            own = settle(pack(descend(r, entry.start, entry.end, self.size, overlap=0,
                                      splitters=splitters[1:]),
                              r, self.size), r, self.size)
            for p in own:
                prefix = f"{entry.term}: " if p.start > entry.start else ""
                pieces.append(Piece(p.start, p.end, {**p.meta, "term": entry.term}, prefix=prefix,
                                    solo=True))
            pos = entry.end
        pieces += settle(pack(descend(r, pos, len(text), self.size, overlap=0, splitters=splitters),
                              r,
                              self.size), r, self.size)
        return to_chunks(document, [p for p in pieces if p.start < p.end])
