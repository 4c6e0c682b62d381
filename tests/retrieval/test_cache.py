"""The on-disk embedding cache: reuse, corruption recovery, atomic writes, kind separation."""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.corpus import Chunk
from workbench.io import WorkbenchError, temp_files
from workbench.retrieval import cache as cache_module
from workbench.retrieval.cache import (
    CorruptCacheWarning,
    EmbeddingCache,
    embed_uncached,
    text_hash,
)
from workbench.retrieval.dense import DenseRetriever
from workbench.retrieval.shards import is_temp_file
from workbench.runtime import CACHE_MANIFEST, cache_dir


class CountingEncoder:
    """Deterministic fake: a vector seeded by the text (and kind); counts what it embeds."""

    def __init__(self, model_id: str = "fake/counting", dim: int = 8):
        self.model_id = model_id
        self.dim = dim
        self.calls = 0
        self.embedded: list[str] = []

    def _vecs(self, texts: Sequence[str], kind: str) -> np.ndarray:
        self.calls += 1
        self.embedded.extend(texts)
        rows = []
        for t in texts:
            seed = int.from_bytes(hashlib.sha256(f"{kind}:{t}".encode()).digest()[:8], "little")
            v = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
            rows.append(v / np.linalg.norm(v))
        return np.stack(rows) if rows else np.zeros((0, self.dim), np.float32)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._vecs(texts, "query")

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._vecs(texts, "document")


TEXTS = [f"chunk number {i}: some text about topic {i % 3}" for i in range(20)]


def test_text_hash_is_chunk_content_hash():
    chunk = Chunk("d#0", "d", 0, 5, text="hello", embed_text="Title: hello")
    assert text_hash(chunk.embed_text) == chunk.content_hash


def test_second_run_embeds_nothing(tmp_path: Path):
    enc = CountingEncoder()
    first = EmbeddingCache(tmp_path).embed(enc, TEXTS, progress=False)
    assert len(enc.embedded) == len(TEXTS)
    assert first.dtype == np.float32 and first.shape == (20, 8)

    enc2 = CountingEncoder()
    cache = EmbeddingCache(tmp_path)  # a fresh process would see the same files
    again = cache.embed(enc2, TEXTS, progress=False)
    assert enc2.calls == 0
    assert cache.stats.embedded == 0 and cache.stats.reused == 20
    assert cache.stats.hits == 20 and cache.stats.misses == 0
    np.testing.assert_array_equal(first, again)


def test_only_new_texts_are_embedded_and_order_is_kept(tmp_path: Path):
    enc = CountingEncoder()
    cache = EmbeddingCache(tmp_path)
    cache.embed(enc, TEXTS[:10], progress=False)
    enc.embedded.clear()
    mixed = [TEXTS[15], TEXTS[3], TEXTS[15], TEXTS[12], TEXTS[0]]
    out = cache.embed(enc, mixed, progress=False)
    assert sorted(enc.embedded) == sorted([TEXTS[15], TEXTS[12]])  # duplicates embedded once
    assert cache.stats.embedded == 2 and cache.stats.reused == 2
    assert cache.stats.misses == 10 + 3  # cumulative, per input position
    np.testing.assert_array_equal(out, CountingEncoder().encode_documents(mixed))


def test_many_texts_batches_and_shards(tmp_path: Path):
    enc = CountingEncoder()
    cache = EmbeddingCache(tmp_path, batch_size=3, shard_size=7)
    out = cache.embed(enc, TEXTS, progress=True)
    assert enc.calls == 7  # ceil(20 / 3) batches
    assert len(cache.shard_files(enc.model_id)) == 3  # 9 + 9 + 2 texts (flushed per 7+)
    np.testing.assert_array_equal(out, CountingEncoder().encode_documents(TEXTS))
    fresh = EmbeddingCache(tmp_path)
    np.testing.assert_array_equal(fresh.embed(enc, TEXTS, progress=False), out)
    assert fresh.stats.embedded == 0


def test_truncated_shard_is_detected_and_rebuilt(tmp_path: Path):
    enc = CountingEncoder()
    EmbeddingCache(tmp_path).embed(enc, TEXTS, progress=False)
    (shard,) = EmbeddingCache(tmp_path).shard_files(enc.model_id)
    data = shard.read_bytes()
    shard.write_bytes(data[: len(data) // 2])

    enc2 = CountingEncoder()
    cache = EmbeddingCache(tmp_path)
    with pytest.warns(CorruptCacheWarning, match="checksum"):
        out = cache.embed(enc2, TEXTS, progress=False)
    assert len(enc2.embedded) == len(TEXTS)
    assert not shard.exists()
    np.testing.assert_array_equal(out, CountingEncoder().encode_documents(TEXTS))
    assert cache.stats.discarded_shards == 1
    # rebuilt: the next run reuses everything again
    later = EmbeddingCache(tmp_path)
    later.embed(CountingEncoder(), TEXTS, progress=False)
    assert later.stats.embedded == 0


def test_flipped_byte_is_detected(tmp_path: Path):
    enc = CountingEncoder()
    EmbeddingCache(tmp_path).embed(enc, TEXTS, progress=False)
    (shard,) = EmbeddingCache(tmp_path).shard_files(enc.model_id)
    data = bytearray(shard.read_bytes())
    data[-200] ^= 0xFF  # same length, different content (inside the vectors)
    shard.write_bytes(bytes(data))
    cache = EmbeddingCache(tmp_path)
    with pytest.warns(CorruptCacheWarning):
        out = cache.embed(CountingEncoder(), TEXTS, progress=False)
    assert cache.stats.embedded == len(TEXTS)
    np.testing.assert_array_equal(out, CountingEncoder().encode_documents(TEXTS))


def test_dimension_mismatch_is_treated_as_corrupt(tmp_path: Path):
    EmbeddingCache(tmp_path).embed(CountingEncoder(dim=8), TEXTS[:5], progress=False)
    cache = EmbeddingCache(tmp_path)
    changed = CountingEncoder(dim=4)  # same model id, different vectors: never mix them
    with pytest.warns(CorruptCacheWarning, match="dimension"):
        out = cache.embed(changed, TEXTS[:6], progress=False)
    assert out.shape == (6, 4)
    np.testing.assert_array_equal(out, CountingEncoder(dim=4).encode_documents(TEXTS[:6]))
    reopened = EmbeddingCache(tmp_path)
    assert reopened.embed(CountingEncoder(dim=4), TEXTS[:6], progress=False).shape == (6, 4)
    assert reopened.stats.embedded == 0


def test_shards_disagreeing_on_dimension_keep_the_newest(tmp_path: Path):
    EmbeddingCache(tmp_path / "a").embed(CountingEncoder(dim=8), TEXTS[:3], progress=False)
    time.sleep(0.01)
    # another writer, unaware of the first shard, writes a newer one of another dimension
    other = EmbeddingCache(tmp_path / "b")
    other.embed(CountingEncoder(dim=4), TEXTS[3:6], progress=False)
    (newer,) = other.shard_files("fake/counting")
    folder = EmbeddingCache(tmp_path / "a").shard_files("fake/counting")[0].parent
    newer.rename(folder / newer.name)

    reader = EmbeddingCache(tmp_path / "a")
    with pytest.warns(CorruptCacheWarning, match="dimension"):
        out = reader.embed(CountingEncoder(dim=4), TEXTS[:6], progress=False)
    assert out.shape == (6, 4)
    assert reader.stats.embedded == 3  # the 8-dim shard's texts, again


def test_writes_are_atomic_and_leave_no_temp_files(tmp_path: Path):
    enc = CountingEncoder()
    cache = EmbeddingCache(tmp_path, batch_size=4, shard_size=4)
    cache.embed(enc, TEXTS, progress=False)
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert not [p for p in files if p.name.startswith(".tmp")]
    assert {p.name for p in files if p.suffix != ".npz"} == {
        "model.json", ".lock", "CACHEDIR.TAG", CACHE_MANIFEST, f".{CACHE_MANIFEST}.lock"}
    shards = [p for p in files if p.suffix == ".npz"]
    assert len(shards) == 5
    # a shard's name carries the sha256 of its bytes
    for p in shards:
        assert p.name.split(".")[1] == hashlib.sha256(p.read_bytes()).hexdigest()


def test_temp_files_are_ignored_and_stale_ones_removed(tmp_path: Path):
    enc = CountingEncoder()
    EmbeddingCache(tmp_path).embed(enc, TEXTS[:4], progress=False)
    folder = EmbeddingCache(tmp_path).shard_files(enc.model_id)[0].parent
    fresh_tmp = folder / ".tmp-123-1-abc"
    stale_tmp = folder / ".tmp-456-2-def"
    fresh_tmp.write_bytes(b"half a shard being written")
    stale_tmp.write_bytes(b"left by a writer that died")
    old = time.time() - 7200
    os.utime(stale_tmp, (old, old))
    cache = EmbeddingCache(tmp_path)
    cache.embed(CountingEncoder(), TEXTS[:4], progress=False)
    assert cache.stats.embedded == 0
    assert fresh_tmp.exists() and not stale_tmp.exists()


def test_kind_is_part_of_the_key(tmp_path: Path):
    enc = CountingEncoder()
    cache = EmbeddingCache(tmp_path)
    docs = cache.embed(enc, TEXTS[:3], kind="document", progress=False)
    queries = cache.embed(enc, TEXTS[:3], kind="query", progress=False)
    assert cache.stats.embedded == 3  # the query vectors were not taken from the documents
    assert not np.allclose(docs, queries)
    np.testing.assert_array_equal(queries, CountingEncoder().encode_queries(TEXTS[:3]))
    with pytest.raises(ValueError, match="kind"):
        cache.embed(enc, TEXTS[:3], kind="passage")


def test_models_are_kept_apart(tmp_path: Path):
    cache = EmbeddingCache(tmp_path)
    cache.embed(CountingEncoder("model/a"), TEXTS[:3], progress=False)
    cache.embed(CountingEncoder("model/b"), TEXTS[:3], progress=False)
    assert cache.stats.embedded == 3
    assert len({p.parent.parent for p in tmp_path.rglob("*.npz")}) == 2


def test_empty_input(tmp_path: Path):
    out = EmbeddingCache(tmp_path).embed(CountingEncoder(), [], progress=False)
    assert out.shape[0] == 0 and out.dtype == np.float32


def test_sees_shards_written_by_another_cache_instance(tmp_path: Path):
    a, b = EmbeddingCache(tmp_path), EmbeddingCache(tmp_path)
    a.embed(CountingEncoder(), TEXTS[:5], progress=False)
    b.embed(CountingEncoder(), TEXTS[5:10], progress=False)
    a.embed(CountingEncoder(), TEXTS[:10], progress=False)
    assert a.stats.embedded == 0


def _worker(root: str, start: int) -> None:
    EmbeddingCache(root).embed(CountingEncoder(), TEXTS[start : start + 10], progress=False)


def test_concurrent_processes_write_distinct_shards(tmp_path: Path):
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_worker, args=(str(tmp_path), s)) for s in (0, 10)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    cache = EmbeddingCache(tmp_path)
    out = cache.embed(CountingEncoder(), TEXTS, progress=False)
    assert cache.stats.embedded == 0
    assert len(cache.shard_files("fake/counting")) == 2
    np.testing.assert_array_equal(out, CountingEncoder().encode_documents(TEXTS))


def test_many_small_shards_are_compacted(tmp_path: Path):
    cache = EmbeddingCache(tmp_path, compact_above=3)
    enc = CountingEncoder()
    for text in TEXTS[:5]:  # e.g. a reranker embedding a few new candidates per query
        cache.embed(enc, [text], progress=False)
    assert len(cache.shard_files(enc.model_id)) == 2  # 4 merged into 1, then 1 more
    assert cache.compact(enc.model_id) == 2
    (merged,) = cache.shard_files(enc.model_id)
    fresh = EmbeddingCache(tmp_path)
    out = fresh.embed(CountingEncoder(), TEXTS[:5], progress=False)
    assert fresh.stats.embedded == 0
    np.testing.assert_array_equal(out, CountingEncoder().encode_documents(TEXTS[:5]))
    assert fresh.compact(enc.model_id) == 0 and merged.exists()


class SlowEncoder(CountingEncoder):
    """The fake, taking ``per_text`` seconds per text and recording each batch's size."""

    def __init__(self, per_text: float = 0.0, per_call: float = 0.0, fail_after: int = -1):
        super().__init__()
        self.per_text, self.per_call, self.fail_after = per_text, per_call, fail_after
        self.batches: list[int] = []

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        if len(self.batches) == self.fail_after:
            raise KeyboardInterrupt  # Ctrl-C in the middle of a run
        time.sleep(self.per_call + self.per_text * len(texts))
        self.batches.append(len(texts))
        return super().encode_documents(texts)


def test_checkpoints_by_time_before_shard_size_is_reached(tmp_path: Path):
    enc = SlowEncoder(per_call=0.12)
    cache = EmbeddingCache(tmp_path, batch_size=2, shard_size=10_000, checkpoint_s=0.1)
    cache.embed(enc, TEXTS[:8], progress=False)
    # every batch took longer than the checkpoint interval, so each was written at once
    assert len(enc.batches) == 4
    assert len(cache.shard_files(enc.model_id)) == 4


def test_an_interrupted_run_keeps_what_it_embedded(tmp_path: Path):
    enc = SlowEncoder(fail_after=3)
    cache = EmbeddingCache(tmp_path, batch_size=2, shard_size=10_000, checkpoint_s=3600)
    with pytest.raises(KeyboardInterrupt):
        cache.embed(enc, TEXTS, progress=False)
    assert sum(enc.batches) == 6
    resumed = EmbeddingCache(tmp_path)
    again = CountingEncoder()
    out = resumed.embed(again, TEXTS, progress=False)
    assert resumed.stats.reused == 6 and len(again.embedded) == len(TEXTS) - 6
    np.testing.assert_array_equal(out, CountingEncoder().encode_documents(TEXTS))


def test_batches_are_sized_by_time_and_texts_go_longest_first(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(cache_module, "_BATCH_SECONDS", 0.05)
    texts = [f"text {'x' * i}" for i in range(40)]
    enc = SlowEncoder(per_text=0.01)  # at most 100 texts/s: batches of at most 5 (0.05 s)
    EmbeddingCache(tmp_path, batch_size=64).embed(enc, texts, progress=False)
    assert enc.batches[0] == 8  # the first batch, before any timing
    assert sum(enc.batches) == 40 and max(enc.batches[1:]) <= 5
    assert enc.embedded == sorted(texts, key=len, reverse=True)


def test_writes_wait_for_the_lock(tmp_path: Path):
    from filelock import FileLock

    enc = CountingEncoder()
    folder = tmp_path / cache_module.model_slug(enc.model_id) / "document"
    folder.mkdir(parents=True)
    held = FileLock(str(folder / ".lock"))
    held.acquire()
    worker = threading.Thread(target=EmbeddingCache(tmp_path).embed,
                              args=(enc, TEXTS[:3]), kwargs={"progress": False})
    worker.start()
    worker.join(0.5)
    assert worker.is_alive() and not list(folder.glob("*.npz"))  # waiting for the lock
    held.release()
    worker.join(10)
    assert not worker.is_alive() and len(list(folder.glob("*.npz"))) == 1


def test_progress_bar_once_a_step_takes_a_second_and_clean(tmp_path: Path, capsys):
    EmbeddingCache(tmp_path / "quick").embed(CountingEncoder(), TEXTS, progress=True)
    assert capsys.readouterr().err == ""  # instant: no bar
    enc = SlowEncoder(per_call=0.35)
    EmbeddingCache(tmp_path / "slow", batch_size=2).embed(enc, TEXTS[:8], progress=True)
    err = capsys.readouterr().err
    assert "embedding documents (fake/counting)" in err and "8/8" in err
    assert "\x1b[" not in err  # one bar, no cursor movement of nested bars


def test_one_default_location(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("WORKBENCH_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "workbench"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "workbench"
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine"
    assert cache_dir(tmp_path / "given") == tmp_path / "given"
    monkeypatch.chdir(tmp_path)  # wherever the command runs: the same folder
    assert EmbeddingCache().root == tmp_path / "mine" / "embeddings"


def test_inventory_counts_vectors_per_model_and_kind(tmp_path: Path):
    cache = EmbeddingCache(tmp_path, batch_size=3, shard_size=4)
    cache.embed(CountingEncoder("model/a"), TEXTS, progress=False)
    cache.embed(CountingEncoder("model/a"), TEXTS[:2], kind="query", progress=False)
    cache.embed(CountingEncoder("model/b", dim=4), TEXTS[:5], progress=False)
    rows = {(r["model_id"], r["kind"]): r for r in EmbeddingCache(tmp_path).inventory()}
    assert set(rows) == {("model/a", "document"), ("model/a", "query"), ("model/b", "document")}
    assert rows[("model/a", "document")]["vectors"] == 20
    assert rows[("model/a", "query")]["vectors"] == 2
    assert rows[("model/b", "document")]["vectors"] == 5
    assert all(r["bytes"] > 0 and r["shards"] >= 1 for r in rows.values())
    assert EmbeddingCache(tmp_path / "empty").inventory() == []


@pytest.mark.slow
def test_a_killed_real_embedding_run_loses_at_most_the_last_checkpoint_interval(tmp_path):
    """MiniLM embeds the handbook's 200-character windows in a child process, checkpointing
    every 2 s; SIGKILL after 8 s of embedding. What was embedded before the last checkpoint
    survives (well under the 4,096-text shard size), the loss is bounded by the interval plus
    the batch in flight, and the survivors are the real vectors."""
    from tests.conftest import load_benchmark
    from workbench.retrieval.encoders import get_encoder

    bench = load_benchmark("bench_interrupt")
    texts = bench.load_texts("handbook")
    # twice over (distinct texts), so even the fast engine is still embedding at the kill
    texts += [f"{t} (again)" for t in texts]
    run = bench.killed_run(texts, tmp_path, "minilm", checkpoint_s=2.0, kill_after_s=8.0)
    assert not run.finished, "the run ended before the kill: give it more texts"
    assert 0 < run.kept <= run.embedded < len(texts)
    assert run.kept in run.checkpoints  # whole batches, as they were written
    assert run.lost_seconds <= 2.0 + run.max_batch_seconds + 1.0, run
    # resuming reuses the survivors: they are the real vectors of the longest texts
    kept = sorted(texts, key=len, reverse=True)[: run.kept]
    sample = kept[:: max(1, len(kept) // 5)][:5]
    encoder = get_encoder("minilm")
    cache = EmbeddingCache(tmp_path)
    # the same texts, reused: equal within the engine's tolerance (OpenVINO bf16 results move
    # in the 4th decimal with the padding of the batch a text was embedded in)
    cosines = np.sum(cache.embed(encoder, sample, progress=False)
                     * encoder.encode_documents(sample), axis=1)
    assert cosines.min() >= 0.9999, cosines
    assert cache.stats.reused == len(sample) and cache.stats.embedded == 0


def test_stale_temp_files_of_the_shared_atomic_write_are_removed(tmp_path: Path):
    enc = CountingEncoder()
    EmbeddingCache(tmp_path).embed(enc, TEXTS[:4], progress=False)
    shard = EmbeddingCache(tmp_path).shard_files(enc.model_id)[0]
    folder = shard.parent
    # what workbench.io.atomic_write_bytes leaves when its writer is killed mid-write
    name = f"{time.time_ns()}-1-{'a' * 32}.{'0' * 64}.npz"
    stale_tmp, fresh_tmp = folder / f".{name}.k2Jd_x9Q.tmp", folder / f".{shard.name}.Zq81abcd.tmp"
    other = folder / ".notes.Zq81abcd.tmp"  # not a shard's temp file: not the cache's to remove
    for path in (stale_tmp, fresh_tmp, other):
        path.write_bytes(b"half a shard")
    old = time.time() - 7200
    for path in (stale_tmp, other):
        os.utime(path, (old, old))
    assert temp_files(folder / name) == [stale_tmp]
    cache = EmbeddingCache(tmp_path)
    cache.embed(CountingEncoder(), TEXTS[:6], progress=False)
    assert cache.stats.embedded == 2
    assert not stale_tmp.exists() and fresh_tmp.exists() and other.exists()
    # the new shard went through the same write, and left no temp file of its own
    assert [p for p in folder.iterdir() if is_temp_file(p)] == [fresh_tmp]


# -- the one batch loop: with a cache and without one --------------------------------------


class ShortEncoder(CountingEncoder):
    """One row short."""

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        return super().encode_documents(texts)[:-1]


class NumberEncoder(CountingEncoder):
    """One number per text (1-D): concatenated, it looks like a vector per text."""

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        return super().encode_documents(texts)[:, 0]


class FlatEncoder(CountingEncoder):
    """Every vector of the batch in one 1-D row."""

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        return super().encode_documents(texts).ravel()


class DriftEncoder(CountingEncoder):
    """8 dimensions for the first batch, 4 after."""

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        vecs = super().encode_documents(texts)
        return vecs if self.calls == 1 else vecs[:, :4]


def _cached(encoder, texts: list[str], root: Path, batch_size: int = 256) -> np.ndarray:
    return EmbeddingCache(root, batch_size=batch_size).embed(encoder, texts, progress=False)


def _uncached(encoder, texts: list[str], root: Path, batch_size: int = 256) -> np.ndarray:
    return embed_uncached(encoder, texts, progress=False, batch_size=batch_size)


def _dense(encoder, texts: list[str], root: Path) -> np.ndarray:
    chunks = [Chunk(f"d#{i}", "d", 0, len(t), text=t) for i, t in enumerate(texts)]
    return DenseRetriever(chunks, encoder, progress=False).vectors


SHAPE = "returned shape {} for 8 texts: it must return one vector per text, shape (8, dimension)"


@pytest.mark.parametrize("embed", [_cached, _uncached, _dense],
                         ids=["cache", "no cache", "dense retriever, no cache"])
@pytest.mark.parametrize(("encoder", "says"), [
    (ShortEncoder, SHAPE.format("(7, 8)")),
    (NumberEncoder, SHAPE.format("(8,)")),
    (FlatEncoder, SHAPE.format("(64,)")),
    (DriftEncoder, "returned vectors of dimension 4 after 8 for the texts before: "
                   "it must return one dimension"),
], ids=["a row short", "1-D, a number per text", "1-D, flattened", "dimension changes"])
def test_an_encoder_returning_the_wrong_shape_is_refused_alike_with_and_without_cache(
    tmp_path: Path, embed, encoder, says
):
    """The same batches (a first one of 8 texts) and the same one-line error on every path;
    20 texts, so the drifting encoder is asked a second time."""
    with pytest.raises(WorkbenchError) as refused:
        embed(encoder(), TEXTS, tmp_path)
    assert str(refused.value) == f"encoder fake/counting {says}"


@given(texts=st.lists(st.text(alphabet="ab ", max_size=12), max_size=40),
       batch_size=st.integers(1, 12))
def test_without_a_cache_the_same_vectors_in_input_order(texts: list[str], batch_size: int):
    """Row i is the encoder's vector of texts[i], with a cache or without; both paths send
    the encoder each distinct text once, longest first, in batches of the one rule (a first
    of min(batch_size, 8), none above batch_size)."""
    with tempfile.TemporaryDirectory() as root:
        cached_enc, uncached_enc = SlowEncoder(), SlowEncoder()
        cached = _cached(cached_enc, texts, Path(root), batch_size)
        uncached = _uncached(uncached_enc, texts, Path(root), batch_size)
    assert uncached.dtype == np.float32 and uncached.shape == cached.shape
    if texts:
        alone = np.stack([CountingEncoder().encode_documents([t])[0] for t in texts])
        np.testing.assert_array_equal(uncached, alone)
        np.testing.assert_array_equal(cached, alone)
    assert uncached_enc.embedded == cached_enc.embedded
    assert uncached_enc.embedded == sorted(dict.fromkeys(texts), key=len, reverse=True)
    for enc in (cached_enc, uncached_enc):
        assert enc.batches[:1] == ([min(batch_size, 8, len(set(texts)))] if texts else [])
        assert max(enc.batches, default=0) <= batch_size


def test_batch_size_below_one_is_refused_on_both_paths(tmp_path: Path):
    with pytest.raises(WorkbenchError, match="batch_size must be >= 1, not 0"):
        EmbeddingCache(tmp_path, batch_size=0)
    with pytest.raises(WorkbenchError, match="batch_size must be >= 1, not 0"):
        embed_uncached(CountingEncoder(), TEXTS, batch_size=0)
