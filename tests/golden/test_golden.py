import json

import pytest

from workbench.corpus import Chunk, Corpus, Document
from workbench.golden import (
    Evidence,
    GoldenItem,
    GoldenSet,
    GoldenSetError,
    add_case,
)
from workbench.metrics import Relevance

TEXT = "Refunds: you have 30 days to ask. Business customers get 60 days. Shipping is free."
CORPUS = Corpus([Document("refunds", TEXT, "Refunds")])


def write(tmp_path, rows, name="golden.jsonl"):
    path = tmp_path / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows),
                    encoding="utf-8")
    return path


def ev(quote, doc="refunds"):
    start = TEXT.index(quote)
    return {"doc_id": doc, "start": start, "end": start + len(quote), "text": quote}


def test_seed_shape_loads_unchanged(tmp_path):
    row = {"qid": "q001", "question": "how long do i have to send something back",
           "relevant_chunk_ids": ["policy-refunds#3"], "answer_must_mention": ["30 days"]}
    gs = GoldenSet.load(write(tmp_path, [row]))
    item = gs[0]
    assert item.relevant_chunk_ids == ("policy-refunds#3",)
    assert item.answerable and item.category == "uncategorised" and item.source == "owner"
    assert item.to_json()["relevant_chunk_ids"] == ["policy-refunds#3"]


def test_every_bad_input_reported_with_line_and_field(tmp_path):
    rows = [
        {"qid": "q1", "question": "ok", "relevant_chunk_ids": ["refunds#0"]},
        "{bad json",
        {"qid": "", "question": "x", "relevant_chunk_ids": ["refunds#0"]},
        {"qid": "q3", "question": "   ", "relevant_chunk_ids": ["refunds#0"]},
        {"qid": "q4", "question": "no labels", "relevant_chunk_ids": []},
        {"qid": "q1", "question": "dupe", "relevant_chunk_ids": ["refunds#0"]},
        {"qid": "q6", "question": "types", "relevant_chunk_ids": "refunds#0"},
        {"qid": "q7", "question": "src", "relevant_chunk_ids": ["refunds#0"], "source": "llm"},
        {"qid": "q8", "question": "ev", "evidence": [{"doc_id": "refunds", "start": 9, "end": 3}]},
        {"qid": "q9", "question": "both", "answerable": False, "relevant_chunk_ids": ["x#0"]},
        ["not", "an", "object"],
    ]
    with pytest.raises(GoldenSetError) as info:
        GoldenSet.load(write(tmp_path, rows))
    text = str(info.value)
    expected = [
        ("golden.jsonl:2", "malformed JSON"),
        ("golden.jsonl:3: field 'qid'", "missing or empty"),
        ("golden.jsonl:4: field 'question'", "missing or empty"),
        ("golden.jsonl:5: field 'relevant_chunk_ids'", "empty on an answerable item"),
        ("golden.jsonl:6: field 'qid'", "duplicate qid 'q1'"),
        ("golden.jsonl:7: field 'relevant_chunk_ids'", "list of strings"),
        ("golden.jsonl:8: field 'source'", "not one of"),
        ("golden.jsonl:9: field 'evidence[0]'", "empty or negative"),
        ("golden.jsonl:10: field 'answerable'", "pick one"),
        ("golden.jsonl:11", "JSON object"),
    ]
    for where, what in expected:
        assert any(where in line and what in line for line in text.splitlines()), (where, text)
    assert len(info.value.problems) == len(expected)


def test_reference_problems_listed_all_at_once(tmp_path):
    rows = [
        {"qid": "a", "question": "q", "relevant_chunk_ids": ["nope#1", "gone#2"]},
        {"qid": "b", "question": "q", "evidence": [ev("30 days")]},
        {"qid": "c", "question": "q", "evidence": [{"doc_id": "refunds", "start": 10,
                                                    "end": 500, "text": "x"}]},
        {"qid": "d", "question": "q", "evidence": [{**ev("60 days"), "text": "90 days"}]},
        {"qid": "e", "question": "q", "evidence": [{**ev("60 days"), "doc_id": "missing"}]},
    ]
    gs = GoldenSet.load(write(tmp_path, rows))
    chunks = [Chunk("refunds#0", "refunds", 0, 10, text=TEXT[:10])]
    problems = [str(p) for p in gs.problems(CORPUS, chunks)]
    assert len(problems) == 5, problems
    assert "golden.jsonl:1" in problems[0] and "'nope#1'" in problems[0]
    assert "not in the chunked corpus" in problems[0] and "'gone#2'" in problems[1]
    assert "golden.jsonl:3" in problems[2] and "outside" in problems[2]
    assert "label drift" in problems[3] and "gone from the document" in problems[3]
    assert "'missing' is not in the corpus" in problems[4]
    with pytest.raises(GoldenSetError, match="5 problem"):
        gs.validate(CORPUS, chunks)
    # a chunk id names no document without its chunk: without chunks, labels go unchecked
    assert len(gs.problems(CORPUS)) == 3


def test_chunk_labels_take_their_document_from_the_chunk_never_from_the_id():
    gs = GoldenSet([GoldenItem("a", "q", relevant_chunk_ids=("7f3e-uuid",))])
    chunks = [Chunk("7f3e-uuid", "refunds", 0, 10, text=TEXT[:10])]
    assert gs.doc_qrels(chunks) == {"a": {"refunds": 1}}
    assert gs[0].doc_ids(chunks) == ("refunds",)
    with pytest.raises(ValueError, match="not among the chunks given"):
        gs.doc_qrels()
    stray = [Chunk("7f3e-uuid", "gone", 0, 10, text=TEXT[:10])]
    assert "document 'gone' is not in the corpus" in str(gs.problems(CORPUS, stray)[0])


def test_drift_hint_when_quote_moved():
    edited = Corpus([Document("refunds", "NEW PREAMBLE. " + TEXT)])
    gs = GoldenSet([GoldenItem("q", "q", evidence=(Evidence(**ev("60 days")),))])
    (problem,) = gs.problems(edited)
    assert "now starts at" in str(problem)


def test_qrels_are_chunk_id_labels_only_and_doc_level():
    items = [GoldenItem("a", "q", evidence=(Evidence(**ev("30 days")),)),
             GoldenItem("b", "q", relevant_chunk_ids=("refunds#1",), relevance={"refunds#2": 3}),
             GoldenItem("c", "q", answerable=False)]
    gs = GoldenSet(items)
    chunks = [Chunk("refunds#0", "refunds", 0, 40, text=TEXT[:40]),
              Chunk("refunds#1", "refunds", 40, len(TEXT), text=TEXT[40:]),
              Chunk("refunds#2", "refunds", 20, 60, text=TEXT[20:60])]
    # evidence items have no chunk grades: their relevance comes from the spans
    assert gs.qrels() == {"b": {"refunds#1": 1, "refunds#2": 3}}
    # chunk-id labels take their document from the chunk
    assert gs.doc_qrels(chunks) == {"a": {"refunds": 1}, "b": {"refunds": 1}}


def test_anchor_makes_labels_survive_rechunking():
    old = [Chunk("refunds#0", "refunds", 0, 33, text=TEXT[:33]),
           Chunk("refunds#1", "refunds", 33, len(TEXT), text=TEXT[33:])]
    gs = GoldenSet([GoldenItem("a", "q", relevant_chunk_ids=("refunds#1",))]).anchor(old)
    assert gs[0].evidence[0].text == TEXT[33:]
    new = [Chunk(f"refunds#{i}", "refunds", s, min(s + 20, len(TEXT)), text=TEXT[s:s + 20])
           for i, s in enumerate(range(0, len(TEXT), 20))]
    judged = Relevance(gs, new)
    assert judged.kind("a") == "evidence"
    gold = judged.gold("a")  # the chunks of the new chunking that hold the old chunk's text
    assert gold and all(new[int(c.split("#")[1])].end > 33 for c in gold)
    assert judged.found_within("a", gold, len(gold))
    with pytest.raises(GoldenSetError, match="not in the given chunks"):
        GoldenSet([GoldenItem("a", "q", relevant_chunk_ids=("refunds#9",))]).anchor(old)


def test_save_roundtrip_atomic_and_add_case(tmp_path):
    path = write(tmp_path, [{"qid": "q1", "question": "Hỏi gì?", "evidence": [ev("30 days")],
                             "category": "vietnamese", "note": "kept"}])
    gs = GoldenSet.load(path)
    gs.save(path)
    again = GoldenSet.load(path)
    assert again[0] == gs[0] and again[0].extra["note"] == "kept"
    assert "Hỏi gì?" in path.read_text(encoding="utf-8")
    add_case(path, {"qid": "bug-1", "question": "is it 30 or 14 days",
                    "evidence": [ev("60 days")], "source": "real"}, corpus=CORPUS)
    assert [i.qid for i in GoldenSet.load(path)] == ["q1", "bug-1"]
    before = path.read_bytes()
    with pytest.raises(ValueError, match="already exists"):
        add_case(path, {"qid": "bug-1", "question": "again", "evidence": [ev("60 days")]})
    with pytest.raises(GoldenSetError, match="label drift"):
        add_case(path, {"qid": "bug-2", "question": "x",
                        "evidence": [{**ev("60 days"), "text": "61 days"}]}, corpus=CORPUS)
    assert path.read_bytes() == before
    # no temporary file is left; the lock file (empty, kept) sits beside the golden set
    assert sorted(p.name for p in tmp_path.iterdir()) == [".golden.jsonl.lock", "golden.jsonl"]
    assert path.stat().st_mode & 0o077 != 0  # not left private (0600) by the temp file


def test_add_case_appends_without_touching_the_other_lines(tmp_path):
    path = tmp_path / "golden.jsonl"
    odd = ('{"question": "first?",   "qid": "q1", "relevant_chunk_ids": ["refunds#0"]}\n'
           '\n{"answer_must_mention": [], "qid": "q2", "question": "x", '
           '"relevant_chunk_ids": ["refunds#0"], "note": "\u00e9t\u00e9"}')  # no final newline
    path.write_bytes(b"\xef\xbb\xbf" + odd.encode("utf-8"))
    before = path.read_bytes()
    grown = add_case(path, {"qid": "q3", "question": "new?", "relevant_chunk_ids": ["r#1"]})
    after = path.read_bytes()
    assert after.startswith(before) and after.count(b"\n") == before.count(b"\n") + 2
    assert [i.qid for i in GoldenSet.load(path)] == ["q1", "q2", "q3"]
    assert grown._where("q3").endswith("golden.jsonl:4")


def test_qids_and_paths_that_would_lose_a_case_are_refused(tmp_path):
    path = write(tmp_path, [{"qid": "q1", "question": "x", "relevant_chunk_ids": ["r#0"]}])
    before = path.read_bytes()
    with pytest.raises(GoldenSetError, match="surrounding whitespace"):
        add_case(path, {"qid": "q1 ", "question": "y", "relevant_chunk_ids": ["r#0"]})
    with pytest.raises(ValueError, match="already exists"):
        add_case(path, GoldenItem("q1", "z", relevant_chunk_ids=("r#0",)))
    with pytest.raises(ValueError, match="not found"):
        add_case(tmp_path / "golden.jsnol", {"qid": "q2", "question": "y",
                                             "relevant_chunk_ids": ["r#0"]})
    with pytest.raises(ValueError, match="does not exist"):
        GoldenSet.load(path).save(tmp_path / "typo" / "golden.jsonl")
    with pytest.raises(ValueError, match="give a path"):
        GoldenSet([GoldenItem("a", "q", relevant_chunk_ids=("r#0",))]).save()
    with pytest.raises(GoldenSetError, match="lone surrogate"):
        add_case(path, {"qid": "q9", "question": "bad \ud800", "relevant_chunk_ids": ["r#0"]})
    assert path.read_bytes() == before
    assert not (tmp_path / "typo").exists() and not (tmp_path / "golden.jsnol").exists()
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".tmp"]


def test_a_golden_set_is_immutable_and_keeps_its_lines(tmp_path):
    path = write(tmp_path, [{"qid": "q1", "question": "a", "evidence": [ev("30 days")]},
                            {"qid": "q2", "question": "b", "evidence": [ev("60 days")]}])
    gs = GoldenSet.load(path)
    assert isinstance(gs.items, tuple) and gs[1:] == (gs[1],) and gs.lines == {"q1": 1, "q2": 2}
    with pytest.raises(AttributeError):
        gs.items = ()  # type: ignore[misc]
    with pytest.raises(TypeError):
        gs.lines["q3"] = 3  # type: ignore[index]
    # the lines travel with the set: an anchored copy and add_case still name file:line
    assert gs.anchor([]).lines == gs.lines
    with pytest.raises(ValueError, match=r"already exists \(line 2\)"):
        add_case(path, {"qid": "q2", "question": "again", "evidence": [ev("60 days")]})
    dupe = GoldenItem("q1", "x", evidence=(Evidence("refunds", 0, 3, TEXT[:3]),))
    with pytest.raises(GoldenSetError, match=r"golden\.jsonl:1"):
        GoldenSet([gs[0], dupe], path, {"q1": 1})
    updated = add_case(path, {"qid": "q3", "question": "c", "evidence": [ev("Shipping")]})
    assert updated.lines == {"q1": 1, "q2": 2, "q3": 3} and len(updated) == 3
