"""Lost in the middle: does answer accuracy depend on where the gold passage sits?

For each question the gold passage is placed at each tested position among ``N - 1``
distractors (``n_positions = N`` slots; positions are 0-based here, shown 1-based in plots).
Distractors keep one fixed order per question, so the only thing that changes between two
prompts of a question is where the gold passage is. Accuracy per position carries its n and
an exact (Clopper-Pearson) interval.

Items come from the handbook (:func:`handbook_position_items`: gold = the best gold chunk
that holds every required string, distractors = the retriever's own non-gold hits) or from
the NQ-open slice of Liu et al. (:func:`workbench.generation.nq_open.load_nq_open`, with the
published curves in :func:`~workbench.generation.nq_open.load_reference_curves`).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass

import pandas as pd

from workbench.corpus import Chunk, Document, can_read_chunk, is_superseded
from workbench.corpus.reader import Reader, require_reader
from workbench.evaluation import FrameField
from workbench.generation.context import Passage, context_from_passages
from workbench.generation.grading import best_subspan_em, must_mention
from workbench.generation.prompt import Generator, generate_all
from workbench.golden import GoldenItem, GoldenSet
from workbench.io import WorkbenchError
from workbench.metrics import Relevance
from workbench.retrieval import Retriever
from workbench.stats import is_small_sample, mean_interval
from workbench.text import escape_html, frame_html

__all__ = [
    "PositionItem",
    "PositionResult",
    "default_positions",
    "handbook_position_items",
    "place_gold",
    "position_experiment",
]


@dataclass(frozen=True)
class PositionItem:
    """One question with its gold passage and an ordered list of distractors.
    ``match="any"``: one of ``answers`` must appear (NQ, best-subspan EM);
    ``match="all"``: every answer string must be mentioned (handbook must-mention)."""

    qid: str
    question: str
    gold: Passage
    distractors: tuple[Passage, ...]
    _: KW_ONLY
    answers: tuple[str, ...]
    match: str = "any"
    category: str = ""

    def passes(self, answer: str) -> bool:
        if self.match == "all":
            return must_mention(answer, self.answers)
        return best_subspan_em(answer, self.answers)


def default_positions(n_positions: int) -> list[int]:
    """Every slot up to 5 passages; beyond that the paper's spread: first, every fifth
    (4, 9, 14, ...) and last (0-based)."""
    if n_positions < 1:
        raise WorkbenchError(f"n_positions must be >= 1, got {n_positions}")
    if n_positions <= 5:
        return list(range(n_positions))
    return sorted({0, n_positions - 1, *range(4, n_positions, 5)})


def place_gold(gold: Passage, distractors: Sequence[Passage], position: int) -> list[Passage]:
    """The passage list with ``gold`` at index ``position`` and the distractors, in their
    order, around it."""
    if not 0 <= position <= len(distractors):
        raise WorkbenchError(f"position {position} outside 0..{len(distractors)}")
    return [*distractors[:position], gold, *distractors[position:]]


def _contains_answer(item: PositionItem, text: str) -> bool:
    return item.passes(text)


def _distractors(item: PositionItem, others: Sequence[PositionItem], need: int, mode: str,
                 rng: random.Random) -> list[Passage]:
    chosen: list[Passage] = []
    seen = {item.gold.chunk_id, " ".join(item.gold.text.split())}
    if mode == "own":
        pool = list(item.distractors)
    else:
        pool = [o.gold for o in others if o.qid != item.qid]
        rng.shuffle(pool)
        if mode == "mixed":
            pool = [*item.distractors, *pool]
    if mode == "own":  # fill from other questions when the item's own list runs short
        fill = [o.gold for o in others if o.qid != item.qid]
        rng.shuffle(fill)
        pool += fill
    for p in pool:
        key = " ".join(p.text.split())
        if p.chunk_id in seen or key in seen or _contains_answer(item, p.text):
            continue
        seen.update((p.chunk_id, key))
        chosen.append(p)
        if len(chosen) == need:
            break
    return chosen


@dataclass(frozen=True, eq=False, kw_only=True)
class PositionResult:
    """Per (question, position) answers and grades (``frame``); ``summary()`` gives the
    curve. ``closed_book``: the answers without passages (None when not asked). Immutable:
    the tables are read as copies."""

    frame: FrameField[pd.DataFrame] = FrameField()
    n_positions: int
    positions: tuple[int, ...]
    model_id: str = ""
    skipped: tuple[str, ...] = ()
    closed_book: FrameField[pd.DataFrame | None] = FrameField()

    def __repr__(self) -> str:
        return (f"PositionResult({self.model_id}, {self.n_questions} questions x "
                f"{len(self.positions)} "
                f"positions of {self.n_positions} passages)")

    @property
    def n_questions(self) -> int:
        return int(self.frame["qid"].nunique()) if len(self.frame) else 0

    def summary(self, confidence: float = 0.95) -> pd.DataFrame:
        """position (0-based), rank (1-based), n, accuracy, its exact (Clopper-Pearson)
        interval and ``small_n`` (fewer than 10 questions)."""
        rows = []
        frame = self.frame
        for pos in self.positions:
            values = frame.loc[frame["position"] == pos, "passed"].astype(float)
            low, high = (mean_interval(values.to_numpy(), confidence)[:2] if len(values)
                         else (float("nan"), float("nan")))
            rows.append({"position": pos, "rank": pos + 1, "n": len(values),
                         "accuracy": float(values.mean()) if len(values) else float("nan"),
                         "ci_low": low, "ci_high": high, "small_n": is_small_sample(len(values))})
        return pd.DataFrame(rows)

    def closed_book_accuracy(self) -> float | None:
        book = self.closed_book
        if book is None or not len(book):
            return None
        return float(book["passed"].astype(float).mean())

    def _repr_html_(self) -> str:
        table = frame_html(self.summary(), index=False, float_format=lambda v: f"{v:.3f}")
        return f"<div><p>{escape_html(repr(self))}</p>{table}</div>"


def position_experiment(generator: Generator, items: Sequence[PositionItem], *,
                        n_positions: int = 5,
                        distractors: str = "own", positions: Sequence[int] | None = None,
                        seed: int = 0, closed_book: bool = False,
                        progress: bool = False) -> PositionResult:
    """Ask each question with its gold passage at each of ``positions`` (default
    :func:`default_positions`) among ``n_positions - 1`` distractors and grade the answers.

    ``distractors``: ``"own"`` (each item's own list, e.g. the retriever's non-gold hits,
    topped up from other questions' gold passages when short), ``"others"`` (other questions'
    gold passages only) or ``"mixed"``. Passages containing an answer are never used as
    distractors. Items that cannot get ``n_positions - 1`` distractors are skipped (listed
    in ``skipped``). ``closed_book=True`` also asks each question with no passages.
    """
    if distractors not in ("own", "others", "mixed"):
        raise WorkbenchError(f"distractors must be 'own', 'others' or 'mixed', not {distractors!r}")
    slots = list(positions) if positions is not None else default_positions(n_positions)
    bad = [p for p in slots if not 0 <= p < n_positions]
    if bad:
        raise WorkbenchError(f"positions {bad} outside 0..{n_positions - 1}")
    rng = random.Random(seed)
    requests, meta, skipped = [], [], []
    for item in items:
        chosen = _distractors(item, items, n_positions - 1, distractors, rng)
        if len(chosen) < n_positions - 1:
            skipped.append(item.qid)
            continue
        for pos in slots:
            ctx = context_from_passages(place_gold(item.gold, chosen, pos))
            requests.append((item.question, ctx))
            meta.append((item, pos, ctx))
    answers = generate_all(generator, requests, progress, desc="position experiment")
    rows = []
    for (item, pos, ctx), answer in zip(meta, answers, strict=True):
        rows.append({"qid": item.qid, "category": item.category, "n_positions": n_positions,
                     "position": pos, "gold_id": item.gold.chunk_id,
                     "gold_label": ctx.passages[pos].label,
                     "passed": item.passes(answer.text) if not answer.error else False,
                     "answer": answer.text, "error": answer.error,
                     "context_ids": list(ctx.chunk_ids)})
    book = None
    if closed_book:
        kept = [i for i in items if i.qid not in skipped]
        empty = [(i.question, context_from_passages([])) for i in kept]
        book_answers = generate_all(generator, empty, progress, desc="closed book")
        book = pd.DataFrame([{"qid": i.qid, "passed": i.passes(a.text), "answer": a.text}
                             for i, a in zip(kept, book_answers, strict=True)])
    frame = pd.DataFrame(rows, columns=["qid", "category", "n_positions", "position", "gold_id",
                                        "gold_label", "passed", "answer", "error",
                                        "context_ids"])
    return PositionResult(frame=frame, n_positions=n_positions, positions=tuple(slots),
                          model_id=generator.model_id, skipped=tuple(skipped), closed_book=book)


# ----------------------------------------------------------------------------- handbook items

def handbook_position_items(retriever: Retriever, golden: GoldenSet | Sequence[GoldenItem],
                            chunks: Sequence[Chunk],
                            documents: Mapping[str, Document] | Iterable[Document] | None = None,
                            *, n_distractors: int = 4, qids: Iterable[str] | None = None,
                            user_groups: Reader | Iterable[str] | str | None = None
                            ) -> list[PositionItem]:
    """Position items from a golden set: the gold passage is the first gold chunk (of the
    fewest that hold the evidence) that mentions every required string; distractors are the
    retriever's hits for the question that hold no part of the evidence, are not superseded,
    are readable by ``user_groups`` (the document's ACL and the chunk's own, as
    :func:`~workbench.corpus.can_read_chunk` reads them) and do not mention the answer, in
    rank order. Items without such a gold chunk are left out."""
    gs = golden if isinstance(golden, GoldenSet) else GoldenSet(golden)
    docs: Mapping[str, Document] = (documents if isinstance(documents, Mapping)
                                    else {d.id: d for d in documents or ()})
    relevance = Relevance([i for i in gs if i.answerable], chunks)
    by_id = {c.id: c for c in chunks}
    wanted = set(qids) if qids is not None else None
    groups = require_reader("handbook_position_items", user_groups, documents=docs,
                            chunks=chunks).groups

    def usable(chunk: Chunk) -> bool:
        # the chunk's own ACL counts as well as its document's; an unknown document is
        # readable only in the unrestricted view (can_read_chunk fails closed)
        doc = docs.get(chunk.doc_id)
        if doc is not None and is_superseded(doc):
            return False
        return can_read_chunk(groups, chunk, doc)

    def passage(chunk: Chunk) -> Passage:
        doc = docs.get(chunk.doc_id)
        return Passage("", chunk.id, chunk.doc_id, chunk.text, title=doc.title if doc else "")

    out = []
    for item in gs:
        if not item.answerable or not item.answer_must_mention:
            continue
        if wanted is not None and item.qid not in wanted:
            continue
        if item.qid not in relevance.items:
            continue
        golds = [by_id[c] for c in relevance.gold(item.qid) if c in by_id]
        holding = [c for c in golds if usable(c) and must_mention(c.text, item.answer_must_mention)]
        if not holding:
            continue
        gold_set = relevance.touching(item.qid)
        hits = retriever.search(item.question, 4 * n_distractors + 10)
        distract = []
        for hit in hits:
            chunk = by_id.get(hit.chunk_id)
            if chunk is None or chunk.id in gold_set or not usable(chunk):
                continue
            if must_mention(chunk.text, item.answer_must_mention):
                continue
            distract.append(passage(chunk))
            if len(distract) == n_distractors:
                break
        out.append(PositionItem(item.qid, item.question, passage(holding[0]), tuple(distract),
                                answers=tuple(item.answer_must_mention), match="all",
                                category=item.category))
    return out
