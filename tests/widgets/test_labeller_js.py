"""The labeller view's offset mapping (labeller.js) under node, against Python's code points:
generated texts with astral characters, combining marks, CRLF, CJK and emoji sequences; every
code-point offset round-trips, a DOM offset inside a surrogate pair snaps outward for a
selection, the painted pieces join to the text with each mark covering exactly its
code points, and a selection between DOM positions in the painted pieces (either end first)
covers exactly the code points under it (the reference: Python's UTF-16 length of each code
point)."""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT

JS = (ROOT / "workbench" / "widgets" / "labeller_static"
      / "labeller.js")

#: Characters that make UTF-16 and code points differ, or that tempt a mapping to split them.
ALPHABET = st.sampled_from(["a", "Z", " ", "\r\n", "\n", "\r", "é", "e\u0301", "\u0301",
                            "😀", "👍🏽", "𠀋", "\U0001d11e", "中", "文", "ễ", "\u200d", "\t"])
TEXTS = st.lists(ALPHABET, max_size=30).map("".join)


#: each case: every code-point offset to UTF-16 and back, every unit offset as a selection's
#: start and as its end, and the painted pieces of its marks
OFFSETS = """
const out = cases.map(({ text, marks }) => {
  const n = Array.from(text).length;
  const cp = [...Array(n + 1).keys()].map((i) => cp2u(text, i));
  const back = cp.map((u) => u2cp(text, u));
  const sel = [...Array(text.length + 1).keys()].map((u) =>
    [toCodePoints(text, u, text.length), toCodePoints(text, 0, u)]);
  return { cp, back, sel, pieces: pieces(text, marks) };
});
"""

#: each case: selections made in the painted view, a DOM position (piece, UTF-16 offset in
#: that piece's text node) at each end, either end first, as the browser reports them
SELECTIONS = """
const out = cases.map(({ text, marks, sels }) => {
  const painted = pieces(text, marks);
  const at = (i, o) => painted.slice(0, i).reduce((u, p) => u + p[0].length, 0) + o;
  return sels.map(([i, o, j, p]) => toCodePoints(text, at(i, o), at(j, p)));
});
"""


def _node(tmp: Path, cases: list[dict], script: str = OFFSETS) -> list:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed; the view's offset mapping is tested under node")
    (tmp / "labeller.mjs").write_text(JS.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp / "run.mjs").write_text(
        'import { readFileSync } from "node:fs";\n'
        'import { cp2u, u2cp, toCodePoints, pieces } from "./labeller.mjs";\n'
        'const cases = JSON.parse(readFileSync(0, "utf8"));\n'
        f"{script}\nprocess.stdout.write(JSON.stringify(out));\n", encoding="utf-8")
    done = subprocess.run([node, "run.mjs"], cwd=tmp, input=json.dumps(cases),
                          capture_output=True, text=True, timeout=60, check=True)
    return json.loads(done.stdout)


def _utf16(text: str) -> list[int]:
    """UTF-16 offset of each code point boundary (the reference)."""
    out, u = [0], 0
    for ch in text:
        u += 2 if ord(ch) > 0xFFFF else 1
        out.append(u)
    return out


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(TEXTS, st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)),
                                           max_size=3)), min_size=1, max_size=8))
def test_offset_mapping_matches_code_points(tmp_path_factory, batch):
    cases = [{"text": t, "marks": [[min(a, b), max(a, b), f"m{i}"] for i, (a, b) in enumerate(m)]}
             for t, m in batch]
    results = _node(tmp_path_factory.mktemp("js"), cases)
    for case, got in zip(cases, results, strict=True):
        text = case["text"]
        ref = _utf16(text)
        assert got["cp"] == ref                                   # code points -> UTF-16
        assert got["back"] == list(range(len(ref)))               # and back, exactly
        for u, (to_end, from_start) in enumerate(got["sel"]):
            inside = u not in ref                                 # between a surrogate pair
            lo = max(i for i, x in enumerate(ref) if x <= u)
            assert to_end[0] == lo and to_end[1] == len(ref) - 1  # a start snaps down
            assert from_start == [0, lo + 1 if inside else lo]    # an end snaps up
        pieces = got["pieces"]
        assert "".join(p for p, _ in pieces) == text
        at = 0
        n = len(ref) - 1
        for piece, cls in pieces:
            end = at + len(piece)                                 # code points (Python str)
            for a, b, name in case["marks"]:
                a, b = min(a, n), min(b, n)
                assert (name in cls.split()) == (a <= at and end <= b and at < end), \
                    (text, case["marks"], piece, cls)
            at = end


def _pieces(text: str, marks: list[list]) -> list[str]:
    """The reference painting: the text cut at every mark end (code points), in order."""
    cuts = sorted({0, len(text), *(min(max(x, 0), len(text)) for m in marks for x in m[:2])})
    return [text[a:b] for a, b in itertools.pairwise(cuts)]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(TEXTS.filter(bool), st.lists(st.tuples(
    st.integers(0, 40), st.integers(0, 40)), max_size=3), st.data()), min_size=1, max_size=6))
def test_a_selection_in_the_painted_view_maps_to_the_code_points_under_it(
        tmp_path_factory, batch):
    """A selection from a DOM position in one painted piece to one in another (the browser's
    text-node offsets, in UTF-16 units, anywhere in a piece, surrogate pairs included; either
    end first) covers exactly the code points it touches: the start snaps down, the end up."""
    cases = []
    for text, pairs, data in batch:
        marks = [[min(a, b), max(a, b), f"m{i}"] for i, (a, b) in enumerate(pairs)]
        painted = _pieces(text, marks)
        ends = [(i, o) for i, piece in enumerate(painted)
                for o in range(len(piece.encode("utf-16-le")) // 2 + 1)]
        sels = data.draw(st.lists(st.tuples(st.sampled_from(ends), st.sampled_from(ends)),
                                  min_size=1, max_size=8))
        cases.append({"text": text, "marks": marks, "painted": painted,
                      "sels": [[*x, *y] for x, y in sels]})
    results = _node(tmp_path_factory.mktemp("js"), [
        {k: c[k] for k in ("text", "marks", "sels")} for c in cases], SELECTIONS)
    for case, got in zip(cases, results, strict=True):
        text, painted = case["text"], case["painted"]
        ref = _utf16(text)
        before = [sum(len(p) for p in painted[:i]) for i in range(len(painted))]  # code points
        for (i, o, j, p), span in zip(case["sels"], got, strict=True):
            units = sorted([ref[before[i]] + o, ref[before[j]] + p])
            start = max(k for k, u in enumerate(ref) if u <= units[0])
            end = min(k for k, u in enumerate(ref) if u >= units[1])
            assert span == [start, end], (text, painted, (i, o, j, p))
