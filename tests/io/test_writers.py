"""Every public writer takes the path first, then what it writes; a call the other way round
is one clear error and writes nothing."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import workbench
from workbench.io import WorkbenchError, target_path

#: What writes a user's file, by name: functions called write_*, save_* or add_case.
WRITER_NAME = ("write_", "save_", "add_case")
#: Writers of the workbench's own cache files, not user files (they take a folder first).
CACHE_WRITERS = {"workbench.retrieval.shards.write_shard",
                 "workbench.retrieval.shards.write_model_id"}


def _public_writers() -> dict[str, Callable[..., Any]]:
    found = {}
    for info in pkgutil.walk_packages(workbench.__path__, "workbench."):
        if info.name.startswith("workbench.widgets") or "._" in info.name:
            continue
        module = importlib.import_module(info.name)
        for name, fn in vars(module).items():
            if (inspect.isfunction(fn) and fn.__module__ == info.name and not name.startswith("_")
                    and name.startswith(WRITER_NAME)):
                found[f"{info.name}.{name}"] = fn
    return found


def test_every_public_writer_takes_the_path_first() -> None:
    writers = _public_writers()
    assert len(writers) >= 8, sorted(writers)  # the walk found the writers it should
    firsts = {name: list(inspect.signature(fn).parameters)[:2] for name, fn in writers.items()}
    wrong = {name: first for name, first in firsts.items()
             if name not in CACHE_WRITERS and first[0] != "path"}
    assert not wrong, f"writers whose first parameter is not the path: {wrong}"


@pytest.mark.parametrize("name", ["add_case", "save_traces", "write_report", "write_run",
                                  "write_trec_run", "write_trec_qrels", "save_candidates",
                                  "write_tasks"])
def test_a_writer_called_the_other_way_round_says_so_and_writes_nothing(
        name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    writer = next(fn for full, fn in _public_writers().items() if full.endswith(f".{name}"))
    monkeypatch.chdir(tmp_path)
    what: Any = {"q": {"d": 1}} if "trec" in name else []
    with pytest.raises(WorkbenchError, match=rf"{name}: the path comes first"):
        writer(what, tmp_path / "out.txt")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("path", ["out.jsonl", Path("out.jsonl")])
def test_target_path_takes_str_and_path_like(path: str | Path) -> None:
    assert target_path(path, "writer") == Path("out.jsonl")


@pytest.mark.parametrize("value", [None, 3, b"out.jsonl", ["out.jsonl"], {"q": ["d"]}])
def test_target_path_refuses_anything_else(value: object) -> None:
    with pytest.raises(WorkbenchError, match=r"writer: the path comes first.*got a"):
        target_path(value, "writer")
