"""Benchmark scripts reuse the project's functions: they score with its metrics and test with
its statistics, on tiny inputs here (the real runs need ../shared/datasets)."""

from __future__ import annotations

import json
import re
import sys

import pytest

from tests.conftest import HANDBOOK, load_benchmark
from workbench.corpus import load_folder
from workbench.golden import GoldenSet
from workbench.stats import sign_test

PARAGRAPHS = [
    ("北京是中国的首都，也是政治和文化中心。", "中国的首都是哪里？", "北京"),
    ("上海是中国最大的城市，位于长江入海口。", "中国最大的城市是哪个？", "上海"),
    ("长城是古代中国修建的防御工程，全长两万多公里。", "长城有多长？", "两万多公里"),
    ("熊猫主要生活在四川的山区，以竹子为食。", "熊猫吃什么？", "竹子"),
]


def test_bm25_chinese_bench_scores_each_run_once_and_uses_the_sign_test(tmp_path, capsys,
                                                                         monkeypatch):
    """Four retrievers, so four scorings (the means and the per-question reciprocal ranks
    come from one); the p-value printed is workbench's sign test of the wins and losses."""
    pytest.importorskip("bm25s")
    import workbench.metrics.trec as trec

    bench = load_benchmark("bench_bm25_chinese")
    squad = {"data": [{"title": "tiny", "paragraphs": [
        {"context": ctx, "qas": [{"id": f"q{i}", "question": q, "answers": [
            {"text": a, "answer_start": ctx.index(a)}]}]}
        for i, (ctx, q, a) in enumerate(PARAGRAPHS)]}]}
    (tmp_path / "tiny.json").write_text(json.dumps(squad, ensure_ascii=False), encoding="utf-8")
    calls = []
    for module in (bench, trec):
        real = module.score_queries

        def counted(*args, real=real, **kwargs):
            calls.append(1)
            return real(*args, **kwargs)

        monkeypatch.setattr(module, "score_queries", counted)
    monkeypatch.setattr(bench, "DATASETS", tmp_path)
    monkeypatch.setattr(sys, "argv", ["bench_bm25_chinese", "--file", "tiny.json", "-k", "2"])
    assert bench.main() in (0, 1)
    assert len(calls) == 4
    out = capsys.readouterr().out
    wins, losses, p = re.search(r"(\d+) wins, (\d+) losses, .*sign test p=([0-9.e-]+)\)",
                                out).groups()
    assert float(p) == pytest.approx(sign_test(int(wins), int(losses)), rel=1e-2)


def test_evidence_threshold_truth_of_a_whole_span_is_full_coverage():
    """Facts = the whole span: every fact retrieved exactly when the union of the retrieved
    pieces covers the span (coverage 1), for every chunking, ranking and k."""
    bench = load_benchmark("evidence_threshold")
    corpus = load_folder(HANDBOOK / "docs")
    golden = GoldenSet.load(HANDBOOK / "golden.jsonl")
    data = bench.cases(corpus.documents, golden, ["fixed:size=150,overlap=50"], (1, 3),
                       bench.whole_span)
    assert data and any(0 < c < 1 for c, _ in data) and any(ok for _, ok in data)
    for coverage, retrieved in data:
        assert retrieved == (coverage >= 1 - 1e-12), (coverage, retrieved)


def test_speed_ratchet_every_hot_path_keeps_its_accepted_ratio():
    """Each hot path against its peer or floor, as a ratio measured in this process, is no
    worse than benchmarks/speed_baseline.json accepts (times a margin for a loaded machine)."""
    for module in ("pytrec_eval", "bm25s", "openvino"):
        pytest.importorskip(module)
    bench = load_benchmark("speed_ratchet")
    measured = bench.measure()
    assert set(measured) == set(bench.accepted())
    bad = bench.failures(measured)
    assert not bad, "speed ratchet:\n" + "\n".join(bad)


def test_speed_ratchet_fails_a_planted_2x_slowdown(monkeypatch):
    """Scoring made to do its work twice: the ratchet fails naming the check, the accepted
    and the new ratio, and the command that reproduces it."""
    bench = load_benchmark("speed_ratchet")
    real = bench.mean_scores

    def twice(*args, **kwargs):
        real(*args, **kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(bench, "mean_scores", twice)
    measured = bench.measure(["metrics_vs_floor"])
    old = bench.accepted()["metrics_vs_floor"]
    [failure] = bench.failures(measured)
    new = measured["metrics_vs_floor"]
    assert failure.startswith(f"metrics_vs_floor: ours/peer ratio {new:.3f}, accepted {old:.3f}")
    assert "reproduce: PYTHONPATH=. python benchmarks/speed_ratchet.py --only metrics_vs_floor" \
        in failure


def test_speed_ratchet_measures_again_only_past_the_margin_and_keeps_the_best(monkeypatch):
    """A check past its margin on one attempt (a burst of load) is measured again and passes
    once an attempt is within; one slower on every attempt still fails; one within its margin
    is measured once."""
    bench = load_benchmark("speed_ratchet")
    calls = {"burst": [9.0, 1.1, 5.0], "slow": [9.0, 8.0, 7.0], "fine": [1.2]}
    seen = {name: 0 for name in calls}

    def check(name):
        def run():
            seen[name] += 1
            return calls[name][seen[name] - 1]
        return run

    monkeypatch.setattr(bench, "CHECKS", {n: (check(n), "bench") for n in calls})
    baseline = {"burst": 1.0, "slow": 1.0, "fine": 1.0}
    measured = bench.measure(None, baseline)
    assert measured == {"burst": 1.1, "slow": 7.0, "fine": 1.2}
    assert seen == {"burst": 2, "slow": 3, "fine": 1}
    assert [line.split(":")[0] for line in bench.failures(measured, baseline)] == ["slow"]


def test_memory_bench_runs_both_sides_and_names_each_component(capsys):
    """Both sides of bench_memory_scale run on the same chunks and questions (tiny here), and
    the bytes-per-chunk table names every part of ours."""
    pytest.importorskip("bm25s")
    pytest.importorskip("pytrec_eval")
    bench = load_benchmark("bench_memory_scale")
    ours, peer = bench.ours(400, 20), bench.peer(400, 20)
    assert ours.keys() == peer.keys() and min(ours.values()) >= 0
    bench.components(400)
    out = capsys.readouterr().out
    for part in ("Chunk objects", "BM25 index arrays", "BM25 build, transient", "scoring"):
        assert part in out


def test_labeller_bench_opens_three_sessions_and_times_each(tmp_path, capsys):
    """bench_labeller's start-up (a first session given the user's BM25, one that builds it,
    one that reuses it) and search latency run on a small corpus, with the real encoder."""
    pytest.importorskip("bm25s")
    from workbench.corpus import Corpus
    from workbench.retrieval import get_encoder

    bench = load_benchmark("bench_labeller")
    base = Corpus(load_folder(HANDBOOK / "docs").values())
    bench.latency(base, 400, get_encoder("minilm"))
    out = capsys.readouterr().out
    assert re.search(r"400 chunks  start-up [\d.]+ s \(BM25 built\), again on the same chunks "
                     r"[\d.]+ s \(reused\); given the user's BM25 [\d.]+ s", out), out
    assert "widget search p50" in out
    session = tmp_path / "s.jsonl"
    lab = bench.Labeller(base, [{"qid": f"b{i}", "question": "refund"} for i in range(4)],
                         session, dense=False, user_groups=bench.UNRESTRICTED)
    bench.save_latency(lab, base, [{"qid": f"b{i}"} for i in range(4)])
    assert "; 4 saves" in capsys.readouterr().out
