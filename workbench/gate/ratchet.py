"""The gate's ratchet: :func:`update_baseline` writes an Evaluation as the new baseline only
when no gated metric went down on the questions both share (upward only; ``force=True``
for a deliberate drop), refusing numbers that are not comparable as the check does
(:func:`~workbench.gate.check.refuse_golden_change`,
:func:`~workbench.gate.check.refuse_other_relevance`). It holds the baseline's lock across
its read and its write, saves only over the file as it read it, and appends a line to the
changelog (:mod:`workbench.gate.history`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from workbench.evaluation import Evaluation
from workbench.gate.baseline import Baseline, question_outcomes
from workbench.gate.check import BaselineRefused, refuse_golden_change, refuse_other_relevance
from workbench.gate.history import append_changelog
from workbench.golden import GoldenSet
from workbench.io import FileStamp, InputError, locked

__all__ = ["update_baseline"]


def update_baseline(path: str | Path, current: Evaluation, config: Mapping[str, Any],
                    golden: GoldenSet | None, *, force: bool = False,
                    golden_changed: bool = False, metrics: Sequence[str] | None = None
                    ) -> Baseline:
    """Write ``current`` as the baseline at ``path`` (atomically), ratcheting upward only.

    With an existing baseline it raises :class:`BaselineRefused` when the golden set changed
    and ``golden_changed`` is not given, or when any gated metric (default: every metric in
    the old baseline) has a lower mean on the questions both share or was judged with
    another relevance (e.g. another ``evidence_threshold``), unless ``force``. Every write
    appends its line to the changelog beside the baseline (:mod:`workbench.gate.history`)."""
    path = Path(path)
    new = Baseline.from_evaluation(current, config, golden)
    with locked(path):  # the ratchet compares with the file as it is when it writes
        return _ratchet(path, new, current, golden, force, golden_changed, metrics)


def _stamp_of(path: Path) -> FileStamp:
    """The stamp of the bytes of a file that does not load as a baseline (a forced ratchet
    replaces it, unless it changes meanwhile)."""
    try:
        return FileStamp.of(path.read_bytes())
    except OSError as exc:
        raise InputError(str(path), f"cannot read the baseline ({exc.strerror or exc})"
                         ) from None


def _ratchet(path: Path, new: Baseline, current: Evaluation, golden: GoldenSet | None,
             force: bool, golden_changed: bool, metrics: Sequence[str] | None) -> Baseline:
    old: Baseline | None = None
    seen: FileStamp | None = None  # what the file held when the ratchet read it
    if path.exists():
        try:
            old = Baseline.load(path)
            seen = old.stamp
        except InputError:
            if not force:
                raise
            seen = _stamp_of(path)
    if old is not None and not force:
        values, _ = question_outcomes(current)
        refuse_golden_change(old, golden, set(values), golden_changed)
        common = sorted(set(values) & set(old.outcomes))
        gated = list(metrics or old.metrics)
        for m in gated:
            if m not in current.metrics:
                raise BaselineRefused(f"{path}: metric {m!r} is in the baseline but not in the "
                                      "new evaluation; score it too, or use force=True "
                                      "(--force) to drop it", "metrics")
        refuse_other_relevance(old, current, gated)
        lower = []
        for m in gated:
            was = float(np.mean([old.outcomes[q][m] for q in common]))
            now = float(np.mean([values[q][m] for q in common]))
            if now < was - 1e-9:
                lower.append(f"{m} {was:.3f} -> {now:.3f}")
        if lower:
            raise BaselineRefused(
                f"{path}: refusing to lower the baseline ({'; '.join(lower)} on {len(common)} "
                "questions): the ratchet only moves up. Fix the regression, or use force=True "
                "(--force) if the drop is deliberate, and say why in the commit.", "lower")
    new.save(path, replacing=seen)
    append_changelog(path, old, new, forced=force)
    return Baseline.load(path)
