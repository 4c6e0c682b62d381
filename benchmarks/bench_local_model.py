"""The offline generator's costs on this machine: the one-time GGUF conversion (into a fresh
model cache), a second load (from the converted folder), and seconds per answer
on handbook questions with BM25's top 5 passages (the README's figures).

    PYTHONPATH=. HF_HUB_OFFLINE=1 python benchmarks/bench_local_model.py --questions 8
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=8)
    ap.add_argument("--max-new-tokens", type=int, default=64)
    args = ap.parse_args()
    os.environ["WORKBENCH_MODEL_CACHE"] = tempfile.mkdtemp(prefix="wb-models-")

    import workbench as wb
    from workbench.corpus import UNRESTRICTED
    from workbench.generation import LocalGenerator, assemble_context

    started = time.perf_counter()
    LocalGenerator(max_new_tokens=args.max_new_tokens).load()
    first = time.perf_counter() - started
    started = time.perf_counter()
    generator = LocalGenerator(max_new_tokens=args.max_new_tokens).load()
    converted = time.perf_counter() - started
    data = ROOT / "data" / "handbook"
    corpus = wb.load_folder(data / "docs")
    golden = wb.GoldenSet.load(data / "golden.jsonl")
    chunks = wb.chunk_corpus(wb.parse_chunker("fixed:size=800,overlap=100"), corpus)
    bm25 = wb.BM25Retriever(chunks)
    seconds = []
    for item in [i for i in golden if i.evidence][:args.questions]:
        context = assemble_context([h.chunk_id for h in bm25.search(item.question, 5)],
                                   chunks, corpus, user_groups=UNRESTRICTED)
        started = time.perf_counter()
        generator.generate(item.question, context)
        seconds.append(time.perf_counter() - started)
    print(f"first load (GGUF conversion) {first:.1f} s; load of the converted folder "
          f"{converted:.1f} s; per answer median {statistics.median(seconds):.2f} s "
          f"(min {min(seconds):.2f}, max {max(seconds):.2f}) over {len(seconds)} questions, "
          f"{args.max_new_tokens} new tokens, 5 passages of 800 characters")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
