"""Shared fixtures: the bundled handbook and the shared datasets folder (skip if absent)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]
HANDBOOK = ROOT / "data" / "handbook"
SHARED_DATASETS = ROOT.parent / "shared" / "datasets"
# One cache folder for the whole run (library, CLI, notebooks and their subprocesses): the
# checkout's own, so tests reuse each other's embeddings and never write to the user's home.
os.environ.setdefault("WORKBENCH_CACHE", str(ROOT / ".workbench_cache"))


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
