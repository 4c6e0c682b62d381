"""Content-type chunkers (conversation, glossary, code): the chunk invariants on generated
documents of each shape, their own boundaries (turns, entries, definitions), spec strings
and the conversations loader."""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from tests.chunking.test_chunking import FAST, SLOW, check_invariants, documents
from workbench.chunking import parse_chunker
from workbench.chunking.conversation import ConversationChunker, exchanges
from workbench.chunking.glossary import GlossaryChunker, glossary_entries
from workbench.chunking.source_code import CodeChunker
from workbench.corpus import Document
from workbench.corpus.conversations import document_turns, load_conversations, parse_turns
from workbench.io import InputError
from workbench.text.tokens import get_counter

SPEAKERS = ["Customer", "Agent", "**Mai**", "Bob Smith", "[10:02] Agent"]
WORDS = st.sampled_from(["sync", "fails", "since Monday.", "token", "reset it!", "Thanks.",
                         "x" * 120, "Nhân viên", "年假十二天。", "works", "error 5"])
sizes = st.integers(1, 300)
units = st.sampled_from(["chars", "tokens"])


def _budget_ok(chunker: ConversationChunker | GlossaryChunker | CodeChunker, text: str) -> bool:
    counter = get_counter("chars" if chunker.unit == "chars" else chunker.counter)
    return counter.count(text) <= chunker.size


# --------------------------------------------------------------------------- conversations


@st.composite
def conversations(draw: st.DrawFn) -> str:
    head = draw(st.sampled_from(["", "# Ticket 7\n\nSummary: login.\n\n", "intro line\n"]))
    turns = draw(st.lists(st.tuples(st.sampled_from(SPEAKERS), st.lists(WORDS, min_size=1,
                                                                         max_size=12)),
                          max_size=10))
    seps = draw(st.lists(st.sampled_from(["\n", "\n\n", "\n \n"]), min_size=len(turns),
                         max_size=len(turns)))
    body = "".join(f"{s}: {' '.join(w)}{sep}" for (s, w), sep in zip(turns, seps, strict=True))
    return head + body


@FAST
@given(text=conversations(), size=sizes, unit=units)
def test_conversation_chunks_keep_turns_whole_unless_one_is_over_budget(
        text: str, size: int, unit: str) -> None:
    doc = Document("chat", text)
    chunker = ConversationChunker(size, unit if size <= 60 or unit == "chars" else "chars")
    chunks = chunker.chunk(doc)
    check_invariants(doc, chunker, chunks)
    for turn in parse_turns(text):
        cut = [c for c in chunks if turn.start < c.start < turn.end or turn.start < c.end
               < turn.end]
        if cut:  # a chunk edge inside a turn: only when the turn alone is over budget
            assert not _budget_ok(chunker, text[turn.start:turn.end]), (turn, cut)
    for c in chunks:
        assert c.metadata["speakers"] == list(dict.fromkeys(
            t.speaker for t in parse_turns(text) if t.start < c.end and c.start < t.end))


@FAST
@given(doc=documents(), size=sizes)
def test_conversation_chunker_invariants_on_any_text(doc: Document, size: int) -> None:
    chunker = ConversationChunker(size)
    check_invariants(doc, chunker, chunker.chunk(doc))


def test_resolution_stays_with_its_problem_and_later_pieces_repeat_the_problem() -> None:
    text = ("Customer: sync fails with error 5 since Monday.\n\n"
            "Agent: reset the token under Settings, then sync again.\n\n"
            "Customer: that fixed it.\n\nAgent: glad to hear.")
    doc = Document("t", text)
    whole = ConversationChunker(120).chunk(doc)
    assert [c.text for c in whole] == [text[:text.index("\n\nCustomer: that")],
                                       text[text.index("Customer: that"):]]
    small = ConversationChunker(60).chunk(doc)
    answer = next(c for c in small if c.text.startswith("Agent: reset"))
    assert answer.embed_text.startswith("Customer: sync fails")
    assert answer.metadata["speakers"] == ["Agent"]
    assert [len(g) for g in exchanges(parse_turns(text))] == [2, 2]


def test_markdown_turn_shapes() -> None:
    text = ("# Ticket 42\n\n**Customer:** my sync fails\nsince Monday\n\n"
            "[10:02] Agent (L2): try x\nNote: this is part of the turn\n"
            "- **Mai**: ok https://example.com")
    turns = parse_turns(text)
    assert [(t.speaker, t.time) for t in turns] == [("Customer", ""), ("Agent", "10:02"),
                                                    ("Mai", "")]
    assert text[turns[1].start:turns[1].end] == (
        "[10:02] Agent (L2): try x\nNote: this is part of the turn")


def test_load_conversations_offsets_exact(tmp_path: Path) -> None:
    path = tmp_path / "chats.jsonl"
    rows = [{"conversation": "c1", "speaker": "Customer", "time": "09:00",
             "text": "Login fails.", "title": "Login", "metadata": {"product": "sync"}},
            {"conversation": "c2", "speaker": "Ann", "text": "Hello"},
            {"conversation": "c1", "speaker": "Agent", "time": "09:05", "text": "Clear cache."}]
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    corpus = load_conversations(path)
    assert list(corpus) == ["c1", "c2"]
    doc = corpus["c1"]
    assert doc.title == "Login" and doc.metadata["product"] == "sync"
    turns = document_turns(doc)
    assert [doc.text[t.start:t.end] for t in turns] == [
        "[09:00] Customer: Login fails.", "[09:05] Agent: Clear cache."]
    assert document_turns(doc) == parse_turns(doc.text)  # the text reads back the same turns
    from workbench.corpus import load_corpus

    assert dict(load_corpus(path)) == dict(corpus)  # load_corpus knows the turns shape


@pytest.mark.parametrize(("row", "field"), [
    ({"speaker": "A", "text": "x"}, "conversation"),
    ({"conversation": "c", "speaker": " ", "text": "x"}, "speaker"),
    ({"conversation": "c", "speaker": "A", "text": 3}, "text"),
    ({"conversation": "c", "speaker": "A", "text": "x", "metadata": {"turns": []}}, "metadata"),
    ({"conversation": "c", "speaker": "A", "text": "x", "metadata": {"acl": {"a": 1}}},
     "metadata.acl"),
])
def test_bad_conversation_lines_name_line_and_field(tmp_path: Path, row: dict[str, object],
                                                   field: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=f"bad.jsonl:1.*{field}"):
        load_conversations(path)


def test_recorded_turns_out_of_range_are_refused() -> None:
    doc = Document("d", "A: hi", metadata={"turns": [{"speaker": "A", "start": 0, "end": 99}]})
    with pytest.raises(ValueError, match=r"'d'.*turns\[0\]"):
        document_turns(doc)


# --------------------------------------------------------------------------- glossaries

ENTRY_SHAPES = [
    "{t}: {d}", "**{t}**: {d}", "**{t}:** {d}", "- {t} — {d}", "{t}\n: {d}",
]


@st.composite
def glossaries(draw: st.DrawFn) -> tuple[str, list[str]]:
    terms = draw(st.lists(st.sampled_from(["API key", "SLA", "Tenant", "RPO", "Shard",
                                           "Webhook", "Thời hạn", "年假"]),
                          max_size=8, unique=True))
    lines, kinds = [], draw(st.sampled_from(["lines", "table", "pipes"]))
    for t in terms:
        d = " ".join(draw(st.lists(WORDS, min_size=1, max_size=8)))
        if kinds == "table":
            lines.append(f"| {t} | {d} |")
        elif kinds == "pipes":
            lines.append(f"{t} | {d}")
        else:
            lines.append(draw(st.sampled_from(ENTRY_SHAPES)).format(t=t, d=d))
    if kinds == "table":
        lines[:0] = ["| Term | Definition |", "|---|---|"]
    elif kinds == "pipes":
        lines[:0] = ["Term | Meaning"]
    sep = "\n" if kinds != "lines" else draw(st.sampled_from(["\n", "\n\n"]))
    return "# Glossary\n\nIntro text.\n\n" + sep.join(lines), terms


@FAST
@given(glossary=glossaries(), size=sizes)
def test_glossary_one_entry_per_chunk(glossary: tuple[str, list[str]], size: int) -> None:
    text, terms = glossary
    doc = Document("g", text)
    chunker = GlossaryChunker(size)
    chunks = chunker.chunk(doc)
    check_invariants(doc, chunker, chunks)
    entries = glossary_entries(text)
    assert [e.term for e in entries] == terms
    for e in entries:
        mine = [c for c in chunks if c.start < e.end and e.start < c.end]
        assert all(e.start <= c.start and c.end <= e.end for c in mine), "one entry per chunk"
        assert all(c.metadata["term"] == e.term for c in mine)
        if len(e.term) + 2 < size and _budget_ok(chunker, text[e.start:e.end]):
            assert [(c.start, c.end) for c in mine] == [(e.start, e.end)]


@FAST
@given(doc=documents(), size=sizes)
def test_glossary_chunker_invariants_on_any_text(doc: Document, size: int) -> None:
    chunker = GlossaryChunker(size)
    check_invariants(doc, chunker, chunker.chunk(doc))


# --------------------------------------------------------------------------- code

FUNCS = [
    'def f{n}(a, b=1):\n    """Doc {n}."""\n    x = a + b\n    return x\n',
    "@decorator\nasync def g{n}():\n    await thing()\n",
    "# comment for h{n}\ndef h{n}(): return {n}\n",
    'class C{n}:\n    """Class {n}."""\n    limit = {n}\n\n    def m(self):\n        '
    "if self.limit:\n            return [i for i in range(10)]\n        return None\n\n"
    "    def n(self, y):\n        return y\n",
    "X{n} = {{'k': [1, 2, 3], 'v': 'héllo 年'}}\n",
    "def long{n}(items):\n    total = 0\n" + "".join(
        f"    total += len(items) * {k}\n" for k in range(12)) + "    return total\n",
]


@st.composite
def modules(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.sampled_from(FUNCS), max_size=8))
    seps = draw(st.lists(st.sampled_from(["\n", "\n\n", "\n# between\n"]), min_size=len(parts),
                         max_size=len(parts)))
    return '"""Module."""\n' + "".join(p.format(n=n) + s for n, (p, s) in
                                        enumerate(zip(parts, seps, strict=True)))


def _defs(tree: ast.Module) -> list[ast.stmt]:
    return [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef
                                                 | ast.ClassDef)]


@SLOW
@given(text=modules(), size=st.integers(10, 400))
def test_code_chunks_follow_definitions(text: str, size: int) -> None:
    doc = Document("pkg/mod.py", text)
    chunker = CodeChunker(size)
    chunks = chunker.chunk(doc)
    check_invariants(doc, chunker, chunks)
    lines = text.split("\n")
    starts = [sum(len(x) + 1 for x in lines[:k]) for k in range(len(lines))]
    for node in _defs(ast.parse(text)):
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        while first > 1 and lines[first - 2].lstrip().startswith("#"):
            first -= 1  # the comment lines right above belong to the definition
        start = starts[first - 1]
        end = starts[node.end_lineno - 1] + (node.end_col_offset or 0)  # ascii lines here
        inside = [c for c in chunks if c.start < end and start < c.end]
        assert all(start <= c.start and c.end <= end for c in inside), "no chunk crosses a def"
        assert all(c.metadata["symbol"].split(".")[0] == node.name for c in inside)
        whole = text[start:end]
        if _budget_ok(chunker, whole):
            assert [c.text for c in inside] == [whole]
        else:  # later pieces repeat the signature, the first one holds it
            assert inside[0].start == start
            for c in inside[1:]:
                path = c.metadata["symbol"].split(".")
                if len(path) == 1 and not isinstance(node, ast.ClassDef):
                    assert f"def {node.name}(" in c.embed_text
    for c in chunks:
        assert c.embed_text.startswith("# File: pkg/mod.py\n")


def test_code_method_header_names_class_and_long_method_repeats_signature() -> None:
    text = FUNCS[3].format(n=1)
    chunks = CodeChunker(60).chunk(Document("m.py", text))
    method = [c for c in chunks if c.metadata["symbol"] == "C1.m"]
    assert len(method) >= 2
    assert method[0].text.startswith("def m(self):")
    for c in method:
        assert c.embed_text.startswith("# File: m.py\n# Class: C1\n")
    assert all("def m(self):\n    ...\n" in c.embed_text for c in method[1:])


def test_not_python_is_cut_as_text() -> None:
    doc = Document("notes.md", "# Notes\n\nThis is not Python (at all.\n")
    chunks = CodeChunker(100).chunk(doc)
    check_invariants(doc, CodeChunker(100), chunks)
    assert {c.metadata["language"] for c in chunks} == {"text"}


@FAST
@given(doc=documents(), size=sizes)
def test_code_chunker_invariants_on_any_text(doc: Document, size: int) -> None:
    chunker = CodeChunker(size)
    check_invariants(doc, chunker, chunker.chunk(doc))


# --------------------------------------------------------------------------- specs


@pytest.mark.parametrize("spec", ["conversation:size=300", "glossary:size=120,unit=tokens",
                                  "code:size=500,unit=tokens,counter=cl100k",
                                  "conversation:size=200,header=true"])
def test_content_specs_round_trip(spec: str) -> None:
    chunker = parse_chunker(spec)
    assert parse_chunker(chunker.label) == chunker
    assert parse_chunker(chunker.label).label == chunker.label


def test_sweep_grids_take_content_specs() -> None:
    from workbench.sweep.grid import check_value

    assert check_value("chunker", "conversation:size=300") is None
    assert check_value("chunker", "code:size=300,unit=tokens") is None
    assert "unknown parameter" in (check_value("chunker", "glossary:overlap=3") or "")


@pytest.mark.parametrize(("spec", "message"), [
    ("glossary:size=0", "size must be a positive integer"),
    ("code:size=100,overlap=5", "unknown parameter.*overlap"),
    ("conversation:size=ten", "size must be an integer"),
])
def test_bad_content_specs(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_chunker(spec)


def test_chunk_preview_shows_turns_and_speakers_and_the_evidence_ruler_works() -> None:
    from workbench.chunking import split_rate
    from workbench.corpus import Span
    from workbench.widgets.chunk_preview import chunk_preview_html

    text = ("Customer: sync fails with error 5 since Monday.\n\n"
            "Agent: reset the token under Settings, then sync again.")
    doc = Document("t", text)
    chunks = ConversationChunker(60).chunk(doc)
    html = chunk_preview_html(doc, chunks, label="conversation:size=60")
    assert "1 turns: Customer" in html and "1 turns: Agent" in html
    evidence = Span("t", text.index("reset"), text.index(" then"))
    assert split_rate(chunks, [evidence]) == 0.0
    assert split_rate(chunks, [Span("t", 0, len(text))]) == 1.0


def test_demo_content_types_validate_and_general_splitters_split_their_evidence() -> None:
    from tests.conftest import ROOT
    from workbench.chunking import FixedChunker, chunk_corpus, split_rate
    from workbench.corpus import Corpus, load_folder
    from workbench.golden import GoldenSet

    base = ROOT / "data" / "content_types"
    code = [Document(f.name, f.read_text(encoding="utf-8"), f.name, {"path": f.name})
            for f in sorted((base / "code").iterdir()) if f.suffix in (".py", ".ts")]
    assert [d.id for d in code] == ["billing.py", "seats.ts"]
    sets = {
        "tickets": (load_conversations(base / "tickets" / "tickets.jsonl"),
                    ConversationChunker(300)),
        "glossary": (load_folder(base / "glossary"), GlossaryChunker(300)),
        "code": (Corpus(code), CodeChunker(450)),
    }
    for name, (corpus, chunker) in sets.items():
        golden = GoldenSet.load(base / name / "golden.jsonl").validate(corpus)
        assert len(golden) >= 16, name  # enough questions for an interval that says something
        spans = [e for item in golden.items for e in item.evidence]
        own = split_rate(chunk_corpus(chunker, corpus), spans)
        fixed = split_rate(chunk_corpus(FixedChunker(chunker.size, 50), corpus), spans)
        assert own == 0.0, name
        assert fixed > 0.0, name


def test_preview_widget_offers_the_content_chunkers() -> None:
    from workbench.widgets.chunk_preview import ChunkPreview

    doc = Document("chat", "Customer: sync fails with error 5 since Monday.\n\n"
                           "Agent: reset the token under Settings, then sync again.")
    p = ChunkPreview(doc, kind="conversation", size=60, overlap=0)
    assert p.spec == "conversation:size=60,unit=chars"
    assert "1 turns: Agent" in p.view.value
    p.kind.value = "glossary"
    assert p.spec.startswith("glossary:") and p.chunks
