"""File I/O shared by every writer and reader of user data.

* :func:`atomic_write_text`: a write that a crash cannot half-do (temporary file in the same
  folder, fsync, then ``os.replace``; the temporary file is removed on failure). Golden sets,
  traces, baselines, TREC files, reports, the generation cache and the sweep state use it.
* :func:`iter_jsonl`: the rows of a JSONL file as ``("file:line", row)``; a malformed line
  raises ``ValueError`` naming its file, line and column. Corpora, BEIR queries and traces
  are read with it.

This module imports nothing from the rest of the package (it is the lowest layer).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["atomic_write_text", "iter_jsonl"]


def _file_mode(path: Path) -> int:
    """The mode a plain write would give: the existing file's, else 0o666 minus the umask."""
    if path.exists():
        return path.stat().st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a crash leaves either the old file or the new one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, _file_mode(path))
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def iter_jsonl(path: str | Path) -> Iterator[tuple[str, Any]]:
    """Decoded rows of a JSONL file as ``("file:line", row)``, blank lines skipped; a
    malformed line raises ValueError naming its file, line and column."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"{path}: file not found")
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                yield where, json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{where}: malformed JSON ({exc.msg}, column {exc.colno}); "
                                 "fix or delete the line") from None
