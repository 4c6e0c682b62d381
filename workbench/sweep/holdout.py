"""Held-out confirmation and the winner's curse for sweeps.

A sweep that picks the best of many configurations on the same questions it reports on
overstates the winner: the choice itself selects configurations that were lucky on those
questions. Two remedies, both here:

* :func:`split_golden` splits the golden set once into a *tuning* part (configurations are
  ranked on it) and a *held-out* part (the chosen configuration is reported on it, where the
  choice could not look). The split is stratified by ``(category, source)``: each stratum
  gives ``floor`` or ``ceil`` of ``fraction`` of its questions to the held-out part (largest
  remainders, ties broken by the seeded generator), so the total is ``round(fraction * n)``.
  The same seed and golden set give the same split. Each part must hold at least
  :data:`MIN_PART` questions: a fraction that leaves fewer on either side (``0.999`` ranks
  the configurations on one question) is refused with the fractions that would work.
  :func:`load_or_split` stores it as JSON beside the sweep state (``STATE.holdout.json``): a
  resumed sweep reuses it; a golden set changed since (fingerprint of every item) or another
  fraction or seed is refused with what changed and what to do.
* :func:`~workbench.stats.selection_bias` estimates, on the tuning questions, how much of the
  winner's score is expected from selection alone.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from pathlib import Path

import numpy as np

from workbench.golden import GoldenSet
from workbench.io import InputError, WorkbenchError, atomic_write_text, locked, read_text
from workbench.stats import PairedComparison

#: Bumped when the stored split's shape changes.
SPLIT_FORMAT = 1


def golden_fingerprint(golden: GoldenSet) -> str:
    """A hash of every item (sorted by qid): any added, removed or edited question changes it."""
    rows = sorted(json.dumps(i.to_json(), sort_keys=True, ensure_ascii=False) for i in golden)
    return hashlib.sha256("\n".join(rows).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class HoldoutSplit:
    """A split of a golden set's qids: ``tuning`` (ranked on) and ``heldout`` (reported on),
    disjoint and covering the golden set's answerable questions; ``golden_key`` is
    :func:`golden_fingerprint`."""

    fraction: float
    seed: int
    tuning: tuple[str, ...]
    heldout: tuple[str, ...]
    _: KW_ONLY
    golden_key: str

    def to_json(self) -> dict[str, object]:
        return {"format": SPLIT_FORMAT, "fraction": self.fraction, "seed": self.seed,
                "golden": self.golden_key, "tuning": list(self.tuning),
                "heldout": list(self.heldout)}


#: The fewest answerable questions each part of a split may hold.
MIN_PART = 5


def _check_fraction(fraction: float) -> float:
    if isinstance(fraction, bool) or not isinstance(fraction, int | float) \
            or not 0.0 < float(fraction) < 1.0:
        raise WorkbenchError(f"holdout must be a fraction between 0 and 1 (e.g. 0.3), "
                         f"not {fraction!r}")
    return float(fraction)


def split_golden(golden: GoldenSet, fraction: float, seed: int = 0) -> HoldoutSplit:
    """Split the answerable questions of ``golden`` (those retrieval metrics score) into
    tuning and held-out qids, stratified by ``(category, source)`` (see the module
    docstring). Both parts hold at least :data:`MIN_PART` questions (a
    :class:`~workbench.io.WorkbenchError` says which fractions would)."""
    fraction = _check_fraction(fraction)
    items = [i for i in golden if i.answerable]
    qids = [i.qid for i in items]
    if len(qids) < 2 * MIN_PART:
        raise WorkbenchError(f"a held-out split needs at least {2 * MIN_PART} answerable "
                             f"questions ({MIN_PART} on each side), the golden set has "
                             f"{len(qids)}; sweep without a holdout")
    strata: dict[tuple[str, str], list[str]] = {}
    for item in items:
        strata.setdefault((str(item.category), str(item.source)), []).append(item.qid)
    rng = np.random.default_rng(seed)
    keys = sorted(strata)
    want = fraction * np.array([len(strata[k]) for k in keys], dtype=float)
    take = np.floor(want).astype(int)
    total = min(max(round(fraction * len(qids)), 1), len(qids) - 1)
    if not MIN_PART <= total <= len(qids) - MIN_PART:
        n = len(qids)
        raise WorkbenchError(f"holdout={fraction:g} holds out {total} of {n} answerable "
                             f"questions and ranks on {n - total}: each part needs at least "
                             f"{MIN_PART}; use a fraction from "
                             f"{math.ceil(100 * MIN_PART / n) / 100:g} to "
                             f"{math.floor(100 * (n - MIN_PART) / n) / 100:g}")
    remainder = want - take
    tiebreak = rng.random(len(keys))
    order = sorted(range(len(keys)), key=lambda j: (-remainder[j], tiebreak[j]))
    for j in order[:max(total - int(take.sum()), 0)]:
        take[j] += 1
    heldout: set[str] = set()
    for key, n in zip(keys, take, strict=True):
        members = sorted(strata[key])
        heldout.update(members[i] for i in rng.permutation(len(members))[:n])
    return HoldoutSplit(fraction, int(seed), tuple(q for q in qids if q not in heldout),
                        tuple(q for q in qids if q in heldout),
                        golden_key=golden_fingerprint(golden))


def split_path(state_path: str | Path) -> Path:
    """Where the split of a sweep with resume state ``state_path`` is stored."""
    state = Path(state_path)
    return state.with_name(state.stem + ".holdout.json")


def load_or_split(path: str | Path | None, golden: GoldenSet, fraction: float,
                  seed: int = 0) -> HoldoutSplit:
    """The split stored at ``path`` when it exists (refused, naming the file and what to do,
    when the golden set, fraction or seed differ from the stored one), else a new
    :func:`split_golden`, stored there (atomically, under the lock). ``path=None``: not
    stored."""
    fraction = _check_fraction(fraction)
    if path is None:
        return split_golden(golden, fraction, seed)
    path = Path(path)
    with locked(path):
        if not path.exists():
            split = split_golden(golden, fraction, seed)
            atomic_write_text(path, json.dumps(split.to_json(), indent=1) + "\n",
                              make_parents=True)
            return split
        return _read_split(path, golden, fraction, seed)


def _read_split(path: Path, golden: GoldenSet, fraction: float, seed: int) -> HoldoutSplit:
    where = str(path)
    again = f"delete {path} to split anew (the held-out questions then change)"
    try:
        row = json.loads(read_text(path, "held-out split"))
    except json.JSONDecodeError as exc:
        raise InputError(where, f"is not JSON ({exc.msg}); {again}") from None
    if not isinstance(row, dict) or row.get("format") != SPLIT_FORMAT:
        raise InputError(where, f"is not a held-out split of format {SPLIT_FORMAT}; {again}",
                         field="format")
    tuning, heldout = row.get("tuning"), row.get("heldout")
    if not (isinstance(tuning, list) and isinstance(heldout, list)
            and all(isinstance(q, str) for q in [*tuning, *heldout])):
        raise InputError(where, f"must list the tuning and held-out qids; {again}",
                         field="heldout")
    if row.get("fraction") != fraction or row.get("seed") != seed:
        raise InputError(where, f"was made with holdout={row.get('fraction')!r}, seed="
                         f"{row.get('seed')!r}, not holdout={fraction}, seed={seed}; pass "
                         f"those, or {again}", field="fraction")
    if row.get("golden") != golden_fingerprint(golden):
        now = {i.qid for i in golden if i.answerable}
        before = set(tuning) | set(heldout)
        added, removed = sorted(now - before), sorted(before - now)
        what = (f"{len(added)} question(s) added ({', '.join(added[:5])}), "
                f"{len(removed)} removed ({', '.join(removed[:5])})" if added or removed
                else "questions edited (same qids)")
        raise InputError(where, f"the golden set changed since this split was made: {what}; "
                         f"{again}", field="golden")
    return HoldoutSplit(fraction, seed, tuple(tuning), tuple(heldout),
                        golden_key=str(row["golden"]))


def score_matrix(per_config: Mapping[str, Mapping[str, float]], configs: Sequence[str]
                 ) -> tuple[np.ndarray, list[str]]:
    """``configs`` x the qids every one of them scored, and those qids (sorted)."""
    common = sorted(set.intersection(*(set(per_config[c]) for c in configs)))
    return (np.array([[per_config[c][q] for q in common] for c in configs], dtype=float),
            common)


@dataclass(frozen=True)
class Tied:
    """A configuration within one question of the winner on the tuning part (its mean at
    most 1/n below the winner's, n the tuning questions), with its held-out figures."""

    config: str
    tuning_mean: float
    heldout_mean: float
    heldout_n: int


@dataclass(frozen=True)
class Confirmation:
    """The tuning winner reported where the choice could not look (:meth:`SweepResult.confirm`):
    its mean [interval] and n on the tuning and on the held-out questions, the selection bias
    expected on the tuning part among ``configs`` configurations, and ``comparison``, the
    paired comparison (candidate = the winner) against ``baseline`` on the held-out questions
    (None when the winner is the baseline). ``gap`` = tuning mean - held-out mean;
    ``mean_gap`` the same averaged over every configuration: what the held-out part's
    difficulty explains, so ``gap - mean_gap`` is the winner's own excess (selection).
    ``tied``: the configurations within one question of the winner on the tuning part
    (:class:`Tied`), which the tie-break or one question separated from it."""

    config: str
    metric: str
    baseline: str
    _: KW_ONLY
    tuning_mean: float
    tuning_ci: tuple[float, float]
    tuning_n: int
    heldout_mean: float
    heldout_ci: tuple[float, float]
    heldout_n: int
    selection_bias: float
    configs: int
    comparison: PairedComparison | None
    mean_gap: float
    tied: tuple[Tied, ...] = ()

    @property
    def gap(self) -> float:
        return self.tuning_mean - self.heldout_mean

    def summary(self) -> str:
        """Plain-words lines, for a notebook or a CI log."""
        t, h = self.tuning_ci, self.heldout_ci
        lines = [
            f"winner of {self.configs} on {self.metric}: {self.config}",
            f"  tuning   {self.tuning_mean:.3f} [{t[0]:.3f}, {t[1]:.3f}] n={self.tuning_n}; "
            f"expected from selection alone: {self.selection_bias * 100:+.1f} points",
            f"  held-out {self.heldout_mean:.3f} [{h[0]:.3f}, {h[1]:.3f}] n={self.heldout_n}; "
            f"gap tuning - held-out {self.gap * 100:+.1f} points, against "
            f"{self.mean_gap * 100:+.1f} points on average over the {self.configs} configurations "
            f"(the held-out part's difficulty): the winner's own "
            f"{(self.gap - self.mean_gap) * 100:+.1f} points"]
        if self.tied:
            exact = all(t.tuning_mean == self.tuning_mean for t in self.tied)
            lines.append(f"  {'tied' if exact else 'within one question'} on tuning with "
                         f"{len(self.tied)} configuration(s) (one question: 1/{self.tuning_n}"
                         f" = {100 / self.tuning_n:.2f} points); the tie-break (fewer index "
                         "tokens, then grid order) or one question chose the winner:")
            lines.extend(f"    {t.config}: tuning {t.tuning_mean:.3f}, held-out "
                         f"{t.heldout_mean:.3f} n={t.heldout_n}" for t in self.tied)
        if self.comparison is None:
            lines.append(f"  the winner is the baseline ({self.baseline})")
        else:
            lines.append(f"  held-out vs baseline {self.baseline}: {self.comparison.summary()}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        import html

        return f"<pre>{html.escape(self.summary())}</pre>"
