"""The spec parser's documented defaults at every size: ``fixed(size=N)`` parses for any
N >= 1 with overlap 100, or ``N // 8`` when N <= 100 (an overlap is always below the size),
and chunks a document into windows that tile it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from workbench.chunking import parse_chunker
from workbench.corpus import Document

TEXT = "Refunds are paid within 30 days of the return. " * 12


@given(st.integers(1, 400))
def test_fixed_takes_every_size_with_the_documented_overlap(size):
    chunker = parse_chunker(f"fixed:size={size},unit=chars")
    assert chunker.size == size
    assert chunker.overlap == (100 if size > 100 else size // 8)
    chunks = chunker.chunk(Document("d", TEXT))
    assert chunks and chunks[0].start == 0 and chunks[-1].end == len(TEXT.rstrip())
    assert all(c.end - c.start <= size for c in chunks)
