"""File I/O: reading with file:line errors, atomic and locked writes, stale temp cleanup."""

from __future__ import annotations

import json
import os
import threading
import time

import pytest

from workbench.io import (
    InputError,
    atomic_write_text,
    decode_json_file,
    decode_json_line,
    iter_jsonl,
    lock_path,
    locked,
    read_text,
    temp_files,
)


def test_read_text_names_the_file_and_the_line_of_bytes_that_are_not_utf8(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_bytes(b'{"qid": "a"}\n{"qid": "caf\xe9"}\n')
    with pytest.raises(InputError, match=r"g\.jsonl:2: byte 0xe9 at column 13 is not UTF-8"):
        read_text(path)
    with pytest.raises(InputError, match="is a folder, not a golden set file"):
        read_text(tmp_path, "golden set")
    with pytest.raises(InputError, match="baseline file not found"):
        read_text(tmp_path / "none.json", "baseline")
    path.write_bytes("\ufeff{}".encode())
    assert read_text(path) == "{}"  # a byte-order mark is dropped


def test_decode_refuses_what_json_would_accept_silently(tmp_path):
    with pytest.raises(InputError, match=r"f:3: field 'qid': given twice"):
        decode_json_line('{"qid": "a", "qid": "b"}', "f:3")
    with pytest.raises(InputError, match=r"f:1: field 'evidence\[0\]\.text': holds a lone"):
        decode_json_line('{"evidence": [{"text": "\\ud800"}]}', "f:1")
    with pytest.raises(InputError, match="nested too deeply"):
        decode_json_line("[" * 100_000 + "]" * 100_000, "f:1")
    with pytest.raises(InputError, match=r"f:1: malformed JSON"):
        decode_json_line("{oops", "f:1")
    with pytest.raises(InputError, match=r"b\.json:3: malformed JSON"):
        decode_json_file('{\n  "a": 1,\n  oops\n}', "b.json")
    assert decode_json_line('{"a": "\\ud83d\\ude00"}', "f:1") == {"a": "😀"}  # a pair is fine
    path = tmp_path / "rows.jsonl"
    path.write_text('{"a": 1}\n\n{"a": "x\u2028y"}\n', encoding="utf-8")
    assert [w for w, _ in iter_jsonl(path)] == [f"{path}:1", f"{path}:3"]  # U+2028 is no line


def test_atomic_write_refuses_a_folder_a_missing_folder_and_reports_a_full_disk(tmp_path,
                                                                                 monkeypatch):
    target = tmp_path / "out.txt"
    with pytest.raises(InputError, match="is a folder; give the path of a file"):
        atomic_write_text(tmp_path, "x")
    with pytest.raises(InputError, match=r"folder .*typo does not exist; check the path"):
        atomic_write_text(tmp_path / "typo" / "out.txt", "x")
    assert not (tmp_path / "typo").exists()
    atomic_write_text(tmp_path / "made" / "out.txt", "x", make_parents=True)
    atomic_write_text(target, "old")

    def full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(InputError, match=r"cannot write \(No space left on device\); the old"):
        atomic_write_text(target, "new" * 10_000)
    monkeypatch.undo()
    assert target.read_text() == "old" and temp_files(target) == []


def test_a_read_only_target_is_one_clear_error(tmp_path, monkeypatch):
    """A folder the process may not write to: real permissions for a user; as root (who
    writes through them) the kernel's answer, EACCES, is given by the file creation itself."""
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "f.txt").write_text("old")
    folder.chmod(0o500)
    if os.geteuid() == 0:
        real_open = os.open

        def denied(path, flags, *args, **kwargs):
            if str(path).startswith(str(folder)) and flags & os.O_CREAT:
                raise PermissionError(13, "Permission denied", str(path))
            return real_open(path, flags, *args, **kwargs)

        monkeypatch.setattr(os, "open", denied)
    try:
        with pytest.raises(InputError, match=r"f\.txt: cannot write.*Permission denied"):
            atomic_write_text(folder / "f.txt", "new")
    finally:
        monkeypatch.undo()
        folder.chmod(0o700)
    assert (folder / "f.txt").read_text() == "old" and temp_files(folder / "f.txt") == []


def test_written_files_get_a_plain_writes_mode_without_touching_the_umask(tmp_path,
                                                                          monkeypatch):
    """A new file gets 0o666 less the umask (applied by the kernel, the process umask never
    changed: other threads share it); a replaced file keeps its mode."""
    old = os.umask(0o027)
    try:
        def no_umask(mask):
            raise AssertionError("os.umask changed during a write")

        monkeypatch.setattr(os, "umask", no_umask)
        atomic_write_text(tmp_path / "new.txt", "x")
        assert (tmp_path / "new.txt").stat().st_mode & 0o777 == 0o640
        (tmp_path / "kept.txt").write_text("old")
        (tmp_path / "kept.txt").chmod(0o604)
        atomic_write_text(tmp_path / "kept.txt", "new")
        assert (tmp_path / "kept.txt").stat().st_mode & 0o777 == 0o604
        assert (tmp_path / "kept.txt").read_text() == "new"
    finally:
        monkeypatch.undo()
        os.umask(old)


def test_a_failed_chmod_leaks_no_file_descriptor(tmp_path, monkeypatch):
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("counts open descriptors through /proc")
    target = tmp_path / "out.txt"
    target.write_text("old")

    def refused(*args):
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(os, "chmod", refused)
    monkeypatch.setattr(os, "fchmod", refused)
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(5):
        with pytest.raises(InputError, match=r"out\.txt: cannot write \(Operation not permitted"):
            atomic_write_text(target, "new")
    assert len(os.listdir("/proc/self/fd")) == before
    assert target.read_text() == "old" and temp_files(target) == []


def test_stale_temp_files_of_killed_writers_are_removed_by_the_next_write(tmp_path):
    target = tmp_path / "golden.jsonl"
    stale = [tmp_path / ".golden.jsonl.abcd1234.tmp", tmp_path / ".golden.jsonl.zz_99xyz.tmp"]
    for p in stale:
        p.write_text("half a file")
    other = tmp_path / ".other.jsonl.abcd1234.tmp"
    other.write_text("someone else's")
    assert temp_files(target) == sorted(stale)
    atomic_write_text(target, "whole\n")
    assert temp_files(target) == [] and other.exists() and target.read_text() == "whole\n"


def test_the_lock_is_reentrant_and_excludes_other_threads(tmp_path):
    target = tmp_path / "state.jsonl"
    order: list[str] = []
    def other() -> None:
        with locked(target):
            order.append("other")

    with locked(target), locked(target):  # nested in one thread: no deadlock
        atomic_write_text(target, "a\n")  # takes the same lock again
        worker = threading.Thread(target=other)
        worker.start()
        time.sleep(0.3)
        order.append("holder")
    worker.join(timeout=10)
    assert order == ["holder", "other"]
    assert lock_path(target).name == ".state.jsonl.lock"


def test_json_rows_round_trip(tmp_path):
    path = tmp_path / "x.jsonl"
    atomic_write_text(path, "".join(json.dumps({"i": i}) + "\n" for i in range(3)))
    assert [row for _, row in iter_jsonl(path)] == [{"i": 0}, {"i": 1}, {"i": 2}]
