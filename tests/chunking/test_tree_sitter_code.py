"""Source code other than Python through tree-sitter (workbench[code]): generated programs in
JavaScript, TypeScript, Go and Rust, whose function spans the generator knows. Every chunk
slices the source (multi-byte text included), every character is in a chunk, budgets hold,
a function that fits is one chunk's, a split function cuts only at its statements and
repeats its signature, methods name their class."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.chunking.test_chunking import FAST, check_invariants
from workbench.chunking import CodeChunker, parse_chunker
from workbench.chunking.tree_sitter_code import language_of
from workbench.corpus import Document

pytest.importorskip("tree_sitter_language_pack", reason="the optional extra workbench[code]")

NAMES = st.sampled_from(["total", "addTax", "héllo", "pay_now", "x", "renderRow"])
WORDS = st.sampled_from(["amount", "rate", "ñame", "東京", "sum", "line", "✓"])

#: language -> (function(name, statements) -> text, statement(word, n) -> text, suffix)
LANGS = {
    "javascript": (lambda n, body: f"function {n}(a, b) {{\n{body}}}\n",
                   lambda w, i: f"  const v{i} = \"{w}\" + a * {i};\n", ".js"),
    "typescript": (lambda n, body: f"export function {n}(a: number): string {{\n{body}}}\n",
                   lambda w, i: f"  let v{i}: string = `{w}${{a + {i}}}`;\n", ".ts"),
    "go": (lambda n, body: f"func {n}(a int) int {{\n{body}\treturn a\n}}\n",
           lambda w, i: f"\tv{i} := \"{w}\"; _ = v{i}\n", ".go"),
    "rust": (lambda n, body: f"pub fn {n}(a: i64) -> i64 {{\n{body}    a\n}}\n",
             lambda w, i: f"    let v{i} = \"{w}\";\n", ".rs"),
}
HEAD = {"javascript": "import x from \"y\";\n", "typescript": "type Id = string;\n",
        "go": "package billing\n", "rust": "use std::fmt;\n"}


@st.composite
def programs(draw) -> tuple[Document, list[tuple[int, int, str]]]:
    """A source file and the spans (start, end, signature) of its functions."""
    lang = draw(st.sampled_from(sorted(LANGS)))
    function, statement, suffix = LANGS[lang]
    text, spans = HEAD[lang] + "\n", []
    for f in range(draw(st.integers(1, 4))):
        name = f"{draw(NAMES)}{f}"
        words = draw(st.lists(WORDS, min_size=1, max_size=12))
        body = "".join(statement(w, i) for i, w in enumerate(words))
        start = len(text)  # a comment right above belongs to the function
        if draw(st.booleans()):
            text += "// " + draw(WORDS) + " comment\n"
        src = function(name, body)
        text += src + "\n"
        spans.append((start, len(text) - 2, src.split("{")[0].strip()))
    return Document(f"f{suffix}", text, metadata={"path": f"src/f{suffix}"}), spans


@FAST
@given(program=programs(), size=st.integers(30, 400))
def test_every_chunk_slices_the_source_and_functions_stay_whole(program, size) -> None:
    doc, spans = program
    chunker = CodeChunker(size)
    chunks = chunker.chunk(doc)
    check_invariants(doc, chunker, chunks)  # exact slices, all covered, budget, deterministic
    language = language_of(doc.metadata, doc.title)
    assert {c.metadata["language"] for c in chunks} == {language}
    for start, end, signature in spans:
        inside = [c for c in chunks if c.start < end and c.end > start]
        if end - start <= size:
            assert len(inside) == 1 and inside[0].start <= start and inside[0].end >= end
            continue
        own = doc.text.index(signature, start)
        for c in [c for c in inside if c.start > own]:  # the signature repeated
            assert signature in c.embed_text[: len(c.embed_text) - len(c.text)], c.embed_text
            line_start = doc.text.rfind("\n", 0, c.start) + 1
            assert not doc.text[line_start:c.start].strip() or \
                doc.text[c.start - 1] in " \t\n;"  # at a statement, never mid-expression
        assert all(c.metadata["symbol"] for c in inside)


@pytest.mark.parametrize(("path", "text", "symbol", "klass"), [
    ("a.ts", "class Invoice {\n  /** Total. */\n  total(): number {\n    let s = 0;\n"
             "    s += 1;\n    s += 2;\n    return s;\n  }\n  id = 'é';\n}\n",
     "Invoice.total", "Invoice"),
    ("a.go", "package b\n\n// Total sums.\nfunc (inv *Invoice) Total() int {\n\ts := 0\n"
             "\ts += 1\n\ts += 2\n\treturn s\n}\n", "Invoice.Total", "Invoice"),
    ("a.rs", "impl Invoice {\n    /// Total.\n    pub fn total(&self) -> i64 {\n"
             "        let s = 1;\n        let t = 2;\n        s + t\n    }\n}\n",
     "Invoice.total", "Invoice"),
    ("a.jsx", "export const pay = async (id) => {\n  await api.pay(id);\n"
              "  await api.log(id);\n  return id;\n};\n", "pay", None),
])
def test_methods_name_their_class_and_keep_their_docs(path, text, symbol, klass) -> None:
    doc = Document(path, text, metadata={"path": path})
    whole = CodeChunker(2000).chunk(doc)  # it fits: one chunk, named by its outermost name
    named = [c.metadata["symbol"] for c in whole if c.metadata["symbol"]]
    assert len(named) == 1 and named[0] in {klass, symbol}  # Go: a method is top level
    for size in (120, 60):
        chunks = parse_chunker(f"code:size={size}").chunk(doc)
        check_invariants(doc, CodeChunker(size), chunks)
        mine = [c for c in chunks if c.metadata["symbol"] == symbol]
        assert mine, [c.metadata for c in chunks]
        assert all(c.embed_text.startswith(f"// File: {path}\n") for c in chunks)
        if klass:
            assert all(f"// Class: {klass}\n" in c.embed_text for c in mine)
        doc_comment = next((ln for ln in text.splitlines() if "///" in ln or "/**" in ln
                            or ln.startswith("// Total")), None)
        if doc_comment:  # the docs stay with the signature, in the first piece
            assert doc_comment.strip() in mine[0].text
        own = text.index(symbol.split(".")[-1])
        assert all("{ ... }" in c.embed_text for c in mine if c.start > own)


def test_an_unknown_suffix_is_python_or_text() -> None:
    doc = Document("notes.txt", "Just some notes.\n\nMore notes.", metadata={"path": "n.txt"})
    assert {c.metadata["language"] for c in CodeChunker(100).chunk(doc)} == {"text"}
    py = Document("m.py", "def f():\n    return 1\n", metadata={"path": "m.py"})
    assert {c.metadata["language"] for c in CodeChunker(100).chunk(py)} == {"python"}
