"""Synthetic questions: generated from a chunk, made hard with distractors, filtered, kept apart.

* :func:`generate_synthetic`: for each sampled target chunk (:func:`sample_chunks`) a chat
  model (:class:`~workbench.generation.prompt.ChatModel`: an OpenAI-compatible endpoint, the
  local server or :class:`~workbench.generation.LocalGenerator`) quotes one self-contained
  fact, its short answer and an *easy* question. The quote is located in the document
  (:func:`~workbench.corpus.offsets.find_spans`, the one matching rule of quoted evidence,
  inside the chunk), so the item is an evidence span that survives re-chunking. Then the
  *distractors* (:func:`find_distractors`: BM25 and embedding neighbours of the target that
  do not contain the answer) are shown to the model, which writes a *hard* question only the
  target answers in the distractors' vocabulary. Items are :class:`~workbench.golden.GoldenItem`
  with ``source="synthetic"``, ``category="synthetic-easy" | "synthetic-hard"`` (so every
  per-category table, sweep and gate slices them by kind) and in ``extra``: ``kind``,
  ``distractors`` (chunk ids, each with the retriever that found it), ``target_chunk``,
  ``model_id`` and ``prompt_version``. A reply that cannot be used is a :class:`Rejected`
  with the reason (an error, an unreadable reply, a quote not in the chunk, an answer not in
  the quote, a question giving the answer away); it never aborts the run.
* Replies go through the generation cache (:class:`~workbench.generation.GenerationCache`,
  keyed by model, its parameters, prompt version and messages), so a re-run or a resumed
  run costs nothing for what was already generated.
* Filtering: :mod:`~workbench.synthetic.realism`; the overlap figure and slicing by source
  and kind: :mod:`~workbench.synthetic.measures`.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd
from tqdm.auto import tqdm

from workbench.corpus import Chunk, Document
from workbench.corpus.offsets import LocateError, find_spans
from workbench.corpus.reader import Reader, reaches_readers_of, require_reader
from workbench.generation.answer_cache import GenerationCache
from workbench.generation.grading import answer_tokens, must_mention
from workbench.generation.prompt import Answer, ChatModel, ChatReply
from workbench.golden import Evidence, GoldenItem
from workbench.io import WorkbenchError
from workbench.retrieval import Retriever
from workbench.retrieval.bm25 import tokenize

__all__ = ["SYNTHETIC_PROMPT_VERSION", "CopyingQuestionWriter", "Rejected", "SyntheticRun",
           "find_distractors", "generate_synthetic", "sample_chunks"]

SYNTHETIC_PROMPT_VERSION = "synthetic-fact-hard-v1"
KINDS = ("easy", "hard")

FACT_PROMPT = """Read the PASSAGE. Copy one self-contained fact from it word for word, give \
the short answer that fact states, and write a question that only this fact answers.

PASSAGE:
{passage}

Reply in exactly three lines:
FACT: <one sentence copied exactly from the passage>
ANSWER: <a few words copied from the fact>
QUESTION: <the question>"""

HARD_PROMPT = """Write a question that only the TARGET FACT answers. Borrow words from the \
OTHER PASSAGES, which are about similar things but do not answer it, so that a search engine \
is tempted by them. Do not copy the fact's wording and do not put the answer in the question.

TARGET FACT: {fact}
ANSWER: {answer}

OTHER PASSAGES:
{others}

Reply in one line:
QUESTION: <the question>"""


@dataclass(frozen=True)
class Rejected:
    """A target chunk (and kind) that gave no item, and why; ``reply`` is the model's text."""

    chunk_id: str
    kind: str
    reason: str
    reply: str = ""


@dataclass(frozen=True)
class SyntheticRun:
    """What :func:`generate_synthetic` made: ``items`` (easy and hard), ``rejected`` and the
    number of model ``calls`` not answered from the cache."""

    items: tuple[GoldenItem, ...]
    rejected: tuple[Rejected, ...]
    calls: int = 0
    cached: int = 0

    def counts(self) -> pd.DataFrame:
        """Generated and rejected per kind."""
        rows = [{"kind": k, "generated": sum(i.extra.get("kind") == k for i in self.items),
                 "rejected": sum(r.kind == k for r in self.rejected)} for k in KINDS]
        return pd.DataFrame(rows)

    def rejections(self) -> pd.DataFrame:
        return pd.DataFrame([vars(r) for r in self.rejected],
                            columns=["chunk_id", "kind", "reason", "reply"])


def sample_chunks(chunks: Sequence[Chunk], n: int, documents: Mapping[str, Document] | None
                  = None, *, seed: int = 0, min_chars: int = 120,
                  user_groups: Reader | Iterable[str] | str | None = None) -> list[Chunk]:
    """``n`` target chunks drawn at random (seeded) among those of at least ``min_chars``
    characters whose document is current and readable by ``user_groups``, the readers the
    golden set is for (:func:`~workbench.corpus.reader.require_reader`; an item must not
    teach a superseded number, and an item on a restricted target is itself restricted:
    :func:`~workbench.golden.can_read_item`)."""
    reader = require_reader("sample_chunks", user_groups, documents=documents or {},
                            chunks=chunks)

    def eligible(c: Chunk) -> bool:
        doc = documents.get(c.doc_id) if documents is not None else None
        if documents is not None and (doc is None or not doc.is_current):
            return False
        if reader.groups is not None and not reader.can_read_chunk(c, doc):
            return False
        return len(c.text.strip()) >= min_chars
    pool = [c for c in chunks if eligible(c)]
    return random.Random(seed).sample(pool, min(n, len(pool)))


def _contains(text: str, answer: str) -> bool:
    """The grader's rule (:func:`~workbench.generation.grading.must_mention`): ``text``
    mentions ``answer`` when an answer quoting it would pass (tokens, not substrings: "4"
    is not in "14 days")."""
    return must_mention(text, [answer])


def find_distractors(target: Chunk, answer: str, retrievers: Sequence[tuple[str, Retriever]],
                     chunks: Mapping[str, Chunk], *, n: int = 3, depth: int = 10,
                     documents: Mapping[str, Document] | None = None,
                     user_groups: Reader | Iterable[str] | str | None = None
                     ) -> list[dict[str, str]]:
    """Up to ``n`` chunks near ``target`` (each retriever searched with the target's text;
    their lists interleaved, best first) that are not the target, do not overlap it and do
    not mention ``answer`` (the grader's rule): ``[{chunk_id, found_by}]``. ``chunks``
    maps the retrievers' chunk ids to chunks. A distractor is readable by ``user_groups``
    (:func:`~workbench.corpus.reader.require_reader` over ``documents``) and by everyone who
    may read the target (:func:`~workbench.corpus.reader.reaches_readers_of`): an item never
    borrows from a document a reader of its target may not read."""
    docs = documents or {}
    reader = require_reader("find_distractors", user_groups, documents=docs,
                            chunks=chunks.values())
    target_doc = docs.get(target.doc_id)
    lists = [(name, r.search(target.text, depth)) for name, r in retrievers]
    out: list[dict[str, str]] = []
    seen = {target.id}
    for rank in range(depth):
        for name, hits in lists:
            if rank >= len(hits) or len(out) >= n:
                continue
            hit = hits[rank]
            chunk = chunks.get(hit.chunk_id)
            if hit.chunk_id in seen or chunk is None:
                continue
            seen.add(hit.chunk_id)
            if chunk.doc_id == target.doc_id and chunk.start < target.end \
                    and target.start < chunk.end:
                continue
            doc = docs.get(chunk.doc_id)
            if not (reader.can_read_chunk(chunk, doc)
                    and reaches_readers_of(chunk, doc, target, target_doc)):
                continue
            if _contains(chunk.text, answer):
                continue
            out.append({"chunk_id": hit.chunk_id, "found_by": name})
    return out


def _fields(text: str, names: Sequence[str]) -> dict[str, str]:
    """``NAME: value`` lines (or one JSON object with those keys), case-insensitive."""
    found: dict[str, str] = {}
    match = re.search(r"\{.*\}", text, re.DOTALL)
    if match:
        try:
            row = json.loads(match.group())
            if isinstance(row, dict):
                found = {k.lower(): str(v).strip() for k, v in row.items()
                         if k.lower() in names and isinstance(v, str | int | float)}
        except json.JSONDecodeError:
            pass
    for line in text.splitlines():
        head, sep, value = line.partition(":")
        key = head.strip().strip("*#- ").lower()
        if sep and key in names and key not in found and value.strip():
            found[key] = value.strip().strip("\"'` ")
    return {k: v for k, v in found.items() if v}


class _Chat:
    """A chat model behind the generation cache (errors are never cached)."""

    def __init__(self, client: ChatModel, cache: GenerationCache | None, max_tokens: int):
        self.client, self.cache, self.max_tokens = client, cache, max_tokens
        self.calls = self.cached = 0

    def __call__(self, prompt: str) -> ChatReply:
        messages = [{"role": "user", "content": prompt}]
        key = hashlib.sha256(json.dumps({
            "model_id": self.client.model_id, "prompt_version": SYNTHETIC_PROMPT_VERSION,
            "params": getattr(self.client, "cache_params", {}), "messages": messages,
            "max_tokens": self.max_tokens}, sort_keys=True, default=str).encode()).hexdigest()
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is not None:
            self.cached += 1
            return ChatReply(hit.text, hit.usage)
        self.calls += 1
        try:
            reply = self.client.chat(messages, max_tokens=self.max_tokens)
        except Exception as exc:  # one failing chunk never aborts the run
            return ChatReply(error=f"{type(exc).__name__}: {exc}")
        if self.cache is not None and not reply.error:
            self.cache.put(key, Answer(reply.text, model_id=self.client.model_id,
                                       prompt_version=SYNTHETIC_PROMPT_VERSION,
                                       usage=dict(reply.usage)))
        return reply


def _item(kind: str, target: Chunk, evidence: Evidence, question: str, answer: str,
          distractors: list[dict[str, str]], model_id: str) -> GoldenItem:
    return GoldenItem(
        qid=f"syn-{target.id}-{kind}", question=question, evidence=(evidence,),
        answer_must_mention=(answer,), category=f"synthetic-{kind}", source="synthetic",
        extra={"kind": kind, "target_chunk": target.id, "distractors": distractors,
               "model_id": model_id, "prompt_version": SYNTHETIC_PROMPT_VERSION})


def _question_problem(question: str | None, answer: str) -> str | None:
    if not question:
        return "the reply has no QUESTION line"
    if _contains(question, answer):
        return f"the question gives the answer away ({answer!r})"
    return None


def generate_synthetic(client: ChatModel, targets: Sequence[Chunk],
                       documents: Mapping[str, Document], *, chunks: Sequence[Chunk] = (),
                       distractors: Sequence[tuple[str, Retriever]] = (),
                       n_distractors: int = 3, cache: GenerationCache | None = None,
                       max_tokens: int = 96, progress: bool = False,
                       user_groups: Reader | Iterable[str] | str | None = None) -> SyntheticRun:
    """An easy and (with ``distractors`` retrievers, ``[(name, retriever)]``, over
    ``chunks``) a hard question per target chunk, or the reasons they were rejected (module
    docstring). ``user_groups`` names the readers the items are for
    (:func:`~workbench.corpus.reader.require_reader`): a target they may not read is
    rejected unseen, and distractors are only chunks they and every reader of the target may
    read (:func:`find_distractors`)."""
    if distractors and not chunks:
        raise WorkbenchError("distractors need the chunks the retrievers search (chunks=...)")
    reader = require_reader("generate_synthetic", user_groups, documents=documents,
                            chunks=[*targets, *chunks])
    by_id = {c.id: c for c in chunks}
    chat = _Chat(client, cache, max_tokens)
    items: list[GoldenItem] = []
    rejected: list[Rejected] = []
    for target in tqdm(targets, desc="synthetic", disable=not progress):
        if not reader.can_read_chunk(target, documents.get(target.doc_id)):
            rejected.append(Rejected(target.id, "easy", "the target is not readable by the "
                                     "readers named (user_groups)"))
            continue
        reply = chat(FACT_PROMPT.format(passage=target.text))
        if reply.error:
            rejected.append(Rejected(target.id, "easy", f"model error: {reply.error}"))
            continue
        got = _fields(reply.text, ("fact", "answer", "question"))
        if "fact" not in got or "answer" not in got:
            rejected.append(Rejected(target.id, "easy", "the reply has no FACT and ANSWER "
                                     "lines", reply.text))
            continue
        try:
            _, spans = find_spans(target.text, got["fact"])
        except LocateError:
            spans = []
        if not spans:
            rejected.append(Rejected(target.id, "easy", "the quoted fact is not in the chunk: "
                                     f"{got['fact'][:80]!r}", reply.text))
            continue
        doc = documents[target.doc_id]
        start, end = target.start + spans[0][0], target.start + spans[0][1]
        evidence = Evidence(target.doc_id, start, end, doc.text[start:end])
        answer = got["answer"]
        if not answer_tokens(answer):
            rejected.append(Rejected(target.id, "easy", f"the answer {answer!r} has no words",
                                     reply.text))
            continue
        if not _contains(evidence.text, answer):
            rejected.append(Rejected(target.id, "easy", f"the answer {answer!r} is not in the "
                                     "quoted fact", reply.text))
            continue
        model_id = client.model_id
        problem = _question_problem(got.get("question"), answer)
        if problem:
            rejected.append(Rejected(target.id, "easy", problem, reply.text))
        else:
            items.append(_item("easy", target, evidence, got["question"], answer, [],
                               model_id))
        if not distractors:
            continue
        near = find_distractors(target, answer, distractors, by_id, n=n_distractors,
                                documents=documents, user_groups=reader)
        if not near:
            rejected.append(Rejected(target.id, "hard", "no neighbour without the answer"))
            continue
        others = "\n".join(f"[D{i}] {by_id[d['chunk_id']].text[:400]}"
                           for i, d in enumerate(near, 1))
        hard = chat(HARD_PROMPT.format(fact=evidence.text, answer=answer, others=others))
        if hard.error:
            rejected.append(Rejected(target.id, "hard", f"model error: {hard.error}"))
            continue
        question = _fields(hard.text, ("question",)).get("question")
        problem = _question_problem(question, answer)
        if problem or question is None:
            rejected.append(Rejected(target.id, "hard", problem or "", hard.text))
            continue
        items.append(_item("hard", target, evidence, question, answer, near, model_id))
    return SyntheticRun(tuple(items), tuple(rejected), chat.calls, chat.cached)


class CopyingQuestionWriter:
    """A deterministic question writer (a :class:`~workbench.generation.prompt.ChatModel`
    for the two prompts above), the baseline of what the seed warns about: its easy question
    is the chunk's first sentence with a figure, copied, the figure asked for; its hard one
    names the fact's terms the distractors share, in their words. Offline and instant."""

    model_id = "copying-question-writer-v1"
    _FIGURE = re.compile(r"[$€£¥]?\d[\d,.:/]*%?(?:\s(?:days?|weeks?|months?|years?|hours?|"
                         r"minutes?|characters|calendar days|business days|working days))?")

    def chat(self, messages: Sequence[Mapping[str, str]],
             max_tokens: int | None = None) -> ChatReply:  # noqa: ARG002 (the protocol's)
        prompt = messages[-1]["content"]
        if prompt.startswith(FACT_PROMPT[:30]):
            passage = prompt.split("PASSAGE:\n", 1)[1].rsplit("\n\nReply in exactly", 1)[0]
            for line in passage.splitlines():
                for sentence in re.split(r"(?<=[.!?])\s+", line.strip("-*# |")):
                    figure = self._FIGURE.search(sentence)
                    if figure and 4 <= len(sentence.split()) <= 40:
                        asked = sentence.replace(figure.group(), "what", 1).rstrip(".")
                        return ChatReply(f"FACT: {sentence}\nANSWER: {figure.group()}\n"
                                         f"QUESTION: {asked}?")
            return ChatReply("I found no fact with a figure.")
        fact = prompt.split("TARGET FACT: ", 1)[1].split("\n", 1)[0]
        others = prompt.split("OTHER PASSAGES:\n", 1)[1]
        theirs = [t for t in tokenize(others) if t.isalpha()]
        shared = [t for t in dict.fromkeys(tokenize(fact)) if t in theirs][:3]
        borrowed = [t for t, _ in Counter(t for t in theirs if t not in shared).most_common(2)]
        return ChatReply(f"QUESTION: what is the figure for {' '.join(shared) or 'this'} "
                         f"when it comes to {' and '.join(borrowed)}?")
