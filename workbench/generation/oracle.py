"""Oracle vs live: :func:`run_generation_eval` answers every golden question with its gold
evidence (oracle: the fewest chunks that hold it, at most the same k the live run gets) and
with the retriever's top k (live), through the same context assembly, and grades both;
:class:`GenerationResult` holds the answers with summary views (accuracy, the retrieval tax).
Relevance is judged by :class:`workbench.metrics.Relevance`: "retrieved the gold" means an
evidence span was found within k (or a labelled chunk retrieved), under any chunking. Also
:func:`context_swap` (does the model answer from memory?) and :func:`oracle_context`."""

from __future__ import annotations

import functools
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from workbench.corpus import Chunk, Document
from workbench.corpus.access import can_read_chunk
from workbench.corpus.reader import Reader, require_reader
from workbench.evaluation import FrameField
from workbench.generation.context import AssembledContext, CountTokens, assemble_context
from workbench.generation.grading import Grade, Judge, answer_tokens, grade_answer, is_refusal
from workbench.generation.prompt import Answer, Generator, generate_all
from workbench.golden import GoldenItem, GoldenSet, can_read_item
from workbench.io import WorkbenchError
from workbench.metrics import DEFAULT_EVIDENCE_THRESHOLD, Relevance
from workbench.retrieval import Retriever
from workbench.stats import bootstrap_ci, is_small_sample, mcnemar_exact, mean_interval
from workbench.text import escape_html, frame_html

MODES = ("oracle", "live")
UNREADABLE = "<unreadable>"  # stands in a ranking for a hit the user may not read


@dataclass(frozen=True, eq=False, kw_only=True)
class GenerationResult:
    """Per-question answers and grades for each mode, with summary views. Immutable:
    ``frame`` returns a copy, the mappings are read-only and their values tuples.
    ``frame`` columns: qid, category, answerable, mode, passed, method, retrieved_gold_at_k,
    gold_in_context, answer, citations, unknown_citations, context_ids, dropped, gold_ids,
    error, cached, latency_s, model_id, prompt_version.

    ``retrieved[qid]`` are the live top-k chunk ids, best first, with their retriever
    ``scores[qid]`` (None where a hit had none) and 1-based ``ranks[qid]`` in the retriever's
    list; ``gold[qid]`` the oracle's gold chunk ids (the fewest chunks holding the evidence,
    at most k); ``found_rank[qid]`` the live rank by which the gold evidence is retrieved
    (:meth:`~workbench.metrics.Relevance.retrieved_rank`: every span; None: not within k);
    ``questions[qid]`` the question text. With ``user_groups`` set, chunks the user may not
    read are left out of all of these (and never reach a context, an answer or the frame):
    the readable hits keep their original ranks, so a gap in ``ranks`` is where an
    unreadable chunk was."""

    frame: FrameField[pd.DataFrame] = FrameField()
    k: int
    contexts: Mapping[tuple[str, str], AssembledContext] = field(default_factory=dict)
    answers: Mapping[tuple[str, str], Answer] = field(default_factory=dict)
    grades: Mapping[tuple[str, str], Grade] = field(default_factory=dict)
    retrieved: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    gold: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    model_id: str = ""
    questions: Mapping[str, str] = field(default_factory=dict)
    scores: Mapping[str, tuple[float | None, ...]] = field(default_factory=dict)
    ranks: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    found_rank: Mapping[str, int | None] = field(default_factory=dict)
    relevance: str = ""

    def __post_init__(self) -> None:
        for name in ("contexts", "answers", "grades", "questions", "found_rank"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))
        for name in ("retrieved", "gold", "scores", "ranks"):
            object.__setattr__(self, name, MappingProxyType(
                {q: tuple(v) for q, v in getattr(self, name).items()}))

    def __repr__(self) -> str:
        frame = self.frame  # one copy
        n = frame["qid"].nunique() if len(frame) else 0
        return f"GenerationResult({self.model_id}, n={n} questions, k={self.k})"

    def summary(self) -> str:
        """One sentence for people: how many questions, which model, which modes, top k."""
        frame = self.frame
        n = frame["qid"].nunique() if len(frame) else 0
        modes = " and ".join(dict.fromkeys(frame["mode"])) if len(frame) else "no"
        return (f"{n} questions answered by {self.model_id or 'an unnamed generator'} "
                f"({modes} mode{'s' if ' and ' in modes else ''}, top k={self.k})")

    def accuracy(self, by: str | None = None, confidence: float = 0.95) -> pd.DataFrame:
        """Share of decided answers that passed, per mode (and ``by``), with n, an exact
        (Clopper-Pearson) interval, ``small_n`` (fewer than 10 decided answers) and the
        number of undecided answers."""
        keys = ["mode", *([by] if by else [])]
        rows = []
        for key, group in self.frame.groupby(keys, sort=False):
            key = key if isinstance(key, tuple) else (key,)
            decided = group["passed"].dropna().astype(float).to_numpy()
            low, high = mean_interval(decided, confidence)[:2] if len(decided) else (np.nan,) * 2
            rows.append({**dict(zip(keys, key, strict=True)), "n": len(decided),
                         "accuracy": float(decided.mean()) if len(decided) else float("nan"),
                         "ci_low": low, "ci_high": high, "small_n": is_small_sample(len(decided)),
                         "undecided": int(group["passed"].isna().sum())})
        return pd.DataFrame(rows)

    def paired(self) -> pd.DataFrame:
        """One row per question decided in both modes: oracle and live pass (0/1)."""
        wide = self.frame.pivot_table(index=["qid", "category"], columns="mode", values="passed",
                                      aggfunc="first")
        if not set(MODES) <= set(wide.columns):
            raise WorkbenchError("the retrieval tax needs both oracle and live modes")
        wide = wide[list(MODES)].dropna().astype(float).reset_index()
        return wide

    def retrieval_tax(self, by: str | None = "category", confidence: float = 0.95,
                      alpha: float = 0.05) -> pd.DataFrame:
        """Oracle accuracy minus live accuracy on the same questions (first row: all
        questions). ``beyond_noise`` comes from the paired test, never from the interval:
        McNemar's exact test on the questions whose outcome differs between the modes
        (``p_value`` < ``alpha``); ``ci_low``/``ci_high`` are a paired bootstrap interval of
        the difference, describing its size."""
        wide = self.paired()
        groups: list[tuple[str, pd.DataFrame]] = [("all", wide)]
        if by:
            groups += [(str(k), g) for k, g in wide.groupby(by, sort=True)]
        rows = []
        for name, g in groups:
            diff = (g["oracle"] - g["live"]).to_numpy()
            low, high = bootstrap_ci(diff, confidence) if len(diff) else (np.nan, np.nan)
            test = mcnemar_exact(g["live"].to_numpy(), g["oracle"].to_numpy()) if len(g) \
                else None
            p = test.p_value if test is not None else 1.0
            rows.append({by or "group": name, "n": len(g), "oracle": float(g["oracle"].mean()),
                         "live": float(g["live"].mean()), "tax": float(diff.mean()),
                         "ci_low": low, "ci_high": high,
                         "oracle_only": test.b_only if test else 0,
                         "live_only": test.a_only if test else 0, "p_value": p,
                         "beyond_noise": bool(p < alpha), "small_n": is_small_sample(len(g))})
        return pd.DataFrame(rows)

    def _repr_html_(self) -> str:
        table = frame_html(self.accuracy(), index=False, float_format=lambda v: f"{v:.3f}")
        return f"<div><p>{escape_html(repr(self))}</p>{table}</div>"


def run_generation_eval(generator: Generator, retriever: Retriever,
                        golden: GoldenSet | Sequence[GoldenItem], chunks: Sequence[Chunk], *,
                        documents: Mapping[str, Document] | Iterable[Document] | None = None,
                        k: int = 5, modes: Sequence[str] = MODES,
                        user_groups: Reader | Iterable[str] | str | None = None,
                        budget_tokens: int | None = None, count_tokens: CountTokens = None,
                        judge: Judge | None = None, qids: Iterable[str] | None = None,
                        grade_threshold: int = 1, progress: bool = False,
                        include_superseded: bool = False,
                        evidence_threshold: float = DEFAULT_EVIDENCE_THRESHOLD,
                        assembly: str = "workbench") -> GenerationResult:
    """Answer every golden question in oracle mode (the gold evidence: the fewest chunks of
    this chunking that hold it, at most ``k``, as the live run gets) and live mode (the
    retriever's top ``k``), both through the same context assembly (ACL, versions, dedup,
    budget), and grade each answer. Unanswerable items get an empty oracle context (a
    perfect retriever finds nothing). Relevance (``grade_threshold`` for chunk-id labels,
    ``evidence_threshold`` for spans) is judged as in :func:`workbench.evaluate`.

    ``user_groups`` evaluates as that user: chunks they may not read are filtered out at the
    source, so no retrieved or gold id of the result names one (a gold chunk the user may not
    read does not count as retrieved: from their side the answer is out of reach).
    ``include_superseded=True`` models a pipeline without the version filter;
    ``assembly="passthrough"`` one without any of our filters but access control (the
    production prompt as it was: :func:`~workbench.generation.context.passthrough_context`).
    ``documents`` is required (see :func:`~workbench.generation.context.assemble_context`)."""
    bad = [m for m in modes if m not in MODES]
    if bad:
        raise WorkbenchError(f"unknown mode(s) {bad}: use 'oracle' and/or 'live'")
    if documents is None:  # fail closed: no document, no access or version check
        raise WorkbenchError("run_generation_eval needs documents= (the corpus): without them no "
                         "access or version check is possible")
    gs = golden if isinstance(golden, GoldenSet) else GoldenSet(golden)
    wanted = set(qids) if qids is not None else None
    if wanted is not None:
        unknown = sorted(wanted - {i.qid for i in gs})
        if unknown or not wanted:
            known = ", ".join(i.qid for i in list(gs)[:3])
            raise WorkbenchError(
                (f"qids not in the golden set: {', '.join(unknown[:5])}"
                 + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
                 if unknown else "no qids given") + f"; give qids of its {len(gs)} questions "
                f"(e.g. {known or 'none'}), or none for all of them")
    items = [i for i in gs if wanted is None or i.qid in wanted]
    relevance = Relevance([i for i in items if i.answerable], chunks,
                          evidence_threshold=evidence_threshold, grade_threshold=grade_threshold)
    by_id = {c.id: c for c in chunks}
    docs: Mapping[str, Document] = (documents if isinstance(documents, Mapping)
                                    else {d.id: d for d in documents})
    reader = require_reader("run_generation_eval", user_groups, documents=docs, chunks=chunks)
    groups = reader.groups

    def readable(cid: str) -> bool:
        chunk = by_id.get(cid)
        return chunk is not None and can_read_chunk(groups, chunk, docs.get(chunk.doc_id))

    assemble = functools.partial(assemble_context, chunks_by_id=by_id, documents=docs,
                                 user_groups=reader, budget_tokens=budget_tokens,
                                 count_tokens=count_tokens,
                                 include_superseded=include_superseded, assembly=assembly)
    requests: list[tuple[str, AssembledContext]] = []
    keys: list[tuple[str, str]] = []
    retrieved: dict[str, tuple[str, ...]] = {}
    scores: dict[str, tuple[float | None, ...]] = {}
    ranks: dict[str, tuple[int, ...]] = {}
    gold: dict[str, tuple[str, ...]] = {}
    found_rank: dict[str, int | None] = {}
    contexts: dict[tuple[str, str], AssembledContext] = {}
    for item in tqdm(items, desc="assemble contexts", disable=not progress):
        # the full gold list goes to assembly (which drops, unnamed, what the user may not
        # read); only the readable ids are kept in the result
        all_gold = relevance.gold(item.qid, k) if item.qid in relevance.items else []
        gold[item.qid] = tuple(c for c in all_gold if readable(c))
        if "live" in modes:
            hits = retriever.search(item.question, k)[:k]
            kept = [(rank, h) for rank, h in enumerate(hits, start=1) if readable(h.chunk_id)]
            retrieved[item.qid] = tuple(h.chunk_id for _, h in kept)
            scores[item.qid] = tuple(None if h.score is None else float(h.score)
                                     for _, h in kept)
            ranks[item.qid] = tuple(rank for rank, _ in kept)
            if item.qid in relevance.items:
                # the user's view: what they may not read finds nothing for them
                seen = [h.chunk_id if readable(h.chunk_id) else UNREADABLE for h in hits]
                found_rank[item.qid] = relevance.retrieved_rank(item.qid, seen)
            contexts[item.qid, "live"] = assemble(hits)
        if "oracle" in modes:
            contexts[item.qid, "oracle"] = assemble(all_gold)
        for mode in modes:
            requests.append((item.question, contexts[item.qid, mode]))
            keys.append((item.qid, mode))
    answers = dict(zip(keys, generate_all(generator, requests, progress), strict=True))
    by_qid = {i.qid: i for i in items}
    rows, grades = [], {}
    for qid, mode in keys:
        item, ctx, answer = by_qid[qid], contexts[qid, mode], answers[qid, mode]
        grade = grade_answer(item, answer, ctx, judge)
        grades[qid, mode] = grade
        judged = qid in relevance.items
        hit_gold = (found_rank.get(qid) is not None if judged and qid in retrieved else None)
        in_context = (relevance.found_within(qid, list(ctx.chunk_ids), max(len(ctx), 1))
                      if judged else None)
        rows.append({
            "qid": qid, "category": item.category, "answerable": item.answerable, "mode": mode,
            "passed": grade.passed, "method": grade.method, "retrieved_gold_at_k": hit_gold,
            "gold_in_context": in_context,
            "answer": answer.text, "citations": list(answer.citations),
            "unknown_citations": list(answer.unknown_citations),
            "context_ids": list(ctx.chunk_ids), "dropped": [list(d) for d in ctx.dropped],
            "gold_ids": gold[qid], "error": answer.error, "cached": answer.cached,
            "latency_s": answer.latency_s, "model_id": answer.model_id,
            "prompt_version": answer.prompt_version})
    frame = pd.DataFrame(rows)
    if len(frame):
        frame["passed"] = frame["passed"].astype(object)
    labels = sorted({relevance.label(q) for q in relevance.items})
    return GenerationResult(frame=frame, k=k, contexts=contexts, answers=answers, grades=grades,
                            retrieved=retrieved, gold=gold, model_id=generator.model_id,
                            questions={i.qid: i.question for i in items}, scores=scores,
                            ranks=ranks, found_rank=found_rank, relevance=", ".join(labels))


def context_swap(generator: Generator, golden: GoldenSet | Sequence[GoldenItem],
                 chunks: Sequence[Chunk], documents: Mapping[str, Document] | Iterable[Document],
                 *,
                 qids: Iterable[str] | None = None,
                 user_groups: Reader | Iterable[str] | str | None = None,
                 seed: int = 0, progress: bool = False) -> pd.DataFrame:
    """Ask each question twice: with its own gold context and with another question's gold
    context (from different documents). If the answer still passes, or is unchanged (and
    not a refusal), without its evidence, the model answers from memory, not the context.
    Columns: qid, donor_qid, answer, swapped_answer, passed_with_gold, passed_with_swap,
    unchanged, similarity (token Jaccard), from_memory. ``documents`` (the corpus) gives
    the access and version checks of context assembly; ``user_groups`` names the reader
    (:func:`~workbench.corpus.reader.require_reader`), and only the items whose evidence they
    may read (:func:`~workbench.golden.can_read_item`) are asked."""
    gs = golden if isinstance(golden, GoldenSet) else GoldenSet(golden)
    corpus: Mapping[str, Document] = (documents if isinstance(documents, Mapping)
                                      else {d.id: d for d in documents})
    reader = require_reader("context_swap", user_groups, documents=corpus, chunks=chunks)
    by_id = {c.id: c for c in chunks}
    gs = GoldenSet([i for i in gs if can_read_item(reader.groups, i, by_id, corpus)])
    relevance = Relevance([i for i in gs if i.answerable], chunks)
    pool = [i for i in gs if i.qid in relevance.items and relevance.gold(i.qid)]
    wanted = set(qids) if qids is not None else None
    targets = [i for i in pool if wanted is None or i.qid in wanted]
    rng = random.Random(seed)
    requests, meta = [], []
    for item in targets:
        docs = set(item.doc_ids(by_id))
        donors = [d for d in pool if d.qid != item.qid and not docs & set(d.doc_ids(by_id))]
        if not donors:
            continue
        donor = rng.choice(donors)
        own = assemble_context(relevance.gold(item.qid), by_id, corpus, user_groups=reader)
        other = assemble_context(relevance.gold(donor.qid), by_id, corpus, user_groups=reader)
        requests += [(item.question, own), (item.question, other)]
        meta.append((item, donor))
    answers = generate_all(generator, requests, progress, desc="context swap")
    rows = []
    for n, (item, donor) in enumerate(meta):
        a, b = answers[2 * n], answers[2 * n + 1]
        ta, tb = set(answer_tokens(a.text)), set(answer_tokens(b.text))
        unchanged = answer_tokens(a.text) == answer_tokens(b.text)
        passed_swap = grade_answer(item, b).passed
        rows.append({"qid": item.qid, "donor_qid": donor.qid, "question": item.question,
                     "answer": a.text, "swapped_answer": b.text,
                     "passed_with_gold": grade_answer(item, a).passed,
                     "passed_with_swap": passed_swap, "unchanged": unchanged,
                     "similarity": len(ta & tb) / len(ta | tb) if ta | tb else 1.0,
                     "from_memory": bool(passed_swap) or (unchanged and not is_refusal(b.text))})
    return pd.DataFrame(rows)


def oracle_context(item: GoldenItem, chunks: Sequence[Chunk],
                   documents: Mapping[str, Document] | Iterable[Document],
                   *, user_groups: Reader | Iterable[str] | str | None = None, k: int | None = None
                   ) -> AssembledContext:
    """The oracle context of one item: the fewest chunks that hold its gold evidence (or its
    labelled chunks, best grade first), at most ``k``, assembled with the access and version
    checks of ``documents`` (the corpus)."""
    docs = documents if isinstance(documents, Mapping) else {d.id: d for d in documents}
    reader = require_reader("oracle_context", user_groups, documents=docs, chunks=chunks)
    gold = Relevance([item], chunks).gold(item.qid, k) if item.answerable else []
    return assemble_context(gold, {c.id: c for c in chunks}, docs, user_groups=reader)
