"""Locating a hit by its offsets against the rule itself: any non-empty range inside the
document, both ends included (a hit may start at character 0 and end at the text's last),
is taken as it is; a range reaching past the end, empty or negative, is refused."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.corpus import Document
from workbench.corpus.locate import LocateError, Locator

TEXT = "Refunds 😀 within 30 days.\nGift cards last 5 years."


@settings(max_examples=300)
@given(st.integers(-2, len(TEXT) + 2), st.integers(-2, len(TEXT) + 2))
def test_offsets_inside_the_document_are_taken_as_they_are(start, end):
    locator = Locator([Document("d", TEXT)])
    if 0 <= start < end <= len(TEXT):
        got = locator.locate(doc_id="d", start=start, end=end)
        assert (got.doc_id, got.start, got.end, got.how) == ("d", start, end, "offsets")
    else:
        with pytest.raises(LocateError):
            locator.locate(doc_id="d", start=start, end=end)
