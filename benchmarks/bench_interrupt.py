"""How much work a killed dense run loses, and what resuming reuses (no assertions).

    python benchmarks/bench_interrupt.py [--encoder e5] [--kill-after 90] [--checkpoint 30]
                                         [--texts cmrc|handbook]

A child process embeds texts through a fresh :class:`EmbeddingCache` with the real encoder
(model loaded first, so the clock starts with the embedding) and logs each batch; after
``--kill-after`` seconds of embedding it is killed with SIGKILL (no clean-up runs). A fresh
cache then reports how many vectors survived. Work lost = seconds from the last checkpoint
to the kill (the batch in flight included); texts lost = embedded but not on disk. Before
issue 14 shards were written every 4,096 texts or at the end, so a kill lost everything.

Texts: every paragraph of CMRC 2018 dev (``../shared/datasets``) or the handbook cut into
200-character windows.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ROOT.parent / "shared" / "datasets"

CHILD = """
import json, sys, time
from workbench.retrieval.cache import EmbeddingCache
from workbench.retrieval.encoders import get_encoder

texts, root, log_path = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
encoder = get_encoder(sys.argv[4])
encoder.encode_documents(["warm up"])  # load the model before the clock starts
log = open(log_path, "a")

class Logged:
    model_id = encoder.model_id
    def encode_documents(self, batch):
        out = encoder.encode_documents(batch)
        log.write(f"{time.time():.6f} {len(batch)}\\n")
        log.flush()
        return out
    encode_queries = encode_documents

log.write(f"{time.time():.6f} 0\\n")
log.flush()
EmbeddingCache(root, checkpoint_s=float(sys.argv[5])).embed(Logged(), texts, progress=False)
log.write("done\\n")
"""


@dataclass(frozen=True)
class KilledRun:
    """What a killed run did and what survived it."""

    texts: int  # texts to embed
    embedded: int  # texts the encoder finished before the kill
    kept: int  # vectors on disk afterwards
    seconds: float  # embedding time before the kill
    lost_seconds: float  # from the last checkpoint to the kill
    max_batch_seconds: float
    finished: bool  # the run ended before the kill
    model_id: str
    checkpoints: list[int]  # cumulative texts at each batch end (for checks)


class _Survivors:
    """Reads what survived: never embeds (a vector of zeros for anything missing)."""

    def __init__(self, model_id: str, dim: int):
        self.model_id, self.dim = model_id, dim

    def encode_documents(self, texts: list[str]) -> np.ndarray:
        return np.zeros((len(texts), self.dim), dtype=np.float32)

    encode_queries = encode_documents


def killed_run(texts: list[str], root: Path, encoder: str, checkpoint_s: float,
               kill_after_s: float, timeout_s: float = 600) -> KilledRun:
    """Embed ``texts`` into a cache at ``root`` in a child process and SIGKILL it after
    ``kill_after_s`` seconds of embedding; then count what survived."""
    from workbench.retrieval.cache import EmbeddingCache
    from workbench.retrieval.encoders import get_encoder

    work = Path(tempfile.mkdtemp(prefix="killed-run-"))
    (work / "texts.json").write_text(json.dumps(texts), encoding="utf-8")
    log = work / "log.txt"
    log.touch()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false"}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(work / "texts.json"), str(root),
                              str(log), encoder, str(checkpoint_s)], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + timeout_s
    started = None
    while time.time() < deadline and child.poll() is None:
        lines = log.read_text(encoding="utf-8").splitlines()
        if started is None and lines:
            started = float(lines[0].split()[0])
        if started is not None and time.time() - started >= kill_after_s:
            break
        time.sleep(0.05)
    finished = child.poll() is not None
    if not finished:
        os.kill(child.pid, signal.SIGKILL)
    killed_at = time.time()
    _, err = child.communicate()
    if started is None:
        raise RuntimeError(f"the embedding child never started: {err.decode()[-2000:]}")
    lines = log.read_text(encoding="utf-8").splitlines()
    batches = [(float(t), int(n)) for t, n in (ln.split() for ln in lines[1:] if ln != "done")]
    cumulative, ends, total = [], [], 0
    for end, n in batches:
        total += n
        cumulative.append(total)
        ends.append(end)
    model_id = get_encoder(encoder).model_id
    survivors = EmbeddingCache(root)
    survivors.embed(_Survivors(model_id, _dimension(root, model_id)), texts, progress=False)
    kept = survivors.stats.reused
    last_checkpoint = started if kept == 0 else ends[cumulative.index(kept)]
    starts = [started, *ends[:-1]]
    return KilledRun(texts=len(texts), embedded=total, kept=kept,
                     seconds=(ends[-1] if finished and ends else killed_at) - started,
                     lost_seconds=0.0 if finished else killed_at - last_checkpoint,
                     max_batch_seconds=max((e - s for s, e in zip(starts, ends, strict=True)),
                                           default=0.0),
                     finished=finished, model_id=model_id, checkpoints=cumulative)


def _dimension(root: Path, model_id: str) -> int:
    from workbench.retrieval.cache import EmbeddingCache
    from workbench.retrieval.shards import read_shard

    for path in EmbeddingCache(root).shard_files(model_id):
        shard = read_shard(path)
        if shard is not None:
            return int(shard[1].shape[1])
    return 1


def load_texts(which: str) -> list[str]:
    if which == "cmrc":
        from workbench.golden import load_squad

        corpus, _ = load_squad(DATASETS / "cmrc2018" / "cmrc2018_dev.json")
        return [d.text for d in corpus.documents]
    from workbench.chunking import FixedChunker, chunk_corpus
    from workbench.corpus import load_folder

    docs = load_folder(ROOT / "data" / "handbook" / "docs").documents
    return list(dict.fromkeys(c.text for c in chunk_corpus(FixedChunker(200, 100), docs)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--encoder", default="e5")
    parser.add_argument("--texts", choices=["cmrc", "handbook"], default="cmrc")
    parser.add_argument("--kill-after", type=float, default=90.0, help="seconds of embedding")
    parser.add_argument("--checkpoint", type=float, default=30.0,
                        help="EmbeddingCache(checkpoint_s=...) (30 is the default)")
    args = parser.parse_args()
    if args.texts == "cmrc" and not DATASETS.is_dir():
        print(f"skipped: {DATASETS} not found; try --texts handbook")
        return 0
    texts = load_texts(args.texts)
    with tempfile.TemporaryDirectory() as tmp:
        run = killed_run(texts, Path(tmp), args.encoder, args.checkpoint, args.kill_after)
    rate = run.embedded / run.seconds if run.seconds else float("nan")
    print(f"{run.model_id}: {run.texts} texts ({args.texts}), checkpoint every "
          f"{args.checkpoint:g} s, killed (SIGKILL) after {run.seconds:.0f} s of embedding")
    if run.finished:
        print("the run finished before the kill: raise --kill-after or use more texts")
        return 0
    print(f"embedded before the kill: {run.embedded} texts ({rate:.1f}/s)")
    print(f"kept on disk: {run.kept} texts; lost: {run.embedded - run.kept} texts embedded "
          f"since the last checkpoint, {run.lost_seconds:.1f} s of work (the batch in flight "
          f"included; longest batch {run.max_batch_seconds:.1f} s)")
    print(f"resuming embeds {run.texts - run.kept} texts instead of {run.texts}; before "
          f"issue 14 the kill lost all {run.embedded} texts ({run.seconds:.0f} s of work)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
