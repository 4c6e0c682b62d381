"""Model-written chunk context (contextual retrieval): one generator call per chunk at index
time writes a sentence that places the chunk in its document (:func:`contextualize`).

The sentence goes in front of the chunk's ``embed_text`` (what is indexed) and in
``metadata["context"]``; ``text`` (what the generator reads at answer time) stays the clean
slice. The calls go through :class:`~workbench.generation.CachedGenerator`, whose key holds
the model, the prompt, the chunk's text and the document's text, so an unchanged chunk never
pays twice and an edited one pays once. :class:`ContextCost` reports what it cost: fresh
calls, answers reused from the cache, tokens (the generator's reported usage, else
:func:`~workbench.generation.context.approx_tokens` of prompt and reply) and seconds. The
static contextual header (``header=true``) costs no call: compare with
:meth:`ContextCost.static_header`.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from workbench.corpus import Chunk, Document
from workbench.generation.answer_cache import CachedGenerator, GenerationCache
from workbench.generation.context import AssembledContext, Passage, approx_tokens
from workbench.generation.prompt import Answer, Generator
from workbench.io import WorkbenchError

__all__ = ["CONTEXT_QUESTION", "ContextCost", "contextualize"]

#: the question each chunk is sent with; the document is the one passage of the context
CONTEXT_QUESTION = (
    "Here is a chunk of the document {title!r}:\n\n{chunk}\n\n"
    "Write one short sentence that situates this chunk within the whole document, to "
    "improve search retrieval of the chunk. Answer only with that sentence."
)
_LABELS = re.compile(r"\s*\[P\d+\]")


@dataclass(frozen=True)
class ContextCost:
    """What writing the contexts cost: ``calls`` made to the generator, ``cached`` answers
    reused, ``tokens`` (prompt + reply), ``seconds`` (wall clock), ``errors`` (chunks left
    without a context because the generator returned an error)."""

    chunks: int
    calls: int
    cached: int
    tokens: int
    _: KW_ONLY
    seconds: float
    errors: int = 0

    @classmethod
    def static_header(cls, chunks: int) -> ContextCost:
        """The cost of the static header for the same chunks: no call, no token."""
        return cls(chunks, 0, 0, 0, seconds=0.0)

    def as_row(self, name: str) -> dict[str, Any]:
        return {"context": name, **dataclasses.asdict(self)}


def _window(doc: Document, chunk: Chunk, max_chars: int) -> str:
    """The document, or ``max_chars`` of it centred on the chunk when it is longer."""
    if len(doc.text) <= max_chars:
        return doc.text
    middle = (chunk.start + chunk.end) // 2
    start = max(0, min(middle - max_chars // 2, len(doc.text) - max_chars))
    return doc.text[start : start + max_chars]


def _tokens(answer: Answer, question: str, context: AssembledContext) -> int:
    usage = answer.usage or {}
    total = usage.get("total_tokens")
    if isinstance(total, int):
        return total
    parts = [usage.get("prompt_tokens"), usage.get("completion_tokens")]
    if all(isinstance(p, int) for p in parts):
        return int(sum(p for p in parts if isinstance(p, int)))
    prompt = question + "".join(p.render() for p in context.passages)
    return approx_tokens(prompt) + approx_tokens(answer.text)


def contextualize(chunks: Sequence[Chunk], documents: Mapping[str, Document],
                  generator: Generator, *, cache: GenerationCache | str | Path | None = None,
                  max_document_chars: int = 12_000) -> tuple[list[Chunk], ContextCost]:
    """Chunks with a model-written context sentence in front of ``embed_text`` (module
    docstring), and the cost. ``cache`` is the generation cache (default: the workbench's
    cache folder). A chunk whose document is missing raises ValueError."""
    cached = generator if isinstance(generator, CachedGenerator) else CachedGenerator(
        generator, cache)
    requests = []
    for c in chunks:
        doc = documents.get(c.doc_id)
        if doc is None:
            raise WorkbenchError(f"chunk {c.id!r}: its document {c.doc_id!r} is not among the "
                             "documents; pass the corpus the chunks were cut from")
        passage = Passage("P1", f"{doc.id}#document", doc.id, _window(doc, c, max_document_chars),
                          title=doc.title)
        question = CONTEXT_QUESTION.format(title=doc.title or doc.id, chunk=c.text)
        requests.append((question, AssembledContext(passages=(passage,))))
    calls_before = cached.calls
    started = time.perf_counter()
    answers = cached.generate_many(requests)
    seconds = time.perf_counter() - started
    out: list[Chunk] = []
    tokens = errors = 0
    for c, answer, (q, ctx) in zip(chunks, answers, requests, strict=True):
        sentence = _LABELS.sub("", answer.text).strip().split("\n")[0].strip()
        if not answer.cached:
            tokens += _tokens(answer, q, ctx)
        if answer.error or not sentence:
            errors += 1
            out.append(c)
            continue
        meta = MappingProxyType({**c.metadata, "context": sentence})
        out.append(dataclasses.replace(c, embed_text=f"{sentence}\n\n{c.embed_text}",
                                       metadata=meta))
    calls = cached.calls - calls_before
    return out, ContextCost(len(chunks), calls, len(chunks) - calls, tokens, seconds=seconds,
                            errors=errors)
