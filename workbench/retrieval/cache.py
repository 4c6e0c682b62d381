"""On-disk embedding cache keyed by (model id, kind, content hash).

Location: one default folder for every command and notebook,
:func:`~workbench.runtime.cache_dir` (the ``WORKBENCH_CACHE`` environment variable, else
``$XDG_CACHE_HOME/workbench``, else ``~/.cache/workbench``); embeddings live in its
``embeddings/`` sub-folder. ``workbench cache
info`` shows what it holds, ``workbench cache clear`` empties it, and ``--cache DIR`` moves it
for one command.

Files (:mod:`~workbench.retrieval.shards`): ``{root}/{model-slug}/{kind}/*.npz`` shards,
each holding text hashes (``Chunk.content_hash``) and their float32 vectors, named by the
sha256 of their own bytes, so a truncated or corrupted shard is detected when it is read: it
is discarded with a warning and its texts are embedded again, never served wrong. Shards are
append-only and written atomically under a lock (``filelock``, one ``.lock`` per folder);
names carry the pid and a uuid, so processes sharing a cache never clobber each other.

Checkpoints: while embedding, the new vectors are written as a shard every
``checkpoint_s`` seconds (30 by default) and every ``shard_size`` texts, and once more when
the run ends or is interrupted (Ctrl-C, an exception). A process killed outright loses at
most the last ``checkpoint_s`` seconds plus the batch in flight; running again reuses the
rest. Texts are embedded longest first, in batches sized to take about two seconds each, so
the progress bar (shown once a step takes more than a second) moves smoothly and similar
lengths are batched together; :func:`embed_uncached` (no cache) encodes in the same batches,
with the same checks of what the encoder returns.

``kind`` ("document" or "query") is part of the key: e5-style models embed a passage and
a query differently, so a cached passage vector is never reused for a query.
"""

from __future__ import annotations

import contextlib
import time
import warnings
from collections.abc import Generator, Iterator, Sequence
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from filelock import FileLock

from workbench.io import WorkbenchError, WorkbenchWarning
from workbench.retrieval.shards import (
    SHARD_NAME,
    ShardError,
    is_temp_file,
    model_slug,
    read_model_id,
    read_shard,
    remove_stale_temp,
    shard_rows,
    text_hash,
    write_model_id,
    write_shard,
)
from workbench.runtime import (
    EMBEDDINGS_DIR,
    cache_dir,
    clear_cache_folder,
    mark_cache_folder,
    record_cache_files,
)

if TYPE_CHECKING:
    from workbench.retrieval.encoders import Encoder

Kind = Literal["document", "query"]
KINDS: tuple[str, ...] = ("document", "query")
_BATCH_SIZE = 256  # the most texts sent to the encoder at once, unless told otherwise
_BATCH_SECONDS = 2.0  # batches are sized to take about this long
_FIRST_BATCH = 8


class CorruptCacheWarning(WorkbenchWarning):
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
    _: KW_ONLY
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

    ``root`` defaults to ``cache_dir() / "embeddings"``. ``batch_size`` caps the texts sent
    to the encoder at once; ``shard_size`` and ``checkpoint_s`` say when new vectors are
    written (every that many texts, every that many seconds).

    >>> cache = EmbeddingCache()                                     # doctest: +SKIP
    >>> vecs = cache.embed(encoder, [c.embed_text for c in chunks])  # doctest: +SKIP
    >>> cache.stats.embedded, cache.stats.reused                     # doctest: +SKIP
    """

    def __init__(
        self,
        root: str | Path | None = None,
        *,
        batch_size: int = _BATCH_SIZE,
        shard_size: int = 4096,
        compact_above: int = 64,
        checkpoint_s: float = 30.0,
    ):
        if shard_size < 1:
            raise WorkbenchError(f"shard_size must be >= 1, not {shard_size!r}")
        if not checkpoint_s > 0:
            raise WorkbenchError(f"checkpoint_s must be > 0 seconds, not {checkpoint_s!r}")
        self.root = Path(root).expanduser() if root is not None else cache_dir() / "embeddings"
        self.batch_size = _batch_size(batch_size)
        self.shard_size = shard_size
        self.compact_above = compact_above
        self.checkpoint_s = float(checkpoint_s)
        self.stats = CacheStats()
        self._stores: dict[tuple[str, str], _Store] = {}
        self._locks: dict[Path, FileLock] = {}

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
        bar when it takes more than a second) and stored as new shards, checkpointed as the
        module docstring says.
        """
        if kind not in KINDS:
            raise WorkbenchError(f"kind must be one of {KINDS}, not {kind!r}")
        texts = list(texts)
        store = self._refresh(encoder.model_id, kind)
        hashes = [text_hash(t) for t in texts]
        missing: dict[str, str] = {}
        for h, t in zip(hashes, texts, strict=True):
            if h not in store.vectors and h not in missing:
                missing[h] = t
        n_miss = sum(1 for h in hashes if h in missing)

        if missing:
            dim = self._embed_missing(encoder, store, kind, missing, progress)
            if store.dim is not None and dim != store.dim:
                warnings.warn(
                    f"embedding cache {store.folder}: cached vectors have dimension "
                    f"{store.dim} but {encoder.model_id} now returns {dim}; "
                    "discarding the cached vectors and embedding everything again",
                    CorruptCacheWarning,
                    stacklevel=2,
                )
                self._discard_all(store)
                return self.embed(encoder, texts, kind, progress)
            store.dim = dim

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
        return sorted(p for p in folder.iterdir() if SHARD_NAME.match(p.name))

    def compact(self, model_id: str, kind: str = "document") -> int:
        """Merge the shards of ``(model_id, kind)`` into as few as possible; returns how many
        shard files were merged away. Runs by itself when a folder holds more than
        ``compact_above`` shards (e.g. after many small reranker calls). Safe alongside
        other processes: the merged shard is written before the old ones are deleted, and
        shards they write meanwhile are left alone."""
        return self._compact(self._refresh(model_id, kind))

    def clear(self, model_id: str | None = None) -> None:
        """Delete the cache's files for one model (or all models): only the files the
        workbench wrote, unchanged, in a marked folder
        (:func:`~workbench.runtime.clear_cache_folder`)."""
        under = f"{model_slug(model_id)}/" if model_id is not None else ""
        clear_cache_folder(self.root, EMBEDDINGS_DIR, under)
        self._stores = {
            key: s for key, s in self._stores.items() if model_id is not None and key[0] != model_id
        }
        self._locks = {f: lock for f, lock in self._locks.items() if f.exists()}

    def inventory(self) -> list[dict[str, Any]]:
        """One row per (model, kind) folder: ``model_id``, ``kind``, ``shards``, ``vectors``
        and ``bytes`` (read from the shard headers, no vectors loaded)."""
        rows = []
        models = sorted(p for p in self.root.iterdir() if p.is_dir()) if self.root.is_dir() else []
        for folder in models:
            model_id = read_model_id(folder)
            for kind in KINDS:
                shards = [p for p in (folder / kind).glob("*.npz") if SHARD_NAME.match(p.name)]
                if shards:
                    rows.append({"model_id": model_id, "kind": kind, "shards": len(shards),
                                 "vectors": sum(shard_rows(p) for p in shards),
                                 "bytes": sum(_size(p) for p in shards)})
        return rows

    # -- internals --------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self, folder: Path) -> Iterator[None]:
        """The folder's write lock: one re-entrant ``FileLock`` per folder and cache, so a
        compaction may write its shards while holding it."""
        lock = self._locks.get(folder)
        if lock is None:
            mark_cache_folder(self.root, EMBEDDINGS_DIR)
            folder.mkdir(parents=True, exist_ok=True)
            lock = self._locks[folder] = FileLock(str(folder / ".lock"))
        with lock:
            yield

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
            if SHARD_NAME.match(path.name):
                names.append(path.name)
            elif is_temp_file(path):
                remove_stale_temp(path)
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
        try:
            return read_shard(path)
        except ShardError as exc:
            self._discard(path, str(exc))
            return None

    def _discard(self, path: Path, why: str) -> None:
        warnings.warn(
            f"embedding cache: discarding shard {path} ({why}); its texts will be embedded again",
            CorruptCacheWarning,
            stacklevel=4,
        )
        self.stats.discarded_shards += 1
        with contextlib.suppress(FileNotFoundError):
            path.unlink()

    def _discard_all(self, store: _Store) -> None:
        with self._locked(store.folder):
            for path in list(store.folder.glob("*.npz")):
                if SHARD_NAME.match(path.name):  # a user's own .npz there is not a shard
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
    ) -> int:
        """Embed ``missing`` (hash -> text) into ``store`` through :func:`_encode_batches`,
        writing shards as the module docstring says; returns the encoder's dimension. When
        that differs from the store's, only the first batch is embedded and nothing is
        stored: the caller discards the cache and starts again."""
        hashes, texts = list(missing), list(missing.values())
        pending_h: list[str] = []
        pending_v: list[np.ndarray] = []
        dim: int | None = None
        last_write = time.monotonic()
        try:
            batches = _encode_batches(encoder, texts, kind, self.batch_size, progress)
            with contextlib.closing(batches):
                for positions, vecs in batches:
                    if dim is None:
                        dim = int(vecs.shape[1])
                        if store.dim is not None and dim != store.dim:
                            return dim
                    batch_h = [hashes[i] for i in positions]
                    for h, v in zip(batch_h, vecs, strict=True):
                        store.vectors[h] = v
                    pending_h.extend(batch_h)
                    pending_v.append(vecs)
                    now = time.monotonic()
                    if len(pending_h) >= self.shard_size or now - last_write >= self.checkpoint_s:
                        self._write_shard(store, pending_h, np.concatenate(pending_v), encoder)
                        pending_h, pending_v, last_write = [], [], now
        finally:
            if pending_h:  # finished, or interrupted: keep what was embedded
                self._write_shard(store, pending_h, np.concatenate(pending_v), encoder)
        if len(store.loaded) > self.compact_above:
            self._compact(store)
        assert dim is not None  # missing is not empty
        return dim

    def _compact(self, store: _Store, rows: int = 100_000) -> int:
        old = set(store.loaded)
        if len(old) < 2:
            return 0
        items = list(store.vectors.items())
        with self._locked(store.folder):
            for start in range(0, len(items), rows):
                part = items[start : start + rows]
                self._write_shard(store, [h for h, _ in part], np.stack([v for _, v in part]))
            for name in old:
                store.loaded.discard(name)
                with contextlib.suppress(FileNotFoundError):
                    (store.folder / name).unlink()
        return len(old)

    def _write_shard(self, store: _Store, hashes: list[str], vectors: np.ndarray,
                     encoder: Encoder | None = None) -> None:
        """Write one shard atomically, under the folder's lock (re-entrant in-process)."""
        written: dict[Path, str | None] = {}
        with self._locked(store.folder):
            if encoder is not None:
                with self._locked(store.folder.parent):  # the query and document folders share it
                    digest = write_model_id(store.folder.parent, encoder.model_id)
                if digest is not None:
                    written[store.folder.parent / "model.json"] = digest
            name = write_shard(store.folder, hashes, vectors)
            written[store.folder / name] = SHARD_NAME.match(name)["sha"]  # type: ignore[index]
            record_cache_files(self.root, written)
        store.seen.add(name)
        store.loaded.add(name)


def embed_uncached(encoder: Encoder, texts: Sequence[str], *, progress: bool = True,
                   batch_size: int = _BATCH_SIZE) -> np.ndarray:
    """Document vectors of ``texts`` with no cache, in their order (float32, shape
    ``(len(texts), d)``): each distinct text encoded once, in the cache's batches, checks and
    progress bar (:func:`_encode_batches`)."""
    texts = list(texts)
    distinct = list(dict.fromkeys(texts))
    vectors: np.ndarray | None = None
    batches = _encode_batches(encoder, distinct, "document", _batch_size(batch_size), progress)
    for positions, vecs in batches:
        if vectors is None:
            vectors = np.empty((len(distinct), vecs.shape[1]), dtype=np.float32)
        vectors[positions] = vecs
    if vectors is None:
        return np.zeros((0, 0), dtype=np.float32)
    if len(distinct) == len(texts):
        return vectors
    row = {t: i for i, t in enumerate(distinct)}
    return vectors[[row[t] for t in texts]]


def _encode_batches(
    encoder: Encoder, texts: Sequence[str], kind: str, batch_size: int, progress: bool
) -> Generator[tuple[list[int], np.ndarray], None, None]:
    """The one batch loop: encode ``texts`` and yield each batch's positions in ``texts``
    with its float32 vectors. Longest first (batches of similar length, the slowest texts
    before the size estimate); the first batch holds ``min(batch_size, 8)`` texts, later ones
    are sized to take about two seconds, never more than ``batch_size``. Every batch must come
    back with one row per text and the first batch's dimension (a WorkbenchError otherwise).
    Drives the progress bar; a batch counts as done once the consumer asks for the next."""
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    encode = encoder.encode_queries if kind == "query" else encoder.encode_documents
    bar = _progress_bar(len(texts), f"embedding {kind}s ({encoder.model_id})", progress)
    dim: int | None = None
    done, size = 0, min(batch_size, _FIRST_BATCH)
    try:
        while done < len(order):
            positions = order[done : done + size]
            started = time.monotonic()
            vecs = np.asarray(encode([texts[i] for i in positions]), dtype=np.float32)
            elapsed = time.monotonic() - started
            if vecs.ndim != 2 or len(vecs) != len(positions):
                raise WorkbenchError(
                    f"encoder {encoder.model_id} returned shape {vecs.shape} for "
                    f"{len(positions)} texts: it must return one vector per text, shape "
                    f"({len(positions)}, dimension)"
                )
            if dim is not None and vecs.shape[1] != dim:
                raise WorkbenchError(
                    f"encoder {encoder.model_id} returned vectors of dimension {vecs.shape[1]} "
                    f"after {dim} for the texts before: it must return one dimension"
                )
            dim = int(vecs.shape[1])
            yield positions, vecs
            done += len(positions)
            bar.update(len(positions))
            rate = len(positions) / max(elapsed, 1e-6)
            size = max(1, min(batch_size, int(rate * _BATCH_SECONDS)))
    finally:
        bar.close()


def _batch_size(batch_size: int) -> int:
    if batch_size < 1:
        raise WorkbenchError(f"batch_size must be >= 1, not {batch_size!r}")
    return batch_size


def _progress_bar(total: int, desc: str, enabled: bool) -> Any:
    """One tqdm bar (a widget in notebooks), shown once the step has run for a second."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="text", disable=not enabled, delay=1.0,
                dynamic_ncols=True)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
