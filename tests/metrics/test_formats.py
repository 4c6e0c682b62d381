"""Tests for workbench.metrics.trec_files: TREC qrels/run reading, atomic writing, trec_eval
ordering."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import SHARED_DATASETS
from workbench.metrics.trec_files import (
    ranked_lists,
    read_trec_qrels,
    read_trec_run,
    trec_sorted,
    write_trec_qrels,
    write_trec_run,
)

TREC_TESTS = SHARED_DATASETS / "trec_eval_tests"


def test_read_qrels_skips_blank_and_comment_lines(tmp_path: Path) -> None:
    p = tmp_path / "q.txt"
    p.write_text("# header\n\n301 0 CR#93E-1 1\n  # indented comment\n301 0 B 0\n302 0 C 2\n")
    assert read_trec_qrels(p) == {"301": {"CR#93E-1": 1, "B": 0}, "302": {"C": 2}}


def test_malformed_qrels_line_names_file_and_line(tmp_path: Path) -> None:
    p = tmp_path / "bad.qrels"
    p.write_text("1 0 a 1\n# ok\n1 0 b\n")
    with pytest.raises(ValueError, match=r"bad\.qrels:3: expected 4 columns"):
        read_trec_qrels(p)
    p.write_text("1 0 a high\n")
    with pytest.raises(ValueError, match=r"bad\.qrels:1: relevance 'high' is not an integer"):
        read_trec_qrels(p)
    p.write_text("1 0 a 1\n1 0 a 2\n")
    with pytest.raises(ValueError, match=r"bad\.qrels:2: .*judged twice"):
        read_trec_qrels(p)


def test_malformed_run_line_names_file_and_line(tmp_path: Path) -> None:
    p = tmp_path / "bad.run"
    p.write_text("1 Q0 a 1 0.5 tag\n1 Q0 b 2 0.4\n")
    with pytest.raises(ValueError, match=r"bad\.run:2: expected 6 columns"):
        read_trec_run(p)
    p.write_text("1 Q0 a 1 x tag\n")
    with pytest.raises(ValueError, match=r"bad\.run:1: score 'x'"):
        read_trec_run(p)
    p.write_text("1 Q0 a 1 0.5 tag\n1 Q0 a 2 0.4 tag\n")
    with pytest.raises(ValueError, match=r"bad\.run:2: document a appears twice"):
        read_trec_run(p)


def test_run_extra_columns_are_ignored(tmp_path: Path) -> None:
    p = tmp_path / "r.run"
    p.write_text("301\tQ0\tA\t99\t  2.5\tSTANDARD more junk at\n301 Q0 B 1 -1e-3 t\n")
    assert read_trec_run(p) == {"301": {"A": 2.5, "B": -0.001}}


def test_trec_fixture_files_parse() -> None:
    test_dir = TREC_TESTS / "test"
    if not test_dir.exists():
        pytest.skip(f"trec_eval fixtures not found at {test_dir}")
    qrels = read_trec_qrels(test_dir / "qrels.test")
    assert sum(map(len, qrels.values())) == 3681
    assert sum(g >= 1 for q in qrels.values() for g in q.values()) == 561
    run = read_trec_run(test_dir / "results.test")
    assert sorted(run) == ["301", "302", "303"] and all(len(d) == 500 for d in run.values())
    trunc = read_trec_run(test_dir / "results.trunc")
    assert set(trunc) <= {"301", "302", "303"}
    commented = read_trec_qrels(test_dir / "qrels.test.with-comments")
    assert commented["301"]["CR#93E-1860"] == 0


def test_ranked_lists_tie_order_is_score_desc_then_docno_desc() -> None:
    run = {"q": {"b": 1.0, "a": 1.0, "c": 1.0, "z": 0.5, "y": 2.0, "B": 1.0}}
    assert ranked_lists(run) == {"q": ["y", "c", "b", "a", "B", "z"]}
    assert trec_sorted({"doc10": 1.0, "doc9": 1.0}) == ["doc9", "doc10"]  # string order
    assert ranked_lists({"q": ["x", "a"]}) == {"q": ["x", "a"]}


def test_round_trip(tmp_path: Path) -> None:
    run = {"q1": {"d1": 0.1 + 0.2, "d2": -3.5, "d#3": 1e-300}, "q2": {"x": 1.0, "y": 1.0}}
    qrels = {"q1": {"d1": 1, "d2": 0, "d#3": -1}, "q2": {"x": 3}}
    write_trec_run(tmp_path / "r.run", run, tag="bm25")
    write_trec_qrels(tmp_path / "q.qrels", qrels)
    assert read_trec_run(tmp_path / "r.run") == run
    assert read_trec_qrels(tmp_path / "q.qrels") == qrels
    lines = (tmp_path / "r.run").read_text().splitlines()
    assert lines[0] == "q1 Q0 d1 1 0.30000000000000004 bm25"
    assert [ln.split()[2] for ln in lines[3:]] == ["y", "x"]
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".tmp"]  # no temp files


def test_write_list_run_keeps_order(tmp_path: Path) -> None:
    write_trec_run(tmp_path / "r.run", {"q": ["c", "a", "b"]})
    assert ranked_lists(read_trec_run(tmp_path / "r.run")) == {"q": ["c", "a", "b"]}


def test_failed_write_leaves_old_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "r.run"
    target.write_text("old\n")
    with pytest.raises(ValueError, match="whitespace"):
        write_trec_run(target, {"q": {"a b": 1.0}})
    with pytest.raises(ValueError, match="tag"):
        write_trec_run(target, {"q": {"a": 1.0}}, tag="my run")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["r.run"]


TOKENS = st.text(alphabet="abcXYZ019#-_.", min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(TOKENS, st.dictionaries(
    TOKENS, st.floats(allow_nan=False, allow_infinity=False, width=64), max_size=6), max_size=4))
def test_round_trip_property(tmp_path_factory: pytest.TempPathFactory, run: dict) -> None:
    run = {q: d for q, d in run.items() if d and not q.startswith("#")}
    path = tmp_path_factory.mktemp("rt") / "r.run"
    write_trec_run(path, run)
    back = read_trec_run(path)
    assert back == run
    assert ranked_lists(back) == ranked_lists(run)


def _beir_folder(tmp_path):
    import json as _json

    (tmp_path / "qrels").mkdir()
    (tmp_path / "corpus.jsonl").write_text(
        "".join(_json.dumps(r) + "\n" for r in [
            {"_id": "d1", "title": "Refunds", "text": "Refunds take 30 days."},
            {"_id": "d2", "title": "Shipping", "text": "Shipping takes 5 days."}]),
        encoding="utf-8")
    (tmp_path / "queries.jsonl").write_text(
        '{"_id": "q1", "text": "how long for a refund"}\n\n'
        '{"_id": "q2", "text": "unjudged question"}\n', encoding="utf-8")
    (tmp_path / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t0\n", encoding="utf-8")
    return tmp_path


def test_beir_folder_becomes_corpus_and_document_level_golden(tmp_path):
    from workbench.evaluation import Run, evaluate
    from workbench.golden.datasets import load_beir, load_dataset

    corpus, golden = load_beir(_beir_folder(tmp_path))
    assert list(corpus) == ["d1", "d2"] and [i.qid for i in golden] == ["q1"]
    assert golden.doc_qrels() == {"q1": {"d1": 1}}
    assert load_dataset(tmp_path)[1].doc_qrels() == golden.doc_qrels()
    from workbench.chunking import FixedChunker, chunk_corpus

    chunks = chunk_corpus(FixedChunker(size=800, overlap=0), corpus.documents)
    ev = evaluate(Run.from_ranked({"q1": ["d2#0", "d1#0"]}), golden, chunks, metrics=["mrr"],
                  level="document")
    assert ev.summary()["mean"].item() == pytest.approx(0.5)
    # BEIR qrels name documents: at chunk level they match no chunk, so the evaluation
    # switches to document level and says so, instead of scoring every question 0
    with pytest.warns(UserWarning, match="name documents"):
        auto = evaluate(Run.from_ranked({"q1": ["d2#0", "d1#0"]}), golden, chunks,
                        metrics=["mrr"])
    assert list(auto.frame["relevance"]) == ["document>=1"]
    assert auto.summary()["mean"].item() == pytest.approx(0.5)


def test_beir_and_dataset_errors_name_file_and_line(tmp_path):
    from workbench.golden.datasets import load_beir, load_dataset

    folder = _beir_folder(tmp_path)
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "x"}\n{broken\n',
                                          encoding="utf-8")
    with pytest.raises(ValueError, match=r"queries\.jsonl:2: malformed JSON"):
        load_beir(folder)
    with pytest.raises(ValueError, match="BEIR qrels file not found"):
        load_beir(folder, split="dev")
    with pytest.raises(ValueError, match="give --golden"):
        load_dataset(folder / "qrels")


def test_squad_offsets_survive_nfc(tmp_path):
    import json as _json
    import unicodedata

    from workbench.golden.datasets import load_squad

    context = unicodedata.normalize("NFD", "Nhân viên được nghỉ phép 15 ngày mỗi năm.")
    answer = unicodedata.normalize("NFD", "15 ngày")
    data = {"data": [{"title": "Nghỉ phép", "paragraphs": [{"context": context, "qas": [
        {"id": "a", "question": "Bao nhiêu ngày?",
         "answers": [{"text": answer, "answer_start": context.index(answer)}]},
        {"id": "b", "question": "Lương?", "answers": [], "is_impossible": True}]}]}]}
    path = tmp_path / "squad.json"
    path.write_text(_json.dumps(data, ensure_ascii=False), encoding="utf-8")
    corpus, golden = load_squad(path)
    (doc,) = corpus.documents
    ev = golden.get("a").evidence[0]
    assert doc.text[ev.start:ev.end] == "15 ngày" == ev.text
    assert golden.get("a").answer_must_mention == ("15 ngày",)
    assert not golden.get("b").answerable
    golden.validate(corpus)


def test_qrels_in_beir_tsv_form(tmp_path: Path) -> None:
    p = tmp_path / "test.tsv"
    p.write_text("query-id\tcorpus-id\tscore\nq1\tdoc#1\t1.000000\nq1\tdoc 2\t0.000000\n"
                 "q2\tD3\t2\n", encoding="utf-8")
    assert read_trec_qrels(p) == {"q1": {"doc#1": 1, "doc 2": 0}, "q2": {"D3": 2}}
    p.write_text("q1\tdoc#1\t1.000000\n", encoding="utf-8")  # no header
    assert read_trec_qrels(p) == {"q1": {"doc#1": 1}}
    p.write_text("q1 0 d1 2.000000\nq1 0 d2 -1\n", encoding="utf-8")  # TREC, decimal grade
    assert read_trec_qrels(p) == {"q1": {"d1": 2, "d2": -1}}


@pytest.mark.parametrize(("text", "message"), [
    ("query-id\tcorpus-id\tscore\nq1\td1\t0.5\n",
     r"test\.tsv:2: relevance '0\.5' is not an integer"),
    ("query-id\tcorpus-id\tscore\nq1\td1\n", r"test\.tsv:2: expected 3 tab-separated columns"),
    ("q1\td1\t1\nq1\td1\t2\n", r"test\.tsv:2: .*judged twice"),
    ("q1\td1\tnan\n", r"test\.tsv:1: relevance 'nan'"),
])
def test_bad_beir_qrels_name_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    p = tmp_path / "test.tsv"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        read_trec_qrels(p)


def test_beir_accepts_any_document_id_and_decimal_grades(tmp_path):
    import json as _json

    from workbench.chunking import DocumentChunker, chunk_corpus
    from workbench.evaluation import Run, evaluate
    from workbench.golden.datasets import load_beir

    folder = _beir_folder(tmp_path)
    (folder / "corpus.jsonl").write_text("".join(_json.dumps(r) + "\n" for r in [
        {"_id": "d#1", "title": "Refunds", "text": "Refunds take 30 days."},
        {"_id": "d#1#0", "title": "Shipping", "text": "Shipping takes 5 days."}]),
        encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td#1#0\t1.000000\nq1\td#1\t0.000000\n", encoding="utf-8")
    corpus, golden = load_beir(folder)
    assert list(corpus) == ["d#1", "d#1#0"]
    assert golden.get("q1").relevant_doc_ids == ("d#1#0",)
    chunks = chunk_corpus(DocumentChunker(title=True), corpus)
    assert [(c.id, c.doc_id) for c in chunks] == [("d#1#0", "d#1"), ("d#1#0#0", "d#1#0")]
    assert chunks[0].embed_text == "Refunds Refunds take 30 days."
    # d#1's chunk is called "d#1#0", like the relevant document: the chunk's own doc_id
    # decides, so ranking it first is a miss at rank 1
    ev = evaluate(Run.from_ranked({"q1": ["d#1#0", "d#1#0#0"]}), golden, chunks,
                  metrics=["mrr"], level="document")
    assert ev.summary()["mean"].item() == pytest.approx(0.5)


def test_beir_grade_zero_on_the_first_line_is_not_a_header(tmp_path):
    from workbench.golden.datasets import load_beir

    folder = _beir_folder(tmp_path)
    (folder / "qrels" / "test.tsv").write_text("q1\td1\t1.000000\nq1\td2\t0\n",
                                               encoding="utf-8")
    assert load_beir(folder)[1].get("q1").relevant_doc_ids == ("d1",)


@pytest.mark.parametrize(("text", "message"), [
    ("q1\td1\t1\nq1\td1\t2\n", r"test\.tsv:2: .*judged twice with different grades"),
    ("query-id\tcorpus-id\tscore\nq1\td1\n", r"test\.tsv:2: expected 3 tab-separated columns"),
    ("q1\t\t1\n", r"test\.tsv:1: expected 3 tab-separated columns"),
])
def test_load_beir_and_read_trec_qrels_read_beir_qrels_alike(tmp_path, text, message):
    """One BEIR qrels reader (golden.datasets.read_beir_qrels) behind load_beir and
    read_trec_qrels: cells stripped, a conflicting second grade refused with file:line."""
    from workbench.golden.datasets import load_beir, read_beir_qrels

    folder = _beir_folder(tmp_path)
    qrels = folder / "qrels" / "test.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\r\nq1 \t d1\t2 \r\nq1\td2\t0\r\n",
                     encoding="utf-8")
    assert read_beir_qrels(qrels) == read_trec_qrels(qrels) == {"q1": {"d1": 2, "d2": 0}}
    assert load_beir(folder)[1].get("q1").relevant_doc_ids == ("d1",)
    qrels.write_text(text, encoding="utf-8")
    for read in (read_trec_qrels, lambda p: load_beir(folder)):
        with pytest.raises(ValueError, match=message):
            read(qrels)
