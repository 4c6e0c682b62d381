"""The chunking as an index, built once: :class:`ChunkTable`.

Like a retriever's index, a ChunkTable is built from the chunks once, and what scoring then
asks of it costs what is asked, not the corpus: which of some ids are no chunk's, a chunk by
its id, the chunks of some documents. It holds its own tuple of the chunks, so an edit of the
list it was built from never makes it stale; each lookup is built in one pass over the chunks
(at C speed) the first time it is asked for, and kept.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Iterator, KeysView, Mapping
from operator import attrgetter

import numpy as np

from workbench.corpus.types import Chunk
from workbench.io import WorkbenchError

__all__ = ["ChunkTable"]


class ChunkTable(Mapping[str, Chunk]):
    """Chunk id -> chunk (the last of a repeated id) of its own copy of ``chunks`` (in
    ``.chunks``, as given). Build it once per chunking and pass it wherever the chunks go
    (``evaluate(..., chunks=table)``, ``Relevance(golden, table)``): scoring against it
    costs what the questions hold, not the corpus. ``once=True`` makes a table for one use
    (what ``evaluate`` reads a plain list into): ``unknown`` and ``of_documents`` are then
    each one pass over the chunks that builds nothing, cheaper than building a lookup that
    would not be asked again."""

    def __init__(self, chunks: Iterable[Chunk], *, once: bool = False) -> None:
        self.chunks: tuple[Chunk, ...] = tuple(chunks)
        self.once = once
        if not set(map(type, self.chunks)) <= {Chunk}:  # a subclass passes; anything else is named
            bad = next((c for c in self.chunks if not isinstance(c, Chunk)), None)
            if bad is not None:
                raise WorkbenchError(f"chunks must be Chunk objects (chunk_corpus(...)), "
                                     f"not {type(bad).__name__}")

    @functools.cached_property
    def _table(self) -> dict[str, Chunk]:
        return dict(zip(map(attrgetter("id"), self.chunks), self.chunks, strict=True))

    @functools.cached_property
    def _ids(self) -> frozenset[str]:
        """The chunk ids, for membership alone (half the build of ``_table``)."""
        return frozenset(map(attrgetter("id"), self.chunks))

    @functools.cached_property
    def _runs(self) -> tuple[dict[str, int], np.ndarray, np.ndarray]:
        """The runs of consecutive chunks of one document: document id -> its first run,
        the runs' bounds (run r is positions ``bounds[r]:bounds[r + 1]``) and each run's next
        run of the same document (-1: none). Arrays and a dict of ints: nothing the garbage
        collector walks."""
        docs = np.fromiter(map(attrgetter("doc_id"), self.chunks), dtype=object,
                           count=len(self.chunks))
        starts = np.flatnonzero(docs[1:] != docs[:-1]) + 1
        bounds = np.concatenate([[0], starts, [len(docs)]]) if len(docs) else np.zeros(1, int)
        run_docs = docs[bounds[:-1]].tolist()
        first = dict(zip(reversed(run_docs), range(len(run_docs) - 1, -1, -1), strict=True))
        after = np.full(len(run_docs), -1)
        if len(first) < len(run_docs):  # some document's chunks are not all consecutive
            last: dict[str, int] = {}
            for r, doc in enumerate(run_docs):
                if doc in last:
                    after[last[doc]] = r
                last[doc] = r
        return first, bounds, after

    def __getitem__(self, cid: str) -> Chunk:
        return self._table[cid]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, cid: object) -> bool:
        return cid in (self._table if "_table" in self.__dict__ else self._ids)

    @property
    def doc_ids(self) -> KeysView[str]:
        """The ids of the documents the chunks belong to."""
        return self._runs[0].keys()

    def unknown(self, ids: Iterable[str]) -> set[str]:
        """Those of ``ids`` that are no chunk's id."""
        wanted = set(ids)
        if self.once and wanted and not {"_table", "_ids"} & self.__dict__.keys():
            return wanted.difference(map(attrgetter("id"), self.chunks))
        return {cid for cid in wanted if cid not in self}

    def of_documents(self, doc_ids: Iterable[str]) -> list[Chunk]:
        """The chunks of the documents ``doc_ids``, in the order of ``chunks``."""
        if self.once and "_runs" not in self.__dict__:
            docs = frozenset(doc_ids)
            return list(itertools.compress(self.chunks, map(
                docs.__contains__, map(attrgetter("doc_id"), self.chunks))))
        first, bounds, after = self._runs
        runs = []
        for doc in set(doc_ids):
            r = first.get(doc, -1)
            while r >= 0:
                runs.append(r)
                r = int(after[r])
        runs.sort()
        return [c for r in runs for c in self.chunks[int(bounds[r]):int(bounds[r + 1])]]
