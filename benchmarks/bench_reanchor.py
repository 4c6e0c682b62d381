"""Re-anchoring the handbook's golden set after a script edits its documents.

Each evidence span that overlaps no other span gets one edit, drawn with a seed:

* ``insert_before``: a sentence inserted at the start of the span's line (expected: exact);
* ``whitespace``: one space inside the span becomes a line break and spaces (normalised);
* ``edit_inside``: a word inserted inside the span (fuzzy: applied when unique and close);
* ``change_number``: the span's first number changed (must go to review);
* ``delete``: the span removed (must go to review);
* ``none``: left alone (may still shift because of edits before it).

Counts are of evidence entries (a span quoted by two questions counts twice). For every
drifted span the script knows where the text went, so it counts, per edit, the
spans re-anchored to the right place, re-anchored to a wrong place (the bug to avoid) and sent
to review. Also timed: :func:`~workbench.golden.reanchor.reanchor` over the whole set.

    python benchmarks/bench_reanchor.py [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import re
import time
from collections import Counter
from pathlib import Path

from workbench.corpus import Corpus, Document, load_folder
from workbench.golden import GoldenSet
from workbench.golden.reanchor import reanchor

ROOT = Path(__file__).resolve().parents[1]
HANDBOOK = ROOT / "data" / "handbook"
ACTIONS = ("insert_before", "whitespace", "edit_inside", "change_number", "delete", "none")
INSERTED = "This paragraph was reviewed in March 2026 by the policy team. "


def plan(golden: GoldenSet, corpus: Corpus, seed: int
         ) -> tuple[dict[str, list[tuple[int, int, str]]], dict[tuple[str, int, int], str]]:
    """Edits per document ``(position, characters removed, text inserted)`` and the action
    given to each span."""
    rng = random.Random(seed)
    spans = sorted({(e.doc_id, e.start, e.end) for i in golden for e in i.evidence})
    edits: dict[str, list[tuple[int, int, str]]] = {}
    action: dict[tuple[str, int, int], str] = {}
    for span in spans:
        doc, s, e = span
        text = corpus[doc].text
        others = [o for o in spans if o != span and o[0] == doc and o[1] < e and s < o[2]]
        line = text.rfind("\n", 0, s) + 1
        near = [o for o in spans if o[0] == doc and o != span and line <= o[2] and o[1] < e]
        if others or near:
            action[span] = "none"
            continue
        act = rng.choice(ACTIONS)
        digits = re.search(r"\d+", text[s:e])
        spaces = [m.start() + s for m in re.finditer(" ", text[s:e])]
        if act == "change_number" and not digits:
            act = "edit_inside"
        if act in ("whitespace", "edit_inside") and len(spaces) < 2:
            act = "insert_before"
        at = spaces[len(spaces) // 2] if spaces else s
        edit = {"insert_before": (line, 0, INSERTED),
                "whitespace": (at, 1, "\n   "),
                "edit_inside": (at, 0, " usually"),
                "change_number": ((s + digits.start()) if digits else s,
                                  len(digits.group()) if digits else 0,
                                  str(int(digits.group()) + 7) if digits else ""),
                "delete": (s, e - s, ""),
                "none": None}[act]
        action[span] = act
        if edit is not None:
            edits.setdefault(doc, []).append(edit)
    return edits, action


def apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    for pos, removed, inserted in sorted(edits, reverse=True):
        text = text[:pos] + inserted + text[pos + removed:]
    return text


def shifted(offset: int, edits: list[tuple[int, int, str]]) -> int:
    """Where an untouched offset lies after the edits (edits at or before it move it)."""
    return offset + sum(len(ins) - rem for pos, rem, ins in edits if pos + rem <= offset)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    corpus = load_folder(HANDBOOK / "docs")
    golden = GoldenSet.load(HANDBOOK / "golden.jsonl")
    edits, action = plan(golden, corpus, args.seed)
    edited = Corpus([Document(d.id, apply(d.text, edits.get(d.id, [])), d.title, d.metadata)
                     for d in corpus.documents])
    t0 = time.perf_counter()
    report = reanchor(golden, edited)
    took = time.perf_counter() - t0
    outcome: Counter[tuple[str, str]] = Counter()
    for m in report.moves:
        act = action[(m.doc_id, m.old_start, m.old_end)]
        doc_edits = edits.get(m.doc_id, [])
        if not m.applied:
            outcome[(act, "review")] += 1
            continue
        if act in ("none", "insert_before"):
            right = (m.new_start, m.new_end) == (shifted(m.old_start, doc_edits),
                                                  shifted(m.old_end, doc_edits))
        elif act in ("whitespace", "edit_inside"):
            own = [ed for ed in doc_edits if m.old_start <= ed[0] < m.old_end]
            others = [ed for ed in doc_edits if ed not in own]
            growth = sum(len(ins) - rem for _, rem, ins in own)
            start = shifted(m.old_start, others)
            right = (m.new_start, m.new_end) == (start, start + m.old_end - m.old_start + growth)
        else:
            right = False  # a changed number or a deleted span must not be applied
        outcome[(act, "right" if right else "WRONG")] += 1
    print(f"handbook: {len(golden)} questions, {report.checked} evidence spans, "
          f"{sum(a != 'none' for a in action.values())} of {len(action)} distinct spans edited "
          f"(seed {args.seed})")
    print(f"{report.summary()}  [{took * 1000:.1f} ms]")
    per_action = Counter(action[(e.doc_id, e.start, e.end)] for i in golden for e in i.evidence)
    print(f"{'edit':<15}{'spans':>6}{'re-anchored right':>19}{'re-anchored wrong':>19}"
          f"{'to review':>11}")
    for act in ACTIONS:
        print(f"{act:<15}{per_action[act]:>6}{outcome[(act, 'right')]:>19}"
              f"{outcome[(act, 'WRONG')]:>19}{outcome[(act, 'review')]:>11}")


if __name__ == "__main__":
    main()
