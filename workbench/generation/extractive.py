"""ExtractiveReader: the deterministic, instant baseline generator."""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from typing import Any

from workbench.generation.context import AssembledContext
from workbench.generation.grading import fold_plural
from workbench.generation.prompt import Answer, ChatReply, make_answer

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")


class ExtractiveReader:
    """Deterministic baseline: the context sentence (or table row) with the highest sum of
    idf weights of question terms it contains, cited with its passage label. Refuses ("I
    don't know") when no sentence shares a term with the question. Ties go to the earlier
    passage (rank is informative); ``position_blind=True`` breaks them by the sentence text
    instead, so passage order cannot matter: the control of a position experiment."""

    prompt_version = "extractive-v1"

    def __init__(self, sentences: int = 1, min_chars: int = 12, position_blind: bool = False):
        self.sentences = sentences
        self.min_chars = min_chars
        self.position_blind = position_blind
        self.model_id = f"extractive-reader/{sentences}" + ("/blind" if position_blind else "")
        self.calls = 0

    def __repr__(self) -> str:
        return f"ExtractiveReader(sentences={self.sentences})"

    @property
    def cache_params(self) -> dict[str, Any]:
        return {"sentences": self.sentences, "min_chars": self.min_chars,
                "position_blind": self.position_blind}

    def _units(self, context: AssembledContext) -> list[tuple[str, str]]:
        units = []
        for p in context.passages:
            for line in p.text.splitlines():
                line = line.strip()
                if not line or line.startswith("#") or set(line) <= set("|-: "):
                    continue
                if line.startswith("|"):
                    units.append((p.label, line))
                    continue
                for sent in _SENTENCE_END.split(line.lstrip("-*> ").strip()):
                    sent = sent.strip()
                    if len(sent) >= self.min_chars:
                        units.append((p.label, sent))
        return units

    def generate(self, question: str, context: AssembledContext) -> Answer:
        from workbench.retrieval.bm25 import tokenize

        def terms_of(text: str) -> set[str]:
            return {fold_plural(t) for t in tokenize(text)}

        started = time.perf_counter()
        self.calls += 1
        units = self._units(context)
        terms = [terms_of(text) for _, text in units]
        df = Counter(t for ts in terms for t in ts)
        q_terms = terms_of(question)
        n = max(1, len(units))
        scores = [sum(math.log(1 + n / df[t]) for t in q_terms & ts) for ts in terms]
        if self.position_blind:
            ranked = sorted(range(len(units)), key=lambda i: (-scores[i], units[i][1], i))
        else:
            ranked = sorted(range(len(units)), key=lambda i: (-scores[i], i))
        picked = [i for i in ranked[:self.sentences] if scores[i] > 0]
        if not picked:
            text = "I don't know: the passages do not cover this question."
        else:
            text = " ".join(f"{units[i][1]} [{units[i][0]}]" for i in sorted(picked))
        reply = ChatReply(text, {"units": len(units)}, None, time.perf_counter() - started)
        return make_answer(reply, context, self.model_id, self.prompt_version)
