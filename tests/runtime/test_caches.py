"""clear_cache_folder (runtime/caches.py) against the manifest rule on its own: a manifest
line whose path climbs out of the cache folder (``..``, an absolute path) deletes nothing
outside it, even when its size and sha256 match a file there; ``under`` limits the clearing
to that part of the folder and to it only."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from workbench.runtime import (
    CACHE_MANIFEST,
    EMBEDDINGS_DIR,
    clear_cache_folder,
    mark_cache_folder,
    record_cache_files,
)


def _line(path: str, data: bytes) -> str:
    return json.dumps({"path": path, "size": len(data),
                       "sha256": hashlib.sha256(data).hexdigest()}) + "\n"


@pytest.mark.parametrize("listed", ["../victim.txt", "a/../../victim.txt", "{abs}",
                                    "a/./../../victim.txt"])
def test_a_manifest_path_out_of_the_folder_deletes_nothing_there(tmp_path: Path, listed: str):
    folder = tmp_path / "cache" / EMBEDDINGS_DIR
    mark_cache_folder(folder, EMBEDDINGS_DIR)
    (folder / "a").mkdir()
    victim = tmp_path / "cache" / "victim.txt"
    victim.write_bytes(b"the user's file")
    listed = listed.format(abs=victim)
    with (folder / CACHE_MANIFEST).open("a", encoding="utf-8") as fh:
        fh.write(_line(listed, b"the user's file"))
    assert clear_cache_folder(folder, EMBEDDINGS_DIR).paths == ()
    assert victim.read_bytes() == b"the user's file"


def test_under_clears_that_part_of_the_folder_only(tmp_path: Path):
    folder = tmp_path / EMBEDDINGS_DIR
    mark_cache_folder(folder, EMBEDDINGS_DIR)
    files = {}
    for rel in ("model-a/x.npy", "model-a/y.npy", "model-ab/z.npy", "model-b/x.npy"):
        path = folder / rel
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(rel.encode())
        files[path] = None
    record_cache_files(folder, files)
    cleared = clear_cache_folder(folder, EMBEDDINGS_DIR, under="model-a/")
    assert cleared.paths == ("model-a/x.npy", "model-a/y.npy")
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.npy")) == [
        "model-ab/z.npy", "model-b/x.npy"]
