"""De-duplication of candidate questions (golden/candidates.py dedupe) against a plain
reference of its rule, and in stages: a deduped batch deduped again changes nothing
(idempotence), and deduping a batch, then the batch with more questions, gives what deduping
all of them at once gives, every merge and every ``merged_from`` included."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz

from workbench.golden.candidates import Candidate, dedupe, question_key

BASES = ["how long is the refund window", "what is the refund window", "who approves leave",
         "how many days of leave", "gift card expiry"]


@st.composite
def questions(draw):
    """A question from a few bases: as is, recased or punctuated (an exact duplicate), one
    letter changed (a near duplicate), or with a number (14 days and 30 days differ)."""
    q = draw(st.sampled_from(BASES))
    how = draw(st.sampled_from(["same", "case", "letter", "number"]))
    if how == "case":
        q = q.upper() + draw(st.sampled_from(["?", "!", " ?", "..."]))
    elif how == "letter":
        i = draw(st.integers(0, len(q) - 1))
        q = q[:i] + draw(st.sampled_from("xyz")) + q[i + 1:]
    elif how == "number":
        q = f"{q} in {draw(st.sampled_from([14, 30]))} days"
    return q


def batch(texts: list[str], file: str, merged: bool = False) -> list[Candidate]:
    return [Candidate(q, file, n, merged_from=(f"old:{n}",) if merged else ())
            for n, q in enumerate(texts, start=1)]


def _reference(cands: list[Candidate], threshold: float
               ) -> tuple[list[tuple[str, tuple[str, ...]]], list[tuple[str, str]]]:
    """Each question against the ones kept before it: the same key, else the kept key with
    the same numbers and the highest ratio >= threshold (the earliest on a tie). The kept
    questions with what merged into them, and each merge as (kept, dropped)."""
    kept: list[tuple[Candidate, list[str]]] = []
    merges: list[tuple[str, str]] = []
    for c in cands:
        key = question_key(c.question)
        keys = [question_key(k.question) for k, _ in kept]
        hit = keys.index(key) if key in keys else None
        if hit is None:
            near = [(fuzz.ratio(key, k), -i) for i, k in enumerate(keys)
                    if fuzz.ratio(key, k) >= threshold
                    and re.findall(r"\d+", key) == re.findall(r"\d+", k)]
            hit = -max(near)[1] if near else None
        if hit is None:
            kept.append((c, list(c.merged_from)))
        else:
            kept[hit][1].extend([c.where, *c.merged_from])
            merges.append((kept[hit][0].where, c.where))
    return [(c.where, tuple(m)) for c, m in kept], merges


def _shown(found) -> list[tuple[str, tuple[str, ...]]]:
    return [(c.where, c.merged_from) for c in found]


THRESHOLDS = st.sampled_from([80.0, 90.0, 100.0])


@settings(max_examples=200)
@given(st.lists(questions(), max_size=12), st.booleans(), THRESHOLDS)
def test_dedupe_keeps_and_merges_by_the_rule(texts, merged, threshold):
    cands = batch(texts, "a.csv", merged)
    found = dedupe(cands, threshold)
    assert (_shown(found), [(m.kept, m.dropped) for m in found.merges]) == _reference(
        cands, threshold)


@settings(max_examples=200)
@given(st.lists(questions(), max_size=12), st.booleans(), THRESHOLDS)
def test_a_deduped_batch_deduped_again_is_unchanged(texts, merged, threshold):
    once = dedupe(batch(texts, "a.csv", merged), threshold)
    twice = dedupe(once, threshold)
    assert list(twice) == list(once) and not twice.merges


@settings(max_examples=200)
@given(st.lists(questions(), max_size=8), st.lists(questions(), max_size=8), THRESHOLDS)
def test_deduping_in_stages_is_deduping_all_at_once(first, more, threshold):
    a, b = batch(first, "a.csv"), batch(more, "b.csv")
    at_once = dedupe(a + b, threshold)
    staged_a = dedupe(a, threshold)
    staged = dedupe([*staged_a, *b], threshold)
    assert list(staged) == list(at_once)
    assert sorted((m.kept, m.dropped) for m in (*staged_a.merges, *staged.merges)) == sorted(
        (m.kept, m.dropped) for m in at_once.merges)
