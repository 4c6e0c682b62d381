"""One pipeline everywhere: workbench eval, the gate and a sweep's configuration give the same
numbers for the same pipeline (workbench.evaluation.pipeline)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.cli.test_cli import _beir
from tests.conftest import HANDBOOK
from workbench.cli import main
from workbench.evaluation.pipeline import (
    Pipeline,
    dataset_defaults,
    evaluate_pipeline,
    gate_config,
    run_pipeline,
)
from workbench.sweep import run_sweep

DOCS, GOLD = str(HANDBOOK / "docs"), str(HANDBOOK / "golden.jsonl")


def _eval_cli(capsys, *args):
    assert main(["eval", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("chunker", [None, "fixed:size=400,overlap=0", "sentence:size=300"])
def test_gate_equals_workbench_eval_on_the_handbook(capsys, chunker):
    extra = ["--chunker", chunker] if chunker else []
    out = _eval_cli(capsys, "--corpus", DOCS, "--golden", GOLD, *extra)
    ev, _ = evaluate_pipeline(gate_config(DOCS, GOLD, chunker=chunker))
    summary = ev.summary().set_index("metric")
    assert set(summary.index) == set(out["metrics"])
    for metric, mean in out["metrics"].items():
        assert summary.loc[metric, "mean"] == pytest.approx(mean, abs=1e-6)
        assert summary.loc[metric, "relevance"] == out["relevance"][metric]
    assert ev.n == out["n"]


def test_a_sweep_configuration_is_the_same_pipeline(handbook):
    corpus, golden = handbook
    result = run_sweep({"size": [300, 800], "overlap": [0, 100], "retriever": ["bm25"],
                        "k": [5]}, golden, corpus, progress=False)
    for config in result.config_table.index:
        pipeline = result.pipeline(config)
        ev = run_pipeline(pipeline, corpus, golden).evaluation
        mine = result.frame[result.frame["system"] == config]
        want = mine.groupby("metric")["value"].mean()
        got = ev.summary().set_index("metric")["mean"]
        pd.testing.assert_series_equal(got.sort_index(), want.sort_index(), check_names=False)
        gated, _ = evaluate_pipeline(gate_config(DOCS, GOLD, chunker=pipeline.chunker))
        assert gated.summary().set_index("metric")["mean"].to_dict() == pytest.approx(
            got.to_dict())


def test_beir_defaults_are_the_same_in_eval_and_the_gate(tmp_path, capsys):
    folder = _beir(tmp_path)
    assert dataset_defaults(folder) == ("document:title=true", "document")
    assert dataset_defaults(DOCS, GOLD) == ("fixed:size=800,overlap=100", "chunk")
    config = gate_config(folder)
    assert config["chunker"] == "document:title=true" and config["level"] == "document"
    out = _eval_cli(capsys, "--corpus", str(folder))
    ev, _ = evaluate_pipeline(config)
    got = ev.summary().set_index("metric")["mean"].to_dict()
    assert got == pytest.approx(out["metrics"])


def test_an_unresolved_pipeline_is_refused(handbook):
    corpus, golden = handbook
    with pytest.raises(ValueError, match="for_dataset"):
        run_pipeline(Pipeline(), corpus, golden)
    resolved = Pipeline().for_dataset(DOCS, GOLD)
    assert resolved.chunker == "fixed:size=800,overlap=100" and resolved.level == "chunk"
    assert resolved.metrics == ("recall@5", "precision@5", "hit_rate@5", "mrr@5", "ndcg@5")


def test_config_options_are_checked_once_with_the_closest_name(monkeypatch):
    from workbench.evaluation import pipeline as pipeline_module

    for typo in ("fixed:size=300", None):  # refused even as None (None: the default)
        with pytest.raises(ValueError, match="did you mean 'chunker'"):
            gate_config("docs", chunkr=typo)
    assert gate_config("docs", k=None)["k"] == 5
    calls = []
    check = pipeline_module.check_config
    monkeypatch.setattr(pipeline_module, "check_config",
                        lambda *a, **kw: (calls.append(1), check(*a, **kw))[1])
    config = pipeline_module.pipeline_config({"corpus": "docs", "golden": "g.jsonl", "k": 3})
    assert len(calls) == 1
    assert config == gate_config("docs", "g.jsonl", k=3)
