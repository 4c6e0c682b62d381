"""Query rewriting for conversations, measured apart from retrieval.

A conversational golden item carries ``history`` (the previous turns) and its ``question``
(the last user turn, e.g. "and for probation staff?"), and optionally a ``gold_rewrite``.
:func:`evaluate_rewrites` scores the same retriever on the same items three ways: the raw last
turn, the system's rewrite (any ``rewrite(history, question) -> query`` callable, e.g.
:func:`last_user_turn_rewrite` or a :class:`ChatRewriter`) and the gold rewrite where the item
has one, with the paired test between them: raw vs system tells what rewriting buys, system
vs gold what a better rewrite would still buy (a rewriting bug), and gold's own score is the
retrieval ceiling for these items (a retrieval bug). The rewrites are returned per qid: put
them in :attr:`workbench.diagnose.Trace.rewritten_query` when the answers are traced.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

import pandas as pd

from workbench.corpus import Chunk
from workbench.evaluation import Evaluation, evaluate
from workbench.generation.prompt import ChatModel
from workbench.golden import GoldenItem, GoldenSet
from workbench.io import WorkbenchError
from workbench.retrieval import Retriever

__all__ = ["REWRITE_PROMPT_VERSION", "ChatRewriter", "RewriteEvaluation", "Rewriter",
           "evaluate_rewrites", "last_user_turn_rewrite"]

#: ``rewrite(history, question) -> query``; history is ``[{role, content}]``, oldest first.
Rewriter = Callable[[Sequence[Mapping[str, str]], str], str]
REWRITE_PROMPT_VERSION = "rewrite-standalone-v1"
RAW, SYSTEM, GOLD = "raw last turn", "system rewrite", "gold rewrite"


def last_user_turn_rewrite(history: Sequence[Mapping[str, str]], question: str) -> str:
    """The simplest rewrite: the previous user turn followed by the question."""
    users = [t["content"] for t in history if t["role"] == "user"]
    return f"{users[-1]} {question}" if users else question


REWRITE_PROMPT = """Rewrite the last question of this conversation as one self-contained \
search query. Reply with the query only.

{turns}
user: {question}

Query:"""


class ChatRewriter:
    """A rewriter backed by a chat model; an error or an empty reply falls back to the raw
    question (recorded in ``failures``). ``model_id`` and ``prompt_version`` say what
    rewrote."""

    def __init__(self, client: ChatModel, prompt_version: str = REWRITE_PROMPT_VERSION,
                 max_tokens: int = 40):
        self.client, self.prompt_version, self.max_tokens = client, prompt_version, max_tokens
        self.failures: list[tuple[str, str]] = []

    @property
    def model_id(self) -> str:
        return self.client.model_id

    def __call__(self, history: Sequence[Mapping[str, str]], question: str) -> str:
        turns = "\n".join(f"{t['role']}: {t['content']}" for t in history)
        reply = self.client.chat([{"role": "user", "content": REWRITE_PROMPT.format(
            turns=turns, question=question)}], max_tokens=self.max_tokens)
        text = reply.text.strip().splitlines()[0].strip() if reply.text.strip() else ""
        if reply.error or not text:
            self.failures.append((question, reply.error or "empty reply"))
            return question
        return text


@dataclass(frozen=True)
class RewriteEvaluation:
    """``evaluation`` holds the configurations ``raw last turn`` and ``system rewrite`` on
    every item; ``gold`` the three configurations on the items with a gold rewrite (None when
    none has one). ``rewrites`` is the system's query per qid."""

    evaluation: Evaluation
    gold: Evaluation | None
    rewrites: Mapping[str, str]

    def compare(self, alpha: float = 0.05) -> pd.DataFrame:
        """Paired comparisons: system vs raw on every item; on the gold items, system and
        raw vs gold (the baseline there), so a negative delta is what the rewrite loses."""
        rows = [self.evaluation.compare(RAW, alpha=alpha).assign(items="all")]
        if self.gold is not None:
            rows.append(self.gold.compare(GOLD, alpha=alpha).assign(items="with gold rewrite"))
        return pd.concat(rows)


def evaluate_rewrites(retriever: Retriever, golden: GoldenSet | Iterable[GoldenItem],
                      chunks: Sequence[Chunk] | None, rewrite: Rewriter, *, k: int = 5,
                      metrics: Sequence[str] | None = None) -> RewriteEvaluation:
    """Score ``retriever`` on the conversational items of ``golden`` (those with a history;
    ValueError when there are none) with the raw last turn, ``rewrite``'s query and the gold
    rewrite (see the module docstring). ``k`` and ``metrics`` as in
    :func:`workbench.evaluate`."""
    items = [i for i in golden if i.history]
    if not items:
        raise WorkbenchError("no conversational items (with a history) to score rewrites on")
    rewrites = {i.qid: rewrite(list(i.history), i.question) for i in items}
    empty = [q for q, text in rewrites.items() if not isinstance(text, str) or not text.strip()]
    if empty:
        raise WorkbenchError(f"the rewriter returned no query for {empty[:5]}")

    def run(variant: list[GoldenItem], name: str) -> Evaluation:
        return evaluate(retriever, variant, chunks, metrics=metrics, k=k, system=name)

    def with_system(subset: list[GoldenItem]) -> Evaluation:
        return (run(subset, RAW)
                + run([replace(i, question=rewrites[i.qid]) for i in subset], SYSTEM))

    gold_items = [i for i in items if i.gold_rewrite]
    gold = None
    if gold_items:
        gold = (run([replace(i, question=str(i.gold_rewrite)) for i in gold_items], GOLD)
                + with_system(gold_items))
    return RewriteEvaluation(with_system(items), gold, rewrites)
