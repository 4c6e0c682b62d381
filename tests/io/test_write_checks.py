"""The writers' checks (workbench.io) on their own, against the rule in the module doc: every
writer (atomic_write_bytes / _text, append_text, write_unless_changed) at every kind of
target (a new file, an old file, a folder or a link to one where the file belongs, a
missing parent one or two levels up, a parent that is a file, a parent reached through a
link), with and without make_parents, and write_unless_changed with a fresh, stale or grown
stamp. The reference: a refusal is one InputError naming the path and the reason, and the
tree is as it was (lock files aside); a write leaves exactly what the rule says and no
temporary file."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.io import (
    FileStamp,
    InputError,
    StaleFileError,
    append_text,
    atomic_write_bytes,
    atomic_write_text,
    temp_files,
    write_unless_changed,
)

TARGETS = ["new", "old", "old, no line end", "folder", "link to folder", "missing parent",
           "missing grandparent", "parent is a file", "linked parent"]
WRITERS = ["atomic_write_bytes", "atomic_write_text", "append_text", "write_unless_changed"]
OLD = "old line\n"


def _tree(root: Path) -> dict[str, str | bytes]:
    """Every path under ``root`` and what it is (a link's target, a file's bytes), lock files
    aside."""
    out: dict[str, str | bytes] = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            p = Path(dirpath) / name
            if name.endswith(".lock"):
                continue
            rel = str(p.relative_to(root))
            out[rel] = (f"-> {os.readlink(p)}" if p.is_symlink() else "dir" if p.is_dir()
                        else p.read_bytes())
    return out


def _target(root: Path, kind: str) -> Path:
    """The path to write for a target of ``kind``, the tree made around it."""
    (root / "docs").mkdir()
    path = root / "docs" / "out.txt"
    if kind.startswith("old"):
        path.write_text(OLD if kind == "old" else OLD.rstrip("\n"), encoding="utf-8")
    elif kind == "folder":
        path.mkdir()
        (path / "inside.txt").write_text("kept", encoding="utf-8")
    elif kind == "link to folder":
        (root / "elsewhere").mkdir()
        path.symlink_to(root / "elsewhere", target_is_directory=True)
    elif kind == "missing parent":
        path = root / "docs" / "typo" / "out.txt"
    elif kind == "missing grandparent":
        path = root / "docs" / "typo" / "deeper" / "out.txt"
    elif kind == "parent is a file":
        (root / "docs" / "notes").write_text("a file", encoding="utf-8")
        path = root / "docs" / "notes" / "out.txt"
    elif kind == "linked parent":
        (root / "real").mkdir()
        (root / "docs" / "via").symlink_to(root / "real", target_is_directory=True)
        path = root / "docs" / "via" / "out.txt"
    return path


def _refusal(kind: str, writer: str, make_parents: bool) -> str | None:
    """The reason the rule refuses this write (a pattern of the message), or None."""
    if kind in ("folder", "link to folder"):
        return "is a folder"
    if kind == "parent is a file":
        return "is a file, not a folder"
    if kind.startswith("missing") and not (make_parents and writer != "write_unless_changed"):
        return "does not exist"
    return None


def _write(writer: str, path: Path, text: str, make_parents: bool) -> None:
    if writer == "atomic_write_bytes":
        atomic_write_bytes(path, text.encode("utf-8"), make_parents=make_parents)
    elif writer == "atomic_write_text":
        atomic_write_text(path, text, make_parents=make_parents)
    elif writer == "append_text":
        append_text(path, text, what="log", make_parents=make_parents)
    else:
        before = path.read_bytes() if path.is_file() else b""
        write_unless_changed(path, text.encode("utf-8"), FileStamp.of(before), what="log")


@settings(max_examples=150)
@given(st.sampled_from(WRITERS), st.sampled_from(TARGETS), st.booleans(),
       st.sampled_from(["new line\n", "no end", "", "ünïcode 😀\n"]))
def test_every_writer_at_every_kind_of_target(writer, kind, make_parents, text):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = _target(root, kind)
        before = _tree(root)
        reason = _refusal(kind, writer, make_parents)
        if reason is not None:
            with pytest.raises(InputError, match=reason) as refused:
                _write(writer, path, text, make_parents)
            assert str(refused.value).startswith(str(path)), refused.value
            assert _tree(root) == before
            return
        _write(writer, path, text, make_parents)
        old = {"old": OLD, "old, no line end": OLD.rstrip("\n")}.get(kind, "")
        want = (old + ("" if not old or old.endswith("\n") else "\n") + text
                if writer == "append_text" else text)
        assert path.read_text(encoding="utf-8") == want
        assert temp_files(path) == []
        after = _tree(root)
        changed = {k for k in after.keys() | before.keys() if after.get(k) != before.get(k)}
        made = {str(p.relative_to(root)) for p in [path.parent.resolve() / path.name,
                                                   *path.resolve().parents] if root in p.parents}
        assert changed <= made, changed  # the file, and the folders make_parents made
        assert path.resolve().read_text(encoding="utf-8") == want


@settings(max_examples=100)
@given(st.sampled_from(["fresh", "stale", "grown", "grown, merged", "rewritten and grown",
                        "already saved"]),
       st.sampled_from(["new line\n", "ünïcode 😀\n"]))
def test_write_unless_changed_writes_only_over_the_bytes_it_read(stamp, data):
    """The stamp is what was read; the file may have changed since: rewritten, appended to
    (merged when a merge is given, unless what was read changed too), or already holding
    what is saved."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "golden.jsonl"
        read = OLD.encode("utf-8")  # "stale" below has its length, another byte
        now = {"fresh": read, "stale": b"old lime\n", "grown": read + b"more\n",
               "grown, merged": read + b"more\n", "rewritten and grown": b"old lime\nmore\n",
               "already saved": data.encode("utf-8")}[stamp]
        path.write_bytes(now)
        merge = ((lambda extra: data.encode("utf-8") + extra)
                 if stamp in ("grown, merged", "rewritten and grown") else None)
        if stamp in ("stale", "grown", "rewritten and grown"):
            with pytest.raises(StaleFileError, match="changed since it was loaded") as refused:
                write_unless_changed(path, data.encode("utf-8"), FileStamp.of(read), what="log",
                                     merge_appended=merge)
            assert str(refused.value).startswith(str(path))
            assert path.read_bytes() == now
            return
        write_unless_changed(path, data.encode("utf-8"), FileStamp.of(read), what="log",
                             merge_appended=merge)
        want = data.encode("utf-8") + (b"more\n" if stamp == "grown, merged" else b"")
        assert path.read_bytes() == want and temp_files(path) == []
