"""Deterministic grading (normalisation, refusals) and the claim-level LLM judge."""

from __future__ import annotations

import json
import unicodedata

import pytest

from workbench.generation import Answer, ChatReply
from workbench.generation.context import context_from_passages
from workbench.generation.grading import (
    Grade,
    LLMJudge,
    answer_tokens,
    best_subspan_em,
    grade_answer,
    is_refusal,
    missing_mentions,
    must_mention,
    split_claims,
)
from workbench.golden import GoldenItem


@pytest.mark.parametrize("answer, required", [
    ("You have 30 days to return it.", "30 days"),
    ("There is a 30-day window.", "30 days"),
    ("There is a 30‑day window.", "30 days"),  # non-breaking hyphen
    ("You have thirty days.", "30 days"),
    ("within Thirty-One days", "31 days"),
    ("You have 30 DAYS.", "30 days"),
    ("Purchases of $1000 or more", "$1,000"),
    ("Purchases of $1,000 or more", "$1000"),
    ("up to 250000 requests", "250,000"),
    ("phụ cấp 300,000 đồng", "300.000 đồng"),
    ("Error ＥＲＲ－４０３１ means", "ERR-4031"),  # full-width (NFKC)
    ("Passwords must be at least 14 characters long.", "14 characters"),
    ("a 15 per cent restocking fee", "15%"),
    ("valid for one hour", "1 hour"),
    ("mileage is $0.67 per mile", "$0.67"),
    ("退款在10天内完成", "10天"),
    ("Sign it with form exp-9 please", "EXP-9"),
    ("the   finance\n director approves", "finance director"),
    ("header Retry-After tells you", "Retry-After"),
])
def test_must_mention_normalises(answer, required):
    assert must_mention(answer, [required]), (answer_tokens(answer), answer_tokens(required))


@pytest.mark.parametrize("answer, required", [
    ("Use form EXP-90", "EXP-9"),
    ("It costs $5000", "$500"),
    ("rate is 0.67", "67"),
    ("You have 3 days", "30 days"),
    ("nothing relevant", "14 characters"),
    ("45 days", "30 days"),
])
def test_must_mention_rejects_near_misses(answer, required):
    assert not must_mention(answer, [required])


def test_unicode_nfc_nfd_equivalent():
    composed = unicodedata.normalize("NFC", "nghỉ phép 14 ngày")
    decomposed = unicodedata.normalize("NFD", "14 ngày")
    assert composed != unicodedata.normalize("NFD", composed)
    assert must_mention(composed, [decomposed])


def test_missing_mentions_lists_what_is_missing():
    assert missing_mentions("Send ERR-4290 with Retry-After", ["ERR-4290", "Retry-After",
                                                               "1,200"]) == ["1,200"]
    assert must_mention("anything", [])


@pytest.mark.parametrize("text", [
    "I don't know.", "I do not know based on the passages.", "I don’t know",
    "The documents do not contain this information.", "This is not mentioned in the passages.",
    "The passages don't say.", "Sorry, I cannot find that in the provided documents.",
    "Tài liệu không có thông tin về việc này.", "Tôi không biết.",
    "文档中没有提到这一点。", "我不知道。", "资料中没有相关信息", "",
])
def test_refusal_detected(text):
    assert is_refusal(text)


@pytest.mark.parametrize("text", [
    "The refund window is 30 days [P1].", "Passwords need 14 characters.",
    "Hoàn tiền trong 15 ngày.", "退款在10天内完成。", "Yes, you know the rule: 5 days.",
])
def test_non_refusals(text):
    assert not is_refusal(text)


def item(**kw) -> GoldenItem:
    base = {"qid": "q1", "question": "how long?", "answer_must_mention": ("30 days",)}
    return GoldenItem(**{**base, **kw})


def test_grade_answer_methods():
    assert grade_answer(item(), "It is 30 days [P1]") == Grade(True, "must_mention", {
        "missing": [], "required": ["30 days"]})
    wrong = grade_answer(item(), "It is 45 days")
    assert wrong.passed is False and wrong.details["missing"] == ["30 days"]
    refusal = grade_answer(item(answerable=False, answer_must_mention=()), "I don't know")
    assert refusal.passed is True and refusal.method == "refusal"
    bluff = grade_answer(item(answerable=False, answer_must_mention=()), "Yes, 3 days.")
    assert bluff.passed is False
    errored = grade_answer(item(), Answer("", error="HTTP 500"))
    assert errored.passed is None and errored.method == "undecided"
    open_item = grade_answer(item(answer_must_mention=()), "anything")
    assert open_item.passed is None and open_item.method == "undecided"


class FakeChat:
    """A chat client that answers the judge prompt from a table of claim -> verdict."""

    model_id = "fake-judge-1"

    def __init__(self, verdicts):
        self.verdicts = verdicts
        self.prompts = []

    def chat(self, messages, max_tokens=None):
        prompt = messages[-1]["content"]
        self.prompts.append(prompt)
        claim = prompt.split("CLAIM: ", 1)[1].split("\n", 1)[0]
        verdict = self.verdicts.get(claim, "garbled")
        if verdict == "garbled":
            return ChatReply("I am not sure what you mean")
        if verdict == "error":
            return ChatReply("", error="HTTP 503")
        return ChatReply(f'Sure! {{"verdict": "{verdict}", "evidence": ""}}')


def test_split_claims_drops_citations():
    assert split_claims("You get 15 days [P1]. Unused days carry over [P1, P2]! Done") == [
        "You get 15 days.", "Unused days carry over!", "Done"]
    assert split_claims("退款10天。审批需要经理。") == ["退款10天。", "审批需要经理。"]


def test_llm_judge_claim_level_faithfulness():
    ctx = context_from_passages([("leave#0", "leave", "Staff get 15 days of annual leave.")])
    answer = "You get 15 days [P1]. Unused days are paid out."
    judge = LLMJudge(FakeChat({"You get 15 days.": "supported",
                               "Unused days are paid out.": "unsupported"}))
    grade = judge.judge("how much leave", answer, ctx)
    assert grade.passed is False and grade.method == "judge"
    assert grade.details["faithfulness"] == 0.5
    assert [c["verdict"] for c in grade.details["claims"]] == ["supported", "unsupported"]
    assert grade.details["model_id"] == "fake-judge-1"
    assert grade.details["prompt_version"] == judge.prompt_version
    assert "Staff get 15 days" in judge.client.prompts[0]

    ok = LLMJudge(FakeChat({"You get 15 days.": "supported"})).judge("q", "You get 15 days.", ctx)
    assert ok.passed is True and ok.details["faithfulness"] == 1.0
    unsure = LLMJudge(FakeChat({})).judge("q", "Something.", ctx)
    assert unsure.passed is None and unsure.method == "undecided"
    down = LLMJudge(FakeChat({"Something.": "error"})).judge("q", "Something.", ctx)
    assert down.passed is None and down.details["claims"][0]["error"] == "HTTP 503"
    contradicted = LLMJudge(FakeChat({"Bad.": "contradicted"})).judge("q", "Bad.", ctx)
    assert contradicted.passed is False


def test_grade_answer_falls_back_to_judge():
    ctx = context_from_passages([("a#0", "a", "Boots dry at room temperature.")])
    judge = LLMJudge(FakeChat({"Dry them at room temperature.": "supported"}))
    grade = grade_answer(item(answer_must_mention=()), "Dry them at room temperature [P1].",
                         ctx, judge)
    assert grade.passed is True and grade.method == "judge"
    json.dumps(grade.details)  # details stay serialisable for traces


def test_best_subspan_em():
    assert best_subspan_em("It was Wilhelm Conrad Röntgen, in 1901.", ["Wilhelm Conrad Röntgen"])
    assert best_subspan_em("the answer: The Beatles!", ["Beatles"])
    assert not best_subspan_em("Einstein", ["Wilhelm Conrad Röntgen"])
    assert not best_subspan_em("anything", [""])


@pytest.mark.parametrize("answer, required", [
    ("API的速率限制是每分钟100次", "速率限制"),
    ("2024年的退款政策在上海适用", "退款政策"),
    ("서울에서 API를 호출합니다", "API"),
])
def test_must_mention_finds_han_after_latin_or_digits(answer, required):
    """A Latin or digit word stops where Han (or Hangul) begins."""
    assert must_mention(answer, [required]), answer_tokens(answer)
