"""The chunking as an index, built once: :class:`ChunkTable`, and the list that keeps it,
:class:`ChunkList`.

Like a retriever's index, a ChunkTable is built from the chunks once, and what scoring then
asks of it costs what is asked, not the corpus: which of some ids are no chunk's, a chunk by
its id, the chunks of some documents. It holds its own tuple of the chunks, so an edit of the
list it was built from never makes it stale; each lookup is built in one pass over the chunks
(at C speed) the first time it is asked for, and kept.

:meth:`ChunkTable.of` is the one rule for what scoring reads chunks as: a table as it is, a
:class:`ChunkList` (what ``chunk_corpus`` and a reader's view return) as the table it keeps,
any other sequence as a table for that one call.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Iterator, KeysView, Mapping, Sequence
from operator import attrgetter
from typing import Any

import numpy as np

from workbench.corpus.types import Chunk
from workbench.io import WorkbenchError

__all__ = ["ChunkList", "ChunkTable"]


class ChunkTable(Mapping[str, Chunk]):
    """Chunk id -> chunk (the last of a repeated id) of its own copy of ``chunks`` (in
    ``.chunks``, as given). Build it once per chunking and pass it wherever the chunks go
    (``evaluate(..., chunks=table)``, ``Relevance(golden, table)``): scoring against it
    costs what the questions hold, not the corpus. ``once=True`` makes a table for one use
    (what :meth:`of` reads a plain sequence into): ``unknown`` and ``of_documents`` are then
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

    @classmethod
    def of(cls, chunks: Sequence[Chunk] | ChunkTable) -> ChunkTable:
        """What scoring reads ``chunks`` as (the module's rule): a table itself, a
        :class:`ChunkList`'s kept table, or a table of any other sequence for one use."""
        if isinstance(chunks, ChunkTable):
            return chunks
        if isinstance(chunks, ChunkList):
            return chunks.table
        return cls(chunks, once=True)

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

    def chunks_of(self, ids: Iterable[str]) -> dict[str, Chunk]:
        """Id -> chunk for those of ``ids`` that are chunks' ids (the last of a repeated id)."""
        wanted = set(ids)
        if self.once and wanted and "_table" not in self.__dict__:
            return {c.id: c for c in itertools.compress(self.chunks, map(
                wanted.__contains__, map(attrgetter("id"), self.chunks)))}
        table = self._table
        return {cid: table[cid] for cid in wanted if cid in table}

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

    def with_carried(self, carried: Iterable[Chunk]) -> ChunkTable:
        """This table and those of ``carried`` (chunks a run's hits carry) whose ids it lacks,
        the first of each id, as one table: its lookups serve its chunks, the carried few are
        looked up apart (nothing of it is rebuilt; ``chunks`` is its chunks, then those)."""
        extra: dict[str, Chunk] = {}
        for chunk in carried:
            if not isinstance(chunk, Chunk):
                raise WorkbenchError(f"a hit's chunk must be a Chunk (Hit(..., chunk=Chunk(...)))"
                                     f", not {type(chunk).__name__}: build it with "
                                     "workbench.corpus.Chunk or leave chunk out")
            extra.setdefault(chunk.id, chunk)
        lacking = self.unknown(extra)
        extra = {cid: c for cid, c in extra.items() if cid in lacking}
        return _Carried(self, extra) if extra else self


class _Carried(ChunkTable):
    """A table and some chunks it lacks (see :meth:`ChunkTable.with_carried`)."""

    def __init__(self, base: ChunkTable, carried: dict[str, Chunk]) -> None:
        super().__init__((), once=base.once)
        self.base, self.carried = base, carried
        self.chunks = (*base.chunks, *carried.values())

    def __getitem__(self, cid: str) -> Chunk:
        return self.carried[cid] if cid in self.carried else self.base[cid]

    def __iter__(self) -> Iterator[str]:
        return itertools.chain(self.base, self.carried)

    def __len__(self) -> int:
        return len(self.base) + len(self.carried)

    def __contains__(self, cid: object) -> bool:
        return cid in self.carried or cid in self.base

    @property
    def doc_ids(self) -> KeysView[str]:
        return {**dict.fromkeys(self.base.doc_ids),
                **dict.fromkeys(c.doc_id for c in self.carried.values())}.keys()

    def unknown(self, ids: Iterable[str]) -> set[str]:
        return self.base.unknown(ids) - self.carried.keys()

    def chunks_of(self, ids: Iterable[str]) -> dict[str, Chunk]:
        wanted = set(ids)
        return {**self.base.chunks_of(wanted),
                **{cid: self.carried[cid] for cid in wanted & self.carried.keys()}}

    def of_documents(self, doc_ids: Iterable[str]) -> list[Chunk]:
        docs = set(doc_ids)
        return [*self.base.of_documents(docs),
                *(c for c in self.carried.values() if c.doc_id in docs)]


def _edits(method: Any) -> Any:
    """The list method ``method``, dropping the kept table first."""
    @functools.wraps(method)
    def edit(self: ChunkList, *args: Any, **kwargs: Any) -> Any:
        self._kept = None
        return method(self, *args, **kwargs)
    return edit


class ChunkList(list[Chunk]):
    """A list of chunks that keeps its :class:`ChunkTable` (``.table``): what
    ``chunk_corpus`` and a reader's view return, so scoring the same chunking again costs what
    the questions hold, not the corpus. The table is built on first use; every method that
    changes the list in place drops it (chunks are frozen, so the table is never stale).
    Anything that makes a new list (a slice, ``+``, ``list(...)``) makes a plain one."""

    __slots__ = ("_kept",)

    def __init__(self, chunks: Iterable[Chunk] = ()) -> None:
        super().__init__(chunks)
        self._kept: ChunkTable | None = None

    @property
    def table(self) -> ChunkTable:
        """The ChunkTable of these chunks, built once and kept until the list is changed."""
        if self._kept is None:
            self._kept = ChunkTable(self)
        return self._kept

    def __reduce__(self) -> tuple[Any, ...]:  # a copy or a pickle holds the chunks, no table
        return ChunkList, (list(self),)

    __setitem__ = _edits(list.__setitem__)
    __delitem__ = _edits(list.__delitem__)
    __iadd__ = _edits(list.__iadd__)
    __imul__ = _edits(list.__imul__)
    append = _edits(list.append)
    extend = _edits(list.extend)
    insert = _edits(list.insert)
    pop = _edits(list.pop)
    remove = _edits(list.remove)
    clear = _edits(list.clear)
    sort = _edits(list.sort)
    reverse = _edits(list.reverse)
