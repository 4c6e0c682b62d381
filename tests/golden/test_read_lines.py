"""The plain-text question reader against the rule itself: one entry per line of the file
(``\\n``, ``\\r\\n`` or a last line without its newline alike), a question per non-blank line
and its ``file:line`` per blank one, whitespace runs folded."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import assume, given
from hypothesis import strategies as st

from workbench.golden.candidates import Candidate, read_questions

LINE = st.lists(st.sampled_from(["how", "long", "Urlaub", "退款", "😀", " ", "\t", "?"]),
                max_size=6).map("".join)


@given(st.lists(LINE, min_size=1, max_size=8), st.booleans(), st.sampled_from(["\n", "\r\n"]))
def test_every_line_is_one_entry_whatever_ends_the_file(lines, final_newline, newline):
    assume(final_newline or lines[-1])  # an empty last line without its newline is no line
    text = newline.join(lines) + (newline if final_newline else "")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "q.txt"
        path.write_bytes(text.encode("utf-8"))
        got = read_questions(path)
    want = [" ".join(line.split()) or f"{path}:{n}" for n, line in enumerate(lines, start=1)]
    assert [q.question if isinstance(q, Candidate) else q for q in got] == want
    assert [q.line for q in got if isinstance(q, Candidate)] == [
        n for n, line in enumerate(lines, start=1) if line.split()]
