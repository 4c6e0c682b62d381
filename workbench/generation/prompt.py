"""The prompt and the generator protocols: ``PROMPT_VERSION``, :func:`build_messages`,
:class:`ChatReply`, :class:`Answer` (with :func:`make_answer`), :class:`Generator` (and
:class:`BatchGenerator`, one that answers many requests at once), :class:`ChatModel` (a chat
endpoint, what a judge asks), and :func:`generate_all`, which runs any generator over many
questions without letting one failure abort the run (:func:`safe_generate`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

from tqdm.auto import tqdm

from workbench.generation.context import AssembledContext, resolve_citations

PROMPT_VERSION = "rag-cite-v1"
SYSTEM_PROMPT = (
    "You answer questions using only the passages given. Copy the exact fact from the "
    "passage and cite its label, like [P1]. If the passages do not contain the answer, "
    "reply: I don't know.")


def build_messages(question: str, context: AssembledContext) -> list[dict[str, str]]:
    """The chat messages of prompt ``PROMPT_VERSION``: passages P1..Pn, then the question."""
    passages = context.render() or "(no passages)"
    user = f"{passages}\n\nQuestion: {question.strip()}\nAnswer:"
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


@dataclass(frozen=True)
class ChatReply:
    """One raw chat completion (or the error that replaced it)."""

    text: str = ""
    usage: Mapping[str, Any] = field(default_factory=dict, hash=False)
    error: str | None = None
    latency_s: float = 0.0


@dataclass(frozen=True)
class Answer:
    """A generated answer. ``citations`` are chunk ids mapped from the ``[Pn]`` labels the
    text cites (``cited_labels``); labels naming no passage are in ``unknown_citations``."""

    text: str
    citations: tuple[str, ...] = ()
    model_id: str = ""
    prompt_version: str = PROMPT_VERSION
    _: KW_ONLY
    usage: Mapping[str, Any] = field(default_factory=dict, hash=False)
    error: str | None = None
    cited_labels: tuple[str, ...] = ()
    unknown_citations: tuple[str, ...] = ()
    latency_s: float = 0.0
    cached: bool = False

    def to_json(self) -> dict[str, Any]:
        row = asdict(self)
        row["usage"] = dict(self.usage)
        return row

    @classmethod
    def from_json(cls, row: Mapping[str, Any]) -> Answer:
        known = {f: row[f] for f in cls.__dataclass_fields__ if f in row}
        for name in ("citations", "cited_labels", "unknown_citations"):
            known[name] = tuple(known.get(name) or ())
        return cls(**known)


def make_answer(reply: ChatReply, context: AssembledContext, model_id: str,
                prompt_version: str = PROMPT_VERSION) -> Answer:
    """Wrap a chat reply as an Answer, mapping its citations through the context."""
    check = resolve_citations(reply.text, context)
    return Answer(reply.text.strip(), check.chunk_ids, model_id, prompt_version,
                  usage=dict(reply.usage), error=reply.error, cited_labels=check.labels,
                  unknown_citations=check.unknown, latency_s=reply.latency_s)


@runtime_checkable
class Generator(Protocol):
    """``generate(question, context) -> Answer``; ``model_id`` and ``prompt_version``
    identify what produced it (the answer cache keys on them)."""

    @property
    def model_id(self) -> str: ...

    @property
    def prompt_version(self) -> str: ...

    def generate(self, question: str, context: AssembledContext) -> Answer: ...


@runtime_checkable
class BatchGenerator(Generator, Protocol):
    """A generator that answers many ``(question, context)`` requests at once (batched or in
    parallel), in order; :func:`generate_all` uses it when a generator has it."""

    def generate_many(self, requests: Sequence[tuple[str, AssembledContext]],
                      progress: bool = False) -> list[Answer]: ...


@runtime_checkable
class ChatModel(Protocol):
    """A chat endpoint: ``chat(messages, max_tokens) -> ChatReply`` (an error is recorded in
    the reply, never raised). :class:`~workbench.generation.OpenAIChatGenerator` and
    :class:`~workbench.generation.LocalGenerator` are chat models; a judge asks one."""

    @property
    def model_id(self) -> str: ...

    def chat(self, messages: Sequence[Mapping[str, str]],
             max_tokens: int | None = None) -> ChatReply: ...


def generate_all(generator: Generator, requests: Sequence[tuple[str, AssembledContext]],
                 progress: bool = False, desc: str = "generate") -> list[Answer]:
    """Answers for ``(question, context)`` pairs, in order, through ``generate_many`` when
    the generator has it. An exception on one question becomes that answer's error."""
    if isinstance(generator, BatchGenerator):
        return list(generator.generate_many(requests, progress=progress))
    out = []
    for question, context in tqdm(requests, desc=desc, disable=not progress):
        out.append(safe_generate(generator, question, context))
    return out


def safe_generate(generator: Generator, question: str, context: AssembledContext) -> Answer:
    """``generator.generate(question, context)``; an exception becomes the answer's ``error``
    (so one failing question never aborts a run)."""
    try:
        return generator.generate(question, context)
    except Exception as exc:
        return Answer("", model_id=str(getattr(generator, "model_id", "?")),
                      prompt_version=str(getattr(generator, "prompt_version", PROMPT_VERSION)),
                      error=f"{type(exc).__name__}: {exc}")
