"""Shared fixtures: the bundled handbook and the shared datasets folder (skip if absent)."""

from __future__ import annotations

import importlib.util
import os
import sys
import types
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis import strategies as st

# Hypothesis profiles. "workbench" (the default: `make test`, CI) is derandomised and keeps no
# example database, so a clean clone draws the same examples every run and passes or fails
# the same way; "explore" (HYPOTHESIS_PROFILE=explore, `make explore`) draws new examples
# each run to find what the fixed ones miss. Both print the blob (@reproduce_failure) that
# replays a failing example. No wall-clock deadline: a loaded machine would fail a correct
# test on time alone; speed is asserted only as ratios to a peer measured in the same process
# (the speed ratchet, benchmarks/speed_ratchet.py), never as absolute times.
settings.register_profile("workbench", deadline=None, derandomize=True, database=None,
                          print_blob=True)
settings.register_profile("explore", deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "workbench"))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]
HANDBOOK = ROOT / "data" / "handbook"
#: the handbook on a command line run from the checkout (tests chdir to ROOT)
HANDBOOK_ARGS = ["--corpus", "data/handbook/docs", "--golden", "data/handbook/golden.jsonl"]
# beside the checkout, or where WORKBENCH_DATASETS says (a git worktree lives elsewhere)
SHARED_DATASETS = Path(os.environ.get("WORKBENCH_DATASETS", ROOT.parent / "shared" / "datasets"))
# One cache folder for the whole run (library, CLI, notebooks and their subprocesses): the
# checkout's own, so tests reuse each other's embeddings and never write to the user's home.
os.environ.setdefault("WORKBENCH_CACHE", str(ROOT / ".workbench_cache"))


def spans_of(text: str) -> st.SearchStrategy[tuple[int, int]]:
    """A non-empty span ``(start, end)`` of ``text``, anywhere in it: the one span strategy of
    the property tests (a test that wants words only filters or trims what it draws)."""
    return st.integers(0, len(text) - 1).flatmap(
        lambda start: st.tuples(st.just(start), st.integers(start + 1, len(text))))


def load_benchmark(name: str) -> types.ModuleType:
    """A script of ``benchmarks/`` as a module, for tests that reuse its functions."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up here
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture(scope="session")
def datasets() -> Path:
    if not SHARED_DATASETS.is_dir():
        pytest.skip(f"shared datasets not found at {SHARED_DATASETS} (clone beside ../shared)")
    return SHARED_DATASETS


@pytest.fixture(scope="session")
def handbook():
    from workbench.corpus import load_folder
    from workbench.golden import GoldenSet

    return load_folder(HANDBOOK / "docs"), GoldenSet.load(HANDBOOK / "golden.jsonl")


_SKIPPED: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        _SKIPPED.append(report.nodeid)


def _untracked() -> set[str] | None:
    """The checkout's untracked files that git does not ignore (None outside a git checkout)."""
    import subprocess

    try:
        out = subprocess.run(["git", "ls-files", "--others", "--exclude-standard", "-z"],
                             cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return set(filter(None, out.decode("utf-8", "surrogateescape").split("\0")))


_UNTRACKED_AT_START: set[str] | None = None


def pytest_sessionstart(session: pytest.Session) -> None:
    global _UNTRACKED_AT_START
    _UNTRACKED_AT_START = _untracked()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A test that leaves a file in the checkout (an output path resolved against the
    working folder) fails the run, naming the files: tests write under their own temporary
    folders or ``outputs/``. With WORKBENCH_NO_SKIPS=1 (``make test`` and CI set it) a skipped
    test fails the run: a conformance test that skips because ../shared or a library is
    missing has checked nothing, and must not pass as green."""
    now = _untracked()
    before = _UNTRACKED_AT_START
    left = sorted(now - before) if now is not None and before is not None else []
    if left and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        sys.stderr.write(f"\nthe tests left {len(left)} file(s) in the checkout: "
                         + ", ".join(map(repr, left[:10])) + "\n")
    if os.environ.get("WORKBENCH_NO_SKIPS") == "1" and _SKIPPED and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        sys.stderr.write(f"\n{len(_SKIPPED)} tests skipped (WORKBENCH_NO_SKIPS=1): "
                         + ", ".join(_SKIPPED[:10]) + "\n")
