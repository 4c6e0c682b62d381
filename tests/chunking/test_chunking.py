"""Chunkers: offset-exact invariants (property tests), hand cases, specs and diagnostics."""

from __future__ import annotations

import itertools
import os
import unicodedata
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from workbench.chunking import (
    Chunker,
    ContextualHeader,
    DocumentChunker,
    FixedChunker,
    MarkdownChunker,
    ParentChildChunker,
    RecursiveChunker,
    SentenceChunker,
    chunk_corpus,
    diagnose_chunking,
    near_duplicate_pairs,
    parse_chunker,
    section_path_at,
    sentence_spans,
    split_rate,
    split_spans,
    window_spans,
)
from workbench.corpus import Chunk, Corpus, Document, Span
from workbench.text.tokens import get_counter

FAST = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --------------------------------------------------------------------------- strategies

HUGE_WORD = "Lo" + "rem" * 1666  # one 5,000-character word
FRAGMENTS = [
    "The refund window is thirty days.",
    "Business customers may ask for sixty days!",
    "Is that still true?",
    "It costs 3.5 dollars, e.g. per seat.",
    unicodedata.normalize("NFD", "Nhân viên được nghỉ phép mười hai ngày."),
    unicodedata.normalize("NFD", "Thời hạn hoàn tiền là bao lâu?"),
    "公司年假有几天。",
    "年假十二天！好的；",
    "# Policy",
    "## Leave",
    "### Exceptions ###",
    "| Grade | Days |\n|---|---|\n| A | 12 |\n| B | 14 |",
    "```python\ndef f(x):\n    return x\n\nclass C:\n    pass\n```",
    "- first item\n- second item",
    "x\u0301 e\u0301",
    "word",
]
SEPARATORS = [" ", "\n", "\n\n", "", "  \t", "\n\n\n"]


@st.composite
def texts(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return ""
    if kind == 1:
        return draw(st.text(alphabet=" \t\n\u00a0\u3000\r", max_size=40))
    parts = draw(
        st.lists(
            st.tuples(
                st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=25)),
                st.sampled_from(SEPARATORS),
            ),
            max_size=25,
        )
    )
    pieces = [fragment + sep for fragment, sep in parts]
    if kind == 2:  # one huge word somewhere
        pieces.insert(draw(st.integers(0, len(pieces))), f" {HUGE_WORD} ")
    return unicodedata.normalize("NFC", "".join(pieces))


def documents() -> st.SearchStrategy[Document]:
    return texts().map(lambda text: Document("doc-1", text, "Handbook"))


sizes = st.integers(1, 300)


@st.composite
def fixed_chunkers(draw: st.DrawFn, unit: str = "chars") -> FixedChunker:
    size = draw(st.integers(1, 300) if unit == "chars" else st.integers(1, 60))
    return FixedChunker(size, draw(st.integers(0, size - 1)), unit)


@st.composite
def structure_chunkers(draw: st.DrawFn, unit: str = "chars") -> Chunker:
    size = draw(st.integers(1, 300) if unit == "chars" else st.integers(1, 60))
    kind = draw(st.sampled_from(["sentence", "recursive", "markdown", "header", "parent"]))
    if kind == "sentence":
        return SentenceChunker(size, draw(st.integers(0, 2)), unit)
    if kind == "recursive":
        return RecursiveChunker(size, draw(st.integers(0, size - 1)), unit)
    if kind == "markdown":
        return MarkdownChunker(size, unit)
    if kind == "header":
        return ContextualHeader(draw(st.sampled_from([RecursiveChunker, MarkdownChunker]))(size))
    child = draw(st.integers(1, size))
    return ParentChildChunker(RecursiveChunker(size), child, draw(st.integers(0, child - 1)))


# --------------------------------------------------------------------------- invariants


def budget_of(chunker: Any) -> tuple[int, str]:
    if isinstance(chunker, ContextualHeader):
        return budget_of(chunker.base)
    if isinstance(chunker, ParentChildChunker):
        return chunker.child_size, chunker.unit
    return chunker.size, chunker.unit


def check_invariants(doc: Document, chunker: Any, chunks: list[Chunk]) -> None:
    text = doc.text
    assert [c.id for c in chunks] == [f"{doc.id}#{i}" for i in range(len(chunks))]
    covered = [0] * (len(text) + 1)
    for c in chunks:
        assert c.doc_id == doc.id
        assert 0 <= c.start < c.end <= len(text)
        assert text[c.start : c.end] == c.text
        assert c.text.strip(), "no empty or whitespace-only chunks"
        assert c.embed_text.endswith(c.text) or "table_header" in c.metadata
        covered[c.start] += 1
        covered[c.end] -= 1
    depth = 0
    for i, ch in enumerate(text):
        depth += covered[i]
        assert depth > 0 or ch.isspace(), f"character {i} {ch!r} is in no chunk"
    assert [c.start for c in chunks] == sorted(c.start for c in chunks), "document order"
    size, unit = budget_of(chunker)
    counter = get_counter(unit if unit == "chars" else "minilm")
    if not isinstance(chunker, FixedChunker):
        for c in chunks:
            if c.metadata.get("fallback") != "fixed":
                assert counter.count(c.text) <= size, (c.text, size)
    assert chunker.chunk(doc) == chunks, "chunking twice gives the same chunks"
    if not text.strip():
        assert chunks == []


def check_fixed_windows(doc: Document, chunker: FixedChunker, chunks: list[Chunk]) -> None:
    """Windows of exactly ``size`` units (the last may be shorter), consecutive windows share
    exactly ``overlap`` units (whitespace-only windows are dropped, breaking a run)."""
    size, overlap, step = chunker.size, chunker.overlap, chunker.size - chunker.overlap
    if chunker.unit == "chars":
        for c in chunks[:-1]:
            assert len(c.text) == size
        for a, b in itertools.pairwise(chunks):
            gap = b.start - a.start
            assert gap % step == 0 and gap > 0
            if gap == step:
                assert a.end - b.start == overlap
        return
    offsets = get_counter(chunker.counter).offsets(doc.text)

    def tokens_in(start: int, end: int) -> set[int]:
        return {i for i, (s, e) in enumerate(offsets) if start <= s and e <= end and s < e}

    windows = [tokens_in(c.start, c.end) for c in chunks]
    for w in windows[:-1]:
        assert len(w) == size
    assert all(len(w) <= size for w in windows)
    for a, b in itertools.pairwise(windows):
        assert len(a & b) == overlap


# --------------------------------------------------------------------------- properties


@FAST
@given(doc=documents(), chunker=fixed_chunkers())
def test_fixed_chunker_properties(doc: Document, chunker: FixedChunker) -> None:
    chunks = chunker.chunk(doc)
    check_invariants(doc, chunker, chunks)
    check_fixed_windows(doc, chunker, chunks)


@FAST
@given(doc=documents(), chunker=structure_chunkers())
def test_structure_chunker_properties(doc: Document, chunker: Chunker) -> None:
    check_invariants(doc, chunker, chunker.chunk(doc))


@FAST
@given(doc=documents(), size=sizes)
def test_sentence_chunker_keeps_sentences_whole(doc: Document, size: int) -> None:
    chunker = SentenceChunker(size)
    chunks = chunker.chunk(doc)
    check_invariants(doc, chunker, chunks)
    whole = [c for c in chunks if "fallback" not in c.metadata]
    for s, e in sentence_spans(doc.text):
        if e - s <= size:
            assert any(c.start <= s and e <= c.end for c in whole), doc.text[s:e]


@FAST
@given(doc=documents(), chunker=structure_chunkers())
def test_label_round_trips(doc: Document, chunker: Chunker) -> None:
    parsed = parse_chunker(chunker.label)
    assert parsed == chunker
    assert repr(parsed) == chunker.label
    assert parsed.chunk(doc) == chunker.chunk(doc)


@FAST
@given(doc=documents(), title=st.booleans())
def test_document_chunker_is_the_whole_document(doc: Document, title: bool) -> None:
    chunker = DocumentChunker(title)
    chunks = chunker.chunk(doc)
    assert len(chunks) == (1 if doc.text.strip() else 0)
    for c in chunks:
        assert c.id == f"{doc.id}#0" and c.doc_id == doc.id
        assert c.text == doc.text.strip() == doc.text[c.start : c.end]
        first_line = c.text.split("\n", 1)[0].lstrip("# ").strip()
        expected = "Handbook " + c.text if title and first_line != "Handbook" else c.text
        assert c.embed_text == expected
    assert parse_chunker(chunker.label) == chunker


def test_document_chunker_indexes_a_title_only_when_asked() -> None:
    doc = Document("MED-10", "  Statins lower cholesterol.\n", "Statin use")
    (plain,) = DocumentChunker().chunk(doc)
    (titled,) = DocumentChunker(title=True).chunk(doc)
    assert plain.embed_text == plain.text == "Statins lower cholesterol."
    assert titled.text == plain.text and (titled.start, titled.end) == (2, 28)
    assert titled.embed_text == "Statin use Statins lower cholesterol."
    headed = Document("h", "# Statin use\n\nStatins lower cholesterol.", "Statin use")
    assert DocumentChunker(title=True).chunk(headed)[0].embed_text == headed.text
    untitled = Document("MED-11", "No title here.")
    assert DocumentChunker(title=True).chunk(untitled)[0].embed_text == "No title here."
    assert DocumentChunker(title=True).chunk(Document("x", " \n ", "T")) == []


def test_document_ids_may_contain_hash() -> None:
    """Chunk ids stay unique and chunks carry their document when ids contain '#'."""
    docs = [Document("a#1", "first text"), Document("a", "second text. More."),
            Document("a#1#0", "third")]
    for chunker in (DocumentChunker(), FixedChunker(8, 2), RecursiveChunker(10)):
        chunks = chunk_corpus(chunker, docs)
        assert len({c.id for c in chunks}) == len(chunks)
        for doc in docs:
            mine = [c for c in chunks if c.doc_id == doc.id]
            assert mine and all(doc.text[c.start : c.end] == c.text for c in mine)


@SLOW
@given(doc=documents(), chunker=fixed_chunkers("tokens"))
def test_fixed_token_windows_with_minilm(doc: Document, chunker: FixedChunker) -> None:
    chunks = chunker.chunk(doc)
    check_invariants(doc, chunker, chunks)
    check_fixed_windows(doc, chunker, chunks)


@SLOW
@given(doc=documents(), chunker=structure_chunkers("tokens"))
def test_structure_chunkers_in_minilm_tokens(doc: Document, chunker: Chunker) -> None:
    check_invariants(doc, chunker, chunker.chunk(doc))


# --------------------------------------------------------------------------- windows (seed 001)

GOLD = [
    (1000, 240, 40),
    (1000, 500, 60),
    (800, 120, 30),
    (1200, 760, 90),
    (600, 250, 20),
    (900, 380, 70),
    (1500, 1010, 50),
    (700, 60, 25),
]
EXPECTED_TABLE = """\
size overlap chunks  cost×  split-rate
 128      0     64   1.00       88%
 128     32     82   1.31       25%
 128     64    116   1.90       25%
 256      0     33   1.00       62%
 256     64     40   1.27       25%
 256    128     56   1.80        0%
 512      0     18   1.00       25%
 512    128     22   1.23        0%
 512    256     25   1.57        0%"""
EXPECTED_SPLITS = {  # exact split fractions, in eighths
    (128, 0): 7,
    (128, 32): 2,
    (128, 64): 2,
    (256, 0): 5,
    (256, 64): 2,
    (256, 128): 0,
    (512, 0): 2,
    (512, 128): 0,
    (512, 256): 0,
}


def test_window_spans_reproduce_the_grid_table() -> None:
    total = sum(n for n, _, _ in GOLD)
    rows = ["size overlap chunks  cost×  split-rate"]
    for size, frac in itertools.product([128, 256, 512], [0, 0.25, 0.5]):
        overlap = int(size * frac)
        n_chunks = indexed = 0
        chunks: list[Chunk] = []
        spans: list[Span] = []
        for d, (n, a, length) in enumerate(GOLD):
            windows = window_spans(n, size, overlap)
            n_chunks += len(windows)
            indexed += sum(e - s for s, e in windows)
            doc_id = f"g{d}"
            chunks += [
                Chunk(f"{doc_id}#{i}", doc_id, s, e, text="x") for i, (s, e) in enumerate(windows)
            ]
            spans.append(Span(doc_id, a, a + length))
        rate = split_rate(chunks, spans)
        assert rate * 8 == EXPECTED_SPLITS[size, overlap]
        rows.append(f"{size:4d} {overlap:6d} {n_chunks:6d} {indexed / total:6.2f} {rate:9.0%}")
    assert "\n".join(rows) == EXPECTED_TABLE


def test_fixed_chunker_reproduces_the_grid_in_characters() -> None:
    docs = [Document(f"g{d}", "x" * n) for d, (n, _, _) in enumerate(GOLD)]
    spans = [Span(f"g{d}", a, a + length) for d, (_, a, length) in enumerate(GOLD)]
    total = sum(n for n, _, _ in GOLD)
    for size, frac in itertools.product([128, 256, 512], [0, 0.25, 0.5]):
        overlap = int(size * frac)
        chunks = FixedChunker(size, overlap).chunk_corpus(docs)
        assert sum(len(c.text) for c in chunks) == sum(
            e - s for n, _, _ in GOLD for s, e in window_spans(n, size, overlap)
        )
        assert split_rate(chunks, spans) * 8 == EXPECTED_SPLITS[size, overlap]
        assert len(split_spans(chunks, spans)) == EXPECTED_SPLITS[size, overlap]
        cost = sum(len(c.text) for c in chunks) / total
        assert f"{cost:.2f}" in EXPECTED_TABLE


def test_window_spans_edges() -> None:
    assert window_spans(0, 10, 2) == []
    assert window_spans(5, 10, 2) == [(0, 5)]
    assert window_spans(10, 10, 2) == [(0, 10)]
    assert window_spans(11, 10, 2) == [(0, 10), (8, 11)]
    assert window_spans(18, 10, 2) == [(0, 10), (8, 18)]
    with pytest.raises(ValueError, match="overlap"):
        window_spans(10, 4, 4)
    with pytest.raises(ValueError, match="size"):
        window_spans(10, 0, 0)


# --------------------------------------------------------------------------- hand cases

TABLE = (
    "| Grade | Annual leave | Notes |\n"
    "|-------|--------------|-------|\n"
    "| A | 12 days | entry level |\n"
    "| B | 14 days | after two years |\n"
    "| C | 16 days | after five years |\n"
    "| D | 18 days | managers and above |\n"
    "| E | 20 days | directors |"
)
HEADER = "| Grade | Annual leave | Notes |\n|-------|--------------|-------|"
CODE = '''```python
def accrue(days):
    """Leave earned so far."""
    return days * 12 / 365

@cache
def balance(user):
    total = accrue(user.days)
    return total - user.taken

class Ledger:
    def __init__(self):
        self.rows = []
```'''
HANDBOOK = f"""# Staff handbook

Welcome to the company. Read this before your first day.

## Leave

Everyone gets annual leave according to their grade.

{TABLE}

## Tools

The leave calculator is a small script.

{CODE}

## Contact

Write to people@example.com with questions.
"""


def _doc(text: str, doc_id: str = "hb", **meta: Any) -> Document:
    return Document(doc_id, text, "Staff handbook", meta)


def test_markdown_keeps_a_table_whole_when_it_fits() -> None:
    doc = _doc(HANDBOOK)
    chunks = MarkdownChunker(size=400).chunk(doc)
    holding = [c for c in chunks if TABLE in c.text]
    assert len(holding) == 1
    assert holding[0].metadata["section_path"] == ["Staff handbook", "Leave"]
    assert "table_header" not in holding[0].metadata


def test_markdown_splits_a_long_table_by_rows_repeating_the_header() -> None:
    doc = _doc(HANDBOOK)
    chunks = MarkdownChunker(size=110).chunk(doc)
    pieces = [c for c in chunks if c.metadata.get("block") == "table"]
    assert len(pieces) >= 3
    assert pieces[0].text.startswith(HEADER)
    rows = [line for line in TABLE.splitlines()[2:]]
    seen = []
    for piece in pieces:
        assert doc.text[piece.start : piece.end] == piece.text
        assert piece.metadata["table_header"] == HEADER
        assert piece.embed_text.startswith(HEADER)
        assert len(piece.text) <= 110
        seen += [line for line in piece.text.splitlines() if line in rows]
        if piece is not pieces[0]:
            assert piece.embed_text == HEADER + "\n" + piece.text
            assert not piece.text.startswith("| Grade")
    assert seen == rows  # every row exactly once, in order


def test_markdown_keeps_a_code_block_whole_when_it_fits() -> None:
    doc = _doc(HANDBOOK)
    chunks = MarkdownChunker(size=400).chunk(doc)
    holding = [c for c in chunks if CODE in c.text]
    assert len(holding) == 1
    assert holding[0].metadata["section_path"] == ["Staff handbook", "Tools"]
    # a '# comment' inside a fence is not a heading
    doc2 = _doc("# Real\n\n```\n# not a heading\nx = 1\n```\n\nafter")
    assert all(c.metadata["section_path"] == ["Real"] for c in MarkdownChunker(30).chunk(doc2))
    assert section_path_at(doc2.text, doc2.text.index("x = 1")) == ["Real"]


def test_markdown_splits_long_code_at_definitions() -> None:
    doc = _doc(HANDBOOK)
    chunks = MarkdownChunker(size=120).chunk(doc)
    code = [c for c in chunks if c.metadata.get("block") == "code"]
    assert len(code) >= 2
    firsts = [c.text.splitlines()[0].strip() for c in code]
    assert all(f.startswith(("```", "def ", "@", "class ", "return", '"""')) for f in firsts), (
        firsts
    )
    assert any(f.startswith(("@cache", "def balance")) for f in firsts)
    assert any(f.startswith("class Ledger") for f in firsts)
    assert "".join("".join(c.text for c in code).split()) == "".join(CODE.split())


def test_markdown_section_paths_and_heading_only_sections() -> None:
    text = "# Guide\n## Setup\nInstall it.\n## Use\nRun it.\n### Flags\nUse -v.\n"
    chunks = MarkdownChunker(size=30).chunk(_doc(text))
    assert [c.metadata["section_path"] for c in chunks] == [
        ["Guide", "Setup"],
        ["Guide", "Use"],
        ["Guide", "Use", "Flags"],
    ]
    assert chunks[0].text == "# Guide\n## Setup\nInstall it."  # the bare h1 joins its child


def test_contextual_header_content() -> None:
    doc = _doc(HANDBOOK, effective_date="2024-07-01")
    chunker = ContextualHeader(MarkdownChunker(size=400))
    plain = MarkdownChunker(size=400).chunk(doc)
    chunks = chunker.chunk(doc)
    assert [c.text for c in chunks] == [c.text for c in plain]
    leave = next(c for c in chunks if TABLE in c.text)
    assert leave.embed_text == (
        "Document: Staff handbook\nSection: Staff handbook > Leave\nUpdated: 2024-07-01\n\n"
        + leave.text
    )
    assert leave.content_hash != next(c for c in plain if TABLE in c.text).content_hash


def test_contextual_header_computes_sections_for_any_chunker() -> None:
    doc = Document("nodate", HANDBOOK)  # no title, no date
    chunks = ContextualHeader(FixedChunker(60, 0), ("title", "section")).chunk(doc)
    contact = next(c for c in chunks if "people@" in c.text)
    assert contact.embed_text.startswith("Document: nodate\nSection: Staff handbook > Contact\n\n")
    assert contact.metadata["section_path"] == ["Staff handbook", "Contact"]
    first = chunks[0]
    assert first.embed_text.startswith("Document: nodate\nSection: Staff handbook\n\n")
    assert "Updated:" not in first.embed_text


def test_parent_child_mapping() -> None:
    doc = _doc(HANDBOOK)
    chunker = ParentChildChunker(MarkdownChunker(size=400), child_size=80)
    children = chunker.chunk(doc)
    parents = chunker.parents(doc)
    assert [p.id for p in parents] == [f"hb#parent#{j}" for j in range(len(parents))]
    assert [c.id for c in children] == [f"hb#{i}" for i in range(len(children))]
    assert not {p.id for p in parents} & {c.id for c in children}
    assert all(p.doc_id == "hb" for p in parents)
    by_id = {p.id: p for p in parents}
    assert len(children) > len(parents)
    for child in children:
        parent = by_id[child.parent_id or ""]
        assert parent.start <= child.start < child.end <= parent.end
        assert child.text in parent.text
        assert len(child.text) <= 80 or child.metadata.get("fallback")
        assert child.metadata["section_path"] == parent.metadata["section_path"]
    assert {c.parent_id for c in children} == set(by_id)  # every parent has children
    # with a contextual header the parents stay reachable
    wrapped = parse_chunker("parent:child=80,size=400,header=true")
    assert hasattr(wrapped, "parents") and not hasattr(parse_chunker("markdown:size=9"), "parents")
    assert wrapped.parents(doc)[0].id == "hb#parent#0"  # type: ignore[attr-defined]


def test_sentence_chunker_never_cuts_a_sentence() -> None:
    text = (
        "The refund window is thirty days. Business customers get sixty days! "
        "Does that apply to renewals? Yes, from March.\n"
        "Nhân viên được nghỉ phép mười hai ngày. Phép năm chuyển sang năm sau?\n"
        "公司年假有几天。年假十二天！"
    )
    doc = _doc(text)
    sentences = [text[s:e] for s, e in sentence_spans(text)]
    assert sentences == [
        "The refund window is thirty days.",
        "Business customers get sixty days!",
        "Does that apply to renewals?",
        "Yes, from March.",
        "Nhân viên được nghỉ phép mười hai ngày.",
        "Phép năm chuyển sang năm sau?",
        "公司年假有几天。",
        "年假十二天！",
    ]
    starts = {s for s, _ in sentence_spans(text)}
    ends = {e for _, e in sentence_spans(text)}
    for size in (40, 70, 100):
        chunks = SentenceChunker(size).chunk(doc)
        assert len(chunks) > 2
        for chunk in chunks:
            assert chunk.start in starts and chunk.end in ends, chunk.text


def test_sentence_overlap_and_fallback() -> None:
    text = "One two. Three four. Five six. Seven eight. " + "x" * 50
    chunks = SentenceChunker(21, overlap_sentences=1).chunk(_doc(text))
    assert [c.text for c in chunks[:3]] == [
        "One two. Three four.",
        "Three four. Five six.",  # repeats one sentence
        "Seven eight.",  # no room to repeat "Five six." within 21 characters
    ]
    tail = [c for c in chunks if c.metadata.get("fallback") == "fixed"]
    assert "".join(c.text for c in tail) == "x" * 50
    assert all(len(c.text) <= 21 for c in tail)


def test_chinese_and_vietnamese_sentence_ends() -> None:
    text = "公司年假有几天。年假十二天！好的"
    assert [text[s:e] for s, e in sentence_spans(text)] == [
        "公司年假有几天。",
        "年假十二天！",
        "好的",
    ]
    text = "公司年假有几天？年假十二天；好的"
    assert [text[s:e] for s, e in sentence_spans(text)] == [
        "公司年假有几天？",
        "年假十二天；",
        "好的",
    ]
    text = "Giá là 3.5 triệu. Có giảm không?Không."
    assert [text[s:e] for s, e in sentence_spans(text)] == [
        "Giá là 3.5 triệu.",
        "Có giảm không?Không.",
    ]
    text = 'He said "stop." Then left.'
    assert [text[s:e] for s, e in sentence_spans(text)] == ['He said "stop."', "Then left."]


def test_recursive_descends_only_when_needed() -> None:
    doc = _doc(HANDBOOK)
    whole = RecursiveChunker(size=10_000).chunk(doc)
    # headings are hard boundaries, but a section that fits stays one chunk
    assert [c.text.splitlines()[0] for c in whole] == [
        "# Staff handbook",
        "## Leave",
        "## Tools",
        "## Contact",
    ]
    small = RecursiveChunker(size=60).chunk(doc)
    assert all(len(c.text) <= 60 or c.metadata.get("fallback") for c in small)
    # a heading stays with the start of its text, even when that text must be split
    assert small[0].text == "# Staff handbook\n\nWelcome to the company."
    assert small[1].text == "Read this before your first day."
    assert "## Tools\n\nThe leave calculator is a small script." in [c.text for c in small]


def test_whitespace_and_empty_documents_give_no_chunks() -> None:
    chunkers: list[Chunker] = [
        FixedChunker(10, 2),
        SentenceChunker(10),
        RecursiveChunker(10),
        MarkdownChunker(10),
        ContextualHeader(RecursiveChunker(10)),
        ParentChildChunker(RecursiveChunker(50), 10),
        FixedChunker(5, 1, "tokens"),
    ]
    for chunker in chunkers:
        for text in ("", " ", "\n\n\t \u3000"):
            assert chunker.chunk(_doc(text)) == []


def test_fixed_token_windows_follow_minilm_tokens() -> None:
    text = "Nhân viên được nghỉ phép mười hai ngày mỗi năm."
    chunks = FixedChunker(size=6, overlap=2, unit="tokens").chunk(_doc(text))
    counter = get_counter("minilm")
    offsets = counter.offsets(text)
    assert chunks[0].start == 0 and chunks[0].end == offsets[5][1]
    assert chunks[1].start == offsets[4][0]
    assert chunks[-1].end == len(text)
    assert counter.count(chunks[0].text) == 6


def test_chunk_corpus_accepts_a_corpus() -> None:
    corpus = Corpus([_doc("One. Two.", "a"), _doc("Three.", "b")])
    chunks = SentenceChunker(6).chunk_corpus(corpus)
    assert [c.id for c in chunks] == ["a#0", "a#1", "b#0"]


# --------------------------------------------------------------------------- determinism


def _section(n: int, body: str) -> str:
    paragraphs = [
        f"Paragraph {p} of section {n}. {body} It explains rule {p} in some detail."
        for p in range(4)
    ]
    return f"## Section {n}\n\n" + "\n\n".join(paragraphs) + "\n\n"


@pytest.mark.parametrize(
    "chunker",
    [
        MarkdownChunker(size=150),
        RecursiveChunker(size=150),
        RecursiveChunker(size=40, unit="tokens"),
        ContextualHeader(MarkdownChunker(size=150)),
    ],
    ids=str,
)
def test_editing_one_section_leaves_the_others_unchanged(chunker: Chunker) -> None:
    before = (
        "# Policy\n\n" + _section(1, "Refunds.") + _section(2, "Leave.") + _section(3, "Travel.")
    )
    after = (
        "# Policy\n\n"
        + _section(1, "Refunds.")
        + _section(2, "Leave.")
        + _section(3, "Travel is booked through the portal, always.")
    )
    cut = before.index("## Section 3")
    assert after.index("## Section 3") == cut
    old = [c for c in chunker.chunk(_doc(before)) if c.start < cut]
    new = [c for c in chunker.chunk(_doc(after)) if c.start < cut]
    assert len(old) >= 4
    assert [(c.id, c.text, c.content_hash) for c in old] == [
        (c.id, c.text, c.content_hash) for c in new
    ]
    assert all(c.end <= cut for c in old)


# --------------------------------------------------------------------------- specs


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("fixed:size=800,overlap=100", FixedChunker(800, 100)),
        ("fixed:size=200,unit=tokens", FixedChunker(200, 100, "tokens")),
        ("fixed:size=64", FixedChunker(64, 8)),
        ("sentence:size=300", SentenceChunker(300)),
        (
            "recursive:size=300,unit=tokens,overlap=0,header=true",
            ContextualHeader(RecursiveChunker(300, 0, "tokens")),
        ),
        ("markdown:size=400", MarkdownChunker(400)),
        ("document", DocumentChunker()),
        ("document:title=true", DocumentChunker(title=True)),
        ("document:header=title", ContextualHeader(DocumentChunker(), ("title",))),
        ("parent:child=200,size=1000", ParentChildChunker(RecursiveChunker(1000), 200)),
        (
            "parent:child=100,parent=markdown,size=500,unit=tokens",
            ParentChildChunker(MarkdownChunker(500, "tokens"), 100, unit="tokens"),
        ),
        (
            "recursive:size=50,unit=tokens,counter=cl100k",
            RecursiveChunker(50, 0, "tokens", "cl100k"),
        ),
        (
            "markdown:size=400,header=title+date",
            ContextualHeader(MarkdownChunker(400), ("title", "date")),
        ),
    ],
)
def test_parse_chunker(spec: str, expected: Chunker) -> None:
    chunker = parse_chunker(spec)
    assert chunker == expected
    assert parse_chunker(chunker.label) == chunker
    assert repr(chunker) == chunker.label


def test_labels_are_compact_specs() -> None:
    assert FixedChunker().label == "fixed:size=800,overlap=100,unit=chars"
    assert repr(RecursiveChunker(300, 0, "tokens")) == "recursive:size=300,overlap=0,unit=tokens"
    nested = ParentChildChunker(SentenceChunker(500, 1), 100)
    assert nested.label == (
        "parent:child=100,child_overlap=0,unit=chars,"
        "parent=(sentence:size=500,overlap_sentences=1,unit=chars)"
    )
    assert parse_chunker(nested.label) == nested
    assert ContextualHeader(nested).label == nested.label + ",header=true"
    assert parse_chunker(ContextualHeader(nested).label) == ContextualHeader(nested)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("blob:size=10", "unknown kind 'blob'"),
        ("fixed:size=abc", "size must be an integer"),
        ("fixed:size=10,overlap=10", "overlap"),
        ("fixed:colour=red", "unknown parameter"),
        ("recursive:size=300,unit=bytes", "unit must be"),
        ("markdown:size=400,header=maybe", "header must be"),
        ("sentence:size", "not key=value"),
        ("recursive:size=0", "positive"),
        ("parent:child=10,parent=(recursive:size=50", "unbalanced"),
        ("", "empty"),
        ("document:size=800", "unknown parameter"),
        ("document:unit=tokens", "unknown parameter"),
        ("document:title=maybe", "title must be"),
    ],
)
def test_bad_specs_say_what_is_valid(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as err:
        parse_chunker(spec)
    assert spec in str(err.value) or not spec


def test_bad_constructor_arguments() -> None:
    with pytest.raises(ValueError, match="overlap"):
        FixedChunker(100, 100)
    with pytest.raises(ValueError, match="unit"):
        MarkdownChunker(100, "words")
    with pytest.raises(ValueError, match="header fields"):
        ContextualHeader(MarkdownChunker(100), ("author",))


# --------------------------------------------------------------------------- diagnostics


def test_split_rate_hand_case() -> None:
    doc = _doc("alpha beta gamma delta epsilon zeta")
    chunks = FixedChunker(12, 0).chunk(doc)  # "alpha beta g" "amma delta e" "psilon zeta"
    inside = Span.locate(doc, "beta")
    across = Span.locate(doc, "gamma")
    assert split_spans(chunks, [inside, across]) == [across]
    assert split_rate(chunks, [inside, across]) == 0.5
    assert split_rate(chunks, []) == 0.0
    report = diagnose_chunking(FixedChunker(12, 0), [doc], [inside, across])
    assert report.split_rate == 0.5 and report.split_spans == [across]
    with pytest.raises(ValueError, match="not given"):
        diagnose_chunking(FixedChunker(12, 0), [doc], [Span("other", 0, 3)])


def test_cost_multiplier_and_token_figures() -> None:
    doc = _doc(" ".join(f"w{i}" for i in range(400)))  # w0 w1 ... (2-4 tokens each)
    counter = get_counter("minilm")
    report = diagnose_chunking("fixed:size=200,overlap=100", [doc], [])
    chunks = FixedChunker(200, 100).chunk(doc)
    flat = FixedChunker(200, 0).chunk(doc)
    expected = sum(counter.count(c.text) for c in chunks) / sum(counter.count(c.text) for c in flat)
    assert report.n_chunks == len(chunks)
    assert report.index_tokens == sum(counter.count(c.text) for c in chunks)
    assert report.max_tokens == max(counter.count(c.text) for c in chunks)
    assert report.mean_tokens == pytest.approx(report.index_tokens / len(chunks))
    assert report.cost_multiplier == pytest.approx(expected)
    assert 1.8 < report.cost_multiplier < 2.05
    assert report.chunker == "fixed:size=200,overlap=100,unit=chars"
    assert diagnose_chunking(MarkdownChunker(200), [doc]).cost_multiplier == 1.0
    assert diagnose_chunking(FixedChunker(200, 0), [doc], counter="chars").cost_multiplier == 1.0
    # index tokens count what is embedded: the contextual header costs tokens
    wrapped = diagnose_chunking("recursive:size=200,overlap=50,header=true", [doc])
    plain = diagnose_chunking("recursive:size=200,overlap=50", [doc])
    assert wrapped.index_tokens > plain.index_tokens
    assert wrapped.n_chunks == plain.n_chunks


def test_near_duplicates() -> None:
    para = (
        "Refunds are issued within thirty days of purchase to the original payment method "
        "once the returned item has been checked by the warehouse team"
    )
    text = f"{para}.\n\n{para.replace('thirty', 'forty')}.\n\nSomething else entirely, unrelated."
    doc = _doc(text)
    chunks = RecursiveChunker(size=150).chunk(doc)
    assert len(chunks) == 3
    # 24 words -> 20 shingles each; one word differs -> 5 shingles differ on each side:
    # Jaccard = 15 / 25 = 0.6
    assert near_duplicate_pairs(chunks) == []
    assert near_duplicate_pairs(chunks, threshold=0.6) == [("hb#0", "hb#1")]
    assert near_duplicate_pairs(chunks, threshold=0.61) == []
    same = f"{para}.\n\n{para}!\n\nSomething else entirely, unrelated."
    report = diagnose_chunking(RecursiveChunker(size=150), [_doc(same)])
    assert report.near_duplicates == 1
    assert report.near_duplicate_pairs == [("hb#0", "hb#1")]
    # heavy overlap makes neighbouring windows near duplicates
    overlapping = diagnose_chunking(FixedChunker(300, 295), [_doc(text)])
    assert overlapping.near_duplicates > 0
    assert diagnose_chunking(FixedChunker(300, 0), [_doc(text)]).near_duplicates == 0
