"""Judges you can trust: measure a judge against a person, correct its pass rate, pin it.

* :func:`calibrate_judge`: on answers a person graded pass/fail, the judge's sensitivity
  (P(judge passes | person passes)) and specificity (P(judge fails | person fails)) with
  exact Clopper-Pearson intervals, and Cohen's kappa.
* :func:`corrected_pass_rate`: the pass rate of unlabelled answers corrected for the judge's
  measured error rates (:func:`~workbench.stats.rogan_gladen`), with Lang and Reiczigel's
  interval (:func:`~workbench.stats.rogan_gladen_interval`), which carries the uncertainty
  of both the calibration set and the judged set; refused where no interval covers (a judge
  not shown to beat chance, fewer than :data:`~workbench.stats.SMALL_N` answers the person
  passed or failed). Its coverage by simulation is in the README.
* :func:`judge_report`: both in one honest report: calibrate on the labelled answers (the
  judge's undecided grades left out and counted), then the raw and corrected pass rate of
  the answers only the judge graded, or the refusal when the judge is not shown to beat
  chance.
* :func:`grader_of` / :func:`compare_grades`: the judge's model and prompt version are part of
  every judged :class:`~workbench.generation.grading.Grade`; a comparison of two runs whose
  judged grades come from different judges is refused, as comparisons across relevance
  definitions are.
* :func:`answer_relevance`: does the answer address the question? Deterministic where it can
  be (a refusal does not; enough question terms in the answer does), a
  :class:`RelevanceJudge` where it cannot.

Conventions: a verdict is True (pass) or False (fail); ``human[i]`` and ``judged[i]`` are the
two verdicts on the same answer. Undecided grades (``passed is None``) are not verdicts:
drop them first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass

import numpy as np

from workbench.generation.grading import ChatJudge, Grade, answer_tokens, is_refusal
from workbench.generation.prompt import ChatModel
from workbench.io import WorkbenchError
from workbench.retrieval.bm25 import STOPWORDS
from workbench.stats import (
    SMALL_N,
    PairedComparison,
    clopper_pearson,
    cohen_kappa,
    compare_paired,
    is_small_sample,
    rogan_gladen,
    rogan_gladen_interval,
)

__all__ = ["RELEVANCE_PROMPT_VERSION", "CorrectedRate", "JudgeCalibration", "JudgeReport",
           "RelevanceJudge", "answer_relevance", "calibrate_judge", "compare_grades",
           "corrected_pass_rate", "grader_of", "judge_report"]

RELEVANCE_PROMPT_VERSION = "answer-relevance-v1"


def _verdicts(values: Sequence[object], what: str) -> np.ndarray:
    """Pass/fail verdicts as a bool array: True/False (or 1/0); anything else is refused,
    never read by its truth value (the string "no" is not a pass)."""
    if any(v is None for v in values):
        raise WorkbenchError(
            f"{what} holds undecided verdicts (None): drop them before calibrating")
    bad = next((v for v in values if not isinstance(v, (bool, np.bool_))
                and not (isinstance(v, (int, np.integer)) and v in (0, 1))), None)
    if bad is not None:
        raise WorkbenchError(f"{what} holds {bad!r} ({type(bad).__name__}): verdicts are "
                             "True (pass) or False (fail)")
    return np.asarray([bool(v) for v in values], dtype=bool)


@dataclass(frozen=True)
class JudgeCalibration:
    """A judge measured against a person on ``n`` answers (``positives`` the person passed).
    ``youden_low`` is the lower bound of ``sensitivity + specificity - 1`` from the two exact
    lower bounds (conservative): at or below 0 the judge is not shown to beat chance."""

    judge: str
    n: int
    positives: int
    negatives: int
    _: KW_ONLY
    sensitivity: float
    sensitivity_ci: tuple[float, float]
    specificity: float
    specificity_ci: tuple[float, float]
    kappa: float
    agreement: float
    youden_low: float
    confidence: float = 0.95

    @property
    def youden(self) -> float:
        return self.sensitivity + self.specificity - 1.0

    @property
    def true_positives(self) -> int:
        return round(self.sensitivity * self.positives)

    @property
    def true_negatives(self) -> int:
        return round(self.specificity * self.negatives)

    @property
    def better_than_chance(self) -> bool:
        return self.youden_low > 0.0


def calibrate_judge(human: Sequence[bool], judged: Sequence[bool], judge: str = "",
                    confidence: float = 0.95) -> JudgeCalibration:
    """Sensitivity and specificity of ``judged`` against ``human`` (exact intervals) and
    Cohen's kappa (:func:`~workbench.stats.cohen_kappa`, defined here: the person used both
    verdicts). Needs at least one answer the person passed and one they failed."""
    h, j = _verdicts(human, "human"), _verdicts(judged, "judged")
    if h.shape != j.shape:
        raise WorkbenchError(f"human and judged differ in length: {h.size} vs {j.size}")
    pos, neg = int(h.sum()), int((~h).sum())
    if pos == 0 or neg == 0:
        raise WorkbenchError(f"calibration needs answers the person passed and failed: got {pos} "
                         f"passed and {neg} failed; label more answers")
    tp, tn = int((h & j).sum()), int((~h & ~j).sum())
    sens_ci = clopper_pearson(tp, pos, confidence)
    spec_ci = clopper_pearson(tn, neg, confidence)
    n = h.size
    kappa = cohen_kappa(h.tolist(), j.tolist(), (False, True))  # defined: h holds both
    return JudgeCalibration(judge=judge, n=n, positives=pos, negatives=neg,
                            sensitivity=tp / pos, sensitivity_ci=sens_ci,
                            specificity=tn / neg, specificity_ci=spec_ci, kappa=kappa,
                            agreement=(tp + tn) / n, youden_low=sens_ci[0] + spec_ci[0] - 1.0,
                            confidence=confidence)


@dataclass(frozen=True)
class CorrectedRate:
    """The judged pass rate of ``n`` unlabelled answers and the Rogan-Gladen corrected one,
    with its interval (``method`` names how it was made)."""

    judge: str
    n: int
    judged_rate: float
    judged_ci: tuple[float, float]
    _: KW_ONLY
    corrected: float
    ci: tuple[float, float]
    method: str
    confidence: float = 0.95


def corrected_pass_rate(calibration: JudgeCalibration, judged: Sequence[bool]) -> CorrectedRate:
    """The pass rate of answers only the judge graded, corrected for its error rates
    (:func:`~workbench.stats.rogan_gladen`), with Lang and Reiczigel's interval
    (:func:`~workbench.stats.rogan_gladen_interval`: the judged rate, sensitivity and
    specificity all uncertain).

    Refused (WorkbenchError) where no interval can be trusted: the judge is not shown to
    beat chance (:attr:`JudgeCalibration.better_than_chance`), or the person passed or failed
    fewer than :data:`~workbench.stats.SMALL_N` of the calibration answers (the judge's error
    rate on that side is a guess; by simulation, intervals there cover as little as 70%)."""
    who = calibration.judge or "(unnamed)"
    if not calibration.better_than_chance:
        raise WorkbenchError(
            f"judge {who} is not shown to beat chance: "
            f"sensitivity + specificity - 1 = {calibration.youden:.2f}, lower bound "
            f"{calibration.youden_low:.2f} <= 0 on {calibration.n} labelled answers; no "
            "corrected rate is reported (label more answers or use a better judge)")
    if is_small_sample(calibration.positives) or is_small_sample(calibration.negatives):
        raise WorkbenchError(
            f"judge {who} is calibrated on {calibration.positives} answers the person passed "
            f"and {calibration.negatives} they failed: fewer than {SMALL_N} on a side leave "
            "its error rate there unknown; no corrected rate is reported (label more answers "
            f"until each side has {SMALL_N})")
    j = _verdicts(judged, "judged")
    if j.size == 0:
        raise WorkbenchError("judged is empty")
    n, passes = j.size, int(j.sum())
    low, high = rogan_gladen_interval(
        (passes, n), (calibration.true_positives, calibration.positives),
        (calibration.true_negatives, calibration.negatives), calibration.confidence)
    corrected = float(rogan_gladen(passes / n, calibration.sensitivity, calibration.specificity))
    return CorrectedRate(judge=calibration.judge, n=n, judged_rate=passes / n,
                         judged_ci=clopper_pearson(passes, n, calibration.confidence),
                         corrected=corrected, ci=(low, high),
                         method="Lang-Reiczigel adjusted interval over calibration and judged "
                                "sets",
                         confidence=calibration.confidence)


@dataclass(frozen=True)
class JudgeReport:
    """:func:`judge_report`'s result: the ``calibration`` on the ``labelled`` answers the
    judge decided (None when those hold no answer the person passed, or none they failed),
    the judge's ``undecided`` grades left out of it and of ``judged_n`` (the answers only the
    judge graded), and either the ``corrected`` rate or the ``refusal`` (why none is
    reported)."""

    calibration: JudgeCalibration | None
    labelled: int
    undecided: int
    judged_n: int
    _: KW_ONLY
    corrected: CorrectedRate | None
    refusal: str | None

    def summary(self) -> str:
        c = self.calibration
        if c is None:
            return (f"{self.labelled} labelled answers decided by the judge ({self.undecided} "
                    f"undecided grades left out): {self.refusal}")
        head = (f"{c.judge or 'judge'} on {c.n} labelled answers ({c.positives} passed by the "
                f"person; {self.undecided} undecided grades left out): sensitivity "
                f"{c.sensitivity:.3f} [{c.sensitivity_ci[0]:.3f}, {c.sensitivity_ci[1]:.3f}], "
                f"specificity {c.specificity:.3f} [{c.specificity_ci[0]:.3f}, "
                f"{c.specificity_ci[1]:.3f}], kappa {c.kappa:.3f}")
        if self.corrected is None:
            return f"{head}; corrected pass rate refused: {self.refusal}"
        r = self.corrected
        return (f"{head}; on {r.n} answers only it graded: raw pass rate {r.judged_rate:.3f} "
                f"[{r.judged_ci[0]:.3f}, {r.judged_ci[1]:.3f}], corrected {r.corrected:.3f} "
                f"[{r.ci[0]:.3f}, {r.ci[1]:.3f}]")


def judge_report(human: Sequence[bool], judged: Sequence[bool | None],
                 unlabelled: Sequence[bool | None], judge: str = "", *,
                 confidence: float = 0.95) -> JudgeReport:
    """Calibrate ``judged`` against ``human`` (same answers) and correct the judge's pass rate
    on ``unlabelled`` (answers no person graded). The judge's undecided verdicts (None) are
    left out of both and counted in ``undecided``. No corrected rate, only the reason, when
    the decided answers cannot calibrate the judge (no pass or no fail by the person among
    them), too few of them on a side, or the judge is not shown to beat chance
    (:func:`corrected_pass_rate`)."""
    if len(human) != len(judged):
        raise WorkbenchError(f"human and judged differ in length: {len(human)} vs {len(judged)}")
    pairs = [(h, j) for h, j in zip(human, judged, strict=True) if j is not None]
    rest = [j for j in unlabelled if j is not None]
    for values, what in ((human, "human"), ([j for _, j in pairs], "judged"), (rest, "unlabelled")):
        _verdicts(values, what)  # bad input is an error, not a refusal
    undecided = len(judged) - len(pairs) + len(unlabelled) - len(rest)
    cal: JudgeCalibration | None = None
    rate: CorrectedRate | None = None
    refusal: str | None = None
    try:
        cal = calibrate_judge([h for h, _ in pairs], [j for _, j in pairs], judge, confidence)
        rate = corrected_pass_rate(cal, rest)
    except WorkbenchError as exc:  # too few labels of a kind, chance level, nothing judged
        refusal = str(exc)
    return JudgeReport(cal, len(pairs), undecided, len(rest), corrected=rate, refusal=refusal)


# ----------------------------------------------------------------------------- pin

def grader_of(grade: Grade) -> str:
    """What decided a grade: the method, and for a judge its model id and prompt version
    (``judge:<model_id>@<prompt_version>``). A judged grade without them is refused."""
    if grade.method != "judge" and "model_id" not in grade.details:
        return grade.method
    model, version = grade.details.get("model_id"), grade.details.get("prompt_version")
    if not model or not version:
        raise WorkbenchError(f"a {grade.method} grade does not record its judge's model_id and "
                         "prompt_version: grade with a Judge that records them")
    return f"{grade.method}:{model}@{version}"


def compare_grades(baseline: Mapping[str, Grade], candidate: Mapping[str, Grade],
                   alpha: float = 0.05, *, name: str = "") -> PairedComparison:
    """Paired comparison of two runs' pass/fail grades ``{qid: Grade}`` (undecided grades on
    either side drop the question). Refuses (ValueError) when the same question was decided
    by different graders (another judge model or prompt version): their numbers are judged
    another way and a difference would mix the judges' biases with the systems'."""
    a, b = {}, {}
    for qid in sorted(set(baseline) | set(candidate)):
        if qid not in baseline or qid not in candidate:
            raise WorkbenchError(f"question {qid!r} is graded in only one run")
        ga, gb = baseline[qid], candidate[qid]
        if ga.passed is None or gb.passed is None:
            continue
        if grader_of(ga) != grader_of(gb):
            raise WorkbenchError(f"question {qid!r} was graded by {grader_of(ga)} in the baseline "
                             f"and by {grader_of(gb)} in the candidate: regrade both runs "
                             "with one judge before comparing")
        a[qid], b[qid] = float(ga.passed), float(gb.passed)
    if not a:
        raise WorkbenchError("no question is decided in both runs")
    return compare_paired(a, b, binary=True, alpha=alpha, name=name)


# ----------------------------------------------------------------------------- relevance

RELEVANCE_PROMPT = """Does the ANSWER address the QUESTION (whether or not it is correct)?

QUESTION: {question}

ANSWER: {answer}

Reply with JSON only: {{"relevant": true | false}}"""


class RelevanceJudge(ChatJudge):
    """Answer relevance with a chat model (:class:`~workbench.generation.prompt.ChatModel`):
    ``passed`` True when the reply says relevant, None when it cannot be parsed."""

    def __init__(self, client: ChatModel, prompt_version: str = RELEVANCE_PROMPT_VERSION,
                 max_tokens: int = 16):
        super().__init__(client, prompt_version, max_tokens)

    def judge(self, question: str, answer: str) -> Grade:
        prompt = RELEVANCE_PROMPT.format(question=question, answer=answer)
        reply = self.client.chat([{"role": "user", "content": prompt}],
                                 max_tokens=self.max_tokens)
        low = reply.text.lower()
        found = {v for v in ("true", "false", "yes", "no") if v in answer_tokens(low)}
        passed = None if reply.error or len(found) != 1 else found <= {"true", "yes"}
        return Grade(passed, "judge" if passed is not None else "undecided",
                     {"model_id": self.model_id, "prompt_version": self.prompt_version,
                      "reply": reply.text, "error": reply.error})


def _terms(text: str) -> set[str]:
    return {t for t in answer_tokens(text)
            if t not in STOPWORDS and (len(t) > 2 or not t.isascii())}


def answer_relevance(question: str, answer: str, judge: RelevanceJudge | None = None,
                     min_overlap: float = 0.5) -> Grade:
    """Does ``answer`` address ``question``? A refusal does not (``refusal``); an answer that
    repeats at least ``min_overlap`` of the question's content terms does (``term_overlap``);
    otherwise the judge decides when given, else the grade is ``undecided``."""
    if is_refusal(answer):
        return Grade(False, "refusal", {})
    terms = _terms(question)
    overlap = len(terms & _terms(answer)) / len(terms) if terms else 0.0
    if terms and overlap >= min_overlap:
        return Grade(True, "term_overlap", {"overlap": overlap})
    if judge is not None:
        grade = judge.judge(question, answer)
        return Grade(grade.passed, grade.method, {**grade.details, "overlap": overlap})
    return Grade(None, "undecided", {"overlap": overlap,
                                     "reason": "few question terms and no judge"})
