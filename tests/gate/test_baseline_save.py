"""Saves of the gate's baseline and the sweep state never overwrite a newer file: a baseline
saved over the file it was loaded from checks, under the lock, that the file still holds what
was loaded (:func:`workbench.io.write_unless_changed`); the ratchet saves under the same
rule; the sweep state and the changelog only grow (:func:`workbench.io.append_text`)."""

from __future__ import annotations

import dataclasses
import json
import multiprocessing

import pytest

from tests.gate.test_gate import BASE_HITS, CONFIG, GOLDEN, ev_of, with_changes
from workbench import io as wio
from workbench.gate import Baseline, update_baseline
from workbench.gate import ratchet as gate_ratchet


def _start(tmp_path):
    return update_baseline(tmp_path / "evals" / "baseline.json", ev_of(BASE_HITS), CONFIG,
                           GOLDEN).path


def _ratchet_elsewhere(path: str) -> None:
    """Another process ratchets the baseline up (q45 now found)."""
    update_baseline(path, ev_of(with_changes(BASE_HITS, q45=1)), CONFIG, GOLDEN)


def test_a_baseline_ratcheted_by_another_process_is_never_overwritten(tmp_path):
    path = _start(tmp_path)
    mine = Baseline.load(path)
    edited = dataclasses.replace(mine, created="edited in a notebook")
    proc = multiprocessing.get_context("spawn").Process(target=_ratchet_elsewhere,
                                                        args=(str(path),))
    proc.start()
    proc.join()
    assert proc.exitcode == 0
    theirs = path.read_bytes()
    with pytest.raises(wio.StaleFileError, match=r"baseline\.json: the baseline file changed "
                       r"since it was loaded \(it was rewritten.*nothing written"):
        edited.save()
    assert path.read_bytes() == theirs  # nothing lost
    assert Baseline.load(path).outcomes["q45"]["hit_rate@5"] == 1.0
    edited.save(tmp_path / "mine.json")  # the way out the message names
    assert Baseline.load(tmp_path / "mine.json").created == "edited in a notebook"


def test_saves_of_a_loaded_baseline_follow_their_own_writes(tmp_path):
    path = _start(tmp_path)
    first = dataclasses.replace(Baseline.load(path), created="one")
    first.save()
    first.save()  # the file holds what it wrote
    second = dataclasses.replace(first, created="two")  # derived after the save: its stamp
    second.save()
    assert Baseline.load(path).created == "two"
    stale = Baseline.load(path)
    path.write_text(path.read_text(encoding="utf-8").replace('"two"', '"by hand"'),
                    encoding="utf-8")
    with pytest.raises(wio.StaleFileError):
        dataclasses.replace(stale, created="three").save()
    assert Baseline.load(path).created == "by hand"


def test_the_ratchet_refuses_a_file_rewritten_between_its_read_and_its_write(tmp_path,
                                                                             monkeypatch):
    path = _start(tmp_path)
    real = gate_ratchet.refuse_golden_change

    def editor_writes(*args, **kwargs):  # an editor that ignores the lock, mid-ratchet
        path.write_text(path.read_text(encoding="utf-8").replace('"created"', '"created" ',
                                                                 1), encoding="utf-8")
        return real(*args, **kwargs)

    monkeypatch.setattr(gate_ratchet, "refuse_golden_change", editor_writes)
    with pytest.raises(wio.StaleFileError, match="changed since it was loaded"):
        update_baseline(path, ev_of(with_changes(BASE_HITS, q45=1)), CONFIG, GOLDEN)
    assert b'"created" :' in path.read_bytes()  # the editor's file, kept
    monkeypatch.setattr(gate_ratchet, "refuse_golden_change", real)
    update_baseline(path, ev_of(with_changes(BASE_HITS, q45=1)), CONFIG, GOLDEN)
    assert Baseline.load(path).outcomes["q45"]["hit_rate@5"] == 1.0


def test_a_forced_ratchet_over_a_broken_file_still_checks_it_is_unchanged(tmp_path,
                                                                        monkeypatch):
    path = _start(tmp_path)
    path.write_text("{broken", encoding="utf-8")
    update_baseline(path, ev_of(BASE_HITS), CONFIG, GOLDEN, force=True)  # replaced
    assert Baseline.load(path).n == 60
    path.write_text("{broken", encoding="utf-8")
    real = Baseline.to_json

    def editor_writes(self, target=None):  # the broken file is being fixed meanwhile
        path.write_text("{fixed by hand", encoding="utf-8")
        return real(self, target)

    monkeypatch.setattr(Baseline, "to_json", editor_writes)
    with pytest.raises(wio.StaleFileError, match="changed since it was loaded"):
        update_baseline(path, ev_of(BASE_HITS), CONFIG, GOLDEN, force=True)
    assert path.read_text(encoding="utf-8") == "{fixed by hand"


def test_sweep_state_keeps_what_another_writer_put_there(tmp_path):
    state = tmp_path / "state.jsonl"
    theirs = json.dumps({"key": "theirs", "format": 0, "result": {}}) + "\n"
    state.write_text(theirs, encoding="utf-8")
    wio.append_text(state, "mine-1\n", what="sweep state")
    state.write_text(theirs + theirs, encoding="utf-8")  # rewritten by another sweep
    wio.append_text(state, "mine-2\n", what="sweep state")
    assert state.read_text(encoding="utf-8") == theirs + theirs + "mine-2\n"
    state.write_text("no newline", encoding="utf-8")
    wio.append_text(state, "mine-3\n", what="sweep state")
    assert state.read_text(encoding="utf-8") == "no newline\nmine-3\n"


def _append_lines(path: str, worker: int, n: int) -> None:
    for i in range(n):
        wio.append_text(path, f"w{worker}-{i}\n", what="sweep state")


def test_eight_processes_appending_to_one_state_file_lose_no_line(tmp_path):
    state = tmp_path / "state.jsonl"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_append_lines, args=(str(state), w, 20)) for w in range(8)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
        assert p.exitcode == 0
    lines = state.read_text(encoding="utf-8").splitlines()
    assert sorted(lines) == sorted(f"w{w}-{i}" for w in range(8) for i in range(20))
