"""Source code other than Python cut by function and class with tree-sitter
(:func:`tree_sitter_pieces`, called by :class:`~workbench.chunking.source_code.CodeChunker`).

Languages (:data:`LANGUAGES`, by the file suffix in ``metadata["path"]`` or the title, or
``metadata["language"]``): JavaScript, TypeScript (and TSX), Go and Rust. The parsers come
from the optional extra ``workbench[code]`` (``tree-sitter`` and
``tree-sitter-language-pack``, whose 0.x wheels carry the compiled grammars, so nothing is
downloaded); without it :func:`tree_sitter_pieces` returns None and the document is cut as
text. tree-sitter counts in UTF-8 bytes; every offset is mapped back to code points, so a
chunk's ``text`` is the exact slice.

What counts as a definition, per language (:data:`GRAMMARS`): functions and methods (a
JavaScript ``const f = (...) => {...}`` too), containers whose members are cut one by one
when the whole does not fit (classes, Rust ``impl`` / ``trait`` / ``mod``), and other
declarations kept whole (types, interfaces, structs, enums). Comments directly above a
definition (no blank line between) belong to it. A Go method's enclosing "class" is its
receiver's type; a Rust method's, its ``impl`` type.
"""

from __future__ import annotations

import bisect
import importlib.util
import itertools
import re
from dataclasses import KW_ONLY, dataclass
from typing import Any

from workbench.chunking.packing import Piece, Ruler, descend, pack, settle
from workbench.chunking.units import line_units, trim_span, word_units

__all__ = ["GRAMMARS", "LANGUAGES", "Grammar", "language_of", "tree_sitter_pieces"]

#: file suffix -> tree-sitter language name
LANGUAGES = {".js": "javascript", ".jsx": "javascript", ".mjs": "javascript",
             ".cjs": "javascript", ".ts": "typescript", ".mts": "typescript",
             ".tsx": "tsx", ".go": "go", ".rs": "rust"}


@dataclass(frozen=True)
class Grammar:
    """Node types of one language: ``functions`` (a body of statements), ``containers``
    (a body of members), ``others`` (kept whole), ``wrappers`` (``export ...``: the inner
    declaration decides), ``variables`` (a declaration whose value may be a function)."""

    functions: frozenset[str]
    containers: frozenset[str]
    others: frozenset[str] = frozenset()
    wrappers: frozenset[str] = frozenset()
    _: KW_ONLY
    variables: frozenset[str] = frozenset()
    comments: frozenset[str] = frozenset({"comment"})


_JS = Grammar(frozenset({"function_declaration", "generator_function_declaration",
                         "method_definition"}),
              frozenset({"class_declaration", "class"}),
              wrappers=frozenset({"export_statement"}),
              variables=frozenset({"lexical_declaration", "variable_declaration"}))
_TS = Grammar(_JS.functions | {"function_signature"},
              _JS.containers | {"abstract_class_declaration"},
              frozenset({"interface_declaration", "type_alias_declaration", "enum_declaration"}),
              _JS.wrappers, variables=_JS.variables)
GRAMMARS = {
    "javascript": _JS, "typescript": _TS, "tsx": _TS,
    "go": Grammar(frozenset({"function_declaration", "method_declaration"}), frozenset(),
                  frozenset({"type_declaration"})),
    "rust": Grammar(frozenset({"function_item"}),
                    frozenset({"impl_item", "trait_item", "mod_item"}),
                    frozenset({"struct_item", "enum_item", "type_item"}),
                    comments=frozenset({"line_comment", "block_comment"})),
}
_FUNCTION_VALUES = ("arrow_function", "function_expression", "function", "generator_function")
_RECEIVER = re.compile(r"(\w+)\s*(?:\[[^\]]*\])?\s*\)\s*$")


def language_of(metadata: Any, title: str) -> str | None:
    """The tree-sitter language of a document: ``metadata["language"]`` when it names one of
    :data:`GRAMMARS`, else the suffix of ``metadata["path"]`` (or the title)."""
    named = str(metadata.get("language") or "").strip().lower()
    if named in GRAMMARS:
        return named
    name = str(metadata.get("path") or title or "")
    dot = name.rfind(".")
    return LANGUAGES.get(name[dot:].lower()) if dot >= 0 else None


class _Source:
    """Code-point offsets of tree-sitter's byte offsets."""

    def __init__(self, text: str):
        self.text = text
        self.bytes = list(itertools.accumulate((len(ch.encode("utf-8")) for ch in text),
                                               initial=0))
        self.ascii = self.bytes[-1] == len(text)

    def at(self, byte: int) -> int:
        return byte if self.ascii else bisect.bisect_left(self.bytes, byte)

    def span(self, node: Any) -> tuple[int, int]:
        return self.at(node.start_byte), self.at(node.end_byte)

    def name(self, node: Any) -> str:
        a, b = self.span(node)
        return self.text[a:b]


class _Cutter:
    def __init__(self, r: Ruler, src: _Source, grammar: Grammar, size: int, head: str,
                 language: str):
        self.r, self.src, self.g, self.size = r, src, grammar, size
        self.head, self.language = head, language

    # -- what a node is --------------------------------------------------------------

    def definition(self, node: Any) -> tuple[str, str, Any] | None:
        """``(kind, name, body)`` of a definition (kind function | container | other), or
        None for plain code."""
        g = self.g
        if node.type in g.wrappers:
            inner = node.child_by_field_name("declaration") or next(
                (c for c in node.named_children if c.type not in g.comments), None)
            found = self.definition(inner) if inner is not None else None
            return found
        if node.type in g.variables:
            for decl in node.named_children:
                value = decl.child_by_field_name("value")
                if value is not None and value.type in _FUNCTION_VALUES:
                    name = decl.child_by_field_name("name")
                    body = value.child_by_field_name("body")
                    block = body if body is not None and body.named_child_count and \
                        body.type == "statement_block" else None
                    return "function", self.src.name(name) if name else "", block
            return None
        named = node.child_by_field_name("name")
        name = self.src.name(named) if named is not None else ""
        if node.type in g.functions:
            return "function", name, node.child_by_field_name("body")
        if node.type in g.containers:
            if node.type == "impl_item":  # impl Trait for Type: the members belong to Type
                kind = node.child_by_field_name("type")
                name = self.src.name(kind) if kind is not None else name
            return "container", name, node.child_by_field_name("body")
        if node.type in g.others:
            if not name and node.named_child_count:  # Go: type_declaration > type_spec
                spec = node.named_children[0].child_by_field_name("name")
                name = self.src.name(spec) if spec is not None else ""
            return "other", name, None
        return None

    def owner(self, node: Any) -> str | None:
        """A Go method's receiver type (its enclosing "class")."""
        receiver = node.child_by_field_name("receiver")
        if node.type != "method_declaration" or receiver is None:
            return None
        found = _RECEIVER.search(self.src.name(receiver))
        return found.group(1) if found else None

    def start_of(self, nodes: list[Any], i: int, floor: int) -> int:
        """Where node ``i`` begins: the comments right above it (no blank line between),
        from the start of its line when only indentation precedes it there."""
        text = self.text
        start = self.src.span(nodes[i])[0]
        j = i
        while j > 0 and nodes[j - 1].type in self.g.comments:
            a, b = self.src.span(nodes[j - 1])
            if text[b:start].count("\n") > 1 or a < floor:
                break
            start, j = a, j - 1
        line = text.rfind("\n", 0, start) + 1
        return max(floor, line if not text[line:start].strip() else start)

    @property
    def text(self) -> str:
        return self.src.text

    # -- pieces ----------------------------------------------------------------------

    def body(self, nodes: list[Any], lo: int, hi: int, path: list[str]) -> list[Piece]:
        """Pieces of the sibling ``nodes`` inside ``[lo, hi)``: definitions alone, the code
        between them packed; comments above a definition go with it."""
        out: list[Piece] = []
        run: list[Piece] = []
        pos = lo
        for i, node in enumerate(nodes):
            found = self.definition(node)
            if found is None:
                continue
            kind, name, inner = found
            start = max(pos, self.start_of(nodes, i, pos))
            run += self.stretch(pos, start)
            out += self.mark(settle(pack(run, self.r, self.size), self.r, self.size), path, "")
            run = []
            end = max(start, self.src.span(node)[1])
            owner = self.owner(node)
            where = [owner] if owner else path
            symbol = ".".join([*where, name]) if name else ".".join(where)
            a, b = trim_span(self.text, start, end)
            if a >= b:
                pass
            elif self.r.likely_fits(a, b, self.size) and self.r.fits(a, b, self.size):
                out += self.mark([Piece(a, b)], where, symbol)
            elif kind == "container" and inner is not None and inner.named_child_count:
                members = list(inner.named_children)
                first = self.start_of(members, 0, start) if members else end
                out += self.mark(self.packed(start, first), where, symbol)
                out += self.body(members, first, end, [*where, name])
            elif kind == "function" and inner is not None and inner.named_child_count:
                out += self.function(start, end, self.src.span(node)[0], inner, where, symbol)
            else:
                out += self.mark(self.packed(start, end), where, symbol)
            pos = end
        run += self.stretch(pos, hi)
        out += self.mark(settle(pack(run, self.r, self.size), self.r, self.size), path, "")
        return out

    def function(self, start: int, end: int, own: int, block: Any, path: list[str],
                 symbol: str) -> list[Piece]:
        """A function over budget (its comments from ``start``, itself from ``own``), cut at
        its statements; every piece after the first repeats the signature in
        ``embed_text``."""
        opened = self.src.span(block)[0]
        signature = " ".join(self.text[own:opened].split())
        stmts = list(block.named_children)
        pos = self.start_of(stmts, 0, opened) if stmts else opened
        pieces = self.stretch(start, pos)
        for i, stmt in enumerate(stmts):
            if stmt.type in self.g.comments and i + 1 < len(stmts):
                continue  # a comment goes with the statement below it
            s = max(pos, self.start_of(stmts, i, pos))
            e = max(s, self.src.span(stmt)[1])
            pieces += self.stretch(pos, s) + self.stretch(s, e)
            pos = e
        pieces += self.stretch(pos, end)
        out = self.mark(settle(pack(pieces, self.r, self.size), self.r, self.size), path,
                        symbol)
        for p in out[1:]:
            if p.start > own:  # a piece without the signature line repeats it
                p.prefix += f"{signature} {{ ... }}\n"
        return out

    def stretch(self, start: int, end: int) -> list[Piece]:
        return descend(self.r, start, end, self.size, overlap=0, splitters=(line_units,
                                                                            word_units)) \
            if start < end else []

    def packed(self, start: int, end: int) -> list[Piece]:
        return settle(pack(self.stretch(start, end), self.r, self.size), self.r, self.size)

    def mark(self, pieces: list[Piece], path: list[str], symbol: str) -> list[Piece]:
        context = self.head + "".join(f"// Class: {c}\n" for c in path[-1:])
        for p in pieces:
            p.meta = {**p.meta, "symbol": symbol, "language": self.language}
            p.prefix = context + p.prefix
            p.solo = True
        return pieces


def tree_sitter_pieces(r: Ruler, language: str, size: int, name: str) -> list[Piece] | None:
    """The pieces of ``r.text`` in ``language`` (module docstring), each with
    ``// File: {name}`` (and ``// Class: ...``) as its embed prefix; None when the parsers
    (``workbench[code]``) are not installed."""
    if importlib.util.find_spec("tree_sitter_language_pack") is None:
        return None
    from tree_sitter_language_pack import get_parser

    tree = get_parser(language).parse(r.text.encode("utf-8"))  # type: ignore[arg-type]
    cutter = _Cutter(r, _Source(r.text), GRAMMARS[language], size, f"// File: {name}\n",
                     language)
    return [p for p in cutter.body(list(tree.root_node.named_children), 0, len(r.text), [])
            if p.start < p.end]
