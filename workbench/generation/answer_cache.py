"""The generation cache: :func:`cache_key`, :class:`GenerationCache` (answers on disk,
written atomically under the cache's lock) and :class:`CachedGenerator` (any generator behind
the cache)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from workbench.generation.context import AssembledContext
from workbench.generation.prompt import Answer, Generator, generate_all
from workbench.io import atomic_write_text, locked
from workbench.runtime import GENERATIONS_DIR, cache_dir, mark_cache_folder, record_cache_files


def cache_key(generator: Generator, question: str, context: AssembledContext) -> str:
    """sha256 of model id, prompt version, generation params, question and the context's
    chunk ids with the sha256 of each passage's text (an edited chunk is a new key)."""
    blob = {
        "model_id": generator.model_id,
        "prompt_version": generator.prompt_version,
        "params": getattr(generator, "cache_params", {}),
        "question": question,
        "context": [[p.label, p.chunk_id, hashlib.sha256(p.render().encode()).hexdigest()]
                    for p in context.passages],
    }
    return hashlib.sha256(json.dumps(blob, sort_keys=True, ensure_ascii=False,
                                     default=str).encode("utf-8")).hexdigest()


class GenerationCache:
    """Answers on disk, one JSON file per key (``{root}/{key[:2]}/{key}.json``), written
    atomically while holding the cache's one lock (``{root}/.cache.lock``; entries are
    content-addressed, so a second writer of a key finds it written and leaves it), and listed
in the folder's manifest (:func:`~workbench.runtime.record_cache_files`) for ``clear``. A damaged
    entry is removed under the lock and recomputed. Errors are never cached. ``hits`` /
    ``misses`` count lookups. ``root`` defaults to ``generations/`` in the one cache folder
    (:func:`~workbench.runtime.cache_dir`)."""

    def __init__(self, root: str | Path | None = None):
        self.root = Path(root) if root is not None else cache_dir() / GENERATIONS_DIR
        self.hits = 0
        self.misses = 0
        self.writes = 0

    def __repr__(self) -> str:
        return (f"GenerationCache({str(self.root)!r}, hits={self.hits}, misses={self.misses}, "
                f"writes={self.writes})")

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> Answer | None:
        path = self._path(key)
        try:
            answer = Answer.from_json(json.loads(path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            self.misses += 1
            return None
        except (OSError, ValueError, TypeError):
            with locked(self.root / "cache"):  # a damaged entry is recomputed, never served
                path.unlink(missing_ok=True)
            self.misses += 1
            return None
        self.hits += 1
        return replace(answer, cached=True)

    def put(self, key: str, answer: Answer) -> None:
        if answer.error:
            return
        row = replace(answer, cached=False).to_json()
        mark_cache_folder(self.root, GENERATIONS_DIR)
        with locked(self.root / "cache"):
            path = self._path(key)
            if path.exists():
                return
            text = json.dumps(row, ensure_ascii=False)
            atomic_write_text(path, text, make_parents=True, lock=False)
            record_cache_files(self.root, {path: hashlib.sha256(text.encode("utf-8")).hexdigest()})
        self.writes += 1


class CachedGenerator:
    """Any generator behind a :class:`GenerationCache`: re-running costs nothing.
    ``calls`` counts the answers the wrapped generator actually produced."""

    def __init__(self, generator: Generator, cache: GenerationCache | str | Path | None = None):
        self.generator = generator
        self.cache = cache if isinstance(cache, GenerationCache) else GenerationCache(cache or None)
        self.calls = 0

    def __repr__(self) -> str:
        return f"CachedGenerator({self.generator!r}, {self.cache!r})"

    @property
    def model_id(self) -> str:
        return self.generator.model_id

    @property
    def prompt_version(self) -> str:
        return self.generator.prompt_version

    def generate(self, question: str, context: AssembledContext) -> Answer:
        return self.generate_many([(question, context)])[0]

    def generate_many(self, requests: Sequence[tuple[str, AssembledContext]],
                      progress: bool = False) -> list[Answer]:
        keys = [cache_key(self.generator, q, c) for q, c in requests]
        out: list[Answer | None] = [self.cache.get(k) for k in keys]
        missing = [i for i, a in enumerate(out) if a is None]
        if missing:
            fresh = generate_all(self.generator, [requests[i] for i in missing], progress)
            self.calls += len(missing)
            for i, answer in zip(missing, fresh, strict=True):
                self.cache.put(keys[i], answer)
                out[i] = answer
        return [a for a in out if a is not None]
