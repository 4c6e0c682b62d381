"""Keeping synthetic questions honest: the realism filter and the judge's agreement.

* :func:`filter_synthetic`: scores 1-5 a person gave a sample (see
  :class:`~workbench.widgets.RealismScorer`) are the few-shot examples of a
  :class:`RealismJudge` that scores the rest; items at or above the threshold are kept, each
  with ``realism`` and ``realism_judge`` recorded in ``extra``. Given the judge's measured
  ``agreement`` (:func:`realism_agreement`), a judge not shown to beat chance is refused;
  a judge used unmeasured is warned about (:class:`UnmeasuredJudgeWarning`).
* :func:`realism_agreement`: how well the judge agrees with the person, on the person's own
  scores held out (k folds: the few shots from the other folds, each fold judged), through
  :func:`~workbench.generation.agreement.rating_agreement`.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from workbench.generation.agreement import RatingAgreement, rating_agreement
from workbench.generation.grading import ChatJudge
from workbench.generation.prompt import ChatModel
from workbench.golden import GoldenItem
from workbench.io import WorkbenchError, WorkbenchWarning

__all__ = ["REALISM_PROMPT_VERSION", "RealismJudge", "SyntheticFilter", "UnmeasuredJudgeWarning",
           "UntrustedJudgeError", "filter_synthetic", "realism_agreement"]

REALISM_PROMPT_VERSION = "realism-fewshot-v1"

REALISM_PROMPT = """You rate questions for a company handbook search test: would a real \
employee or customer ask this, in these words? 1 = no one would, 5 = a real question.

{examples}
QUESTION: {question}
SCORE:"""


class RealismJudge(ChatJudge):
    """Scores a question 1-5 for realism and domain fit with a chat model, the person's
    scored ``examples`` (``[(question, score)]``) as few shots. ``prompt_version`` carries a
    digest of the examples: other examples are another judge."""

    def __init__(self, client: ChatModel, examples: Sequence[tuple[str, int]],
                 prompt_version: str = REALISM_PROMPT_VERSION, max_tokens: int = 4):
        if not examples:
            raise WorkbenchError("the realism judge needs examples a person scored (few shots)")
        self.examples = tuple((q, int(s)) for q, s in examples)
        digest = hashlib.sha256(json.dumps(self.examples).encode()).hexdigest()[:8]
        super().__init__(client, f"{prompt_version}+{digest}", max_tokens)

    def score(self, question: str) -> tuple[int | None, str]:
        """The score (None when the reply holds no digit 1-5) and the raw reply."""
        shots = "\n".join(f"QUESTION: {q}\nSCORE: {s}\n" for q, s in self.examples)
        reply = self.client.chat([{"role": "user", "content": REALISM_PROMPT.format(
            examples=shots, question=question)}], max_tokens=self.max_tokens)
        found = re.search(r"[1-5]", reply.text) if not reply.error else None
        return (int(found.group()) if found else None), reply.error or reply.text


@dataclass(frozen=True)
class SyntheticFilter:
    """``kept`` items (scored at or above ``threshold``), each with ``realism`` and
    ``realism_judge`` in ``extra``; ``table`` one row per item (qid, kind, score, judge,
    kept, reply)."""

    kept: tuple[GoldenItem, ...]
    threshold: float
    table: pd.DataFrame = field(hash=False)


def _check_score(qid: str, score: Any) -> int:
    if isinstance(score, bool) or not isinstance(score, int) or not 1 <= score <= 5:
        raise WorkbenchError(f"{qid}: a person's score must be an integer 1-5, got {score!r}")
    return score


class UntrustedJudgeError(WorkbenchError):
    """A realism judge whose measured agreement with the person does not clear chance."""


class UnmeasuredJudgeWarning(WorkbenchWarning):
    """A realism judge scored items without its agreement with the person measured."""


def realism_agreement(client: ChatModel, scored: Sequence[tuple[str, int]], *, folds: int = 2,
                      seed: int = 0, resamples: int = 2000, confidence: float = 0.95,
                      max_tokens: int = 4, progress: bool = False) -> RatingAgreement:
    """The agreement of a :class:`RealismJudge` on ``client`` with the person's ``scored``
    questions (``[(question, score 1-5)]``), none judged with its own score among the shots:
    the items are shuffled (``seed``) into ``folds`` parts; each part is judged by a judge
    whose few shots are the other parts. Unreadable replies are left out and counted
    (:attr:`RatingAgreement.unreadable`); the statistics are
    :func:`~workbench.generation.agreement.rating_agreement`'s. ``progress`` shows a bar
    over the questions judged."""
    rows = [(q, _check_score(q, s)) for q, s in scored]
    if not 2 <= folds <= len(rows):
        raise WorkbenchError(f"agreement needs 2 <= folds <= the {len(rows)} scored questions, "
                             f"got folds={folds}; score more questions")
    order = list(range(len(rows)))
    random.Random(seed).shuffle(order)
    person, judged, unreadable, name = [], [], 0, ""
    bar = tqdm(total=len(rows), desc="realism agreement", disable=not progress)
    for f in range(folds):
        held = set(order[f::folds])
        judge = RealismJudge(client, [rows[i] for i in order if i not in held],
                             max_tokens=max_tokens)
        name = f"judge:{judge.model_id}@{REALISM_PROMPT_VERSION} ({folds}-fold)"
        for i in sorted(held):
            score, _ = judge.score(rows[i][0])
            bar.update()
            if score is None:
                unreadable += 1
            else:
                person.append(rows[i][1])
                judged.append(score)
    bar.close()
    if not person:
        raise UntrustedJudgeError(f"{name}: none of its {len(rows)} replies held a score 1-5; "
                                  "its agreement cannot be measured")
    return rating_agreement(person, judged, name, resamples=resamples, seed=seed,
                            confidence=confidence, unreadable=unreadable)


def filter_synthetic(items: Iterable[GoldenItem], human: Mapping[str, int],
                     judge: RealismJudge | None, threshold: float = 3.0, *,
                     agreement: RatingAgreement | None = None,
                     progress: bool = False) -> SyntheticFilter:
    """Keep items scored ``>= threshold``: the person's score where given (judge
    ``"person"``), else ``judge``'s (ValueError when items are left unscored and no judge
    is given). An unreadable judge reply leaves the item unscored, and dropped. A judge
    whose ``agreement`` (:func:`realism_agreement`) is not shown to beat chance is refused
    (:class:`UntrustedJudgeError`) before it scores anything; one used without it is
    warned about (:class:`UnmeasuredJudgeWarning`). ``progress`` shows a bar over the items."""
    rows, kept = [], []
    items = list(items)
    unknown = set(human) - {i.qid for i in items}
    if unknown:
        raise WorkbenchError(f"scores for questions not among the items: {sorted(unknown)[:5]}")
    if judge is not None and any(i.qid not in human for i in items):
        if agreement is None:
            warnings.warn(f"the realism judge {judge.model_id}@{judge.prompt_version} scores "
                          "items without its agreement with the person measured: pass "
                          "agreement=realism_agreement(...)", UnmeasuredJudgeWarning,
                          stacklevel=2)
        elif not agreement.better_than_chance:
            raise UntrustedJudgeError(f"{agreement.summary()}: the kappa interval does not "
                                      "clear 0, so the judge is not shown to beat chance; "
                                      "no item is filtered by it (score more questions or "
                                      "use a better judge)")
    for item in tqdm(items, desc="realism", disable=not progress):
        if item.qid in human:
            score: int | None = _check_score(item.qid, human[item.qid])
            by, reply = "person", ""
        elif judge is None:
            raise WorkbenchError(f"{item.qid} has no person's score and no judge was given")
        else:
            score, reply = judge.score(item.question)
            by = f"judge:{judge.model_id}@{judge.prompt_version}"
        keep = score is not None and score >= threshold
        rows.append({"qid": item.qid, "kind": item.extra.get("kind", ""), "score": score,
                     "judge": by, "kept": keep, "reply": reply, "question": item.question})
        if keep:
            kept.append(replace(item, extra={**item.extra, "realism": score,
                                             "realism_judge": by}))
    return SyntheticFilter(tuple(kept), threshold, pd.DataFrame(rows))
