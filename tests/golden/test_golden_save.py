"""A save never overwrites a newer file: ``GoldenSet.save()`` to the file it was loaded from
checks, under the lock, that the file still holds what was loaded; cases appended since are
kept, any other change is refused (:func:`workbench.io.write_unless_changed`)."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from workbench import io as wio
from workbench.golden import GoldenItem, GoldenSet, add_case


def _item(qid: str) -> GoldenItem:
    return GoldenItem(qid, f"question {qid}?", relevant_chunk_ids=(f"{qid}#0",))


def _start(tmp_path: Path, n: int = 3) -> Path:
    path = tmp_path / "golden.jsonl"
    GoldenSet([_item(f"seed{i}") for i in range(n)]).save(path)
    return path


def test_cases_added_since_load_survive_a_save(tmp_path):
    path = _start(tmp_path)
    gs = GoldenSet.load(path)
    add_case(path, _item("new1"))
    gs.save()
    add_case(path, _item("new2"))
    gs.save()  # the second save keeps both: its stamp covers only what it wrote
    assert [i.qid for i in GoldenSet.load(path)] == ["seed0", "seed1", "seed2", "new1", "new2"]


def test_a_rewritten_file_is_never_overwritten(tmp_path):
    path = _start(tmp_path)
    gs = GoldenSet.load(path)
    edited = path.read_text(encoding="utf-8").replace("question seed1?", "edited by hand?")
    path.write_text(edited, encoding="utf-8")
    with pytest.raises(wio.StaleFileError, match=r"changed since it was loaded.*rewritten"):
        gs.save()
    assert path.read_text(encoding="utf-8") == edited
    gs.save(tmp_path / "mine.jsonl")  # another path: the way out the message names
    assert len(GoldenSet.load(tmp_path / "mine.jsonl")) == 3


def test_an_appended_qid_this_set_holds_is_refused(tmp_path):
    path = _start(tmp_path)
    gs = GoldenSet.load(path)
    mine = GoldenSet([*gs.items, _item("same")], path)
    mine._stamp = gs._stamp  # the set a notebook derived from the loaded one
    add_case(path, GoldenItem("same", "another question?", relevant_chunk_ids=("x#0",)))
    before = path.read_bytes()
    with pytest.raises(wio.StaleFileError, match=r"reuse qids.*same"):
        mine.save()
    assert path.read_bytes() == before


def test_write_unless_changed_is_the_one_rule(tmp_path):
    path = tmp_path / "f.txt"
    path.write_bytes(b"a\n")
    _, stamp = wio.read_text_stamped(path)
    wio.write_unless_changed(path, b"b\n", stamp, what="test")
    assert path.read_bytes() == b"b\n"
    with pytest.raises(wio.StaleFileError, match=r"1 line\(s\) were appended"):
        path.write_bytes(b"b\nc\n")
        wio.write_unless_changed(path, b"x\n", wio.FileStamp.of(b"b\n"), what="test")
    assert path.read_bytes() == b"b\nc\n"
    wio.write_unless_changed(path, b"b\nc\n", stamp, what="test")  # already holds it: kept
    assert path.read_bytes() == b"b\nc\n"


def _adder(path: str, worker: int, n: int) -> None:
    for i in range(n):
        add_case(path, _item(f"w{worker}-{i}"))


def test_save_loop_beside_eight_add_case_processes_loses_nothing(tmp_path):
    path = _start(tmp_path, 5)
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_adder, args=(str(path), w, 25)) for w in range(8)]
    for p in procs:
        p.start()
    held = GoldenSet.load(path)
    saves = refused = 0
    while any(p.is_alive() for p in procs):
        held.save()  # a set held across saves
        fresh = GoldenSet.load(path)
        try:
            fresh.save()
        except wio.StaleFileError:  # only if the file was rewritten, which nobody does
            refused += 1
        saves += 2
    for p in procs:
        p.join()
        assert p.exitcode == 0
    held.save()
    qids = [i.qid for i in GoldenSet.load(path)]
    expected = {f"seed{i}" for i in range(5)} | {f"w{w}-{i}" for w in range(8) for i in range(25)}
    assert set(qids) == expected and len(qids) == 205
    assert saves > 0 and refused == 0


def test_a_save_with_nothing_new_still_clears_a_killed_writers_temp_file(tmp_path):
    """A writer killed mid-write leaves ``.NAME.XXXXXXXX.tmp``; the next save removes it even
    when the file already holds what it would write (the case the 30-kill test hit)."""
    path = tmp_path / "g.jsonl"
    path.write_bytes(b"a\n")
    _, stamp = wio.read_text_stamped(path)
    stale = tmp_path / ".g.jsonl.k1ll3d00.tmp"
    stale.write_bytes(b"half a lin")
    assert wio.temp_files(path) == [stale]
    wio.write_unless_changed(path, b"a\n", stamp, what="test")
    assert wio.temp_files(path) == [] and path.read_bytes() == b"a\n"
