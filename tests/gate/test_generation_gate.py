"""The generation gate (workbench.gate.generation) with the real local generator (SmolLM2) on
three handbook questions it answers right over the default pipeline."""

from __future__ import annotations

import time

import pytest

from tests.conftest import HANDBOOK
from workbench.gate import BaselineRefused, gate_config
from workbench.gate.generation import (
    METRIC,
    check_generation_gate,
    evaluate_generation,
    update_generation_baseline,
)
from workbench.generation.answer_cache import CachedGenerator, GenerationCache

QIDS = ["q001", "q002", "q006"]
#: Three questions cannot be significant at 0.05: all three lost is McNemar's exact one-sided
#: p = 1/8, so at the CLI's alpha the same regression passes (asserted below, so the reason
#: is checked, not only said). The gate runs at 0.2 here, which three losses out of three
#: reach; the rule is the retrieval gate's, unchanged. Five questions would reach 0.05
#: (p = 1/32), at five-thirds of the generation time of this, the slowest test.
ALPHA = 0.2


@pytest.mark.slow
def test_generation_gate_fails_on_a_regression_and_passes_on_the_fix(tmp_path):
    from workbench.generation.local import LocalGenerator

    cache = GenerationCache(tmp_path / "generations")
    generator = CachedGenerator(LocalGenerator(), cache)
    good = gate_config(str(HANDBOOK / "docs"), str(HANDBOOK / "golden.jsonl"))
    path = tmp_path / "generation.json"
    ev, golden, config = evaluate_generation(generator, good, qids=QIDS)
    assert ev.frame.set_index("qid")["value"].to_dict() == {q: 1.0 for q in QIDS}
    update_generation_baseline(path, ev, config, golden)
    # the regression: one 20-character chunk of context loses the answers
    broken = {**good, "chunker": "fixed:size=20,overlap=0", "k": 1, "metrics": None}
    bad, _, bad_config = evaluate_generation(generator, broken, qids=QIDS)
    result = check_generation_gate(bad, path, bad_config, golden, alpha=ALPHA)
    assert not result.passed and result.failed_metrics == [METRIC]
    (check,) = result.checks
    assert check.p_value == pytest.approx(1 / 8) and len(check.lost) == len(QIDS)
    assert check_generation_gate(bad, path, bad_config, golden, alpha=0.05).passed  # why 0.2
    with pytest.raises(BaselineRefused, match="only moves up"):
        update_generation_baseline(path, bad, bad_config, golden)
    # the fix: the same pipeline as the baseline, answered from the cache
    calls = generator.calls
    started = time.perf_counter()
    fixed, _, fixed_config = evaluate_generation(generator, good, qids=QIDS)
    assert generator.calls == calls  # nothing generated again
    assert time.perf_counter() - started < 60  # retrieval only (not a speed claim: a bound)
    assert check_generation_gate(fixed, path, fixed_config, golden, alpha=ALPHA).passed
    # another prompt or model is reported and refused, never compared
    repinned = {**fixed_config, "generation": {**fixed_config["generation"],
                                               "prompt_version": "rag-cite-v2"}}
    with pytest.raises(BaselineRefused, match="prompt_version: 'rag-cite-v1' -> 'rag-cite-v2'"):
        check_generation_gate(fixed, path, repinned, golden, alpha=ALPHA)
    with pytest.raises(BaselineRefused, match="not comparable"):
        update_generation_baseline(path, fixed, repinned, golden)
    update_generation_baseline(path, fixed, repinned, golden, force=True)
    assert check_generation_gate(fixed, path, repinned, golden, alpha=ALPHA).passed


@pytest.mark.slow
def test_cli_gate_generation(tmp_path, capsys):
    import json

    from workbench.cli import main

    path = tmp_path / "generation.json"
    args = ["gate", "--generation", "--baseline", str(path), "--cache", str(tmp_path / "c"),
            "--questions", ",".join(QIDS[:2])]
    assert main(args) == 2  # no baseline yet
    assert main([*args, "--corpus", str(HANDBOOK / "docs"), "--golden",
                 str(HANDBOOK / "golden.jsonl"), "--update-baseline"]) == 0
    assert "created generation baseline" in capsys.readouterr().out
    recorded = json.loads(path.read_text(encoding="utf-8"))["config"]
    assert recorded["generation"]["model"].startswith("SmolLM2") and recorded["qids"] == QIDS[:2]
    assert main([*args, "--json"]) == 0  # answered from the cache
    out = json.loads(capsys.readouterr().out)
    assert out["passed"] and out["n"] == 2


def test_the_pytest_plugin_offers_the_generation_gate(tmp_path):
    from workbench.gate import pytest_plugin

    assert {"retrieval_gate", "generation_gate"} <= set(pytest_plugin.__all__)
    with pytest.raises(pytest.fail.Exception, match="generation baseline not found"):
        pytest_plugin.GenerationGate()(None, tmp_path / "missing.json")
