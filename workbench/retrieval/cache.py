"""On-disk embedding cache keyed by (model id, kind, content hash).

Layout::

    {root}/{model-slug}/{kind}/{time_ns}-{pid}-{uuid}.{sha256}.npz

Each shard is an ``.npz`` holding ``hashes`` (sha256 hex of each text, as stored by
``Chunk.content_hash``) and ``vectors`` (float32, one row per hash). The shard's own
sha256 is part of its file name, so a truncated or corrupted shard is detected when it is
read: it is discarded with a warning and its texts are embedded again, never served wrong.
Shards are append-only and written atomically (temporary file in the same folder, then
``os.replace``); names carry the pid and a uuid, so processes sharing a cache write
distinct shards and never clobber each other.

``kind`` ("document" or "query") is part of the key: e5-style models embed a passage and
a query differently, so a cached passage vector is never reused for a query.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import time
import uuid
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

if TYPE_CHECKING:
    from workbench.retrieval.encoders import Encoder

Kind = Literal["document", "query"]
KINDS: tuple[str, ...] = ("document", "query")

_SHARD = re.compile(r"^(?P<stem>[0-9]+-[0-9]+-[0-9a-f]+)\.(?P<sha>[0-9a-f]{64})\.npz$")


def text_hash(text: str) -> str:
    """sha256 of the UTF-8 text: the same key as ``Chunk.content_hash``."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def model_slug(model_id: str) -> str:
    """A folder name for ``model_id``: readable part plus a short hash (no collisions)."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", model_id).strip("._")[:60] or "model"
    return f"{readable}-{hashlib.sha256(model_id.encode('utf-8')).hexdigest()[:12]}"


class CorruptCacheWarning(UserWarning):
    """A cache shard failed its checksum or shape checks and was discarded."""


@dataclass
class CacheStats:
    """``hits``/``misses``: texts served from / not found in the cache, cumulative over
    every ``embed`` call (counted per input position). ``embedded``/``reused``: the last
    call only; ``embedded`` counts distinct texts sent to the encoder."""

    hits: int = 0
    misses: int = 0
    embedded: int = 0
    reused: int = 0
    discarded_shards: int = 0


class _Store:
    """The in-memory view of one (model, kind) folder: hash -> vector."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.vectors: dict[str, np.ndarray] = {}
        self.dim: int | None = None
        self.seen: set[str] = set()  # shard names looked at (valid or not)
        self.loaded: set[str] = set()  # valid shard names whose vectors are in memory


class EmbeddingCache:
    """Embed texts through an on-disk cache; only texts not seen before reach the encoder.

    >>> cache = EmbeddingCache(".workbench_cache/embeddings")      # doctest: +SKIP
    >>> vecs = cache.embed(encoder, [c.embed_text for c in chunks])  # doctest: +SKIP
    >>> cache.stats.embedded, cache.stats.reused                     # doctest: +SKIP
    """

    def __init__(
        self,
        root: str | Path = ".workbench_cache/embeddings",
        batch_size: int = 256,
        shard_size: int = 4096,
        compact_above: int = 64,
    ):
        if batch_size < 1 or shard_size < 1:
            raise ValueError("batch_size and shard_size must be >= 1")
        self.root = Path(root)
        self.batch_size = batch_size
        self.shard_size = shard_size
        self.compact_above = compact_above
        self.stats = CacheStats()
        self._stores: dict[tuple[str, str], _Store] = {}

    def __repr__(self) -> str:
        return f"EmbeddingCache({str(self.root)!r}, {self.stats})"

    # -- public -----------------------------------------------------------------------

    def embed(
        self,
        encoder: Encoder,
        texts: Sequence[str],
        kind: str = "document",
        progress: bool = True,
    ) -> np.ndarray:
        """Vectors for ``texts`` in input order (float32, shape ``(len(texts), d)``).

        Cached vectors are reused; the misses are embedded (in batches, with a progress
        bar when there are more than one batch) and stored as new shards.
        """
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
        texts = list(texts)
        store = self._refresh(encoder.model_id, kind)
        hashes = [text_hash(t) for t in texts]
        missing: dict[str, str] = {}
        for h, t in zip(hashes, texts, strict=True):
            if h not in store.vectors and h not in missing:
                missing[h] = t
        n_miss = sum(1 for h in hashes if h in missing)

        if missing:
            new = self._embed_missing(encoder, store, kind, missing, progress)
            if store.dim is not None and new.shape[1] != store.dim:
                warnings.warn(
                    f"embedding cache {store.folder}: cached vectors have dimension "
                    f"{store.dim} but {encoder.model_id} now returns {new.shape[1]}; "
                    "discarding the cached vectors and embedding everything again",
                    CorruptCacheWarning,
                    stacklevel=2,
                )
                self._discard_all(store)
                return self.embed(encoder, texts, kind, progress)
            store.dim = int(new.shape[1])

        self.stats.hits += len(texts) - n_miss
        self.stats.misses += n_miss
        self.stats.embedded = len(missing)
        self.stats.reused = len(texts) - n_miss
        if not texts:
            return np.zeros((0, store.dim or 0), dtype=np.float32)
        return np.stack([store.vectors[h] for h in hashes]).astype(np.float32, copy=False)

    def shard_files(self, model_id: str, kind: str = "document") -> list[Path]:
        """The shard files currently on disk for ``(model_id, kind)``."""
        folder = self._folder(model_id, kind)
        if not folder.is_dir():
            return []
        return sorted(p for p in folder.iterdir() if _SHARD.match(p.name))

    def compact(self, model_id: str, kind: str = "document") -> int:
        """Merge the shards of ``(model_id, kind)`` into as few as possible; returns how many
        shard files were merged away. Runs by itself when a folder holds more than
        ``compact_above`` shards (e.g. after many small reranker calls). Safe alongside
        other processes: the merged shard is written before the old ones are deleted, and
        shards they write meanwhile are left alone."""
        return self._compact(self._refresh(model_id, kind))

    def clear(self, model_id: str | None = None) -> None:
        """Delete the cache for one model (or all models)."""
        import shutil

        target = self.root / model_slug(model_id) if model_id is not None else self.root
        shutil.rmtree(target, ignore_errors=True)
        self._stores = {
            key: s for key, s in self._stores.items() if model_id is not None and key[0] != model_id
        }

    # -- internals --------------------------------------------------------------------

    def _folder(self, model_id: str, kind: str) -> Path:
        return self.root / model_slug(model_id) / kind

    def _refresh(self, model_id: str, kind: str) -> _Store:
        """Load shards written since the last look (by us or by another process)."""
        key = (model_id, kind)
        store = self._stores.get(key)
        if store is None:
            store = self._stores[key] = _Store(self._folder(model_id, kind))
        if not store.folder.is_dir():
            return store
        names = []
        for path in store.folder.iterdir():
            if path.name.endswith(".npz"):
                names.append(path.name)
            elif path.name.startswith(".tmp-"):
                self._remove_stale_temp(path)
        names.sort()
        loaded: list[tuple[str, np.ndarray, np.ndarray]] = []
        for name in names:
            if name in store.seen:
                continue
            store.seen.add(name)
            shard = self._read_shard(store.folder / name)
            if shard is not None:
                loaded.append((name, *shard))
        if not loaded:
            return store
        # Shards must agree on the dimension; the newest shard (names start with time_ns)
        # wins when they do not, the rest are treated as corrupt.
        dim = store.dim if store.dim is not None else int(loaded[-1][2].shape[1])
        for name, hashes, vectors in loaded:
            if vectors.shape[1] != dim:
                self._discard(
                    store.folder / name,
                    f"dimension {vectors.shape[1]} differs from the cache's {dim}",
                )
                continue
            for h, v in zip(hashes.tolist(), vectors, strict=True):
                store.vectors[h] = v
            store.loaded.add(name)
        store.dim = dim if store.vectors else store.dim
        return store

    def _read_shard(self, path: Path) -> tuple[np.ndarray, np.ndarray] | None:
        match = _SHARD.match(path.name)
        if match is None:
            self._discard(path, "file name is not a shard name")
            return None
        try:
            data = path.read_bytes()
        except FileNotFoundError:  # removed by another process meanwhile
            return None
        if hashlib.sha256(data).hexdigest() != match["sha"]:
            self._discard(path, "checksum mismatch (truncated or corrupted)")
            return None
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as npz:
                hashes, vectors = npz["hashes"], npz["vectors"]
        except Exception as exc:  # a shard with the right checksum but unreadable content
            self._discard(path, f"unreadable ({type(exc).__name__}: {exc})")
            return None
        if (
            vectors.ndim != 2
            or hashes.ndim != 1
            or len(hashes) != len(vectors)
            or vectors.dtype != np.float32
            or not np.all(np.isfinite(vectors))
        ):
            self._discard(path, "malformed arrays")
            return None
        return hashes, vectors

    def _discard(self, path: Path, why: str) -> None:
        warnings.warn(
            f"embedding cache: discarding shard {path} ({why}); its texts will be embedded again",
            CorruptCacheWarning,
            stacklevel=4,
        )
        self.stats.discarded_shards += 1
        with contextlib.suppress(FileNotFoundError):
            path.unlink()

    @staticmethod
    def _remove_stale_temp(path: Path, max_age_s: float = 3600.0) -> None:
        """A temp file left by a writer that died (an old one: a live writer's is fresh)."""
        with contextlib.suppress(OSError):
            if time.time() - path.stat().st_mtime > max_age_s:
                path.unlink()

    def _discard_all(self, store: _Store) -> None:
        for path in list(store.folder.glob("*.npz")):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        store.vectors.clear()
        store.seen.clear()
        store.loaded.clear()
        store.dim = None

    def _embed_missing(
        self,
        encoder: Encoder,
        store: _Store,
        kind: str,
        missing: dict[str, str],
        progress: bool,
    ) -> np.ndarray:
        items = list(missing.items())
        encode = encoder.encode_queries if kind == "query" else encoder.encode_documents
        bar = None
        if progress and len(items) > self.batch_size:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(items), desc=f"embedding ({encoder.model_id})", unit="text")
        pending_h: list[str] = []
        pending_v: list[np.ndarray] = []
        first: np.ndarray | None = None
        try:
            for start in range(0, len(items), self.batch_size):
                batch = items[start : start + self.batch_size]
                vecs = np.asarray(encode([t for _, t in batch]), dtype=np.float32)
                if vecs.ndim != 2 or len(vecs) != len(batch):
                    raise ValueError(
                        f"encoder {encoder.model_id} returned shape {vecs.shape} "
                        f"for {len(batch)} texts"
                    )
                if first is None:
                    first = vecs
                    if store.dim is not None and vecs.shape[1] != store.dim:
                        return vecs  # caller discards the cache and starts again
                for (h, _), v in zip(batch, vecs, strict=True):
                    store.vectors[h] = v
                pending_h.extend(h for h, _ in batch)
                pending_v.append(vecs)
                if len(pending_h) >= self.shard_size:
                    self._write_shard(store, pending_h, np.concatenate(pending_v))
                    pending_h, pending_v = [], []
                if bar is not None:
                    bar.update(len(batch))
        finally:
            if bar is not None:
                bar.close()
        if pending_h:
            self._write_shard(store, pending_h, np.concatenate(pending_v))
        if len(store.loaded) > self.compact_above:
            self._compact(store)
        assert first is not None
        return first

    def _compact(self, store: _Store, rows: int = 100_000) -> int:
        old = set(store.loaded)
        if len(old) < 2:
            return 0
        items = list(store.vectors.items())
        for start in range(0, len(items), rows):
            part = items[start : start + rows]
            self._write_shard(store, [h for h, _ in part], np.stack([v for _, v in part]))
        for name in old:
            store.loaded.discard(name)
            with contextlib.suppress(FileNotFoundError):
                (store.folder / name).unlink()
        return len(old)

    def _write_shard(self, store: _Store, hashes: list[str], vectors: np.ndarray) -> None:
        buf = io.BytesIO()
        np.savez(buf, hashes=np.asarray(hashes, dtype="<U64"), vectors=vectors)
        data = buf.getvalue()
        stem = f"{time.time_ns()}-{os.getpid()}-{uuid.uuid4().hex}"
        name = f"{stem}.{hashlib.sha256(data).hexdigest()}.npz"
        store.folder.mkdir(parents=True, exist_ok=True)
        tmp = store.folder / f".tmp-{stem}"
        try:
            with open(tmp, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, store.folder / name)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        store.seen.add(name)
        store.loaded.add(name)
