"""What a process keeps built, found by content: the same ids and texts get the value built
the first time; any other content (a changed text, an id, texts split differently) builds
anew; only the last few contents are kept."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.runtime import LastBuilt

pairs = st.lists(st.tuples(st.text(alphabet="ab\x00:", max_size=4),
                           st.text(alphabet="ab\x00:", max_size=4)), max_size=4)


@settings(max_examples=300, deadline=None)
@given(pairs, pairs)
def test_a_value_is_shared_exactly_when_the_content_is_the_same(a, b):
    memo: LastBuilt[object] = LastBuilt(keep=2)
    first, second = memo.get(a, object), memo.get(b, object)
    assert (first is second) == (a == b), (a, b)
    assert memo.get(iter(a), object) is first  # any iterable of the same pairs


def test_texts_split_differently_are_different_content():
    memo: LastBuilt[object] = LastBuilt(keep=2)
    assert memo.get([("a\x00b", "c")], object) is not memo.get([("a", "b\x00c")], object)
    assert memo.get([("ab", "")], object) is not memo.get([("a", "b")], object)


def test_only_the_last_contents_are_kept():
    built: list[str] = []
    memo: LastBuilt[str] = LastBuilt(keep=2)

    def get(text: str) -> str:
        return memo.get([("d", text)], lambda: built.append(text) or text)

    for text in ("x", "y", "x", "z", "x", "y"):
        get(text)
    # x kept while used; y was the oldest when z came, so it is built again
    assert built == ["x", "y", "z", "y"]


def test_content_longer_than_a_block_is_one_key_and_any_change_in_it_another(monkeypatch):
    """The texts are hashed a block at a time: a change in any block, or the same texts
    moved across a block's edge, is other content."""
    import workbench.runtime.memo as memo_module

    monkeypatch.setattr(memo_module, "_BLOCK", 3)
    memo: LastBuilt[object] = LastBuilt(keep=4)
    pairs = [(f"d{i}", f"text {i}") for i in range(10)]
    first = memo.get(pairs, object)
    assert memo.get(list(pairs), object) is first
    for i in (0, 4, 9):
        changed = [*pairs[:i], (pairs[i][0], pairs[i][1] + "!"), *pairs[i + 1:]]
        assert memo.get(changed, object) is not first
    moved = [("d0", "text 0d1"), ("", "text 1"), *pairs[2:]]
    assert memo.get(moved, object) is not first
