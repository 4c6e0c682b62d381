"""RAG Workbench: build, sweep and diagnose retrieval-augmented generation.

The top level holds the nouns and verbs a notebook uses, one group per step of the flow
(``docs/architecture.md``); everything else is reachable from the package that owns it
(``workbench.chunking.diagnose_chunking``, ``workbench.stats.compare_paired``, ...).
A name asked for here that lives only in a package gets an error naming that package (a
name the top level once held always, any other when its package is loaded); a name that is
nowhere fails at once, importing nothing.

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
    "workbench.retrieval": ("BM25Retriever", "CallableRetriever", "DenseRetriever",
                            "HybridRetriever", "wrap"),
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
#: Names the top level held until it was trimmed to the flow's nouns and verbs: asked for
#: here, each says where it lives without loading anything.
_MOVED: dict[str, tuple[str, ...]] = {
    "workbench.golden": ("from_argilla", "from_label_studio", "load_dataset", "to_argilla",
                         "to_label_studio"),
    "workbench.chunking": ("Chunker", "DocumentChunker"),
    "workbench.retrieval": ("Encoder", "Hit", "RerankedRetriever", "Reranker", "Retriever",
                            "get_encoder", "make_retriever"),
    "workbench.metrics": ("Metric", "read_trec_qrels", "read_trec_run", "write_trec_qrels",
                          "write_trec_run"),
    "workbench.sweep": ("SweepResult",),
    "workbench.generation": ("GenerationResult", "Generator", "Judge", "LocalGenerator",
                             "OpenAIChatGenerator"),
    "workbench.diagnose": ("Trace", "Triage"),
    "workbench.gate": ("Baseline",),
}
_MOVED_TO = {name: package for package, names in _MOVED.items() for name in names}


def _home(name: str) -> str | None:
    """The package a name left out of the top level lives in: a moved name's, else the first
    package already loaded that exports it (none is imported to find out)."""
    if name in _MOVED_TO:
        return _MOVED_TO[name]
    loaded = sorted(m for m in list(sys.modules) if m.count(".") == 1
                    and m.startswith("workbench."))
    return next((m for m in loaded if name in getattr(sys.modules[m], "__all__", ())), None)


def __getattr__(name: str) -> Any:
    package = _OWNER.get(name)
    if package is not None:
        return getattr(importlib.import_module(package), name)
    home = None if name.startswith("_") else _home(name)
    if home is not None:
        raise AttributeError(f"workbench.{name} is not in the top level: "
                             f"from {home} import {name}")
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
