import json
import subprocess
import sys

import pytest

from workbench.cli import main

HANDBOOK = ["--corpus", "data/handbook/docs", "--golden", "data/handbook/golden.jsonl"]


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
    for line in lines[:3]:
        name, scope, value = line.split("\t")
        assert scope == "all" and value == expected[name.strip()]
    assert lines[3].startswith("mrr@10")


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
    assert main(["eval", *HANDBOOK, "--chunker", "fixed:size=800,overlap=100", "-k", "5",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n"] == 67 and out["excluded"]["unanswerable"] == 7
    assert {"recall@5", "mrr@5", "hit_rate@5", "precision@5", "ndcg@5"} <= set(out["metrics"])
    assert out["by_category"]["exact-code"]["n"] == 9
    assert 0 <= out["metrics"]["recall@5"] <= 1


def test_eval_table_and_document_level(capsys):
    assert main(["eval", *HANDBOOK, "--level", "document", "-m", "hit_rate@3"]) == 0
    out = capsys.readouterr().out
    assert "hit_rate@3" in out and "colloquial" in out


def test_user_errors_exit_2_without_traceback(tmp_path, capsys):
    assert main(["eval", "--corpus", str(tmp_path / "missing"), "--golden", "x.jsonl"]) == 2
    assert "error:" in capsys.readouterr().err
    assert main(["eval", *HANDBOOK, "--chunker", "blocks:size=3"]) == 2
    assert main(["eval", *HANDBOOK, "--retriever", "magic"]) == 2
    assert main(["eval", *HANDBOOK, "-m", "recall@x"]) == 2
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
    assert main(["chunks", *HANDBOOK, "--chunker", "fixed:size=400,overlap=0",
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
        assert main(["eval", *HANDBOOK, "--chunker", spec, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["n"] == 67
