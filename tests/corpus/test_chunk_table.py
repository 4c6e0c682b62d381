"""ChunkTable: the chunking an evaluation is given, looked up without a table per chunk."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from workbench.corpus import Chunk, ChunkTable

IDS = st.sampled_from([f"d#{i}" for i in range(6)])


@given(st.lists(IDS, max_size=8), st.lists(IDS, max_size=6), st.booleans())
def test_unknown_ids_and_lookups_are_those_of_the_chunks(ids, asked, built_first):
    """Whatever was asked before (a lookup builds the table), ``unknown`` is the asked ids no
    chunk holds, and the mapping is id -> the last chunk of that id, as a dict of them is."""
    chunks = [Chunk(cid, "d", n, n + 1, text="x") for n, cid in enumerate(ids)]
    table = ChunkTable(chunks)
    expected = dict(zip(ids, chunks, strict=True))
    if built_first and ids:
        assert table[ids[0]] is expected[ids[0]]
    assert table.unknown(iter(asked)) == set(asked) - set(ids)
    assert dict(table) == expected and len(table) == len(expected)
    assert table.unknown(asked) == set(asked) - set(ids)
