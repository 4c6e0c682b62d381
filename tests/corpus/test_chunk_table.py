"""ChunkTable: the chunking as an index built once, looked up at the cost of what is asked."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.corpus import Chunk, ChunkTable
from workbench.io import WorkbenchError

IDS = st.sampled_from([f"d#{i}" for i in range(6)])


@given(st.lists(IDS, max_size=8), st.lists(IDS, max_size=6), st.booleans(), st.booleans())
def test_unknown_ids_and_lookups_are_those_of_the_chunks(ids, asked, built_first, once):
    """Whatever was asked before (a lookup builds the table), for a table kept or used once,
    ``unknown`` is the asked ids no chunk holds, and the mapping is id -> the last chunk of
    that id, as a dict of them is."""
    chunks = [Chunk(cid, "d", n, n + 1, text="x") for n, cid in enumerate(ids)]
    table = ChunkTable(chunks, once=once)
    expected = dict(zip(ids, chunks, strict=True))
    if built_first and ids:
        assert table[ids[0]] is expected[ids[0]]
    assert table.unknown(iter(asked)) == set(asked) - set(ids)
    assert dict(table) == expected and len(table) == len(expected)
    assert table.unknown(asked) == set(asked) - set(ids)
    assert all((cid in table) == (cid in expected) for cid in asked)


@given(st.lists(st.sampled_from("abcd"), max_size=12),
       st.lists(st.sampled_from("abcxy"), max_size=4), st.booleans())
def test_chunks_of_documents_are_those_a_filter_keeps_in_order(docs, asked, once):
    """Whatever the order (a document's chunks need not be consecutive), the chunks of some
    documents are those a pass over all chunks keeps, in the chunking's order, asked once or
    again after the document runs are built."""
    chunks = [Chunk(f"{d}#{n}", d, n, n + 1, text="x") for n, d in enumerate(docs)]
    table = ChunkTable(chunks, once=once)
    kept = [c for c in chunks if c.doc_id in set(asked)]
    assert table.of_documents(asked) == kept
    assert set(table.doc_ids) == set(docs)
    assert table.of_documents(iter(asked)) == kept


def test_an_edit_of_the_list_after_building_never_reaches_the_table():
    chunks = [Chunk(f"d#{n}", "d", n, n + 1, text="x") for n in range(4)]
    table = ChunkTable(chunks)
    chunks[0] = Chunk("e#0", "e", 0, 1, text="y")
    chunks.append(Chunk("e#1", "e", 1, 2, text="y"))
    assert [c.id for c in table.chunks] == ["d#0", "d#1", "d#2", "d#3"]
    assert table.unknown(["e#0", "d#0"]) == {"e#0"} and list(table.doc_ids) == ["d"]


def test_what_is_not_a_chunk_is_named():
    with pytest.raises(WorkbenchError, match=r"chunks must be Chunk objects.*not dict"):
        ChunkTable([Chunk("d#0", "d", 0, 1, text="x"), {"id": "d#1"}])  # type: ignore[list-item]
