"""Structure-aware chunkers: markdown (sections, tables, code), the contextual header
wrapper, and parent/child chunking."""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import re
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

from workbench.chunking.base import (
    DEFAULT_COUNTER,
    BudgetedChunker,
    Chunker,
    ChunkerBase,
    unit_spec,
)
from workbench.chunking.chunkers import RecursiveChunker
from workbench.chunking.packing import (
    Piece,
    Ruler,
    descend,
    fallback_windows,
    pack,
    settle,
    to_chunks,
)
from workbench.chunking.units import (
    Block,
    line_spans,
    line_units,
    markdown_blocks,
    markdown_headings,
    section_paths,
    sentence_units,
    word_units,
)
from workbench.corpus import Chunk, Document
from workbench.io import WorkbenchError

HEADER_FIELDS = ("title", "section", "date")


_CODE_DEF = re.compile(
    r"^\s*(?:async\s+def|def|class|(?:export\s+(?:default\s+)?)?(?:async\s+)?(?:function|class))\b"
)
_DECORATOR = re.compile(r"^\s*@")


@dataclass(frozen=True, repr=False)
class MarkdownChunker(BudgetedChunker):
    """Heading-aware chunks of markdown: every chunk records ``metadata["section_path"]``
    (heading titles from h1 down) and never crosses a heading.

    Within a section, blocks (paragraphs, tables, fenced code) are packed up to ``size``.
    A table is kept whole when it fits; otherwise it is split by rows, and every piece after
    the first gets the header row and separator repeated in ``embed_text`` (``text`` stays
    the exact slice) and in ``metadata["table_header"]``. A fenced code block is kept whole
    when it fits, otherwise split at blank lines and ``def`` / ``class`` / ``function``
    lines, then lines. Paragraphs too big are split by sentences, then words. A heading
    with no body of its own is kept with its first subsection.
    """

    size: int = 800
    unit: str = "chars"
    counter: str = DEFAULT_COUNTER
    kind: ClassVar[str] = "markdown"

    def chunk(self, document: Document) -> list[Chunk]:
        text = document.text
        r = Ruler(text, self.unit, self.counter)
        sections: list[tuple[list[str], list[Block]]] = []
        stack: list[Block] = []
        for block in markdown_blocks(text):
            if block.kind == "heading":
                while stack and stack[-1].level >= block.level:
                    stack.pop()
                stack.append(block)
                sections.append(([h.title for h in stack], [block]))
            elif sections:
                sections[-1][1].append(block)
            else:
                sections.append(([], [block]))
        out: list[Piece] = []
        carry: list[Piece] = []
        for k, (path, blocks) in enumerate(sections):
            head = blocks[0]
            nxt = sections[k + 1][1][0] if k + 1 < len(sections) else None
            if (
                len(blocks) == 1
                and head.kind == "heading"
                and nxt is not None
                and nxt.kind == "heading"
                and nxt.level > head.level
            ):
                carry.extend(self._block_pieces(r, head))
                continue
            pieces = carry + self._section_pieces(r, blocks)
            carry = []
            for p in settle(pack(pieces, r, self.size), r, self.size):
                p.meta = {"section_path": list(path), **p.meta}
                out.append(p)
        return to_chunks(document, out)

    def _section_pieces(self, r: Ruler, blocks: list[Block]) -> list[Piece]:
        pieces: list[Piece] = []
        i = 0
        while i < len(blocks):
            block = blocks[i]
            nxt = blocks[i + 1] if i + 1 < len(blocks) else None
            if (
                block.kind == "heading"
                and nxt is not None
                and nxt.kind == "para"
                and not r.likely_fits(nxt.start, nxt.end, self.size)
            ):
                # a long paragraph is split by sentences with the heading line as the first
                # "sentence", so the heading stays with the start of its text
                pieces += descend(r, block.start, nxt.end, self.size, overlap=0,
                                  splitters=(sentence_units, word_units))
                i += 2
                continue
            pieces += self._block_pieces(r, block)
            i += 1
        return pieces

    def _block_pieces(self, r: Ruler, block: Block) -> list[Piece]:
        if r.likely_fits(block.start, block.end, self.size):
            return [Piece(block.start, block.end)]
        if block.kind == "table":
            return self._table_pieces(r, block)
        if block.kind == "code":
            return self._code_pieces(r, block)
        return descend(r, block.start, block.end, self.size, overlap=0, splitters=(sentence_units,
                                                                                   word_units))

    def _table_pieces(self, r: Ruler, block: Block) -> list[Piece]:
        text = r.text
        lines = line_spans(text, block.start, block.end)
        header_end = lines[1][1]
        header = text[block.start : header_end]
        prefix = header + "\n"
        meta = {"block": "table", "table_header": header}
        rows = lines[2:]
        pieces: list[Piece] = []
        # the first piece holds the header and as many rows as fit
        j = 0
        while j < len(rows) and r.estimate(block.start, rows[j][1]) <= self.size:
            j += 1
        while j > 0 and not r.fits(block.start, rows[j - 1][1], self.size):
            j -= 1
        if r.fits(block.start, header_end, self.size):
            pieces.append(Piece(block.start, rows[j - 1][1] if j else header_end, dict(meta)))
        else:
            pieces.extend(fallback_windows(r, block.start, header_end, self.size, meta=meta))
        # later pieces: rows only in text, the header repeated in embed_text
        header_size = r.size_of(prefix)
        while j < len(rows):
            row_start, row_end = rows[j]
            if not r.fits(row_start, row_end, self.size):
                pieces.extend(fallback_windows(r, row_start, row_end, self.size, meta=meta))
                j += 1
                continue
            k = j + 1
            while k < len(rows) and header_size + r.estimate(row_start, rows[k][1]) <= self.size:
                k += 1
            while k > j + 1 and (
                r.size_of(prefix + text[row_start : rows[k - 1][1]]) > self.size
                or not r.fits(row_start, rows[k - 1][1], self.size)
            ):
                k -= 1
            pieces.append(Piece(row_start, rows[k - 1][1], dict(meta), prefix=prefix, solo=True))
            j = k
        return pieces

    def _code_pieces(self, r: Ruler, block: Block) -> list[Piece]:
        text = r.text
        lines = line_spans(text, block.start, block.end)
        body = [text[s:e] for s, e in lines[1:-1] if text[s:e].strip()]
        # definitions start a unit only at the outermost indentation of the block, so a
        # class keeps its methods unless a blank line separates them
        outer = min((len(line) - len(line.lstrip()) for line in body), default=0)
        starts = [0]
        for k in range(1, len(lines)):
            cur = text[lines[k][0] : lines[k][1]]
            prev = text[lines[k - 1][0] : lines[k - 1][1]]
            if not cur.strip():
                continue
            top = len(cur) - len(cur.lstrip()) <= outer
            if (
                not prev.strip()
                or (top and _CODE_DEF.match(cur) and not _DECORATOR.match(prev))
                or (top and _DECORATOR.match(cur) and not _DECORATOR.match(prev))
            ):
                starts.append(k)
        bounds = [*starts, len(lines)]
        pieces = [
            p
            for a, b in itertools.pairwise(bounds)
            for p in descend(r, lines[a][0], lines[b - 1][1], self.size, overlap=0,
                             splitters=(line_units, word_units))
        ]
        packed = pack(pieces, r, self.size)
        for p in packed:
            p.meta = {"block": "code", **p.meta}
        return packed


@dataclass(frozen=True, repr=False)
class ContextualHeader(ChunkerBase):
    """Wraps any chunker and prefixes each chunk's ``embed_text`` with where it comes from::

        Document: {title}
        Section: {h1 > h2 > ...}
        Updated: {effective_date}

    followed by a blank line; ``text`` is unchanged. Lines whose value is missing are left
    out; the title falls back to the document id. The section path comes from the base
    chunk's ``metadata["section_path"]`` when present, else from the markdown headings at
    or before the chunk's first non-space character (it is then stored in the metadata).
    """

    base: Chunker = field(default_factory=lambda: RecursiveChunker())
    fields: tuple[str, ...] = HEADER_FIELDS

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))
        bad = [f for f in self.fields if f not in HEADER_FIELDS]
        if bad or not self.fields:
            raise WorkbenchError(
                f"header fields must be some of {', '.join(HEADER_FIELDS)}, got {self.fields!r}"
            )

    @property
    def label(self) -> str:
        value = "true" if self.fields == HEADER_FIELDS else "+".join(self.fields)
        joiner = "," if ":" in self.base.label else ":"  # 'document' has no parameters
        return f"{self.base.label}{joiner}header={value}"

    def header(self, document: Document, section_path: Sequence[str]) -> str:
        """The header block put in front of a chunk of ``document`` in ``section_path``."""
        lines = []
        for name in self.fields:
            if name == "title":
                lines.append(f"Document: {document.title or document.id}")
            elif name == "section" and section_path:
                lines.append(f"Section: {' > '.join(section_path)}")
            elif name == "date" and document.metadata.get("effective_date"):
                lines.append(f"Updated: {document.metadata['effective_date']}")
        return "\n".join(lines) + "\n\n" if lines else ""

    def chunk(self, document: Document) -> list[Chunk]:
        return self._wrap(document, self.base.chunk(document))

    def __getattr__(self, name: str) -> Any:
        # ``parents`` exists exactly when the base chunker has it (a parent/child base), so
        # ``hasattr(chunker, "parents")`` tells whether a chunker has parent chunks.
        if name == "parents":
            base = self.__dict__.get("base")
            if base is not None and hasattr(base, "parents"):
                return base.parents
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _wrap(self, document: Document, chunks: list[Chunk]) -> list[Chunk]:
        headings = markdown_headings(document.text)
        starts = [h.start for h in headings]
        paths = section_paths(headings)
        out = []
        for c in chunks:
            meta = dict(c.metadata)
            path = meta.get("section_path")
            if path is None:
                first = c.start + len(c.text) - len(c.text.lstrip())  # first non-space
                i = bisect.bisect_right(starts, first)
                path = list(paths[i - 1]) if i else []
                if path:
                    meta["section_path"] = path
            embed = self.header(document, path) + c.embed_text
            out.append(dataclasses.replace(c, embed_text=embed, metadata=MappingProxyType(meta)))
        return out


@dataclass(frozen=True, repr=False)
class ParentChildChunker(ChunkerBase):
    """Small chunks to match, big chunks to answer.

    ``chunk(document)`` returns the child chunks (cut by a :class:`RecursiveChunker` of
    ``child_size`` / ``child_overlap`` inside each parent), ids ``{doc_id}#{i}`` in
    document order, each with ``parent_id`` set to its enclosing parent's id.
    ``parents(document)`` returns the parent chunks (cut by ``parent``), ids
    ``{doc_id}#parent#{j}`` -- never equal to a child id. Children inherit the parent's
    ``section_path`` metadata when it has one.
    """

    parent: Chunker = field(default_factory=lambda: RecursiveChunker(size=1000))
    child_size: int = 200
    child_overlap: int = 0
    unit: str = "chars"
    _: KW_ONLY
    counter: str = DEFAULT_COUNTER
    kind: ClassVar[str] = "parent"

    def __post_init__(self) -> None:
        try:  # validates child_size, child_overlap, unit and counter
            self._children_chunker()
        except ValueError as exc:
            msg = (
                str(exc)
                .replace("recursive: size", "child_size")
                .replace("overlap", "child_overlap")
                .replace("< size (", "< child_size (")
            )
            raise WorkbenchError(f"parent: {msg.removeprefix('recursive: ')}") from None

    def _children_chunker(self) -> RecursiveChunker:
        return RecursiveChunker(self.child_size, self.child_overlap, self.unit, self.counter)

    @property
    def label(self) -> str:
        head = f"parent:child={self.child_size},child_overlap={self.child_overlap}"
        unit = unit_spec(self.unit, self.counter)
        short = RecursiveChunker(getattr(self.parent, "size", 1000), 0, self.unit, self.counter)
        if self.parent == short:
            return f"{head},size={short.size},{unit}"
        return f"{head},{unit},parent=({self.parent.label})"

    def parents(self, document: Document) -> list[Chunk]:
        return [
            dataclasses.replace(c, id=f"{document.id}#parent#{j}", parent_id=None)
            for j, c in enumerate(self.parent.chunk(document))
        ]

    def chunk(self, document: Document) -> list[Chunk]:
        text = document.text
        r = Ruler(text, self.unit, self.counter)
        headings = markdown_headings(text)
        child = self._children_chunker()
        rows: list[tuple[int, int, int, Piece, Chunk]] = []
        for j, parent in enumerate(self.parents(document)):
            for p in child.pieces(r, headings, parent.start, parent.end):
                rows.append((p.start, p.end, j, p, parent))
        rows.sort(key=lambda row: row[:3])
        chunks = to_chunks(document, (row[3] for row in rows))
        out = []
        for c, (_, _, _, _, parent) in zip(chunks, rows, strict=True):
            meta = {}
            if "section_path" in parent.metadata:
                meta["section_path"] = list(parent.metadata["section_path"])
            out.append(dataclasses.replace(c, parent_id=parent.id, metadata=MappingProxyType(meta)))
        return out
