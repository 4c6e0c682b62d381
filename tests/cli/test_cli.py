import json
import subprocess
import sys

import pytest

from tests.conftest import HANDBOOK_ARGS
from workbench.cli import main


@pytest.fixture(autouse=True)
def _repo_root(monkeypatch):
    from tests.conftest import ROOT

    monkeypatch.chdir(ROOT)


def test_trec_prints_trec_eval_lines(datasets, capsys):
    test = datasets / "trec_eval_tests" / "test"
    assert main(["trec", str(test / "qrels.test"), str(test / "results.test"), "-m", "map",
                 "-m", "P_5", "-m", "recall@10", "-m", "mrr@10"]) == 0
    lines = capsys.readouterr().out.splitlines()
    expected = {row.split()[0]: row.split()[2]
                for row in (test / "out.test.a").read_text().splitlines()}
    assert [line.split()[0] for line in lines] == ["num_q", "map", "P_5", "recall_10", "mrr@10"]
    for line in lines[:4]:
        name, scope, value = line.split()
        assert scope == "all" and value == expected[name]
        assert line[24:27] == scope  # trec_eval's columns: 24 wide, then "all"


def test_trec_averages_topics_without_relevant_documents_as_trec_eval_does(datasets, capsys):
    """Under trec_eval's labels, trec_eval's semantics: 2024-36302 has no relevant document;
    trec_eval keeps it in num_q = 31 and averages its zeros in."""
    test = datasets / "trec_eval_tests" / "test"
    measures = ["map", "P_5", "P_10", "recip_rank", "ndcg", "ndcg_cut_10", "Rprec",
                "recall_100", "success_10"]
    assert main(["trec", str(test / "qrels.comment.test"), str(test / "results.comment.test"),
                 *[arg for m in measures for arg in ("-m", m)]]) == 0
    expected = {row.split()[0]: row.split()[2]
                for row in (test / "out.comment.test").read_text().splitlines()
                if row.split()[1] == "all"}
    got = {line.split()[0]: line.split()[2] for line in capsys.readouterr().out.splitlines()}
    assert got["num_q"] == expected["num_q"] == "31"
    for m in measures:
        if m in expected:
            assert got[m] == expected[m], m


def test_trec_refuses_an_empty_run_and_files_that_share_no_topic(tmp_path, capsys):
    qrels, run, empty = tmp_path / "q.txt", tmp_path / "r.txt", tmp_path / "e.txt"
    qrels.write_text("1 0 d1 1\n")
    run.write_text("2 Q0 d1 1 1.0 x\n")
    empty.write_text("")
    assert main(["trec", str(qrels), str(empty)]) == 2
    assert "holds no results" in capsys.readouterr().err
    assert main(["trec", str(qrels), str(run)]) == 2
    err = capsys.readouterr().err
    assert "none of its 1 topics" in err and "q.txt" in err


def test_validate_ok_and_problems(tmp_path, capsys):
    assert main(["validate", "data/handbook/golden.jsonl", "--corpus", "data/handbook/docs"]) == 0
    assert "OK: 74 questions" in capsys.readouterr().out
    bad = tmp_path / "g.jsonl"
    bad.write_text('{"qid": "a", "question": "x", "relevant_chunk_ids": ["nope#0", "gone#1"]}\n'
                   "{oops\n", encoding="utf-8")
    assert main(["validate", str(bad), "--corpus", "data/handbook/docs"]) == 1
    out = capsys.readouterr().out
    assert "g.jsonl:2" in out and "malformed JSON" in out
    bad.write_text('{"qid": "a", "question": "x", "relevant_chunk_ids": ["nope#0", "gone#1"]}\n',
                   encoding="utf-8")
    # chunk ids are checked against the chunking they were made on, never parsed
    assert main(["validate", str(bad), "--corpus", "data/handbook/docs", "--chunker",
                 "fixed:size=800,overlap=100"]) == 1
    out = capsys.readouterr().out
    assert "'nope#0'" in out and "'gone#1'" in out and "2 problem(s)" in out
    assert main(["validate", str(bad), "--corpus", "data/handbook/docs"]) == 0
    assert "give --chunker SPEC" in capsys.readouterr().out


def test_eval_json_shape(capsys):
    assert main(["eval", *HANDBOOK_ARGS, "--chunker", "fixed:size=800,overlap=100", "-k", "5",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n"] == 67 and out["excluded"]["unanswerable"] == 7
    assert {"recall@5", "mrr@5", "hit_rate@5", "precision@5", "ndcg@5"} <= set(out["metrics"])
    assert out["by_category"]["exact-code"]["n"] == 9
    # the numbers are the Python API's on the same inputs, with its defaults (JSON rounds to 6)
    import workbench as wb

    golden = wb.GoldenSet.load("data/handbook/golden.jsonl")
    chunks = wb.chunk_corpus(wb.parse_chunker("fixed:size=800,overlap=100"),
                             wb.load_folder("data/handbook/docs").documents)
    ev = wb.evaluate(wb.BM25Retriever(chunks), golden, chunks, k=5)
    summary = ev.summary()
    api = dict(zip(summary["metric"], summary["mean"], strict=True))
    assert set(out["metrics"]) == set(api)
    for metric, value in api.items():
        assert out["metrics"][metric] == round(value, 6), metric
    by = ev.by("category").set_index(["category", "metric"])["mean"]
    for (category, metric), value in by.items():
        assert out["by_category"][category][metric] == round(value, 6)
    assert 0 < api["recall@5"] < 1  # neither bound, so a constant cannot pass


def test_eval_table_and_document_level(capsys):
    assert main(["eval", *HANDBOOK_ARGS, "--level", "document", "-m", "hit_rate@3"]) == 0
    out = capsys.readouterr().out
    assert "hit_rate@3" in out and "colloquial" in out


def test_user_errors_exit_2_without_traceback(tmp_path, capsys):
    assert main(["eval", "--corpus", str(tmp_path / "missing"), "--golden", "x.jsonl"]) == 2
    assert "error:" in capsys.readouterr().err
    assert main(["eval", *HANDBOOK_ARGS, "--chunker", "blocks:size=3"]) == 2
    assert main(["eval", *HANDBOOK_ARGS, "--retriever", "magic"]) == 2
    assert main(["eval", *HANDBOOK_ARGS, "-m", "recall@x"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("error:") == 3


def test_squad_input_needs_no_golden(datasets, capsys):
    assert main(["eval", "--corpus", str(datasets / "xquad" / "xquad.vi.json"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n"] == 1190


def test_cli_does_not_import_torch():
    code = ("import sys; from workbench.cli import main; "
            "main(['eval', '--corpus', 'data/handbook/docs', '--golden', "
            "'data/handbook/golden.jsonl', '--json']); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False"


def test_chunks_diagnostics_json(capsys):
    assert main(["chunks", *HANDBOOK_ARGS, "--chunker", "fixed:size=400,overlap=0",
                 "--chunker", "fixed:size=400,overlap=100", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["chunker"] for r in rows] == ["fixed:size=400,overlap=0",
                                             "fixed:size=400,overlap=100"]
    assert rows[0]["cost_multiplier"] == 1.0 and rows[1]["cost_multiplier"] > 1.2
    assert rows[1]["split_rate"] < rows[0]["split_rate"]
    assert {"chunks", "index_tokens", "split_rate"} <= set(rows[0])


def test_eval_accepts_every_chunker_spec(capsys):
    for spec in ["recursive:size=300,unit=tokens,overlap=0,header=true", "markdown:size=400",
                 "sentence:size=400", "parent:child=200,size=1000"]:
        assert main(["eval", *HANDBOOK_ARGS, "--chunker", spec, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["n"] == 67


def _beir(tmp_path):
    """A small BEIR folder as BEIR ships them: ids with '#', titles, a qrels header and
    grades written 1.000000."""
    (tmp_path / "qrels").mkdir()
    docs = [{"_id": "MED#1", "title": "Statins", "text": "They lower LDL in adults."},
            {"_id": "MED#2", "title": "Aspirin", "text": "For adults: adults at heart risk."},
            {"_id": "MED-3", "title": "Vitamin D", "text": "Supports bone health in winter."}]
    queries = [{"_id": "q1", "text": "statins adults"}, {"_id": "q2", "text": "aspirin heart"},
               {"_id": "q3", "text": "vitamin bone"}]
    for name, rows in (("corpus", docs), ("queries", queries)):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows),
                                                encoding="utf-8")
    (tmp_path / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\tMED#1\t1.000000\nq2\tMED#2\t1.000000\n"
        "q2\tMED-3\t0.000000\nq3\tMED-3\t2.000000\n", encoding="utf-8")
    return tmp_path


def test_beir_folder_indexes_titles_with_whole_documents_by_default(tmp_path, capsys):
    folder = _beir(tmp_path)
    assert main(["eval", "--corpus", str(folder), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["chunker"] == "document:title=true" and out["chunks"] == 3 and out["n"] == 3
    # "statins" is only in MED#1's title: ranked first because the title is indexed
    assert out["metrics"]["mrr@5"] == 1.0
    assert main(["eval", "--corpus", str(folder)]) == 0
    text = capsys.readouterr().out
    assert "document:title=true (the BEIR default: whole documents, title + text indexed)" in text
    assert "category" not in text  # one category ("beir"): no table repeating the summary
    assert main(["eval", "--corpus", str(folder), "--chunker", "document", "--json"]) == 0
    # text alone: MED#2 (adults twice) outranks MED#1 for q1
    assert json.loads(capsys.readouterr().out)["metrics"]["mrr@5"] == pytest.approx(5 / 6)
    assert main(["eval", "--corpus", str(folder), "--chunker", "fixed:size=50"]) == 0
    assert "BEIR titles are not indexed by this chunker" in capsys.readouterr().out


def test_trec_reads_beir_qrels_with_header_and_decimal_grades(tmp_path, capsys):
    folder = _beir(tmp_path)
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 MED#1 1 2.0 x\nq1 Q0 MED-3 2 1.0 x\nq2 Q0 MED-3 1 1.0 x\n"
                   "q3 Q0 MED-3 1 3 x\n", encoding="utf-8")
    trec = tmp_path / "qrels.trec"
    trec.write_text("q1 0 MED#1 1\nq2 0 MED#2 1\nq2 0 MED-3 0\nq3 0 MED-3 2\n", encoding="utf-8")
    assert main(["trec", str(folder / "qrels" / "test.tsv"), str(run)]) == 0
    beir_out = capsys.readouterr().out
    assert main(["trec", str(trec), str(run)]) == 0
    assert beir_out == capsys.readouterr().out  # the same judgments, the same scores
    assert "map                     all     0.6667" in beir_out


def test_squad_prints_the_summary_not_48_categories(datasets, capsys):
    squad = ["--corpus", str(datasets / "xquad" / "xquad.en.json")]
    assert main(["eval", *squad]) == 0
    out = capsys.readouterr().out
    assert "48 categories: --by-category prints the per-category table" in out
    assert len(out.splitlines()) < 15
    assert main(["eval", *squad, "--by-category"]) == 0
    assert len(capsys.readouterr().out.splitlines()) > 48
    assert main(["eval", *squad, "--json"]) == 0
    latency = json.loads(capsys.readouterr().out)["latency_ms"]
    assert set(latency) == {"p50_ms", "p95_ms", "mean_ms", "n"} and latency["n"] == 1190


def test_cache_info_and_clear(tmp_path, capsys):
    import numpy as np

    from workbench.generation.answer_cache import GenerationCache
    from workbench.generation.prompt import Answer
    from workbench.retrieval import EmbeddingCache

    class Fake:
        model_id = "fake/model"

        def encode_documents(self, texts):
            return np.ones((len(texts), 4), dtype=np.float32)

        encode_queries = encode_documents

    EmbeddingCache(tmp_path / "embeddings").embed(Fake(), ["a", "b", "c"], progress=False)
    GenerationCache(tmp_path / "generations").put(f"ab{'c' * 62}", Answer(text="yes"))
    (tmp_path / "generations" / "ab" / f"ab{'d' * 62}.json").write_text("{}", encoding="utf-8")
    assert main(["cache", "info", "--cache", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert str(tmp_path) in out and "given with --cache" in out
    assert "fake/model" in out and " 3 " in out and "generations: 1 answers" in out
    assert main(["cache", "info", "--cache", str(tmp_path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["embeddings"][0]["vectors"] == 3 and info["generations"]["answers"] == 1
    assert main(["cache", "clear", "--cache", str(tmp_path), "--model", "other/model"]) == 2
    assert "no embeddings of 'other/model'" in capsys.readouterr().err
    assert main(["cache", "clear", "--cache", str(tmp_path), "--only", "generations"]) == 0
    assert "1 generated answers" in capsys.readouterr().out
    assert EmbeddingCache(tmp_path / "embeddings").inventory()  # embeddings kept
    assert main(["cache", "clear", "--cache", str(tmp_path), "--model", "fake/model"]) == 0
    assert "removed 3 vectors of fake/model" in capsys.readouterr().out
    assert EmbeddingCache(tmp_path / "embeddings").inventory() == []


def test_every_command_that_embeds_takes_cache():
    from workbench.cli import build_parser

    parser = build_parser()
    for command in ("eval", "report", "gate", "sweep", "cache"):
        args = parser.parse_args([command, *{
            "eval": ["--corpus", "c"], "report": ["--corpus", "c", "--out", "o"],
            "gate": ["--baseline", "b"], "sweep": ["--corpus", "c", "--grid", "g"],
            "cache": ["info"]}[command], "--cache", "/somewhere"])
        assert args.cache == "/somewhere", command


def test_every_cache_option_is_the_shared_one():
    """--cache is written once (cli.cache_arg): every command's option reads the same."""
    from workbench.cli import build_parser

    parser = build_parser()
    subs = next(a for a in parser._actions if a.choices and "sweep" in a.choices).choices
    helps = {name: next(a.help for a in sub._actions if "--cache" in a.option_strings)
             for name, sub in subs.items()
             if any("--cache" in a.option_strings for a in sub._actions)}
    assert {"eval", "report", "gate", "sweep"} <= set(helps)
    assert len(set(helps.values())) == 1, helps


def test_cache_info_and_clear_find_the_models_where_the_generator_puts_them(tmp_path, capsys,
                                                                               monkeypatch):
    """With $WORKBENCH_MODEL_CACHE set, the converted models live there
    (generation.model_cache_root): info lists them and clear removes them, not
    --cache/models; the folder itself and what else it holds stay."""
    from workbench.generation import model_cache_root
    from workbench.runtime import mark_cache_folder, record_cache_tree

    models = tmp_path / "models-elsewhere"
    monkeypatch.setenv("WORKBENCH_MODEL_CACHE", str(models))
    (models / "smol-123").mkdir(parents=True)
    mark_cache_folder(models, "models")
    (models / "smol-123" / "workbench-source.json").write_text("{}", encoding="utf-8")
    record_cache_tree(models, models / "smol-123")
    (models / "notes.txt").write_text("mine", encoding="utf-8")
    decoy = tmp_path / "cache" / "models" / "not-this-one"
    decoy.mkdir(parents=True)
    mark_cache_folder(decoy.parent, "models")
    (decoy / "workbench-source.json").write_text("", encoding="utf-8")
    record_cache_tree(decoy.parent, decoy)
    assert model_cache_root(tmp_path / "cache") == models
    cache = ["--cache", str(tmp_path / "cache")]
    assert main(["cache", "info", *cache, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["models"] == {"smol-123": 2} and info["models_folder"] == str(models)
    assert main(["cache", "info", *cache]) == 0
    assert f"converted models in {models}: smol-123 (2 B)" in capsys.readouterr().out
    assert main(["cache", "clear", *cache, "--only", "models"]) == 0
    assert f"1 converted model(s) (2 B) from {models}" in capsys.readouterr().out
    assert not (models / "smol-123").exists() and (models / "notes.txt").exists()
    assert decoy.is_dir()
    monkeypatch.delenv("WORKBENCH_MODEL_CACHE")
    assert model_cache_root(tmp_path / "cache") == tmp_path / "cache" / "models"
    assert main(["cache", "clear", *cache, "--only", "models"]) == 0
    assert capsys.readouterr().out.strip() == (
        f"removed 1 converted model(s) (0 B) from {tmp_path / 'cache'}")
    assert not decoy.exists()


@pytest.mark.parametrize("threshold", [0.3, 1.0])
def test_eval_json_equals_the_api_under_the_evidence_threshold_given(threshold, capsys):
    """`--evidence-threshold` reaches the ruler: the CLI's numbers equal evaluate()'s at the
    same threshold, and the two thresholds give different numbers (so ignoring the option
    cannot pass)."""
    import workbench as wb

    spec = "fixed:size=300,overlap=0"
    assert main(["eval", *HANDBOOK_ARGS, "--chunker", spec, "-k", "5", "--evidence-threshold",
                 str(threshold), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    corpus = wb.load_folder("data/handbook/docs")
    golden = wb.GoldenSet.load("data/handbook/golden.jsonl")
    chunks = wb.chunk_corpus(wb.parse_chunker(spec), corpus.documents)
    results = {}
    for t in (0.3, 1.0):
        summary = wb.evaluate(wb.BM25Retriever(chunks), golden, chunks, k=5,
                              evidence_threshold=t).summary()
        results[t] = dict(zip(summary["metric"], summary["mean"], strict=True))
    assert results[0.3]["recall@5"] != results[1.0]["recall@5"]
    for metric in ("recall@5", "hit_rate@5", "mrr@5", "precision@5"):
        assert out["metrics"][metric] == pytest.approx(results[threshold][metric], abs=1e-6)
