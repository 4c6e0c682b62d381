"""ChunkTable: the chunking as an index built once, looked up at the cost of what is asked."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.corpus import Chunk, ChunkList, ChunkTable
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


# ----- ChunkList: the list that keeps its table ------------------------------------------------

_POOL = [Chunk(f"d#{n}", "d", n, n + 1, text="x") for n in range(6)]
#: Arguments to try on each list method: whatever it accepts and changes the list with.
_ARGS = [((), {}), ((0,), {}), ((1,), {}), ((-1,), {}), ((0, _POOL[5]), {}),
         (([_POOL[4]],), {}), ((_POOL[0],), {}), ((2,), {}), ((slice(0, 2),), {}),
         ((slice(0, 1), [_POOL[5]]), {}), ((1, _POOL[5]), {}),
         ((), {"key": lambda c: -c.start})]


def _mutators() -> dict[str, tuple[tuple, dict]]:
    """Every method of ``list`` that changes a list in place, found by calling each on a
    plain list with the arguments above (the oracle is list itself, not a list of names)."""
    found = {}
    for name in dir(list):
        method = getattr(list, name)
        if not callable(method) or name in ("__new__", "__init_subclass__", "__class__"):
            continue
        for args, kwargs in _ARGS:
            plain = list(_POOL[:3])
            try:
                method(plain, *args, **kwargs)
            except Exception:  # not these arguments
                continue
            if plain != _POOL[:3] and all(isinstance(c, Chunk) for c in plain):
                found[name] = args, kwargs
                break
    return found


def test_every_method_that_changes_a_list_drops_the_kept_table():
    """Whatever list method changes a ChunkList in place, its table afterwards holds exactly
    its chunks (found by behaviour: a method list adds to Python is caught)."""
    mutators = _mutators()
    assert {"append", "__setitem__", "__iadd__", "sort", "__init__"} <= mutators.keys()
    for name, (args, kwargs) in mutators.items():
        kept = ChunkList(_POOL[:3])
        assert kept.table.unknown(["d#0"]) == set()  # built
        getattr(kept, name)(*args, **kwargs)
        assert list(kept.table.chunks) == list(kept), name
        assert kept.table.unknown(c.id for c in _POOL) == {c.id for c in _POOL} - {
            c.id for c in kept}, name


def test_what_scoring_reads_chunks_as():
    """ChunkTable.of: a table as it is; a ChunkList's kept table (the same until edited); any
    other sequence a table of its own for one use. chunk_corpus and a reader's view return a
    ChunkList; a slice, a sum, a copy or a pickle holds the chunks and no table."""
    import copy
    import pickle

    from workbench.chunking import FixedChunker, chunk_corpus
    from workbench.corpus import UNRESTRICTED, Document

    table = ChunkTable(_POOL)
    assert ChunkTable.of(table) is table
    kept = ChunkList(_POOL)
    assert ChunkTable.of(kept) is ChunkTable.of(kept) is kept.table and not kept.table.once
    plain = ChunkTable.of(list(_POOL))
    assert plain.once and plain is not ChunkTable.of(list(_POOL))
    docs = [Document("a", "alpha beta gamma delta " * 20), Document("b", "one two three " * 20)]
    chunks = chunk_corpus(FixedChunker(size=50, overlap=10), docs)
    assert type(chunks) is ChunkList and len(chunks) > 2
    view = UNRESTRICTED.chunks(chunks, {d.id: d for d in docs})
    assert type(view) is ChunkList and view == chunks
    for made in (chunks[:2], chunks + chunks, list(chunks)):
        assert type(made) is list
    assert kept.table is not None
    for made in (copy.copy(kept), copy.deepcopy(kept), pickle.loads(pickle.dumps(kept))):
        assert type(made) is ChunkList and made == kept and made._kept is None


@given(st.lists(st.tuples(IDS, st.sampled_from("abc")), max_size=8),
       st.lists(st.tuples(st.sampled_from([f"d#{i}" for i in range(3, 9)]),
                          st.sampled_from("bcz")), max_size=6),
       st.lists(st.sampled_from([f"d#{i}" for i in range(9)]), max_size=6),
       st.lists(st.sampled_from("abcz"), max_size=3), st.booleans())
def test_a_table_with_carried_chunks_answers_as_one_table_of_them_all(base, carried, asked,
                                                                      docs, once):
    """The oracle is one table built of the base's chunks then the carried ones it lacks
    (the first of each id): every lookup answers alike, nothing of the base rebuilt."""
    chunks = [Chunk(cid, d, n, n + 1, text="x") for n, (cid, d) in enumerate(base)]
    extra = [Chunk(cid, d, 50 + n, 51 + n, text="y") for n, (cid, d) in enumerate(carried)]
    table = ChunkTable(chunks, once=once)
    merged = table.with_carried(extra)
    lacking: dict[str, Chunk] = {}
    for c in extra:
        if c.id not in {b.id for b in chunks}:
            lacking.setdefault(c.id, c)
    oracle = ChunkTable([*chunks, *lacking.values()])
    assert merged.chunks == oracle.chunks and (merged is table) == (not lacking)
    assert merged.unknown(asked) == oracle.unknown(asked)
    assert merged.chunks_of(asked) == oracle.chunks_of(asked)
    assert merged.of_documents(docs) == oracle.of_documents(docs)
    assert set(merged.doc_ids) == set(oracle.doc_ids) and len(merged) == len(oracle)
    assert dict(merged) == dict(oracle)
    assert all((cid in merged) == (cid in oracle) for cid in asked)
