"""Held-out confirmation and the winner's curse (workbench.sweep.holdout)."""

from __future__ import annotations

import json
import re
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.golden import GoldenItem, GoldenSet
from workbench.io import InputError, WorkbenchError
from workbench.stats import selection_bias
from workbench.sweep import SweepResult, run_sweep, split_golden
from workbench.sweep.holdout import MIN_PART, split_path

GRID = {"size": [200, 400, 800], "overlap": [0], "retriever": ["bm25"], "k": [5]}


def _golden(strata: list[int]) -> GoldenSet:
    items = [GoldenItem(f"q{s}-{i}", "?", relevant_chunk_ids=("d#0",), category=f"c{s % 3}",
                        source=f"s{s}") for s, n in enumerate(strata) for i in range(n)]
    return GoldenSet(items)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 12), min_size=1, max_size=8),
       st.floats(0.05, 0.95), st.integers(0, 2**31))
def test_split_is_stratified_disjoint_and_covering(strata, fraction, seed):
    golden = _golden(strata)
    n = len(golden)
    held = min(max(round(fraction * n), 1), n - 1)
    if n < 2 * MIN_PART or not MIN_PART <= held <= n - MIN_PART:
        with pytest.raises(WorkbenchError, match=f"at least {2 * MIN_PART}|at least {MIN_PART}"
                           ) as refused:
            split_golden(golden, fraction, seed)
        suggested = re.search(r"from ([0-9.]+) to ([0-9.]+)$", str(refused.value))
        if n >= 2 * MIN_PART:  # the fractions it suggests work
            assert suggested, refused.value
            for bound in suggested.groups():
                split = split_golden(golden, float(bound), seed)
                assert min(len(split.tuning), len(split.heldout)) >= MIN_PART
        return
    split = split_golden(golden, fraction, seed)
    assert not set(split.tuning) & set(split.heldout)
    assert sorted([*split.tuning, *split.heldout]) == sorted(i.qid for i in golden)  # answerable
    assert len(split.tuning) >= MIN_PART and len(split.heldout) >= MIN_PART
    assert len(split.heldout) == held
    by_qid = {i.qid: i for i in golden}
    held = Counter((by_qid[q].category, by_qid[q].source) for q in split.heldout)
    sizes = Counter((i.category, i.source) for i in golden)
    for key, size in sizes.items():  # floor or ceil of the stratum's share
        assert abs(held[key] - fraction * size) < 1 + 1e-9, (key, held[key], size)


def test_split_is_deterministic_for_a_seed(handbook):
    _, golden = handbook
    a, b = split_golden(golden, 0.3, seed=7), split_golden(golden, 0.3, seed=7)
    assert a == b
    assert split_golden(golden, 0.3, seed=8).heldout != a.heldout
    answerable = [i for i in golden if i.answerable]
    assert len(a.heldout) == round(0.3 * len(answerable)) and len(answerable) < len(golden)
    assert set(a.tuning) | set(a.heldout) == {i.qid for i in answerable}


@pytest.mark.parametrize("bad", [0, 1, 1.5, -0.1, True, "0.3"])
def test_holdout_fraction_is_checked(handbook, bad):
    _, golden = handbook
    with pytest.raises(ValueError, match="holdout must be a fraction"):
        split_golden(golden, bad)


def test_the_split_is_stored_beside_the_state_and_reused(handbook, tmp_path):
    corpus, golden = handbook
    state = tmp_path / "state.jsonl"
    first = run_sweep(GRID, golden, corpus, progress=False, state_path=state, holdout=0.3,
                      holdout_seed=3)
    stored = json.loads(split_path(state).read_text(encoding="utf-8"))
    assert stored["seed"] == 3 and stored["heldout"] == list(first.holdout.heldout)
    again = run_sweep(GRID, golden, corpus, progress=False, state_path=state, holdout=0.3,
                      holdout_seed=3)
    assert again.resumed == 3 and again.holdout == first.holdout
    pd.testing.assert_frame_equal(again.leaderboard(), first.leaderboard())
    with pytest.raises(InputError, match=re.escape("seed=3, not holdout=0.3, seed=4")):
        run_sweep(GRID, golden, corpus, progress=False, state_path=state, holdout=0.3,
                  holdout_seed=4)
    fewer = GoldenSet(list(golden)[:-2])
    gone = sorted(i.qid for i in list(golden)[-2:])
    with pytest.raises(InputError, match=f"golden set changed.*2 removed \\({gone[0]}"):
        run_sweep(GRID, fewer, corpus, progress=False, state_path=state, holdout=0.3,
                  holdout_seed=3)


def test_ranking_uses_the_tuning_part_and_confirm_reports_held_out(handbook):
    corpus, golden = handbook
    result = run_sweep(GRID, golden, corpus, progress=False, holdout=0.3)
    board = result.leaderboard("recall@5")
    tuning, held = set(result.holdout.tuning), set(result.holdout.heldout)
    assert (board["n"] == len(tuning)).all()
    frame = result.frame
    rows = frame[(frame["metric"] == "recall@5") & frame["system"].eq(board.index[0])]
    assert board["mean"].iloc[0] == pytest.approx(rows[rows.qid.isin(tuning)]["value"].mean())
    conf = result.confirm("recall@5")
    assert conf.config == board.index[0] and conf.heldout_n == len(held)
    assert conf.heldout_mean == pytest.approx(rows[rows.qid.isin(held)]["value"].mean())
    assert conf.heldout_ci[0] <= conf.heldout_mean <= conf.heldout_ci[1]
    assert conf.selection_bias == board["selection_bias"].iloc[0] >= 0
    assert board["selection_bias"].iloc[1:].isna().all()
    if conf.comparison is not None:
        assert conf.comparison.n == len(held)
    assert "held-out" in conf.summary()
    with pytest.raises(ValueError, match="no held-out part"):
        run_sweep(GRID, golden, corpus, progress=False).confirm()


def test_selection_bias_is_zero_for_one_config_and_for_identical_configs():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, size=(1, 30)).astype(float)
    assert selection_bias(x) == 0.0
    assert selection_bias(np.repeat(x, 5, axis=0)) == pytest.approx(0.0, abs=1e-12)
    # a configuration far ahead of the rest is always re-picked: no selection bias
    far = np.vstack([np.ones(30), np.zeros((4, 30))])
    assert selection_bias(far) == pytest.approx(0.0, abs=1e-12)


def _null_sweep(rng: np.random.Generator, configs: int, n: int) -> SweepResult:
    """``configs`` configurations of the same true quality (p = 0.5, independent 0/1
    outcomes per question) as a SweepResult, with a held-out split of 0.3."""
    golden = GoldenSet([GoldenItem(f"q{i:03d}", "?", relevant_chunk_ids=("d#0",),
                                   category=f"c{i % 2}") for i in range(n)])
    names = [f"size={s}" for s in range(configs)]
    values = rng.integers(0, 2, size=(configs, n)).astype(float)
    frame = pd.DataFrame({
        "system": np.repeat(names, n), "qid": [i.qid for i in golden] * configs,
        "category": [i.category for i in golden] * configs, "source": "",
        "relevance": "chunk-id", "metric": "recall@5", "value": values.ravel(),
        "size": np.repeat(range(configs), n)})
    table = pd.DataFrame({"size": range(configs), "spec": "", "retriever_name": "bm25",
                          "k_value": 5, "index_tokens": 0}, index=names)
    return SweepResult(frame, {}, {}, table,
                       holdout=split_golden(golden, 0.3, int(rng.integers(2**31))))


def test_null_configurations_inflate_the_tuning_winner_not_the_held_out_mean():
    rng = np.random.default_rng(20240601)
    tuning, held, bias = [], [], []
    for _ in range(40):
        conf = _null_sweep(rng, configs=30, n=100).confirm("recall@5")
        tuning.append(conf.tuning_mean)
        held.append(conf.heldout_mean)
        bias.append(conf.selection_bias)
    inflation = np.mean(tuning) - 0.5
    # best of 30 on 70 questions: about 2 standard errors (0.06) above the truth
    assert inflation > 0.08
    # the held-out mean is unbiased: 40 x 30 questions, standard error about 0.015
    assert abs(np.mean(held) - 0.5) < 0.05
    # the bootstrap sees a good part of the inflation, and not more than is there
    assert 0.25 * inflation < np.mean(bias) < 1.25 * inflation


def test_cli_sweep_holdout(tmp_path, capsys):
    from tests.conftest import HANDBOOK
    from workbench.cli import main

    grid = tmp_path / "grid.yaml"
    grid.write_text("size: [400, 800]\nretriever: bm25\nk: 5\nmetrics: [recall@5]\n",
                    encoding="utf-8")
    args = ["sweep", "--corpus", str(HANDBOOK / "docs"), "--golden",
            str(HANDBOOK / "golden.jsonl"), "--grid", str(grid), "--state",
            str(tmp_path / "state.jsonl"), "--cache", str(tmp_path / "cache"), "--holdout",
            "0.3"]
    assert main([*args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["holdout"]
    assert out["heldout"]["n"] == 20 and out["tuning"]["n"] == 47
    assert (tmp_path / "state.holdout.json").exists()
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "ranked on the tuning questions" in text and "held-out" in text
    assert main([*args, "--holdout-seed", "1"]) == 2
    assert "state.holdout.json" in capsys.readouterr().err


def test_the_explorer_shows_the_selection_bias_and_the_held_out_score(handbook):
    from workbench.widgets.sweep_explorer import SweepExplorer

    corpus, golden = handbook
    result = run_sweep(GRID, golden, corpus, progress=False, holdout=0.3)
    ex = SweepExplorer(result, metric="recall@5")
    board, conf = result.leaderboard("recall@5"), result.confirm("recall@5")
    expected = f"expected from selection alone: {board['selection_bias'].iloc[0] * 100:+.1f}"
    assert expected in ex.winner_line() and expected in ex.to_html(include_plotlyjs=False)
    assert f"held-out {conf.heldout_mean:.3f}" in ex.winner_line()
    assert "selection alone" in ex.config_select.options[0][0]
    assert all("selection alone" not in label for label, _ in ex.config_select.options[1:])


def test_selection_bias_grows_with_the_number_of_null_configurations():
    rng = np.random.default_rng(5)
    x = rng.integers(0, 2, size=(40, 60)).astype(float)
    two, ten, forty = (selection_bias(x[:m]) for m in (2, 10, 40))
    assert 0 < two < ten < forty
    assert selection_bias(x[::-1]) == pytest.approx(forty, abs=0.01)  # order of configs


def _sweep_of(values: np.ndarray, heldout: int, tokens: list[int] | None = None) -> SweepResult:
    """configurations x questions of recall@5 as a SweepResult whose last ``heldout``
    questions are the held-out part."""
    from workbench.sweep import HoldoutSplit

    configs, n = values.shape
    qids = [f"q{i:03d}" for i in range(n)]
    names = [f"size={s}" for s in range(configs)]
    frame = pd.DataFrame({
        "system": np.repeat(names, n), "qid": qids * configs, "category": "c", "source": "",
        "relevance": "chunk-id", "metric": "recall@5", "value": values.ravel(),
        "size": np.repeat(range(configs), n)})
    table = pd.DataFrame({"size": range(configs), "spec": "", "retriever_name": "bm25",
                          "k_value": 5, "index_tokens": tokens or [0] * configs}, index=names)
    split = HoldoutSplit(0.3, 0, tuple(qids[:n - heldout]), tuple(qids[n - heldout:]),
                         golden_key="")
    return SweepResult(frame, {}, {}, table, holdout=split)


def test_an_exact_tie_is_said_with_the_tied_held_out_figures():
    """The issue's case: two configurations equal on the tuning part (the tie-break picks the
    first), the other better held out; a third far behind. The confirmation says so, lists
    the tied one's held-out figures, and sets the winner's gap beside the average gap."""
    tuning = np.array([[1] * 7 + [0] * 3, [0] * 3 + [1] * 7, [0] * 9 + [1]], float)
    held = np.array([[1, 0, 0, 0, 1], [1, 1, 1, 1, 0], [0, 0, 0, 0, 0]], float)
    result = _sweep_of(np.hstack([tuning, held]), heldout=5)
    conf = result.confirm("recall@5")
    assert conf.config == "size=0" and result.tied("recall@5") == ["size=1"]
    assert [(t.config, t.tuning_mean, t.heldout_mean, t.heldout_n) for t in conf.tied] == [
        ("size=1", 0.7, 0.8, 5)]
    gaps = tuning.mean(axis=1) - held.mean(axis=1)
    assert conf.gap == pytest.approx(gaps[0])
    assert conf.mean_gap == pytest.approx(gaps.mean())
    text = conf.summary()
    assert "tied on tuning" in text and "size=1: tuning 0.700, held-out 0.800 n=5" in text
    assert f"{gaps.mean() * 100:+.1f} points on average over the 3 configurations" in text


@settings(max_examples=60)
@given(st.integers(2, 6), st.integers(4, 30), st.integers(0, 2**32 - 1))
def test_tied_is_every_configuration_within_one_question_of_the_winner(configs, n, seed):
    """The rule itself: the configurations other than the winner whose tuning mean is at most
    1/n below the winner's (n tuning questions), best first."""
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 2, size=(configs, n + 3)).astype(float)
    result = _sweep_of(values, heldout=3, tokens=list(rng.integers(0, 3, configs)))
    means = values[:, :n].mean(axis=1)
    winner = result.best("recall@5")
    top = means[int(winner.split("=")[1])]
    assert top == means.max()
    expected = [c for c in result.leaderboard("recall@5").index
                if c != winner and means[int(c.split("=")[1])] >= top - 1 / n - 1e-12]
    assert result.tied("recall@5") == expected


def test_cli_sweep_json_gives_tuning_and_held_out_figures_apart(tmp_path, capsys):
    """configs[].metrics are the tuning figures the leaderboard and best rank on (so ranking
    the JSON picks the same winner), configs[].heldout the held-out ones, each with its n."""
    from tests.conftest import HANDBOOK
    from workbench.cli import main

    grid = tmp_path / "grid.yaml"
    grid.write_text("size: [200, 400, 800]\nretriever: bm25\nk: 5\nmetrics: [recall@5]\n",
                    encoding="utf-8")
    assert main(["sweep", "--corpus", str(HANDBOOK / "docs"), "--golden",
                 str(HANDBOOK / "golden.jsonl"), "--grid", str(grid), "--cache",
                 str(tmp_path / "cache"), "--holdout", "0.3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["questions"] == {"all": 67, "tuning": 47, "heldout": 20}
    rows = out["configs"]
    assert all(r["questions"] == "tuning" and r["metrics"]["recall@5"]["n"] == 47
               and r["heldout"]["recall@5"]["n"] == 20 for r in rows)
    by_json = max(rows, key=lambda r: (r["metrics"]["recall@5"]["mean"],
                                       -r["cost"]["index_tokens"]))
    assert by_json["config"] == out["best"]["recall@5"] == out["holdout"]["config"]
    winner = next(r for r in rows if r["config"] == out["holdout"]["config"])
    assert winner["heldout"]["recall@5"]["mean"] == pytest.approx(out["holdout"]["heldout"]["mean"],
                                                                 abs=1e-9)
    gaps = [r["metrics"]["recall@5"]["mean"] - r["heldout"]["recall@5"]["mean"] for r in rows]
    assert out["holdout"]["mean_gap"] == pytest.approx(np.mean(gaps), abs=1e-9)
    assert out["tied"]["recall@5"] == [t["config"] for t in out["holdout"]["tied"]]


def test_cli_sweep_says_a_tie_without_a_held_out_part(tmp_path, capsys):
    """size 1200 and 1201 chunk the handbook alike: an exact tie, said under the winner."""
    from tests.conftest import HANDBOOK
    from workbench.cli import main

    grid = tmp_path / "grid.yaml"
    grid.write_text("size: [1200, 1201]\nretriever: bm25\nk: 5\nmetrics: [recall@5]\n",
                    encoding="utf-8")
    args = ["sweep", "--corpus", str(HANDBOOK / "docs"), "--golden",
            str(HANDBOOK / "golden.jsonl"), "--grid", str(grid), "--cache", str(tmp_path / "c")]
    assert main(args) == 0
    assert "tied with it (one question: 1/67): size=1201" in capsys.readouterr().out
    assert main([*args, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tied"] == {"recall@5": ["size=1201"]}
