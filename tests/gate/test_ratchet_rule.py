"""The ratchet against its rule on generated per-question values: a new evaluation whose mean
is not lower (exactly, as fractions) than the baseline's on the shared questions is taken,
whatever order floating-point addition meets the values in; one whose mean is lower is
refused."""

from __future__ import annotations

import tempfile
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.evaluation import evaluation_from_scores
from workbench.gate import BaselineRefused, update_baseline

VALUES = st.sampled_from([0.0, 0.1, 0.2, 0.3, 0.7, 1 / 3, 0.9, 1.0])


@settings(max_examples=60)
@given(st.lists(VALUES, min_size=3, max_size=12), st.randoms(use_true_random=False),
       st.integers(-1, 1))
def test_the_ratchet_compares_exact_means(old, rng, change):
    new = list(old)
    rng.shuffle(new)  # the same values on other questions: the same mean, summed otherwise
    i = rng.randrange(len(new))
    steps = [v for v in (0.0, 0.1, 0.2, 0.3, 0.7, 1 / 3, 0.9, 1.0)
             if (v > new[i] if change > 0 else v < new[i] if change < 0 else v == new[i])]
    if steps:
        new[i] = rng.choice(steps)
    qids = [f"q{n:02d}" for n in range(len(old))]
    lower = sum(map(Fraction, new)) < sum(map(Fraction, old))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "baseline.json"
        update_baseline(path, evaluation_from_scores(
            {q: {"mrr@5": v} for q, v in zip(qids, old, strict=True)}), {}, None)
        current = evaluation_from_scores({q: {"mrr@5": v} for q, v in zip(qids, new, strict=True)})
        if lower:
            with pytest.raises(BaselineRefused, match="only moves up"):
                update_baseline(path, current, {}, None)
        else:
            update_baseline(path, current, {}, None)
