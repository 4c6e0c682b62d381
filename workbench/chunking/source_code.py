"""Source code cut by function and class, never by line count (:class:`CodeChunker`).

Python is parsed with the standard library's :mod:`ast`; JavaScript, TypeScript, Go and
Rust (by the file suffix, :func:`~workbench.chunking.tree_sitter_code.language_of`) with
tree-sitter (:mod:`~workbench.chunking.tree_sitter_code`, the optional extra
``workbench[code]``). A document that does not parse as Python, or in another language
without the extra, is cut by paragraphs, lines and words, and its chunks record
``metadata["language"] == "text"``.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from workbench.chunking.base import DEFAULT_COUNTER, BudgetedChunker
from workbench.chunking.packing import Piece, Ruler, descend, pack, settle, to_chunks
from workbench.chunking.tree_sitter_code import language_of, tree_sitter_pieces
from workbench.chunking.units import line_units, paragraph_units, trim_span, word_units
from workbench.corpus import Chunk, Document
from workbench.io import WorkbenchError

__all__ = ["CodeChunker"]

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class _Source:
    """Character offsets of ``ast`` positions (lines from 1, columns in UTF-8 bytes)."""

    def __init__(self, text: str):
        self.text = text
        self.starts = [0, *(m.end() for m in _LINE_BREAK.finditer(text))]

    def at(self, lineno: int, col: int) -> int:
        start = self.starts[lineno - 1]
        line = self.text[start : start + col]  # a column in bytes is >= the one in chars
        return start + len(line.encode("utf-8")[:col].decode("utf-8", errors="ignore"))

    def line_start(self, pos: int) -> int:
        return self.starts[bisect.bisect_right(self.starts, pos) - 1]

    def start_of(self, node: ast.stmt) -> int:
        """Where a statement begins: its first decorator, and the comment lines right above."""
        decorators: list[ast.expr] = getattr(node, "decorator_list", [])
        lineno = min([node.lineno, *(d.lineno for d in decorators)])
        pos = self.starts[lineno - 1]
        while lineno > 1:
            above = self.starts[lineno - 2]
            if not self.text[above:pos].strip().startswith("#"):
                break
            lineno -= 1
            pos = above
        return pos

    def end_of(self, node: ast.stmt) -> int:
        assert node.end_lineno is not None and node.end_col_offset is not None
        return self.at(node.end_lineno, node.end_col_offset)


@dataclass(frozen=True, repr=False)
class CodeChunker(BudgetedChunker):
    """One chunk per top-level function or class of a Python document (other languages:
    the same rules through tree-sitter, headers as ``// File:`` / ``// Class:``, see
    :mod:`~workbench.chunking.tree_sitter_code`), with its decorators,
    the comment lines right above it, its signature and docstring; code between definitions
    is packed by statements up to ``size``.

    A class over ``size`` is cut into its head (the ``class`` line, docstring and the
    statements before its first method) and one chunk per method. A function over ``size``
    is cut at statement boundaries, the signature and docstring staying in the first piece;
    every later piece repeats the signature in ``embed_text``. Every chunk's ``embed_text``
    starts with ``# File: {path}`` (``metadata["path"]``, else the title, else the id) and,
    inside a class, ``# Class: {name}``; ``text`` is always the exact slice. Chunks record
    ``metadata["symbol"]`` (``Class.method``, ``function``, or ``""`` for module code),
    ``metadata["language"] == "python"``. A statement over ``size`` by itself is cut by
    lines, then words.
    """

    size: int = 800
    unit: str = "chars"
    counter: str = DEFAULT_COUNTER
    kind: ClassVar[str] = "code"

    def chunk(self, document: Document) -> list[Chunk]:
        text = document.text
        r = Ruler(text, self.unit, self.counter)
        name = str(document.metadata.get("path") or document.title or document.id)
        language = language_of(document.metadata, document.title or document.id)
        found = tree_sitter_pieces(r, language, self.size, name) if language else None
        if found is not None:
            return to_chunks(document, found)
        try:
            if language:
                raise WorkbenchError(f"no parser for {language} (pip install workbench[code])")
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError):  # or another language, no parser
            pieces = descend(r, 0, len(text), self.size, overlap=0,
                             splitters=(paragraph_units, line_units, word_units))
            out = settle(pack(pieces, r, self.size), r, self.size)
            for p in out:
                p.meta = {**p.meta, "language": "text"}
            return to_chunks(document, out)
        src = _Source(text)
        pieces = self._body(r, src, tree.body, 0, len(text), f"# File: {name}\n", [])
        return to_chunks(document, [p for p in pieces if p.start < p.end])

    def _body(self, r: Ruler, src: _Source, body: Sequence[ast.stmt], lo: int, hi: int,
              head: str, path: list[str]) -> list[Piece]:
        """Pieces of the statements ``body`` inside ``[lo, hi)``: definitions alone, other
        statements packed."""
        context = head + "".join(f"# Class: {c}\n" for c in path[-1:])
        out: list[Piece] = []
        run: list[Piece] = []
        pos = lo

        def flush(end: int) -> None:
            nonlocal run
            run += self._stretch(r, pos, end)
            out.extend(self._mark(settle(pack(run, r, self.size), r, self.size), context,
                                  ".".join(path)))
            run = []

        for node in body:
            if not isinstance(node, _DEFS):
                start = max(pos, src.start_of(node))
                run += self._stretch(r, pos, start)
                end = src.end_of(node)
                run += self._stretch(r, start, end)
                pos = end
                continue
            start = max(pos, src.start_of(node))
            flush(start)
            end = src.end_of(node)
            symbol = ".".join([*path, node.name])
            if r.likely_fits(start, end, self.size) and r.fits(*trim_span(r.text, start, end),
                                                                self.size):
                out.extend(self._mark([Piece(*trim_span(r.text, start, end))], context, symbol))
            elif isinstance(node, ast.ClassDef):
                inner = self._inner_start(src, node)
                out.extend(self._mark(self._stretch_packed(r, start, inner), context, symbol))
                out += self._body(r, src, node.body[self._first_member(node):], inner, end,
                                  head, [*path, node.name])
            else:
                out += self._function(r, src, node, start, end, context, symbol)
            pos = end
        flush(hi)
        return out

    def _function(self, r: Ruler, src: _Source, node: ast.FunctionDef | ast.AsyncFunctionDef,
                  start: int, end: int, context: str, symbol: str) -> list[Piece]:
        def_line = max(start, src.line_start(src.at(node.lineno, node.col_offset)))
        body_pos = src.at(node.body[0].lineno, node.body[0].col_offset)
        body_line = src.line_start(body_pos)
        signature = r.text[def_line : body_line if body_line > def_line else body_pos].strip()
        inner = self._inner_start(src, node)
        pieces = self._stretch(r, start, inner)
        for stmt in node.body[self._first_member(node):]:
            s = max(inner, src.start_of(stmt))
            pieces += self._stretch(r, inner, s) + self._stretch(r, s, src.end_of(stmt))
            inner = src.end_of(stmt)
        pieces += self._stretch(r, inner, end)
        out = self._mark(settle(pack(pieces, r, self.size), r, self.size), context, symbol)
        for p in out[1:]:
            p.prefix += f"{signature}\n    ...\n"
        return out

    @staticmethod
    def _first_member(node: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> int:
        """1 when the body opens with a docstring (kept with the signature), else 0."""
        return 1 if ast.get_docstring(node, clean=False) is not None and len(node.body) > 1 else 0

    def _inner_start(self, src: _Source, node: ast.ClassDef | ast.FunctionDef
                     | ast.AsyncFunctionDef) -> int:
        """Where the body after the signature (and docstring) begins: the first member's
        line, or its column when it shares the signature's line."""
        first = node.body[self._first_member(node)]
        line = src.start_of(first)
        return line if line > src.at(node.lineno, node.col_offset) else src.at(
            first.lineno, first.col_offset)

    def _stretch(self, r: Ruler, start: int, end: int) -> list[Piece]:
        """A stretch of statements or comments as pieces (lines, then words if too big)."""
        return descend(r, start, end, self.size, overlap=0, splitters=(line_units, word_units))

    def _stretch_packed(self, r: Ruler, start: int, end: int) -> list[Piece]:
        return settle(pack(self._stretch(r, start, end), r, self.size), r, self.size)

    @staticmethod
    def _mark(pieces: list[Piece], context: str, symbol: str) -> list[Piece]:
        for p in pieces:
            p.meta = {**p.meta, "symbol": symbol, "language": "python"}
            p.prefix = context + p.prefix
            p.solo = True
        return pieces
