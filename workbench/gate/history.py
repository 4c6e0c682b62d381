"""The baseline's changelog: one readable line per ratchet, beside the baseline file.

Each write of a baseline (:func:`workbench.gate.update_baseline`, ``workbench gate
--update-baseline``) appends one line to ``BASELINE.changelog`` (for ``evals/baseline.json``:
``evals/baseline.changelog``), through the locked writer of :mod:`workbench.io` (re-read and
rewritten atomically under its lock, so concurrent ratchets lose no line)::

    2026-12-01T23:30:00+00:00 commit 1a2b3c4 | chunker: fixed:size=800 -> fixed:size=400 |
    recall@5 0.810 -> 0.840 (+3.0 pts), mrr@5 0.600 -> 0.610 (+1.0 pts) |
    recall@5 flipped: +q07 +q12 -q03

Fields, separated by `` | ``: the date (UTC), the git commit of the baseline's folder (when
it is in a git work tree; ``no git`` otherwise) and ``forced`` when the ratchet was forced;
what changed in the recorded config (``created`` for a new baseline, ``same config``); each
metric's mean before -> after and the move in points (metrics only in one side named as
added / dropped); the questions whose first metric flipped (``+`` up, ``-`` down, at most
:data:`FLIP_LIMIT` named, then a count). ``workbench gate --history`` prints the file.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from workbench.gate.baseline import Baseline
from workbench.io import append_text, read_text

FLIP_LIMIT = 10


def changelog_path(baseline: str | Path) -> Path:
    """The changelog beside a baseline file."""
    path = Path(baseline)
    return path.with_name(path.stem + ".changelog")


def git_commit(folder: str | Path) -> str | None:
    """The short commit hash of the git work tree holding ``folder`` (None: not in git, or
    git is not installed)."""
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=folder,
                             capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def _value(v: object) -> str:
    return "null" if v is None else str(v)


def changelog_line(old: Baseline | None, new: Baseline, commit: str | None,
                   forced: bool = False) -> str:
    """The line for a ratchet from ``old`` (None: created) to ``new`` (see the module)."""
    head = f"{new.created} {'commit ' + commit if commit else 'no git'}"
    if forced:
        head += " forced"
    if old is None:
        changed = "created"
    else:
        keys = sorted(set(old.config) | set(new.config))
        diffs = [f"{k}: {_value(old.config.get(k))} -> {_value(new.config.get(k))}"
                 for k in keys if old.config.get(k) != new.config.get(k)]
        changed = "; ".join(diffs) or "same config"
    moved = []
    for m in new.metrics:
        now = float(new.summary[m]["mean"])
        if old is None or m not in old.summary:
            moved.append(f"{m} {now:.3f}" + ("" if old is None else " (added)"))
        else:
            was = float(old.summary[m]["mean"])
            moved.append(f"{m} {was:.3f} -> {now:.3f} ({(now - was) * 100:+.1f} pts)")
    moved += [f"{m} dropped" for m in (old.metrics if old else []) if m not in new.summary]
    parts = [head, changed, ", ".join(moved)]
    if old is not None and new.metrics:
        first = new.metrics[0]
        flips = sorted((q, new.outcomes[q][first] - old.outcomes[q][first])
                       for q in set(old.outcomes) & set(new.outcomes)
                       if first in old.outcomes[q] and first in new.outcomes[q]
                       and abs(new.outcomes[q][first] - old.outcomes[q][first]) > 1e-9)
        named = " ".join(f"{'+' if d > 0 else '-'}{q}" for q, d in flips[:FLIP_LIMIT])
        more = f" and {len(flips) - FLIP_LIMIT} more" if len(flips) > FLIP_LIMIT else ""
        parts.append(f"{first} flipped: {named}{more}" if flips else f"{first}: no flips")
    return " | ".join(parts).replace("\n", " ")


def append_changelog(baseline: str | Path, old: Baseline | None, new: Baseline,
                     forced: bool = False) -> str:
    """Append the line of this ratchet to the baseline's changelog; returns the line."""
    path = changelog_path(baseline)
    line = changelog_line(old, new, git_commit(path.parent.resolve()), forced)
    append_text(path, line + "\n", what="baseline changelog", make_parents=True)
    return line


def read_history(baseline: str | Path) -> str:
    """The changelog's text ('' when the baseline was never ratcheted)."""
    path = changelog_path(baseline)
    return read_text(path, "baseline changelog") if path.exists() else ""
