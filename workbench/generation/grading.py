"""Grading answers: deterministic checks first, a judge only where they cannot decide.

* :func:`must_mention` passes when every required string occurs in the answer after
  :func:`answer_tokens` (case, Unicode NFKC, dashes, thousands separators, number words
  "thirty" -> 30, "30-day" ~ "30 days", "per cent" -> %), matched on token boundaries so
  ``EXP-9`` does not match ``EXP-90``.
* :func:`is_refusal` recognises "I don't know"-style answers in English, Vietnamese and
  Chinese; an unanswerable question is passed by a refusal.
* :class:`LLMJudge` checks claim-level faithfulness against the context (each claim
  supported / unsupported / contradicted) with a pinned model and a recorded prompt version.

A :class:`Grade` records how it was decided: ``method`` is ``must_mention``, ``refusal``,
``judge`` or ``undecided`` (``passed`` is then None).
"""

from __future__ import annotations

import json
import re
import string
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from workbench.generation.context import AssembledContext, citation_marks
from workbench.generation.prompt import Answer, ChatModel
from workbench.golden import GoldenItem
from workbench.text import CJK, HANGUL, WORD

__all__ = [
    "JUDGE_PROMPT_VERSION",
    "METHODS",
    "ChatJudge",
    "Grade",
    "Judge",
    "LLMJudge",
    "answer_tokens",
    "best_subspan_em",
    "fold_plural",
    "grade_answer",
    "is_refusal",
    "missing_mentions",
    "must_mention",
    "split_claims",
]

METHODS = ("must_mention", "refusal", "judge", "undecided")
JUDGE_PROMPT_VERSION = "faithfulness-claims-v1"


@dataclass(frozen=True)
class Grade:
    """``passed`` is True/False, or None when nothing could decide (``undecided``)."""

    passed: bool | None
    method: str
    details: Mapping[str, Any] = field(default_factory=dict, hash=False)


# ----------------------------------------------------------------------------- normalise

_DASHES = dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d"), "-")
_QUOTES = dict.fromkeys(map(ord, "\u2018\u2019\u201b\u2032\uff07"), "'")
_UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
          "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
          "eighteen", "nineteen"]
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
         "eighty": 80, "ninety": 90}
_NUMBER_WORD = re.compile(
    r"\b(?:(" + "|".join(_TENS) + r")(?:[\s-](" + "|".join(_UNITS[1:10]) + r"))?|("
    + "|".join(_UNITS) + r"))\b")
_THOUSANDS = re.compile(r"(?<=\d)[,.\u00a0\u202f ](?=\d{3}(?!\d))")
_TOKEN = re.compile(rf"[{CJK}]|\d+(?:\.\d+)?|{WORD}+|[{HANGUL}]+|[$%€£¥₫]", re.UNICODE)


def _number_word(m: re.Match[str]) -> str:
    if m.group(3):
        return str(_UNITS.index(m.group(3)))
    value = _TENS[m.group(1)]
    if m.group(2):
        value += _UNITS.index(m.group(2))
    return str(value)


def fold_plural(word: str) -> str:
    """Light plural folding (days -> day), applied to both sides alike."""
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss") and word.isascii():
        return word[:-1]
    return word


def answer_tokens(text: str) -> list[str]:
    """Tokens of ``text`` after case, Unicode, dash, thousands-separator, number-word and
    plural normalisation. Han/kana characters are one token each."""
    text = unicodedata.normalize("NFKC", text).translate(_DASHES).translate(_QUOTES).casefold()
    text = _NUMBER_WORD.sub(_number_word, text)
    text = re.sub(r"\bper\s?cent\b", "%", text)
    while True:
        stripped = _THOUSANDS.sub("", text)
        if stripped == text:
            break
        text = stripped
    return [fold_plural(t) for t in _TOKEN.findall(text)]


def _contains(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    if not needle:
        return True
    n = len(needle)
    first = needle[0]
    return any(haystack[i] == first and list(haystack[i:i + n]) == list(needle)
               for i in range(len(haystack) - n + 1))


def missing_mentions(answer: str, strings: Iterable[str]) -> list[str]:
    """The required strings that the answer does not mention (after normalisation)."""
    tokens = answer_tokens(answer)
    return [s for s in strings if not _contains(tokens, answer_tokens(s))]


def must_mention(answer: str, strings: Iterable[str]) -> bool:
    """True when every string in ``strings`` occurs in ``answer`` (see module doc)."""
    return not missing_mentions(answer, strings)


# ----------------------------------------------------------------------------- refusals

REFUSAL_PHRASES = (
    # English
    "i don't know", "i do not know", "i dont know", "not in the document", "not in the passage",
    "not in the provided", "not in the context", "not mentioned", "no information",
    "not enough information", "insufficient information", "cannot find", "can't find",
    "could not find", "couldn't find", "unable to find", "does not say", "doesn't say",
    "do not say", "don't say", "does not contain", "doesn't contain", "do not contain",
    "don't contain", "does not mention", "doesn't mention", "do not mention", "don't mention",
    "not specified", "not covered", "no mention", "cannot answer", "can't answer",
    "unable to answer", "not able to answer", "there is no answer", "no answer in",
    "not provided in", "isn't stated", "is not stated", "not stated in",
    # Vietnamese
    "không có thông tin", "không biết", "không tìm thấy", "không được đề cập",
    "không đề cập", "tài liệu không nêu", "không thể trả lời", "không có dữ liệu",
    "không được nêu",
    # Chinese
    "没有提到", "未提及", "没有提及", "不知道", "没有相关信息", "无法回答", "没有信息",
    "文档中没有", "未找到", "没有找到", "无法找到", "没有说明", "未说明", "资料中没有",
)
_REFUSAL_TOKENS = [answer_tokens(p) for p in REFUSAL_PHRASES]


def is_refusal(text: str) -> bool:
    """True when the answer declines (English, Vietnamese or Chinese phrasing)."""
    tokens = answer_tokens(text)
    if not tokens:
        return True
    return any(_contains(tokens, phrase) for phrase in _REFUSAL_TOKENS)


# ----------------------------------------------------------------------------- NQ metric

_PUNCT = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def _squad_normalize(text: str) -> str:
    text = _ARTICLES.sub(" ", text.lower().translate(_PUNCT))
    return " ".join(text.split())


def best_subspan_em(prediction: str, answers: Iterable[str]) -> bool:
    """Lost-in-the-middle's metric: some normalised gold answer is a substring of the
    normalised prediction (SQuAD normalisation: lower case, no punctuation or articles)."""
    pred = _squad_normalize(prediction)
    return any(gold and gold in pred for gold in map(_squad_normalize, answers))


# ----------------------------------------------------------------------------- judges

@runtime_checkable
class Judge(Protocol):
    """Decides what deterministic grading cannot: ``judge(question, answer, context)`` grades
    an answer against the context it was given; ``model_id`` and ``prompt_version`` say what
    judged (a grade records them)."""

    @property
    def model_id(self) -> str: ...

    @property
    def prompt_version(self) -> str: ...

    def judge(self, question: str, answer: str, context: AssembledContext | None) -> Grade: ...


def split_claims(answer: str) -> list[str]:
    """One claim per sentence (citation markers removed:
    :func:`~workbench.generation.context.citation_marks`). Crude on purpose: a judge prompt
    can split atomic claims better, at the price of a second model call."""
    pieces, pos = [], 0
    for mark in citation_marks(answer):
        pieces.append(answer[pos:mark.start].rstrip(" \t"))
        pos = mark.end
    text = "".join(pieces) + answer[pos:]
    parts = re.split(r"(?<=[.!?。！？])\s+|\n+|(?<=[。！？])", text)
    return [p.strip() for p in parts if len(p.strip()) > 1]


JUDGE_PROMPT = """You check whether a claim is supported by the context of a RAG system.
Use only the CONTEXT, not your own knowledge.

CONTEXT:
{context}

CLAIM: {claim}

Reply with JSON only: {{"verdict": "supported" | "unsupported" | "contradicted", \
"evidence": "<short quote from the context, or empty>"}}"""

_VERDICTS = ("contradicted", "unsupported", "supported")


def _parse_verdict(reply: str) -> str | None:
    match = re.search(r"\{.*?\}", reply, re.DOTALL)
    if match:
        try:
            value = str(json.loads(match.group()).get("verdict", "")).strip().lower()
            if value in _VERDICTS:
                return value
        except (json.JSONDecodeError, AttributeError):
            pass
    low = reply.lower()
    found = [v for v in _VERDICTS if re.search(rf"\b{v}\b", low)]
    return found[0] if len(found) == 1 else None


class ChatJudge:
    """A judge that asks a chat model (:class:`~workbench.generation.prompt.ChatModel`): the
    client, the prompt version and the reply budget every grade it makes records."""

    def __init__(self, client: ChatModel, prompt_version: str, max_tokens: int):
        self.client = client
        self.prompt_version = prompt_version
        self.max_tokens = max_tokens

    @property
    def model_id(self) -> str:
        return self.client.model_id


class LLMJudge(ChatJudge):
    """Claim-level faithfulness with a chat endpoint.

    ``client`` is a :class:`~workbench.generation.prompt.ChatModel` (an
    :class:`~workbench.generation.OpenAIChatGenerator` pinned to one model, or a
    :class:`~workbench.generation.LocalGenerator`). ``passed`` is True when every claim is
    supported, False when any is unsupported or contradicted, None when a reply could not
    be parsed and nothing failed. Details keep each claim's verdict, the model id and the
    prompt version.
    """

    def __init__(self, client: ChatModel, prompt_version: str = JUDGE_PROMPT_VERSION,
                 max_tokens: int = 96):
        super().__init__(client, prompt_version, max_tokens)

    def judge(self, question: str, answer: str, context: AssembledContext | None) -> Grade:
        rendered = context.render() if context is not None else ""
        verdicts: list[dict[str, Any]] = []
        for claim in split_claims(answer):
            prompt = JUDGE_PROMPT.format(context=rendered, claim=claim)
            reply = self.client.chat([{"role": "user", "content": prompt}],
                                     max_tokens=self.max_tokens)
            verdict = None if reply.error else _parse_verdict(reply.text)
            verdicts.append({"claim": claim, "verdict": verdict, "error": reply.error})
        labels = [v["verdict"] for v in verdicts]
        supported = sum(v == "supported" for v in labels)
        failed = any(v in ("unsupported", "contradicted") for v in labels)
        passed: bool | None
        if not verdicts:
            passed = None
        elif failed:
            passed = False
        elif None in labels:
            passed = None
        else:
            passed = True
        details = {"claims": verdicts, "faithfulness": supported / len(verdicts) if verdicts
                   else None, "model_id": self.model_id, "prompt_version": self.prompt_version,
                   "question": question}
        return Grade(passed, "judge" if passed is not None else "undecided", details)


# ----------------------------------------------------------------------------- grade

def grade_answer(item: GoldenItem, answer: Answer | str, context: AssembledContext | None = None,
                 judge: Judge | None = None) -> Grade:
    """Grade one answer for a golden item: refusal for unanswerable items, must-mention
    when the item lists required strings, else the judge (when given), else undecided.
    ``answer`` is an Answer (its ``error`` makes the grade undecided) or a string."""
    text = answer if isinstance(answer, str) else answer.text
    if not isinstance(answer, str) and answer.error:
        return Grade(None, "undecided", {"error": answer.error})
    if not item.answerable:
        return Grade(is_refusal(text), "refusal", {"expected": "refusal"})
    required = tuple(item.answer_must_mention)
    if required:
        missing = missing_mentions(text, required)
        return Grade(not missing, "must_mention", {"missing": missing, "required": list(required)})
    if judge is not None:
        return judge.judge(item.question, text, context)
    return Grade(None, "undecided", {"reason": "no answer_must_mention and no judge"})
