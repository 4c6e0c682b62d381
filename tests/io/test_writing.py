"""Writing (workbench.io.writing): atomic writes, clear errors, modes, stale temp cleanup."""

from __future__ import annotations

import os

import pytest

from workbench.io import (
    InputError,
    atomic_write_text,
    temp_files,
)


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
