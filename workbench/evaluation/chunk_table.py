"""The chunking an evaluation is given, read without a table per chunk: :class:`ChunkTable`.

Scoring a run costs what its questions and their hits hold, not the corpus: the ids a run
returns are checked against the chunking in one pass at C speed (:meth:`ChunkTable.unknown`),
and the id -> chunk table is built only when one chunk is looked up by its id (document-level
scoring, a run's carried chunks).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from operator import attrgetter

from workbench.corpus import Chunk

__all__ = ["ChunkTable"]


class ChunkTable(Mapping[str, Chunk]):
    """Chunk id -> chunk of ``chunks`` (the last of a repeated id), the chunks as given."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self.chunks = chunks

    @functools.cached_property
    def _table(self) -> dict[str, Chunk]:
        return dict(zip(map(attrgetter("id"), self.chunks), self.chunks, strict=True))

    def __getitem__(self, cid: str) -> Chunk:
        return self._table[cid]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)

    def unknown(self, ids: Iterable[str]) -> set[str]:
        """Those of ``ids`` that are no chunk's id, in one pass over the chunks at C speed
        (or the table, once built)."""
        wanted = set(ids)
        if not wanted:
            return wanted
        if "_table" in self.__dict__:
            return {cid for cid in wanted if cid not in self._table}
        return wanted.difference(map(attrgetter("id"), self.chunks))
