"""Writes that lose nothing: concurrent add_case calls, and writers killed mid-write.

* 8 processes each add 25 cases to one golden set at the same moment: all 200 are there, and
  the 74 lines that were there keep their bytes.
* 30 SIGKILLs at random points of ``add_case`` (12), ``GoldenSet.save`` (10) and ``workbench
  gate --update-baseline`` (8): after each, the file is whole (it loads; a saved golden set is
  byte for byte one of the two versions written; appends keep every earlier line), and the
  next write removes any temporary file the killed writer left, so none is left at the end.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

from tests.conftest import HANDBOOK, ROOT
from workbench.gate import Baseline
from workbench.gate.history import append_changelog, changelog_path
from workbench.golden import GoldenSet, add_case
from workbench.io import temp_files

GOLDEN = HANDBOOK / "golden.jsonl"
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1",
       "TOKENIZERS_PARALLELISM": "false"}

ADDER = """
import os, sys, time
from workbench.golden import add_case
path, who, go = sys.argv[1], sys.argv[2], sys.argv[3]
while not os.path.exists(go):
    time.sleep(0.005)
for i in range(25):
    add_case(path, {"qid": f"p{who}-{i}", "question": f"question {i} from process {who}?",
                    "relevant_chunk_ids": ["it-security#0"]})
"""


def test_eight_processes_adding_25_cases_each_at_once_lose_none(tmp_path):
    path = tmp_path / "golden.jsonl"
    shutil.copy(GOLDEN, path)
    before = path.read_bytes()
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", ADDER, str(path), str(n), str(go)],
                              env=ENV, stderr=subprocess.PIPE) for n in range(8)]
    time.sleep(3)  # let every process import and wait at the start line
    go.touch()
    errors = [p.communicate(timeout=300)[1].decode() for p in procs]
    assert [p.returncode for p in procs] == [0] * 8, errors
    golden = GoldenSet.load(path)
    added = {i.qid for i in golden} - {i.qid for i in GoldenSet.load(GOLDEN)}
    assert len(added) == 200 == len({f"p{n}-{i}" for n in range(8) for i in range(25)} & added)
    assert len(golden) == 74 + 200
    assert path.read_bytes().startswith(before)  # the other lines keep their bytes
    assert temp_files(path) == []


LOOP = {
    "add_case": """
import itertools, sys
from workbench.golden import add_case
path, ready = sys.argv[1], sys.argv[2]
for n in itertools.count():
    add_case(path, {"qid": f"kill-{sys.argv[3]}-{n}", "question": "x" * 2000 + f" {n}?",
                    "relevant_chunk_ids": ["it-security#0"]})
    if n == 0:
        open(ready, "w").close()
""",
    "save": """
import itertools, sys
from workbench.golden import GoldenSet
path, ready = sys.argv[1], sys.argv[2]
small, big = GoldenSet.load(sys.argv[4]), GoldenSet.load(sys.argv[5])
for n in itertools.count():
    (big if n % 2 else small).save(path)
    if n == 0:
        open(ready, "w").close()
""",
    "gate": """
import itertools, sys
from workbench.cli import main
path, ready = sys.argv[1], sys.argv[2]
args = ["gate", "--baseline", path, "--corpus", "data/handbook/docs", "--golden",
        "data/handbook/golden.jsonl", "--update-baseline", "--force"]
for n in itertools.count():
    assert main(args) == 0
    if n == 0:
        open(ready, "w").close()
""",
}


def _kill_at_random(kind: str, path: Path, tmp: Path, rng: random.Random, n: int,
                    extra: list[str]) -> None:
    ready = tmp / f"ready-{kind}-{n}"
    proc = subprocess.Popen([sys.executable, "-c", LOOP[kind], str(path), str(ready), str(n),
                             *extra], env=ENV, cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not ready.exists():
        assert proc.poll() is None, proc.communicate()[1].decode()
        assert time.monotonic() < deadline, "the writer never finished its first write"
        time.sleep(0.01)
    time.sleep(rng.uniform(0.0, 0.6))  # a random point of the writing loop
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    proc.stderr.close()  # type: ignore[union-attr]


def test_thirty_kills_never_leave_a_truncated_file_or_a_temp_file(tmp_path):
    rng = random.Random(11)
    kills = left_behind = 0
    # add_case: every earlier line keeps its bytes, the file always loads
    golden = tmp_path / "golden.jsonl"
    shutil.copy(GOLDEN, golden)
    for n in range(12):
        before = golden.read_bytes()
        _kill_at_random("add_case", golden, tmp_path, rng, n, [])
        kills += 1
        assert golden.read_bytes().startswith(before)
        GoldenSet.load(golden)  # every line whole
        left_behind += len(temp_files(golden))
        add_case(golden, {"qid": f"after-{n}", "question": "after the kill?",
                          "relevant_chunk_ids": ["it-security#0"]})
        assert temp_files(golden) == []
    # save: the file is byte for byte one of the two versions
    small_path, big_path = tmp_path / "small.jsonl", tmp_path / "big.jsonl"
    shutil.copy(GOLDEN, small_path)
    base = GoldenSet.load(GOLDEN)
    GoldenSet([*base, *[replace(i, qid=f"{i.qid}-{c}") for c in range(60) for i in base]]
              ).save(big_path)
    versions = {GoldenSet.load(small_path).save(tmp_path / "v1.jsonl").read_bytes(),
                big_path.read_bytes()}
    target = tmp_path / "saved.jsonl"
    for n in range(10):
        _kill_at_random("save", target, tmp_path, rng, n, [str(small_path), str(big_path)])
        kills += 1
        assert target.read_bytes() in versions
        left_behind += len(temp_files(target))
        GoldenSet.load(target).save(target)
        assert temp_files(target) == []
    # gate --update-baseline: the baseline always loads, and so does its changelog, which
    # the gate rewrites too (a kill there leaves the changelog's temporary file, which the
    # next ratchet's line removes)
    baseline = tmp_path / "baseline.json"
    changelog = changelog_path(baseline)
    for n in range(8):
        _kill_at_random("gate", baseline, tmp_path, rng, n, [])
        kills += 1
        lines = changelog.read_text(encoding="utf-8").splitlines(keepends=True)
        assert lines and all(line.endswith("\n") for line in lines)
        left_behind += len(temp_files(baseline)) + len(temp_files(changelog))
        kept = Baseline.load(baseline)
        kept.save(baseline)
        append_changelog(baseline, kept, kept)
        assert temp_files(baseline) == temp_files(changelog) == []
        assert changelog.read_text(encoding="utf-8").splitlines(keepends=True)[:-1] == lines
    assert kills == 30
    leftovers = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []
    print(f"{kills} kills; {left_behind} temporary file(s) left by killed writers, each removed "
          "by the next write; no truncated file")
