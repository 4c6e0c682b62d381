"""Judge calibration: exact intervals, kappa, the Rogan-Gladen correction and its coverage,
pinned judges, answer relevance; and a real model judging through the local server."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.local_server import local_server as start_local_server
from workbench.corpus import UNRESTRICTED
from workbench.generation import Grade, Judge, LLMJudge, OpenAIChatGenerator, context_from_passages
from workbench.generation.calibration import (
    RelevanceJudge,
    answer_relevance,
    calibrate_judge,
    compare_grades,
    corrected_pass_rate,
    grader_of,
    judge_report,
)
from workbench.io import WorkbenchError
from workbench.stats import SMALL_N, clopper_pearson, rogan_gladen


class ScriptedJudge:
    """A judge with known error rates: it sees the true verdict of each answer and reports it
    with probability ``sensitivity`` (true passes) / ``specificity`` (true fails)."""

    prompt_version = "scripted-v1"

    def __init__(self, truth: dict[str, bool], sensitivity: float, specificity: float, seed: int):
        self.truth, self.se, self.sp = truth, sensitivity, specificity
        self.rng = np.random.default_rng(seed)

    @property
    def model_id(self) -> str:
        return f"scripted/{self.se}/{self.sp}"

    def judge(self, question, answer, context):
        true = self.truth[answer]
        says = bool(self.rng.random() < self.se) if true else bool(self.rng.random() >= self.sp)
        return Grade(says, "judge", {"model_id": self.model_id,
                                     "prompt_version": self.prompt_version})


def test_hand_computed_calibration():
    human = [True] * 4 + [False] * 6
    judged = [True, True, True, False, True, False, False, False, False, False]
    cal = calibrate_judge(human, judged, judge="j")
    assert (cal.positives, cal.negatives) == (4, 6)
    assert cal.sensitivity == pytest.approx(0.75) and cal.specificity == pytest.approx(5 / 6)
    assert cal.sensitivity_ci == clopper_pearson(3, 4)
    assert cal.specificity_ci == clopper_pearson(5, 6)
    # p_o = 0.8, p_e = 0.4 * 0.4 + 0.6 * 0.6 = 0.52
    assert cal.kappa == pytest.approx((0.8 - 0.52) / 0.48)
    assert rogan_gladen(0.5, 0.9, 0.8) == pytest.approx(0.3 / 0.7)
    assert rogan_gladen(0.05, 0.9, 0.8) == 0.0 and rogan_gladen(0.99, 0.9, 0.8) == 1.0


def test_perfect_judge_corrects_nothing():
    human = [True] * 30 + [False] * 30
    cal = calibrate_judge(human, human)
    assert cal.kappa == 1.0 and cal.sensitivity == cal.specificity == 1.0
    rate = corrected_pass_rate(cal, [True] * 7 + [False] * 13)
    assert rate.corrected == pytest.approx(rate.judged_rate) == pytest.approx(0.35)
    assert rate.ci[0] <= 0.35 <= rate.ci[1]


def test_refuses_a_judge_calibrated_on_too_few_passes_or_fails():
    """Fewer than SMALL_N answers the person passed (or failed) leave the judge's error rate
    on that side unknown: the corrected rate is refused, by corrected_pass_rate and in the
    report, even for a judge that agreed on every one."""
    for passed in (SMALL_N - 1, 40 - SMALL_N + 1):
        human = [True] * passed + [False] * (40 - passed)
        cal = calibrate_judge(human, human)
        assert cal.better_than_chance
        with pytest.raises(WorkbenchError, match=f"fewer than {SMALL_N} on a side"):
            corrected_pass_rate(cal, [True, False])
        report = judge_report(human, human, [True, False])
        assert report.corrected is None and "fewer than" in (report.refusal or "")
    human = [True] * SMALL_N + [False] * SMALL_N
    assert corrected_pass_rate(calibrate_judge(human, human), [True, False]).n == 2


def test_refuses_a_judge_no_better_than_chance():
    rng = np.random.default_rng(1)
    human = list(rng.random(80) < 0.5)
    coin = list(rng.random(80) < 0.5)
    cal = calibrate_judge(human, coin, judge="coin")
    assert not cal.better_than_chance
    with pytest.raises(ValueError, match="not shown to beat chance"):
        corrected_pass_rate(cal, coin)
    with pytest.raises(ValueError, match="passed and failed"):
        calibrate_judge([True, True], [True, False])
    with pytest.raises(ValueError, match="undecided"):
        calibrate_judge([True, None], [True, False])  # type: ignore[list-item]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=2, max_size=60))
def test_kappa_and_rates_are_symmetric_under_relabelling(pairs):
    """Swapping pass and fail on both sides swaps sensitivity and specificity and keeps kappa."""
    human = [h for h, _ in pairs]
    judged = [j for _, j in pairs]
    if all(human) or not any(human):
        return
    a = calibrate_judge(human, judged)
    b = calibrate_judge([not h for h in human], [not j for j in judged])
    assert a.sensitivity == pytest.approx(b.specificity)
    assert a.specificity == pytest.approx(b.sensitivity)
    assert a.kappa == pytest.approx(b.kappa)
    assert -1.0 <= a.kappa <= 1.0


def test_scripted_judge_with_known_error_rates_is_measured():
    rng = np.random.default_rng(7)
    truth = {f"a{i}": bool(rng.random() < 0.5) for i in range(600)}
    judge = ScriptedJudge(truth, sensitivity=0.9, specificity=0.7, seed=3)
    assert isinstance(judge, Judge)
    grades = {a: judge.judge("q", a, None) for a in truth}
    cal = calibrate_judge([truth[a] for a in truth], [grades[a].passed for a in truth],
                          judge=grader_of(next(iter(grades.values()))))
    assert cal.judge == "judge:scripted/0.9/0.7@scripted-v1"
    assert cal.sensitivity_ci[0] <= 0.9 <= cal.sensitivity_ci[1]
    assert cal.specificity_ci[0] <= 0.7 <= cal.specificity_ci[1]


def test_corrected_interval_covers_the_true_rate_where_the_raw_rate_does_not():
    """~200 simulated studies: a judge with sens 0.85 / spec 0.80 calibrated on 200 labelled
    answers, then grading 300 unlabelled ones whose true pass rate is 0.30. The raw judged rate
    is biased (about 0.395) and its exact interval rarely covers 0.30; the corrected one does
    about 95% of the time."""
    rng = np.random.default_rng(2026)
    true_rate, se, sp, reps = 0.30, 0.85, 0.80, 200
    covered = raw_covered = 0
    for _rep in range(reps):
        human = rng.random(200) < 0.4
        judged_cal = np.where(human, rng.random(200) < se, rng.random(200) >= sp)
        cal = calibrate_judge(list(human), list(judged_cal))
        truth = rng.random(300) < true_rate
        judged = np.where(truth, rng.random(300) < se, rng.random(300) >= sp)
        rate = corrected_pass_rate(cal, list(judged))
        covered += rate.ci[0] <= true_rate <= rate.ci[1]
        raw_covered += rate.judged_ci[0] <= true_rate <= rate.judged_ci[1]
    coverage, raw = covered / reps, raw_covered / reps
    print(f"\ncorrected coverage {coverage:.3f}, raw judged coverage {raw:.3f} ({reps} reps)")
    assert 0.88 <= coverage <= 0.99
    assert raw < 0.2


def test_comparison_across_judges_is_refused():
    pinned = {"q1": Grade(True, "judge", {"model_id": "m1", "prompt_version": "v1"}),
              "q2": Grade(False, "must_mention", {}),
              "q3": Grade(False, "judge", {"model_id": "m1", "prompt_version": "v1"})}
    same = {"q1": Grade(True, "judge", {"model_id": "m1", "prompt_version": "v1"}),
            "q2": Grade(True, "must_mention", {}),
            "q3": Grade(None, "undecided", {})}
    cmp = compare_grades(pinned, same)
    assert cmp.n == 2 and cmp.wins == 1
    for other in ({"model_id": "m2", "prompt_version": "v1"},
                  {"model_id": "m1", "prompt_version": "v2"}):
        moved = {**same, "q1": Grade(True, "judge", other)}
        with pytest.raises(ValueError, match="regrade both runs"):
            compare_grades(pinned, moved)
    with pytest.raises(ValueError, match="model_id and prompt_version"):
        grader_of(Grade(True, "judge", {}))


def test_answer_relevance_deterministic_cases():
    q = "How many days of annual leave do staff receive?"
    assert answer_relevance(q, "I don't know.").method == "refusal"
    yes = answer_relevance(q, "Staff receive 25 days of annual leave.")
    assert yes.passed is True and yes.method == "term_overlap"
    off = answer_relevance(q, "Passwords need 14 characters.")
    assert off.passed is None and off.method == "undecided"


@settings(max_examples=40, deadline=None)
@given(st.text(min_size=0, max_size=40))
def test_a_refusal_never_addresses_the_question(extra):
    grade = answer_relevance("What is the expense limit for meals?",
                             f"{extra} I don't know {extra}")
    assert grade.passed is False


def test_judge_report_counts_undecided_and_refuses_or_corrects():
    human = [True] * 20 + [False] * 20
    good = [True] * 18 + [False, None] + [False] * 17 + [True, None, None]
    report = judge_report(human, good, [True, None, False, False], judge="j")
    cal = report.calibration
    assert cal is not None and report.labelled == cal.n == 37
    assert report.undecided == 4 and cal.positives + cal.negatives == cal.n
    assert report.judged_n == 3 and report.refusal is None and report.corrected is not None
    assert report.corrected.ci[0] <= report.corrected.corrected <= report.corrected.ci[1]
    assert "corrected" in report.summary()
    coin = judge_report(human, [True, False] * 20, [True, False])
    assert coin.corrected is None and "not shown to beat chance" in (coin.refusal or "")
    assert "refused" in coin.summary()
    mute = judge_report(human, [None] * 20 + [False] * 20, [None])
    assert mute.calibration is None and mute.labelled == 20 and mute.undecided == 21
    assert "passed and failed" in (mute.refusal or "") and mute.corrected is None


# ----------------------------------------------------------------------------- real model

@pytest.fixture(scope="module")
def local_server():
    """The real local OpenAI-compatible server with the offline SmolLM2: its client."""
    with start_local_server(max_new_tokens=48) as url:
        yield OpenAIChatGenerator(url, "SmolLM2", api_key_env="", max_retries=1, timeout=120,
                                  model_id="SmolLM2-135M-Instruct@server")


@pytest.mark.slow
def test_real_model_judge_calibrated_on_the_handbook_answers(local_server, handbook, capsys):
    """The claim judge (its own prompt, the offline SmolLM2 through the local server; the
    item's evidence as the reference context) on the extractive reader's answers to the
    handbook questions, which the owners' must-mention labels grade: calibrated on half,
    the other half corrected, or refused when the judge is not shown to beat chance."""
    from workbench.chunking import RecursiveChunker, chunk_corpus
    from workbench.generation import JUDGE_PROMPT_VERSION, ExtractiveReader, run_generation_eval
    from workbench.retrieval import BM25Retriever

    docs, golden = handbook
    chunks = chunk_corpus(RecursiveChunker(size=600), docs)
    result = run_generation_eval(ExtractiveReader(), BM25Retriever(chunks), golden, chunks,
                                 documents=docs, k=5, modes=("live",), user_groups=UNRESTRICTED)
    frame = result.frame
    answers = frame[frame.answerable & frame.passed.notna()].reset_index(drop=True)
    items = {i.qid: i for i in golden}
    judge = LLMJudge(local_server, max_tokens=48)
    grades = []
    for qid, answer in zip(answers.qid, answers.answer, strict=True):
        reference = context_from_passages([(f"{e.doc_id}@{e.start}", e.doc_id, e.text)
                                           for e in items[qid].evidence])
        grades.append(judge.judge(items[qid].question, answer, reference))
    name = f"judge:SmolLM2-135M-Instruct@server@{JUDGE_PROMPT_VERSION}"
    assert all(grader_of(g) in (name, name.replace("judge:", "undecided:", 1)) for g in grades)
    assert all(c["error"] is None for g in grades for c in g.details["claims"])
    person = answers.passed.astype(bool).tolist()
    verdicts = [g.passed for g in grades]
    report = judge_report(person[::2], verdicts[::2], verdicts[1::2], judge=name)
    with capsys.disabled():
        print(f"\n{report.summary()}")
    assert report.labelled + report.judged_n + report.undecided == len(answers)
    cal = report.calibration
    if cal is None:  # the decided answers hold no pass (or no fail) by the person
        assert report.corrected is None and "passed and failed" in (report.refusal or "")
        return
    assert cal.positives + cal.negatives == cal.n == report.labelled
    assert cal.sensitivity_ci[0] <= cal.sensitivity <= cal.sensitivity_ci[1]
    assert cal.specificity_ci[0] <= cal.specificity <= cal.specificity_ci[1]
    if cal.youden_low <= 0:  # Youden's J interval reaches 0: no corrected rate
        assert report.corrected is None and "not shown to beat chance" in (report.refusal or "")
    elif min(cal.positives, cal.negatives) < SMALL_N:  # too few on a side to know its errors
        assert report.corrected is None and "fewer than" in (report.refusal or "")
    else:
        rate = report.corrected
        assert rate is not None and rate.n == report.judged_n
        assert 0 <= rate.ci[0] <= rate.corrected <= rate.ci[1] <= 1


@pytest.mark.slow
def test_real_model_judges_through_the_local_server(local_server):
    client = local_server
    judge = LLMJudge(client, max_tokens=32)
    ctx = context_from_passages([("leave#0", "leave", "Staff receive 25 days of annual "
                                  "leave.")])
    grades = [judge.judge("How many days of leave?", a, ctx)
              for a in ("Staff receive 25 days of annual leave.", "Staff receive 3 days.")]
    for g in grades:
        assert g.method in ("judge", "undecided")
        assert grader_of(g) == f"{g.method}:SmolLM2-135M-Instruct@server@" \
                               "faithfulness-claims-v1"
        assert all(c["error"] is None for c in g.details["claims"])
    rel = answer_relevance("How many days of leave?", "The office opens at nine.",
                           judge=RelevanceJudge(client))
    assert rel.method in ("judge", "undecided") and rel.details["model_id"]
    assert rel.details["error"] is None and rel.details["reply"]


@given(st.lists(st.one_of(st.text(min_size=1), st.floats(), st.integers(2, 9),
                          st.integers(-9, -1), st.lists(st.booleans(), max_size=2)),
                min_size=1, max_size=3))
def test_a_verdict_that_is_not_true_or_false_is_refused_never_read_by_its_truth(bad):
    """"no", 0.0, 2 or [] as a verdict is bad input: calibrate_judge and judge_report say so
    (judge_report does not turn it into a refusal that reads like a finding)."""
    human = [True, False, True, False]
    for call in (lambda: calibrate_judge([*human, *bad], [True] * (4 + len(bad))),
                 lambda: judge_report(human, [True, False, *bad[:2], True, False][:4], []),
                 lambda: judge_report(human, [True, False, True, False], bad)):
        with pytest.raises(WorkbenchError, match="verdicts are True"):
            call()
