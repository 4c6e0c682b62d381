"""Chunking diagnostics before any retriever runs: split answer spans, near-duplicate
chunks, index token cost (:func:`diagnose_chunking`)."""

from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from workbench.chunking.base import DEFAULT_COUNTER, Chunker, Docs, chunk_corpus
from workbench.chunking.chunkers import FixedChunker, RecursiveChunker, SentenceChunker
from workbench.chunking.specs import parse_chunker
from workbench.chunking.structured import ContextualHeader, ParentChildChunker
from workbench.corpus import Chunk, Span
from workbench.io import WorkbenchError
from workbench.text import TokenCounter, get_counter


def split_spans(chunks: Iterable[Chunk], spans: Iterable[Span]) -> list[Span]:
    """The spans not contained whole in any single chunk of their document."""
    by_doc: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for c in chunks:
        by_doc[c.doc_id].append((c.start, c.end))
    return [
        s
        for s in spans
        if not any(a <= s.start and s.end <= b for a, b in by_doc.get(s.doc_id, ()))
    ]


def split_rate(chunks: Iterable[Chunk], spans: Sequence[Span]) -> float:
    """Share of answer spans that no single chunk contains whole (0.0 when no spans):
    a cheap ceiling on retrieval before running any retriever."""
    if not spans:
        return 0.0
    return len(split_spans(chunks, spans)) / len(spans)


_WORDS = re.compile(r"\w+")


def _shingles(text: str, n: int) -> frozenset[tuple[str, ...]]:
    words = _WORDS.findall(text.lower())
    if len(words) < n:
        return frozenset([tuple(words)]) if words else frozenset()
    return frozenset(tuple(words[i : i + n]) for i in range(len(words) - n + 1))


def near_duplicate_pairs(
    chunks: Sequence[Chunk], threshold: float = 0.9, shingle: int = 5
) -> list[tuple[str, str]]:
    """Pairs of chunk ids whose texts have Jaccard similarity >= ``threshold`` over word
    ``shingle``-grams (a text shorter than that is one shingle of all its words).
    Exact, using prefix filtering to avoid comparing every pair."""
    sets = [_shingles(c.text, shingle) for c in chunks]
    freq: Counter[tuple[str, ...]] = Counter(s for sh in sets for s in sh)
    index: dict[tuple[str, ...], list[int]] = defaultdict(list)
    pairs = []
    for i, sh in enumerate(sets):
        if not sh:
            continue
        ordered = sorted(sh, key=lambda s: (freq[s], s))
        prefix = len(sh) - math.ceil(threshold * len(sh) - 1e-9) + 1
        candidates: set[int] = set()
        for s in ordered[: max(prefix, 1)]:
            candidates.update(index[s])
            index[s].append(i)
        for j in sorted(candidates):
            other = sets[j]
            if len(sh & other) / len(sh | other) >= threshold - 1e-12:
                pairs.append((chunks[j].id, chunks[i].id))
    return pairs


def without_overlap(chunker: Chunker) -> Chunker | None:
    """The same chunker with every overlap set to 0 (None when it has no overlap): the
    baseline of ``cost_multiplier``, here and in sweeps."""
    if isinstance(chunker, FixedChunker | RecursiveChunker):
        return dataclasses.replace(chunker, overlap=0) if chunker.overlap else None
    if isinstance(chunker, SentenceChunker):
        return (
            dataclasses.replace(chunker, overlap_sentences=0) if chunker.overlap_sentences else None
        )
    if isinstance(chunker, ParentChildChunker):
        parent = without_overlap(chunker.parent)
        if not chunker.child_overlap and parent is None:
            return None
        return dataclasses.replace(chunker, child_overlap=0, parent=parent or chunker.parent)
    if isinstance(chunker, ContextualHeader):
        base = without_overlap(chunker.base)
        return None if base is None else dataclasses.replace(chunker, base=base)
    return None


def _count_all(counter: TokenCounter, texts: list[str]) -> list[int]:
    batch = getattr(counter, "count_batch", None)
    if batch is not None and texts:
        counts: list[int] = batch(texts)
        return counts
    return [counter.count(t) for t in texts]


@dataclass
class ChunkingDiagnostics:
    """What a chunking costs and what it breaks, before any retriever runs.

    Token figures use ``counter`` on each chunk's ``embed_text`` (what gets embedded).
    ``cost_multiplier`` is ``index_tokens`` over the index tokens of the same chunker with
    overlap 0 (1.0 for chunkers without overlap). ``split_rate`` is the share of answer
    spans no single chunk holds whole (``split_spans`` lists them). ``near_duplicates``
    counts chunk pairs with word-5-shingle Jaccard >= 0.9 (``near_duplicate_pairs``).
    """

    chunker: str
    counter: str
    n_docs: int
    n_chunks: int
    _: KW_ONLY
    mean_tokens: float
    max_tokens: int
    index_tokens: int
    cost_multiplier: float
    n_spans: int
    split_rate: float
    split_spans: list[Span] = field(default_factory=list)
    near_duplicates: int = 0
    near_duplicate_pairs: list[tuple[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The scalar figures, for a results table."""
        return {k: v for k, v in dataclasses.asdict(self).items() if not isinstance(v, list)}


def diagnose_chunking(
    chunker: Chunker | str,
    docs: Docs,
    spans: Sequence[Span] = (),
    counter: TokenCounter | str | None = None,
) -> ChunkingDiagnostics:
    """Chunk ``docs`` and report size, index cost, split answers and near duplicates."""
    chunker = parse_chunker(chunker)
    documents = list(docs.values() if isinstance(docs, Mapping) else docs)
    known = {d.id for d in documents}
    missing = sorted({s.doc_id for s in spans} - known)
    if missing:
        raise WorkbenchError(
            f"answer spans refer to documents not given: {', '.join(missing[:5])}"
            + (" ..." if len(missing) > 5 else "")
        )
    tc = (
        get_counter(counter or DEFAULT_COUNTER)
        if counter is None or isinstance(counter, str)
        else counter
    )
    chunks = chunk_corpus(chunker, documents)
    counts = _count_all(tc, [c.embed_text for c in chunks])
    index_tokens = sum(counts)
    cost = 1.0
    zero = without_overlap(chunker)
    if zero is not None:
        base = sum(_count_all(tc, [c.embed_text for c in chunk_corpus(zero, documents)]))
        cost = index_tokens / base if base else 1.0
    broken = split_spans(chunks, spans)
    pairs = near_duplicate_pairs(chunks)
    return ChunkingDiagnostics(
        chunker=chunker.label,
        counter=str(getattr(tc, "name", tc)),
        n_docs=len(documents),
        n_chunks=len(chunks),
        mean_tokens=index_tokens / len(chunks) if chunks else 0.0,
        max_tokens=max(counts, default=0),
        index_tokens=index_tokens,
        cost_multiplier=cost,
        n_spans=len(spans),
        split_rate=len(broken) / len(spans) if spans else 0.0,
        split_spans=broken,
        near_duplicates=len(pairs),
        near_duplicate_pairs=pairs,
    )
