"""Run files: logged production results read (three hit shapes, file:line errors) and our
runs written (JSONL, TREC), round trips, and ``workbench eval --run / --export-run``."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import HANDBOOK
from workbench.chunking import FixedChunker, chunk_corpus
from workbench.cli import main
from workbench.corpus import Document, load_folder
from workbench.evaluation import Run, evaluate, read_run, write_run
from workbench.golden import load_dataset
from workbench.metrics import read_trec_run
from workbench.retrieval import BM25Retriever, Hit

DOCS = [Document("leave", "Annual leave is 25 days. Carry over up to 5 days. Carry over up "
                          "to 5 days."),
        Document("refunds", "Refunds are paid within 30 days of the request.")]


def write(tmp_path, *lines, name="run.jsonl"):
    path = tmp_path / name
    path.write_text("".join((ln if isinstance(ln, str) else json.dumps(ln)) + "\n"
                            for ln in lines), encoding="utf-8")
    return path


def test_the_three_hit_shapes_become_ranked_hits_with_their_chunks(tmp_path):
    path = write(tmp_path, {"qid": "q1", "system": "prod", "hits": [
        {"doc_id": "refunds", "text": "Refunds are paid within 30 days", "score": 0.9},
        {"doc_id": "leave", "start": 0, "end": 24, "score": 0.8},
        {"doc_id": "leave", "start": 0, "end": 24, "score": 0.8},
    ]}, {"qid": "q2", "hits": []})
    run = read_run(path, DOCS)
    assert run.system == "prod"
    hits = run.hits["q1"]
    assert [(h.chunk_id, h.rank) for h in hits] == [("refunds@0-31", 1), ("leave@0-24", 2),
                                                   ("leave@0-24", 3)]  # duplicates are ranks
    assert hits[0].chunk.text == "Refunds are paid within 30 days"
    assert run.hits["q2"] == ()


def test_chunk_id_hits_are_resolved_in_the_chunks_given(tmp_path):
    chunks = chunk_corpus(FixedChunker(size=20, overlap=0), DOCS)
    path = write(tmp_path, {"qid": "q1", "hits": [{"chunk_id": chunks[1].id}]})
    (hit,) = read_run(path, chunks=chunks).hits["q1"]
    assert hit.chunk is chunks[1]
    bad = write(tmp_path, {"qid": "q1", "hits": [{"chunk_id": "leave#99"}]}, name="bad.jsonl")
    with pytest.raises(ValueError, match=r"bad.jsonl:1, hit 1: chunk id 'leave#99' is not "):
        read_run(bad, chunks=chunks)


@pytest.mark.parametrize("line, message", [
    ("{not json", r"run.jsonl:2: malformed JSON"),
    ('["q1"]', r"run.jsonl:2: each line must be a JSON object"),
    ({"hits": []}, r"run.jsonl:2: field 'qid'"),
    ({"qid": " q1", "hits": []}, r"run.jsonl:2: field 'qid'"),
    ({"qid": "q9", "hits": {"doc_id": "x"}}, r"run.jsonl:2: field 'hits' must be a list"),
    ({"qid": "q9", "hit": []}, r"run.jsonl:2: unknown field\(s\) \['hit'\]"),
    ({"qid": "q9", "hits": ["leave#0"]}, r"run.jsonl:2: hit 1 must be an object"),
    ({"qid": "q9", "hits": [{"doc": "leave", "text": "x"}]}, r"run.jsonl:2: hit 1 has unknown"),
    ({"qid": "q0", "hits": []}, r"run.jsonl:2: qid 'q0' is already on .*run.jsonl:1"),
    ({"qid": "q9", "hits": [{"doc_id": "leave", "text": "Sick leave"}]},
     r"run.jsonl:2, hit 1: text 'Sick leave' not found in document 'leave'"),
    ({"qid": "q9", "hits": [{"doc_id": "leave", "text": "Carry over up to 5 days."}]},
     r"run.jsonl:2, hit 1: text .* occurs 2 times"),
    ({"qid": "q9", "hits": [{"doc_id": "nope", "start": 0, "end": 3}]},
     r"run.jsonl:2, hit 1: document 'nope' is not in the corpus"),
    ({"qid": "q9", "hits": [{"doc_id": "leave", "start": 0, "end": 999}]},
     r"run.jsonl:2, hit 1: offsets \[0, 999\)"),
    ({"qid": "q9", "hits": [{"doc_id": "leave", "start": 0, "end": 5, "score": 0.1},
                            {"doc_id": "leave", "start": 6, "end": 9, "score": 0.9}]},
     r"run.jsonl:2: the scores get better down the list .* scores='distance'"),
    ({"qid": "q9", "hits": [{"doc_id": "leave", "start": 0, "end": 5, "score": 0.1},
                            {"doc_id": "leave", "start": 6, "end": 9}]},
     r"run.jsonl:2: the hits come with and without scores"),
])
def test_malformed_lines_are_errors_naming_file_and_line(tmp_path, line, message):
    path = write(tmp_path, {"qid": "q0", "hits": []}, line)
    with pytest.raises(ValueError, match=message):
        read_run(path, DOCS)


def test_empty_files_and_folders_are_refused(tmp_path):
    with pytest.raises(ValueError, match="no lines"):
        read_run(write(tmp_path, ""), DOCS)
    with pytest.raises(ValueError, match="is a folder"):
        read_run(tmp_path, DOCS)


def test_distances_declared_for_a_logged_run(tmp_path):
    path = write(tmp_path, {"qid": "q1", "hits": [
        {"doc_id": "leave", "start": 0, "end": 5, "score": 0.1},
        {"doc_id": "leave", "start": 6, "end": 9, "score": 0.9}]})
    hits = read_run(path, DOCS, scores="distance").hits["q1"]
    assert [h.details["distance"] for h in hits] == [0.1, 0.9]


@pytest.fixture(scope="module")
def bm25(handbook):
    corpus, golden = handbook
    chunks = chunk_corpus(FixedChunker(size=800, overlap=100), corpus.documents)
    return corpus, golden, chunks, evaluate(BM25Retriever(chunks), golden, chunks, k=5,
                                            system="bm25")


def test_our_run_round_trips_through_jsonl_and_trec(tmp_path, bm25):
    corpus, golden, chunks, ev = bm25
    run = ev.runs["bm25"]
    write_run(tmp_path / "run.jsonl", run, chunks=chunks)
    back = read_run(tmp_path / "run.jsonl", corpus)  # offsets alone: no chunking needed
    assert back.ranked() == run.ranked()
    assert {q: [h.score for h in hs] for q, hs in back.hits.items()} == {
        q: [h.score for h in hs] for q, hs in run.hits.items()}
    again = evaluate(back, golden, chunks, k=5)
    assert again.to_frame()["value"].tolist() == ev.to_frame()["value"].tolist()
    write_run(tmp_path / "run.trec", run, chunks=chunks)
    trec = read_trec_run(tmp_path / "run.trec")
    assert {q: list(d) for q, d in trec.items()} == {q: ids[:len(trec[q])]
                                                     for q, ids in run.ranked().items()}


def test_a_run_with_a_repeated_chunk_cannot_be_a_trec_file(tmp_path):
    path = write(tmp_path, {"qid": "q1", "hits": [{"doc_id": "leave", "start": 0, "end": 5}] * 2})
    with pytest.raises(ValueError, match=r"cannot hold a chunk twice; export it as \.jsonl"):
        write_run(tmp_path / "out.trec", read_run(path, DOCS))
    write_run(tmp_path / "out.jsonl", read_run(path, DOCS))
    assert len(read_run(tmp_path / "out.jsonl", DOCS).hits["q1"]) == 2


def cli_json(capsys, *args):
    assert main(["eval", "--corpus", str(HANDBOOK / "docs"), "--golden",
                 str(HANDBOOK / "golden.jsonl"), *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_eval_run_scores_a_logged_run_as_the_retriever_it_came_from(tmp_path, capsys):
    live = cli_json(capsys, "--export-run", str(tmp_path / "bm25.jsonl"))
    replayed = cli_json(capsys, "--run", str(tmp_path / "bm25.jsonl"))
    live["metrics"].pop("ndcg@5")  # needs the whole chunking: not scored from a log
    assert replayed["metrics"] == live["metrics"] and replayed["system"] == "bm25"
    # the same run logged as texts, as a production system logs it
    rows = [json.loads(line) for line in (tmp_path / "bm25.jsonl").read_text().splitlines()]
    corpus = load_folder(HANDBOOK / "docs")
    for row in rows:
        row["hits"] = [{"doc_id": h["doc_id"], "score": h["score"],
                        "text": corpus[h["doc_id"]].text[h["start"]:h["end"]]}
                       for h in row["hits"]]
    texts = write(tmp_path, *rows, name="texts.jsonl")
    assert cli_json(capsys, "--run", str(texts))["metrics"] == live["metrics"]


def test_eval_run_leaves_out_metrics_that_need_the_whole_chunking(tmp_path, capsys):
    live = cli_json(capsys, "--export-run", str(tmp_path / "bm25.jsonl"))
    replayed = cli_json(capsys, "--run", str(tmp_path / "bm25.jsonl"))
    assert "ndcg@5" in live["metrics"] and "ndcg@5" not in replayed["metrics"]
    code = main(["eval", "--corpus", str(HANDBOOK / "docs"), "--golden",
                 str(HANDBOOK / "golden.jsonl"), "--run", str(tmp_path / "bm25.jsonl"),
                 "-m", "ndcg@5"])
    assert code == 2 and "cannot be scored from a run log" in capsys.readouterr().err


def test_eval_run_asks_the_registry_which_metrics_need_the_whole_chunking(tmp_path, capsys,
                                                                          monkeypatch):
    """One rule decides (metrics/registry.py needs_chunking): a kind marked there is refused
    for a run log, whatever its name."""
    import dataclasses

    from workbench.metrics.registry import KINDS

    cli_json(capsys, "--export-run", str(tmp_path / "bm25.jsonl"))
    monkeypatch.setitem(KINDS, "ap", dataclasses.replace(KINDS["ap"], needs_chunking=True))
    code = main(["eval", "--corpus", str(HANDBOOK / "docs"), "--golden",
                 str(HANDBOOK / "golden.jsonl"), "--run", str(tmp_path / "bm25.jsonl"),
                 "-m", "map"])
    assert code == 2 and "map cannot be scored from a run log" in capsys.readouterr().err


def test_eval_run_maps_offsets_into_the_raw_files(tmp_path, capsys):
    live = cli_json(capsys, "--export-run", str(tmp_path / "bm25.jsonl"))
    rows = [json.loads(line) for line in (tmp_path / "bm25.jsonl").read_text().splitlines()]
    for row in rows:
        del row["offsets"]  # the export declares its own (body) offsets; these become raw
        for h in row["hits"]:
            raw = (HANDBOOK / "docs" / f"{h['doc_id']}.md").read_text(encoding="utf-8")
            header = raw.index("\n---\n", 3) + 5
            h.update(start=h["start"] + header, end=h["end"] + header)
            del h["chunk_id"]
    path = write(tmp_path, *rows, name="raw.jsonl")
    live["metrics"].pop("ndcg@5")
    assert cli_json(capsys, "--run", str(path), "--run-offsets", "raw")["metrics"] == \
        live["metrics"]


def test_eval_run_errors_are_one_line_with_exit_2(tmp_path, capsys):
    path = write(tmp_path, {"qid": "q001", "hits": [{"doc_id": "policy-refunds",
                                                      "text": "not in the handbook"}]})
    code = main(["eval", "--corpus", str(HANDBOOK / "docs"), "--golden",
                 str(HANDBOOK / "golden.jsonl"), "--run", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert f"{path}:1, hit 1: text 'not in the handbook' not found" in err


def beir_from_handbook(folder, handbook, docno=lambda d: d):
    """The handbook as a BEIR folder: its documents, and graded qrels from the evidence
    (the first document of a question graded 2, the others 1), as the promises check does."""
    corpus, golden = handbook
    (folder / "qrels").mkdir(parents=True)
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as f:
        for doc in corpus.documents:
            f.write(json.dumps({"_id": docno(doc.id), "title": doc.title, "text": doc.text},
                               ensure_ascii=False) + "\n")
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as fq, \
            open(folder / "qrels" / "test.tsv", "w", encoding="utf-8") as fr:
        fr.write("query-id\tcorpus-id\tscore\n")
        for item in golden.items:
            ids = sorted({e.doc_id for e in item.evidence})
            if ids:
                fq.write(json.dumps({"_id": item.qid, "text": item.question}) + "\n")
                for n, i in enumerate(ids):
                    fr.write(f"{item.qid}\t{docno(i)}\t{2 if n == 0 else 1}\n")
    return folder


def trec_scores(capsys, qrels, run, *measures):
    assert main(["trec", str(qrels), str(run), *[a for m in measures for a in ("-m", m)]]) == 0
    captured = capsys.readouterr()
    return {ln.split()[0]: float(ln.split()[2]) for ln in captured.out.splitlines()
            if ln.split()[0] != "num_q"}, captured.err


def test_document_level_eval_exports_what_it_scored_and_trec_agrees(tmp_path, capsys, handbook):
    beir = beir_from_handbook(tmp_path / "beir", handbook)
    assert main(["eval", "--corpus", str(beir), "--level", "document", "-k", "10", "-m",
                 "ndcg@10", "-m", "recall@10", "-m", "mrr@10", "--json", "--export-run",
                 str(tmp_path / "run.trec")]) == 0
    scored = json.loads(capsys.readouterr().out)["metrics"]
    run = read_trec_run(tmp_path / "run.trec")
    docs = {d.id for d in handbook[0].documents}
    assert {d for ranked in run.values() for d in ranked} <= docs  # document ids, no "#0"
    trec, warned = trec_scores(capsys, beir / "qrels" / "test.tsv", tmp_path / "run.trec",
                               "ndcg_cut_10", "recall_10", "recip_rank")
    assert not warned
    assert trec["ndcg_cut_10"] == pytest.approx(scored["ndcg@10"], abs=1e-4)
    assert trec["recall_10"] == pytest.approx(scored["recall@10"], abs=1e-4)
    assert 0 < trec["ndcg_cut_10"] < 1


def test_eval_and_trec_state_the_same_n_and_means_at_every_threshold(tmp_path, capsys,
                                                                     handbook):
    """Graded qrels (grades 0-3) and one run: at every threshold, eval's n and means equal
    those trec gives for the topics with a relevant document (its stdout when every topic
    has one, else its note), and trec's num_q adds the topics eval excluded and counted."""
    import random
    import re

    beir = beir_from_handbook(tmp_path / "beir", handbook)
    rng = random.Random(35)
    rows = (beir / "qrels" / "test.tsv").read_text().splitlines()
    docs = sorted(d.id for d in handbook[0].documents)
    grades: dict[tuple[str, str], int] = {}
    for row in rows[1:]:
        qid, doc, _ = row.split("\t")
        grades[qid, doc] = rng.randint(1, 3)
        grades.setdefault((qid, rng.choice(docs)), 0)  # judged not relevant
    (beir / "qrels" / "test.tsv").write_text("\n".join(
        [rows[0], *(f"{q}\t{d}\t{g}" for (q, d), g in grades.items())]) + "\n")
    pairs = {"ndcg@10": "ndcg_cut_10", "recall@10": "recall_10", "mrr@10": "recip_rank",
             "precision@5": "P_5"}
    noted = 0
    for threshold in (1, 2, 3):
        assert main(["eval", "--corpus", str(beir), "--level", "document", "-k", "10",
                     "--relevance-threshold", str(threshold), "--json", "--export-run",
                     str(tmp_path / "run.trec"), *[a for m in pairs for a in ("-m", m)]]) == 0
        scored = json.loads(capsys.readouterr().out)
        assert main(["trec", str(beir / "qrels" / "test.tsv"), str(tmp_path / "run.trec"),
                     "--threshold", str(threshold), *[a for m in pairs.values()
                                                      for a in ("-m", m)]]) == 0
        out, err = capsys.readouterr()
        lines = dict(ln.split()[::2] for ln in out.splitlines())
        excluded = scored["excluded"]["no_relevant_at_threshold"]
        assert int(lines["num_q"]) == scored["n"] + excluded
        if excluded:
            noted += 1
            note = re.search(r"(\d+) of (\d+) topics .* excludes them: n=(\d+): (.*)", err)
            assert note is not None, err
            assert [int(note[1]), int(note[3])] == [excluded, scored["n"]]
            lines = dict(part.split() for part in note[4].split(", "))
        else:
            assert "no relevant document" not in err
        for ours, theirs in pairs.items():
            assert float(lines[theirs]) == pytest.approx(scored["metrics"][ours], abs=1e-4), \
                (threshold, ours)
    assert noted == 2  # thresholds 2 and 3 leave topics without a relevant document


def test_trec_warns_when_no_retrieved_id_is_judged(tmp_path, capsys, handbook):
    beir = beir_from_handbook(tmp_path / "beir", handbook)
    assert main(["eval", "--corpus", str(beir), "--level", "document", "-k", "5", "--json",
                 "--export-run", str(tmp_path / "run.jsonl")]) == 0
    capsys.readouterr()
    run = read_run(tmp_path / "run.jsonl", load_dataset(str(beir), None)[0])
    write_run(tmp_path / "chunks.trec", run)  # chunk ids, as the export once wrote them
    trec, warned = trec_scores(capsys, beir / "qrels" / "test.tsv", tmp_path / "chunks.trec",
                               "ndcg_cut_10")
    assert trec["ndcg_cut_10"] == 0.0
    assert "none of the" in warned and "judged" in warned and "document ids" in warned


def test_an_id_the_trec_export_refuses_keeps_the_json_output(tmp_path, capsys, handbook):
    beir = beir_from_handbook(tmp_path / "beir", handbook, docno=lambda d: d.replace("-", " "))
    code = main(["eval", "--corpus", str(beir), "--level", "document", "-k", "5", "--json",
                 "--export-run", str(tmp_path / "run.trec")])
    captured = capsys.readouterr()
    assert code == 2 and "error" in captured.err and "docno" in captured.err
    assert json.loads(captured.out)["n"] > 0  # the scores were printed before the refusal
    assert not (tmp_path / "run.trec").exists()


@given(st.lists(st.sampled_from([0.5, 1.0, 2.0]), min_size=1, max_size=8))
def test_a_trec_export_reads_back_in_the_ranking_that_was_scored(scores):
    """Tied scores: trec_eval would reorder by docno; the export keeps the scored ranking."""
    import tempfile
    from pathlib import Path

    scores = sorted(scores, reverse=True)
    hits = tuple(Hit(f"d{i}", s, i + 1, "x") for i, s in enumerate(scores))
    run = Run("x", {"q": hits})
    with tempfile.TemporaryDirectory() as d:
        write_run(Path(d) / "r.trec", run)
        assert list(read_trec_run(Path(d) / "r.trec")["q"]) == [h.chunk_id for h in hits]


def test_a_chunk_id_log_of_a_production_chunking_is_scored_with_its_chunks(tmp_path, capsys,
                                                                          handbook):
    """--chunks FILE: the production chunking (here 300-character windows with uuid-like ids,
    not the CLI's default) resolves a {"chunk_id"} log, which scores as the retriever did."""
    corpus, golden = handbook
    ours = chunk_corpus(FixedChunker(size=300, overlap=50), corpus.documents)
    ids = {c.id: f"prod-{n:05d}" for n, c in enumerate(ours)}
    with open(tmp_path / "chunks.jsonl", "w", encoding="utf-8") as f:
        for n, c in enumerate(ours):  # offsets for half, text for the other half
            where = {"start": c.start, "end": c.end} if n % 2 else {"text": c.text}
            f.write(json.dumps({"chunk_id": ids[c.id], "doc_id": c.doc_id, **where}) + "\n")
    live = evaluate(BM25Retriever(ours), golden, ours, k=5, system="bm25")
    with open(tmp_path / "log.jsonl", "w", encoding="utf-8") as f:
        for qid, hs in live.runs["bm25"].hits.items():
            f.write(json.dumps({"qid": qid, "hits": [{"chunk_id": ids[h.chunk_id]}
                                                     for h in hs]}) + "\n")
    out = cli_json(capsys, "--run", str(tmp_path / "log.jsonl"), "--chunks",
                   str(tmp_path / "chunks.jsonl"), "-m", "recall@5", "-m", "mrr@5")
    means = live.summary().set_index("metric")["mean"]
    assert out["metrics"]["recall@5"] == pytest.approx(means["recall@5"], abs=1e-6)
    assert out["metrics"]["mrr@5"] == pytest.approx(means["mrr@5"], abs=1e-6)
    (tmp_path / "bad.jsonl").write_text('{"chunk_id": "x", "doc_id": "nope", "text": "a"}\n')
    assert main(["eval", "--corpus", str(HANDBOOK / "docs"), "--golden",
                 str(HANDBOOK / "golden.jsonl"), "--run", str(tmp_path / "log.jsonl"),
                 "--chunks", str(tmp_path / "bad.jsonl")]) == 2
    assert "bad.jsonl:1" in capsys.readouterr().err
