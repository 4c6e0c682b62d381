"""The speed ratchet: each hot path timed against its peer or its own floor, in one process,
as a ratio (ours / theirs, lower is faster), and checked against the accepted ratios in
``benchmarks/speed_baseline.json``. Ratios, never absolute times: a loaded machine slows
both sides of a ratio alike. ``make test`` runs the check (tests/test_benchmarks.py).

    PYTHONPATH=. python benchmarks/speed_ratchet.py            # measure and check
    PYTHONPATH=. python benchmarks/speed_ratchet.py --only bm25_vs_bm25s
    PYTHONPATH=. python benchmarks/speed_ratchet.py --update   # accept the measured ratios

A ratio worse than the accepted one by more than ``MARGIN`` fails, naming the check, the two
ratios and the command to reproduce. Sizes are small (the whole check runs in well under a
minute); the full benchmarks named in each check measure at scale. Each side is timed as the
best of ``REPEAT`` interleaved runs in CPU seconds of this process (single-threaded work), and
a check past its margin is measured again, up to ``ATTEMPTS`` times in all, keeping its best
ratio: a slower hot path stays slower on every attempt, a burst of load on another process
does not last three.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from workbench.chunking import FixedChunker, chunk_corpus
from workbench.corpus import Chunk, load_folder
from workbench.corpus.locate import Locator
from workbench.metrics import Relevance, mean_scores, parse_metric
from workbench.retrieval.bm25 import BM25Retriever, tokenize

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "benchmarks" / "speed_baseline.json"
MARGIN = 1.5
REPEAT = 5
ATTEMPTS = 3
HERE = "PYTHONPATH=. python benchmarks/speed_ratchet.py --only {name}"


def _bench(name: str) -> Any:
    """A sibling benchmark script as a module (the ratchet reuses its inputs and floors)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def ratio(ours: Callable[[], Any], theirs: Callable[[], Any], repeat: int = REPEAT) -> float:
    """Best CPU time of ``ours`` over best CPU time of ``theirs``, runs interleaved."""
    best = [float("inf"), float("inf")]
    for _ in range(repeat):
        for side, fn in enumerate((ours, theirs)):
            t = time.process_time()
            fn()
            best[side] = min(best[side], time.process_time() - t)
    return best[0] / max(best[1], 1e-9)


def _handbook_chunks(n: int) -> list[Chunk]:
    """``n`` chunks of the handbook's text, its documents copied under new ids as needed."""
    docs = load_folder(ROOT / "data" / "handbook" / "docs").documents
    base = chunk_corpus(FixedChunker(300, 50), docs)
    return [Chunk(f"{c.id}~{i}", f"{c.doc_id}~{i}", c.start, c.end, text=c.text)
            for i in range(n // len(base) + 1) for c in base][:n]


def metrics_vs_pytrec_eval() -> float:
    import pytrec_eval

    qrels, run = _bench("bench_metrics").make_inputs(2000, 100)
    trec = _bench("bench_metrics").TREC
    return ratio(lambda: mean_scores(qrels, run, _bench("bench_metrics").OURS),
                 lambda: pytrec_eval.RelevanceEvaluator(qrels, set(trec)).evaluate(run))


def metrics_vs_floor() -> float:
    bench = _bench("bench_metrics")
    qrels, run = bench.make_inputs(2000, 100)
    return ratio(lambda: mean_scores(qrels, run, bench.OURS),
                 lambda: bench.numpy_floor(qrels, run))


def evidence_vs_chunk_ids() -> float:
    chunks, by_evidence, by_ids, ranked = _bench("bench_metrics").make_evidence_inputs(2000, 50)
    metrics = [parse_metric(m) for m in _bench("bench_metrics").OURS]
    return ratio(lambda: Relevance(by_evidence, chunks).score(ranked, metrics),
                 lambda: Relevance(by_ids, chunks).score(ranked, metrics))


def bm25_vs_bm25s() -> float:
    import bm25s

    chunks = _handbook_chunks(3000)
    queries = [c.text[:60] for c in chunks[::30]]

    def ours() -> None:
        retriever = BM25Retriever(chunks)
        for q in queries:
            retriever.search(q, 10)

    def theirs() -> None:
        vocab: dict[str, int] = {}
        ids = [[vocab.setdefault(t, len(vocab)) for t in tokenize(c.embed_text)]
               for c in chunks]
        model = bm25s.BM25()
        model.index(bm25s.tokenization.Tokenized(ids=ids, vocab=vocab), show_progress=False)
        for q in queries:
            scores = np.asarray(model.get_scores([vocab[t] for t in tokenize(q) if t in vocab]))
            np.argpartition(-scores, 9)[:10]

    return ratio(ours, theirs, repeat=3)


def encoder_vs_torch() -> float:
    from workbench.retrieval.encoders import get_encoder

    texts = [c.text for c in _handbook_chunks(16)]
    default = get_encoder("minilm", threads=1)
    torch_enc = get_encoder("minilm", engine="torch", threads=1)
    default.encode_documents(texts[:2])  # load both models outside the timing
    torch_enc.encode_documents(texts[:2])
    return ratio(lambda: default.encode_documents(texts),
                 lambda: torch_enc.encode_documents(texts), repeat=3)


def locate_vs_find() -> float:
    docs = load_folder(ROOT / "data" / "handbook" / "docs").documents
    by_id = {d.id: d for d in docs}
    hits = [(c.doc_id, c.text) for c in chunk_corpus(FixedChunker(300, 50), docs)] * 20

    def ours() -> None:
        locator = Locator(docs)
        for doc_id, text in hits:
            locator.locate(text, doc_id)

    return ratio(ours, lambda: [by_id[d].text.find(t) for d, t in hits])


#: name -> (measure, the full benchmark to run when the ratio moves)
CHECKS: dict[str, tuple[Callable[[], float], str]] = {
    "metrics_vs_pytrec_eval": (metrics_vs_pytrec_eval, "python benchmarks/bench_metrics.py"),
    "metrics_vs_floor": (metrics_vs_floor, "python benchmarks/bench_metrics.py"),
    "evidence_vs_chunk_ids": (evidence_vs_chunk_ids, "python benchmarks/bench_metrics.py"),
    "bm25_vs_bm25s": (bm25_vs_bm25s, "python benchmarks/bench_retrieval.py"),
    "encoder_vs_torch": (encoder_vs_torch, "python benchmarks/bench_encoders.py"),
    "locate_vs_find": (locate_vs_find, "python benchmarks/bench_locate.py"),
}


def measure(names: list[str] | None = None, baseline: dict[str, float] | None = None,
            attempts: int = ATTEMPTS) -> dict[str, float]:
    """The ratio of each check (all, or those named); one past its margin over ``baseline``
    (the accepted ratios) is measured again, up to ``attempts`` in all, keeping the best."""
    baseline = accepted() if baseline is None else baseline
    best = {name: CHECKS[name][0]() for name in names or CHECKS}
    for _ in range(attempts - 1):
        again = [name for name in best if name in baseline and best[name] > baseline[name] * MARGIN]
        for name in again:
            best[name] = min(best[name], CHECKS[name][0]())
    return best


def accepted() -> dict[str, float]:
    ratios: dict[str, float] = json.loads(BASELINE.read_text(encoding="utf-8"))["ratios"]
    return ratios


def failures(measured: dict[str, float], baseline: dict[str, float] | None = None,
             margin: float = MARGIN) -> list[str]:
    """One line per measured ratio worse than its accepted one by more than ``margin``."""
    baseline = accepted() if baseline is None else baseline
    out = []
    for name, new in measured.items():
        old = baseline[name]
        if new > old * margin:
            out.append(f"{name}: ours/peer ratio {new:.3f}, accepted {old:.3f} (more than "
                       f"{margin}x worse); reproduce: {HERE.format(name=name)}, then "
                       f"{CHECKS[name][1]}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", choices=sorted(CHECKS))
    ap.add_argument("--update", action="store_true", help="write the measured ratios as the "
                    "accepted ones")
    args = ap.parse_args()
    baseline = accepted() if BASELINE.exists() else {}
    measured = measure(args.only, baseline)
    for name, new in measured.items():
        old = baseline.get(name)
        print(f"{name:<24}{new:>8.3f}   accepted {'-' if old is None else f'{old:.3f}'}")
    if args.update:
        BASELINE.write_text(json.dumps({"margin": MARGIN, "ratios": baseline | {
            n: round(r, 3) for n, r in measured.items()}}, indent=2) + "\n", encoding="utf-8")
        print(f"accepted: {BASELINE.relative_to(ROOT)}")
        return 0
    bad = failures(measured, baseline)
    print("\n".join(bad) or "every ratio within its margin")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
