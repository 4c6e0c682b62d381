"""The labeller view's offset mapping (labeller.js) under node, against Python's code points:
generated texts with astral characters, combining marks, CRLF, CJK and emoji sequences; every
code-point offset round-trips, a DOM offset inside a surrogate pair snaps outward for a
selection, and the painted pieces join to the text with each mark covering exactly its
code points."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

JS = (Path(__file__).resolve().parents[2] / "workbench" / "widgets" / "labeller_static"
      / "labeller.js")

#: Characters that make UTF-16 and code points differ, or that tempt a mapping to split them.
ALPHABET = st.sampled_from(["a", "Z", " ", "\r\n", "\n", "\r", "é", "e\u0301", "\u0301",
                            "😀", "👍🏽", "𠀋", "\U0001d11e", "中", "文", "ễ", "\u200d", "\t"])
TEXTS = st.lists(ALPHABET, max_size=30).map("".join)


def _node(tmp: Path, cases: list[dict]) -> list[dict]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed; the view's offset mapping is tested under node")
    (tmp / "labeller.mjs").write_text(JS.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp / "run.mjs").write_text(
        'import { readFileSync } from "node:fs";\n'
        'import { cp2u, u2cp, toCodePoints, pieces } from "./labeller.mjs";\n'
        'const cases = JSON.parse(readFileSync(0, "utf8"));\n'
        "const out = cases.map(({ text, marks }) => {\n"
        "  const n = Array.from(text).length;\n"
        "  const cp = [...Array(n + 1).keys()].map((i) => cp2u(text, i));\n"
        "  const back = cp.map((u) => u2cp(text, u));\n"
        "  const sel = [...Array(text.length + 1).keys()].map((u) =>\n"
        "    [toCodePoints(text, u, text.length), toCodePoints(text, 0, u)]);\n"
        "  return { cp, back, sel, pieces: pieces(text, marks) };\n"
        "});\n"
        "process.stdout.write(JSON.stringify(out));\n", encoding="utf-8")
    done = subprocess.run([shutil.which("node") or "node", "run.mjs"], cwd=tmp,
                          input=json.dumps(cases), capture_output=True, text=True, timeout=60,
                          check=True)
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
