"""RAG Workbench: build, sweep and diagnose retrieval-augmented generation.

The top level holds the nouns and verbs a notebook uses, one group per step of the flow
(``docs/architecture.md``); everything else is reachable from the package that owns it
(``workbench.chunking.diagnose_chunking``, ``workbench.stats.compare_paired``, ...).
A name asked for here that lives only in a package gets an error naming that package when
that package is loaded; a name that is nowhere fails at once, importing nothing.

Names load lazily, so ``import workbench`` (and the CLI) stays fast and never imports torch
unless a dense model is used. ``tests/test_layout.py`` pins ``__all__``: a new export is a
decision.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

__version__ = "0.1.0"

_EXPORTS: dict[str, tuple[str, ...]] = {
    "workbench.corpus": ("Chunk", "Corpus", "Document", "load_corpus", "load_folder"),
    "workbench.golden": ("Evidence", "GoldenItem", "GoldenSet", "add_case", "agreement",
                         "import_questions", "reanchor"),
    "workbench.chunking": ("FixedChunker", "MarkdownChunker", "RecursiveChunker",
                           "SentenceChunker", "chunk_corpus", "parse_chunker"),
    "workbench.retrieval": ("BM25Retriever", "DenseRetriever", "HybridRetriever", "wrap"),
    "workbench.metrics": ("Relevance",),
    "workbench.evaluation": ("Evaluation", "Run", "evaluate"),
    "workbench.sweep": ("run_sweep",),
    "workbench.generation": ("ExtractiveReader", "assemble_context", "run_generation_eval"),
    "workbench.diagnose": ("diagnose_trace", "traces_from_result", "triage"),
    "workbench.gate": ("check_gate", "update_baseline"),
    "workbench.widgets": ("ChunkPreview", "MetricTable", "SweepExplorer", "TraceViewer"),
    "workbench.report": ("write_report",),
}
_OWNER = {name: package for package, names in _EXPORTS.items() for name in names}
__all__ = sorted(_OWNER)


def __getattr__(name: str) -> Any:
    package = _OWNER.get(name)
    if package is not None:
        return getattr(importlib.import_module(package), name)
    if not name.startswith("_"):  # where it lives, among the packages already loaded only
        loaded = sorted(m for m in list(sys.modules) if m.count(".") == 1
                        and m.startswith("workbench."))
        for owner in loaded:
            if name in getattr(sys.modules[owner], "__all__", ()):
                raise AttributeError(f"workbench.{name} is not in the top level: "
                                     f"from {owner} import {name}")
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
