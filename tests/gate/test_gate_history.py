"""The baseline's changelog (workbench.gate.history) and `workbench gate --history`."""

from __future__ import annotations

import subprocess
import threading

import pytest

from tests.conftest import HANDBOOK_ARGS, ROOT
from tests.gate.test_gate import BASE_HITS, CONFIG, GOLDEN, ev_of, with_changes
from workbench.cli import main
from workbench.gate import BaselineRefused, update_baseline
from workbench.gate.history import changelog_path, git_commit, read_history


def test_each_ratchet_appends_one_readable_line(tmp_path):
    path = tmp_path / "evals" / "baseline.json"
    update_baseline(path, ev_of(with_changes(BASE_HITS, q00=0, q01=0)), CONFIG, GOLDEN)
    log = changelog_path(path)
    assert log == tmp_path / "evals" / "baseline.changelog"
    first = read_history(path).splitlines()
    assert len(first) == 1 and " | created | hit_rate@5 0.717" in first[0]
    assert "no git" in first[0]  # tmp_path is not in a git work tree
    better = ev_of(with_changes(BASE_HITS, q01=0, q50=1))  # q00 up, q50 up, q01 unchanged
    update_baseline(path, better, {**CONFIG, "chunker": "fixed:size=400"}, GOLDEN)
    lines = read_history(path).splitlines()
    assert len(lines) == 2 and lines[0] == first[0]
    line = lines[1]
    assert "chunker: fixed:size=800,overlap=100 -> fixed:size=400" in line
    assert "hit_rate@5 0.717 -> 0.750 (+3.3 pts)" in line
    assert "mrr@5 0.358 -> 0.375 (+1.7 pts)" in line
    assert "hit_rate@5 flipped: +q00 +q50" in line and "q01" not in line
    # a refused ratchet writes no line; a forced one says so
    with pytest.raises(BaselineRefused):
        update_baseline(path, ev_of(with_changes(BASE_HITS, q00=0, q02=0, q50=0)), CONFIG,
                        GOLDEN)
    assert len(read_history(path).splitlines()) == 2
    update_baseline(path, ev_of(with_changes(BASE_HITS, q02=0)), CONFIG, GOLDEN, force=True)
    last = read_history(path).splitlines()[-1]
    assert " forced | " in last and "-q02" in last and "-q50" in last
    assert "hit_rate@5 0.750 -> 0.733 (-1.7 pts)" in last


def test_concurrent_ratchets_lose_no_line(tmp_path):
    paths = [tmp_path / "baseline.json"] * 6
    errors: list[BaseException] = []

    def write(_):
        try:
            update_baseline(paths[0], ev_of(BASE_HITS), CONFIG, GOLDEN)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(read_history(paths[0]).splitlines()) == 6


def test_the_commit_is_recorded_in_git(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    run = {"cwd": repo, "check": True, "capture_output": True}
    subprocess.run(["git", "init", "-q"], **run)
    subprocess.run(["git", "-c", "user.email=a@b", "-c", "user.name=t", "commit", "-q",
                    "--allow-empty", "-m", "x"], **run)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], text=True,
                          **run).stdout.strip()
    assert git_commit(repo) == head
    update_baseline(repo / "baseline.json", ev_of(BASE_HITS), CONFIG, GOLDEN)
    assert f"commit {head} | created" in read_history(repo / "baseline.json")


def test_cli_gate_history(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    path = tmp_path / "baseline.json"
    assert main(["gate", "--baseline", str(path), "--history"]) == 2  # a typo is not "no history"
    assert "baseline not found" in capsys.readouterr().err
    assert main(["gate", "--baseline", str(path), *HANDBOOK_ARGS, "--chunker",
                 "fixed:size=400,overlap=0", "--update-baseline"]) == 0
    assert main(["gate", "--baseline", str(path), "--chunker", "fixed:size=800,overlap=100",
                 "--update-baseline"]) == 0
    capsys.readouterr()
    assert main(["gate", "--baseline", str(path), "--history"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and "created" in out[0]
    assert "chunker: fixed:size=400,overlap=0 -> fixed:size=800,overlap=100" in out[1]
    assert "flipped: +" in out[1]
