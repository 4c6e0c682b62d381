import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import HANDBOOK, HANDBOOK_ARGS, ROOT
from workbench.cli import main
from workbench.evaluation import evaluate_pipeline, evaluation_from_scores
from workbench.gate import (
    Baseline,
    BaselineRefused,
    check_gate,
    gate_config,
    update_baseline,
)
from workbench.gate.pytest_plugin import assert_no_regression
from workbench.golden import GoldenItem, GoldenSet
from workbench.io import InputError

QIDS = [f"q{i:02d}" for i in range(60)]


def golden_for(qids):
    return GoldenSet([GoldenItem(q, f"question {q}", relevant_chunk_ids=(f"d#{i}",),
                                 category="even" if i % 2 == 0 else "odd")
                      for i, q in enumerate(qids)])


GOLDEN = golden_for(QIDS)
BASE_HITS = {q: float(i < 45) for i, q in enumerate(QIDS)}  # 45 / 60 hit
CONFIG = gate_config("corpus", "golden.jsonl", metrics=["hit_rate@5", "mrr@5"])


def ev_of(hits, mrr=None, system="bm25"):
    mrr = mrr or {q: v * 0.5 for q, v in hits.items()}
    return evaluation_from_scores({q: {"hit_rate@5": hits[q], "mrr@5": mrr[q]} for q in hits},
                                  system=system, categories={i.qid: i.category for i in GOLDEN})


def with_changes(values, **changes):
    return {**values, **{q: float(v) for q, v in changes.items()}}


@pytest.fixture
def baseline(tmp_path):
    return update_baseline(tmp_path / "evals" / "baseline.json", ev_of(BASE_HITS), CONFIG, GOLDEN)


def test_real_regression_of_ten_questions_fails_and_names_them(baseline):
    lost = QIDS[:10]
    current = ev_of(with_changes(BASE_HITS, **dict.fromkeys(lost, 0)))
    result = check_gate(current, baseline, golden=GOLDEN)
    assert not result.passed
    hit = next(c for c in result.checks if c.metric == "hit_rate@5")
    assert hit.failed and hit.test == "mcnemar-exact"
    assert hit.p_value == pytest.approx(0.5 ** 10)
    assert hit.delta == pytest.approx(-10 / 60)
    assert sorted(q for q, _, _ in hit.lost) == lost and not hit.gained
    assert sorted(result.regressed) == lost and result.improved == {}
    assert set(result.failed_metrics) == {"hit_rate@5", "mrr@5"}
    report = result.report()
    assert "FAILED" in report and all(q in report for q in lost)
    assert "regressed on hit_rate@5" in report
    json.dumps(result.to_dict())  # serialisable
    with pytest.raises(AssertionError, match="q00"):
        assert_no_regression(current, baseline.path, golden=GOLDEN)


def test_one_question_wobble_passes(baseline):
    for current in (ev_of(with_changes(BASE_HITS, q00=0)),                # one lost
                    ev_of(with_changes(BASE_HITS, q00=0, q50=1)),         # one lost, one won
                    ev_of(with_changes(BASE_HITS, q00=0, q01=0, q02=0, q03=0))):  # four lost
        result = check_gate(current, baseline, golden=GOLDEN)
        assert result.passed, result.report()
        assert "q00" in result.regressed
    assert check_gate(ev_of(BASE_HITS), baseline, golden=GOLDEN).checks[0].verdict == "unchanged"
    # five lost with none gained is the smallest drop a 0/1 metric can fail on (p = 1/32)
    five = ev_of(with_changes(BASE_HITS, **dict.fromkeys(QIDS[:5], 0)))
    result = check_gate(five, baseline, golden=GOLDEN)
    assert not result.passed and result.min_questions_to_fail == 5
    holm = check_gate(five, baseline, golden=GOLDEN, correction="holm")
    assert holm.passed and holm.min_questions_to_fail == 6


def test_graded_metric_uses_one_sided_permutation_and_a_one_question_floor(baseline):
    mrr = {q: 1.0 if i < 30 else 0.25 if i < 45 else 0.0 for i, q in enumerate(QIDS)}
    baseline = update_baseline(baseline.path, ev_of(BASE_HITS, mrr), CONFIG, GOLDEN)
    # ten questions fall from rank 4 to 5 (0.25 -> 0.2): consistent, but under one question
    shaved = {**mrr, **dict.fromkeys(QIDS[30:40], 0.2)}
    result = check_gate(ev_of(BASE_HITS, shaved), baseline, golden=GOLDEN, metrics=["mrr@5"])
    check = result.checks[0]
    assert check.test == "permutation" and check.p_value < 0.01
    assert result.passed and check.verdict == "within noise"
    assert check.min_drop == pytest.approx(1 / 60)  # largest per-question value / n
    strict = check_gate(ev_of(BASE_HITS, shaved), baseline, golden=GOLDEN, metrics=["mrr@5"],
                        min_drop=0.0)
    assert not strict.passed
    # eight questions fall from rank 1 to 3 and one rises from 0 to 1: a real drop
    worse = {**mrr, **dict.fromkeys(QIDS[:8], 1 / 3), "q50": 1.0}
    result = check_gate(ev_of(BASE_HITS, worse), baseline, golden=GOLDEN, metrics=["mrr@5"])
    assert result.checks[0].p_value == pytest.approx(10 / 512)  # exact: 9 changed questions
    assert not result.passed and result.regressed == {q: ["mrr@5"] for q in QIDS[:8]}
    assert result.improved == {"q50": ["mrr@5"]}


def judged(hits, relevance):
    return evaluation_from_scores({q: {"hit_rate@5": v, "mrr@5": v * 0.5}
                                   for q, v in hits.items()},
                                  categories={i.qid: i.category for i in GOLDEN},
                                  relevance=relevance)


def test_a_metric_that_mixes_relevance_kinds_is_refused(tmp_path):
    """The label is read from every row, not from the summary's last row of the metric."""
    import pandas as pd

    from workbench.evaluation import Evaluation

    path = tmp_path / "baseline.json"
    baseline = update_baseline(path, judged(BASE_HITS, "evidence>=0.75"), CONFIG, GOLDEN)
    for other in ("chunk-ids", "zzz-chunk-ids"):  # sorts before and after the baseline's
        frame = judged(BASE_HITS, "evidence>=0.75").frame
        mixed = (frame["metric"] == "hit_rate@5") & frame["qid"].isin(QIDS[:30])
        frame["relevance"] = frame["relevance"].where(~mixed, other)
        current = Evaluation(pd.DataFrame(frame))
        with pytest.raises(ValueError, match="'hit_rate@5' mixes relevance kinds"):
            check_gate(current, baseline, golden=GOLDEN)
        with pytest.raises(ValueError, match="'hit_rate@5' mixes relevance kinds"):
            update_baseline(path, current, CONFIG, GOLDEN)


def test_changed_golden_set_is_refused_unless_acknowledged(baseline):
    new_qids = [*QIDS[2:], "q98", "q99"]  # two questions gone, two added
    golden = golden_for(new_qids)
    hits = {q: BASE_HITS.get(q, 0.0) for q in new_qids}
    current = ev_of(hits)
    with pytest.raises(BaselineRefused, match="golden set changed") as exc:
        check_gate(current, baseline, golden=golden)
    assert exc.value.reason == "golden_changed"
    result = check_gate(current, baseline, golden=golden, allow_golden_change=True)
    assert result.passed and result.golden_changed and result.n == 58
    assert result.only_in_baseline == ("q00", "q01") and result.only_in_current == ("q98", "q99")
    assert "compared only the 58 questions in both" in result.report()
    # an edited question (same qids) changes the hash too
    edited = GoldenSet([GoldenItem("q00", "reworded", relevant_chunk_ids=("d#0",),
                                   category="even"), *GOLDEN.items[1:]])
    with pytest.raises(BaselineRefused):
        check_gate(ev_of(BASE_HITS), baseline, golden=edited)
    with pytest.raises(BaselineRefused, match="--golden-changed"):
        update_baseline(baseline.path, current, CONFIG, golden)
    updated = update_baseline(baseline.path, current, CONFIG, golden, golden_changed=True)
    assert updated.golden_hash == golden.content_hash and updated.n == 60


def test_baseline_round_trip_and_atomic_write(baseline, tmp_path, monkeypatch):
    folder = baseline.path.parent
    loaded = Baseline.load(baseline.path)
    assert loaded.outcomes == baseline.outcomes and loaded.summary == baseline.summary
    assert loaded.golden_hash == GOLDEN.content_hash and loaded.n == 60
    assert loaded.categories["q01"] == "odd"
    data = json.loads(baseline.path.read_text())
    assert data["schema_version"] == 2 and Path(data["config"]["corpus"]).is_absolute()
    assert data["questions"]["q00"] == {"hit_rate@5": 1.0, "mrr@5": 0.5}
    assert data["metrics"]["hit_rate@5"]["n"] == 60
    assert {"mean", "ci_low", "ci_high"} <= set(data["metrics"]["hit_rate@5"])
    assert Path(loaded.config["corpus"]) == Path("corpus").resolve()
    proj = tmp_path / "proj"
    near = Baseline(**{**loaded.__dict__, "config": {**loaded.config,
                                                     "corpus": str(proj / "data" / "docs")}})
    near_path = near.save(proj / "evals" / "b.json")
    assert json.loads(near_path.read_text())["config"]["corpus"] == "../data/docs"
    assert Baseline.load(near_path).config["corpus"] == str(proj / "data" / "docs")
    moved = loaded.save(tmp_path / "deeper" / "b.json")
    assert Baseline.load(moved).config["corpus"] == loaded.config["corpus"]
    assert not [p.name for p in folder.iterdir() if p.suffix == ".tmp"]  # no temp files

    before = baseline.path.read_text()

    def crash(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(ValueError, match=r"cannot write \(disk full\); the old file is unchanged"):
        update_baseline(baseline.path, ev_of(BASE_HITS), CONFIG, GOLDEN, force=True)
    assert baseline.path.read_text() == before
    assert not [p.name for p in folder.iterdir() if p.suffix == ".tmp"]


def test_bad_baseline_files_are_clear_errors(tmp_path, baseline):
    with pytest.raises(InputError, match=r"none\.json: baseline not found.*--update-baseline"):
        Baseline.load(tmp_path / "none.json")
    bad = tmp_path / "b.json"
    bad.write_text("{oops")
    with pytest.raises(ValueError, match=r"b\.json:1: malformed"):
        Baseline.load(bad)
    bad.write_text('{"schema_version": 1}')  # before relevance was recorded: re-create it
    with pytest.raises(ValueError, match=r"'schema_version': must be 2.*--force"):
        Baseline.load(bad)
    bad.write_text('{"schema_version": 2}')
    with pytest.raises(ValueError, match="field 'config': is missing"):
        Baseline.load(bad)
    with pytest.raises(ValueError, match="one configuration"):
        check_gate(ev_of(BASE_HITS) + ev_of(BASE_HITS, system="dense"), baseline)


def test_a_recorded_pipeline_must_be_one_the_gate_can_rerun(tmp_path, baseline):
    from workbench.evaluation.pipeline import pipeline_config

    # a baseline written from Python may describe its pipeline in its own words ...
    described = Baseline(**{**baseline.__dict__, "config": {"pipeline": "bm25, k=5"}})
    path = described.save(tmp_path / "answers.json")
    assert Baseline.load(path).config == {"pipeline": "bm25, k=5"}
    # ... but a config the gate re-runs holds only pipeline options, of the right types
    with pytest.raises(ValueError, match=r"answers\.json:\d+: field 'config\.pipeline'"):
        Baseline.load(path, pipeline=True)
    with pytest.raises(ValueError, match="did you mean 'chunker'"):
        pipeline_config({"corpus": "docs", "chunkr": "fixed:size=300"})
    for key, bad in (("k", 0), ("k", "5"), ("level", "doc"), ("metrics", []),
                     ("threshold", -1), ("corpus", "")):
        with pytest.raises(ValueError, match=f"config.{key}"):
            pipeline_config({"corpus": "docs", key: bad})
    for value in (7.5, -0.1, float("nan"), True, "abc", None):
        data = json.loads(baseline.path.read_text())
        data["questions"]["q03"]["mrr@5"] = value
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps(data, indent=1))
        line = next(n for n, t in enumerate(bad.read_text().splitlines(), 1) if '"q03"' in t)
        with pytest.raises(ValueError, match=f"bad.json:{line}: field 'questions.q03.mrr@5'"):
            Baseline.load(bad)


def test_cli_gate_exit_codes_on_the_handbook(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    path = tmp_path / "baseline.json"
    assert main(["gate", "--baseline", str(path)]) == 2  # no baseline, no --update-baseline
    assert "--update-baseline" in capsys.readouterr().err
    assert main(["gate", "--baseline", str(path), *HANDBOOK_ARGS, "--update-baseline"]) == 0
    assert "created baseline" in capsys.readouterr().out
    assert main(["gate", "--baseline", str(path)]) == 0  # options from the recorded config
    assert "Retrieval gate PASSED" in capsys.readouterr().out
    assert main(["gate", "--baseline", str(path), "--chunker", "fixed:size=100,overlap=0"]) == 1
    out = capsys.readouterr().out
    assert "FAILED" in out and "regressed on hit_rate@5: q0" in out
    assert "chunker: fixed:size=800,overlap=100 -> fixed:size=100,overlap=0" in out
    # the ratchet refuses to write the worse pipeline
    before = path.read_text()
    assert main(["gate", "--baseline", str(path), "--chunker", "fixed:size=100,overlap=0",
                 "--update-baseline"]) == 1
    assert path.read_text() == before and "FAILED" in capsys.readouterr().out
    assert main(["gate", "--baseline", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["passed"] and out["exit_code"] == 0 and out["n"] == 67
    # an edited golden set: 2 without acknowledgement, compared on common qids with it
    lines = (HANDBOOK / "golden.jsonl").read_text(encoding="utf-8").splitlines()
    edited = tmp_path / "golden.jsonl"
    edited.write_text("\n".join(lines[1:]) + "\n", encoding="utf-8")
    gate_edited = ["gate", "--baseline", str(path), "--golden", str(edited)]
    assert main(gate_edited) == 2
    assert "golden set changed" in capsys.readouterr().out
    assert main([*gate_edited, "--golden-changed", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["golden_changed"] and out["only_in_baseline"] == ["q001"] and out["n"] == 66
    assert main(["gate", "--baseline", str(path), "--chunker", "nonsense"]) == 2
    assert main(["gate", "--baseline", str(path), "-m", "recall@50"]) == 2


def test_repo_baseline_passes_with_the_repo_pipeline(capsys, monkeypatch):
    """The project's own CI gate: evals/baseline.json against today's pipeline."""
    monkeypatch.chdir(ROOT)
    base = Baseline.load("evals/baseline.json")
    assert base.config["retriever"] == "bm25" and base.config["k"] == 5
    assert base.config["chunker"] == "fixed:size=800,overlap=100"
    assert main(["gate", "--baseline", "evals/baseline.json"]) == 0, capsys.readouterr().out
    ev, golden = evaluate_pipeline(base.config)
    assert golden.content_hash == base.golden_hash and ev.n == base.n == 67
    assert check_gate(ev, base, golden=golden).passed


def test_pytest_plugin_fixture_in_a_project(tmp_path):
    base = update_baseline(tmp_path / "baseline.json", ev_of(BASE_HITS), CONFIG, GOLDEN)
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["workbench.gate.pytest_plugin"]\n')
    (tmp_path / "test_rag.py").write_text(f"""
from workbench.evaluation import evaluation_from_scores

BASE = {BASE_HITS!r}

def ev(hits):
    return evaluation_from_scores({{q: {{"hit_rate@5": v, "mrr@5": v / 2}}
                                    for q, v in hits.items()}})

def test_unchanged(retrieval_gate):
    assert retrieval_gate(ev(BASE), {str(base.path)!r}).passed

def test_regressed(retrieval_gate):
    retrieval_gate(ev({{**BASE, **{{q: 0.0 for q in list(BASE)[:10]}}}}), {str(base.path)!r})

def test_recorded_pipeline(retrieval_gate):
    assert retrieval_gate.pipeline({str(ROOT / "evals" / "baseline.json")!r}).n == 67
""")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(tmp_path)], cwd=tmp_path, capture_output=True, text=True,
                          env=env, timeout=300)
    assert "1 failed, 2 passed" in proc.stdout, proc.stdout + proc.stderr
    assert "Retrieval gate FAILED" in proc.stdout and "q00" in proc.stdout
