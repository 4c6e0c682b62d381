"""Argument checks shared by the commands, so a bad value ends in one line before any work.

* ``-k`` and other counts are integers of a stated range (:func:`cutoff`,
  :func:`non_negative_int`); ``--alpha`` is a probability (:func:`probability`),
  ``--evidence-threshold`` a share (:func:`share`).
* A golden set to score must hold answerable questions (:func:`require_answerable`).
* An option that would be ignored in its combination is refused, never silently dropped
  (:data:`NEEDS`, :func:`check_combinations`): ``gate --history`` takes no option but
  ``--baseline``, ``--force`` needs ``--update-baseline``, ``--holdout-seed`` needs
  ``--holdout``, and so on.
* Cutoffs are bounded by what is ranked (:func:`check_cutoffs`): ``-k`` and the cutoff of each
  ``-m`` metric may be at most :data:`FREE_CUTOFF`, or the number of things ranked (chunks of
  the corpus, the deepest ranking of a TREC run) when that is larger; never above
  :data:`MAX_CUTOFF`. A larger value asks for more memory than any answer needs (``eval -k
  1000000000`` would allocate hundreds of GiB) and is refused, not capped, so that a number's
  name always says how it was computed.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from workbench.io import WorkbenchError
from workbench.retrieval.base import MAX_K

__all__ = ["FREE_CUTOFF", "MAX_CUTOFF", "NEEDS", "check_combinations", "check_cutoffs",
           "chunker_spec", "cutoff",
           "non_negative_int", "probability", "require_answerable", "share"]

FREE_CUTOFF = 1000
MAX_CUTOFF = MAX_K


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None


def cutoff(text: str) -> int:
    """An argparse type: an integer from 1 to :data:`MAX_CUTOFF`."""
    value = _integer(text)
    if not 1 <= value <= MAX_CUTOFF:
        raise argparse.ArgumentTypeError(f"must be a positive integer of at most {MAX_CUTOFF},"
                                         f" got {text!r}")
    return value


def chunker_spec(text: str) -> str:
    """An argparse type: a chunker spec that is not blank (a blank one is refused, never read
    as the default; the spec itself is parsed by the command)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty; give a chunker spec such as "
                                         "fixed:size=400, or leave the option out for the "
                                         "default")
    return text


def non_negative_int(text: str) -> int:
    """An argparse type: an integer >= 0."""
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text!r}")
    return value


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    return value


def probability(text: str) -> float:
    """An argparse type: a number strictly between 0 and 1."""
    value = _number(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {text!r}")
    return value


def share(text: str) -> float:
    """An argparse type: a number in (0, 1] (a share, such as an evidence threshold)."""
    value = _number(text)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be more than 0 and at most 1, got {text!r}")
    return value


def check_cutoffs(k: int | None, metrics: Sequence[str] | None, ranked: int | None,
                  what: str = "") -> None:
    """Refuse ``k`` or a metric cutoff above ``max(ranked, FREE_CUTOFF)``, or above
    :data:`MAX_CUTOFF` when what is ranked is not known yet (``ranked=None``); ``what``
    names the ranked things in the message, e.g. "chunks in this corpus"."""
    from workbench.metrics import parse_metric

    limit = MAX_CUTOFF if ranked is None else min(max(ranked, FREE_CUTOFF), MAX_CUTOFF)
    asked = [("-k", k)] + [(f"-m {m}", parse_metric(m).k) for m in metrics or ()]
    for option, value in asked:
        if value is None or value <= limit:
            continue
        if ranked is None or limit == MAX_CUTOFF:
            raise WorkbenchError(f"{option}: cutoff {value} is more than {MAX_CUTOFF}; use at most "
                             f"{limit}")
        raise WorkbenchError(f"{option}: cutoff {value} is more than the {ranked} {what} and "
                         f"more than {FREE_CUTOFF}; use at most {limit}")


def require_answerable(golden: Any, source: Any) -> None:
    """Refuse an empty golden set, or one whose questions are all unanswerable: the rule of
    :func:`workbench.evaluation.pipeline.require_answerable`."""
    from workbench.evaluation.pipeline import require_answerable as rule

    rule(golden, source)


_GATE_PIPELINE = ("corpus", "golden", "chunker", "retriever", "encoder", "k", "metric", "level",
                  "alpha", "update_baseline", "cache", "golden_changed", "force", "generation",
                  "questions", "json")
#: Options that act only in a combination, by command: ``(option, other, wanted)``, the
#: destinations of two options and what the second must be for the first to act: True (given),
#: False (not given) or a value.
NEEDS: dict[str, tuple[tuple[str, str, object], ...]] = {
    "gate": (*((option, "history", False) for option in _GATE_PIPELINE),
             ("questions", "generation", True), ("metric", "generation", False),
             ("force", "update_baseline", True)),
    "sweep": (("holdout_seed", "holdout", True),),
    "eval": (("run_scores", "run", True), ("run_offsets", "run", True)),
    "report": (("unrestricted", "user_group", False), ("budget_tokens", "no_generation", False),
               ("traces", "no_generation", False), ("user_group", "no_generation", False)),
    "questions": (("seed", "by", "random"),),
    "synth": (("distractors", "hard", True), ("encoder", "hard", True),
              ("threshold", "judge_with", True), ("folds", "judge_with", True),
              ("llm_model", "local", False), ("api_key_env", "local", False),
              ("timeout", "local", False)),
    "cache": (("model", "action", "clear"), ("only", "action", "clear"),
              ("json", "action", "info")),
}


def check_combinations(args: argparse.Namespace, given: set[str], flags: dict[str, str]) -> None:
    """Refuse the first option in ``given`` (destinations of the options on the command line;
    ``flags``: their names) that :data:`NEEDS` says would be ignored with the others."""
    for option, other, wanted in NEEDS.get(args.command, ()):
        if option not in given:
            continue
        if wanted is True and other not in given:
            raise WorkbenchError(f"{flags[option]} needs {flags[other]} (without it, it would be "
                                 f"ignored); add {flags[other]}, or drop {flags[option]}")
        if wanted is False and other in given:
            raise WorkbenchError(f"{flags[option]} cannot go with {flags[other]} (it would be "
                                 f"ignored); drop one of them")
        if not isinstance(wanted, bool) and getattr(args, other) != wanted:
            raise WorkbenchError(f"{flags[option]} acts only with {flags[other]} {wanted} (here "
                                 f"{getattr(args, other)}, so it would be ignored); drop it")
