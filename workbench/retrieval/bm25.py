"""BM25 over chunks (bm25s), with tokenisation that works for English, Vietnamese and Chinese.

Tokenisation (change it by passing ``tokenizer=`` any ``str -> list[str]``): NFC, lower-case,
word runs kept whole (Vietnamese syllables keep their diacritics), hyphenated codes such as
``ERR-4031`` kept whole and also split into parts, runs of Han/kana characters turned into
character unigrams and bigrams (no segmenter needed), a small English stop list dropped.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence

import numpy as np

from workbench.corpus import Chunk
from workbench.retrieval.base import Hit
from workbench.text import CJK, CJK_RUN, nfc

_TOKEN = re.compile(rf"[{CJK}]+|[^\W_]+(?:[-_.][^\W_]+)*")

ENGLISH_STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "could", "do", "does", "for",
    "from", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my",
    "of", "on", "or", "our", "should", "so", "than", "that", "the", "their", "them", "then",
    "there", "these", "they", "this", "to", "was", "we", "were", "what", "when", "where",
    "which", "who", "why", "will", "with", "would", "you", "your"
})


def tokenize(text: str, stopwords: frozenset[str] = ENGLISH_STOPWORDS) -> list[str]:
    """The default BM25 tokeniser (see module docstring)."""
    out: list[str] = []
    for match in _TOKEN.finditer(nfc(text).lower()):
        token = match.group(0)
        if CJK_RUN.fullmatch(token):
            out.extend(token)
            out.extend(token[i : i + 2] for i in range(len(token) - 1))
            continue
        if token in stopwords:
            continue
        out.append(token)
        parts = re.split(r"[-_.]", token)
        if len(parts) > 1:
            out.extend(p for p in parts if p and p not in stopwords)
    return out


class BM25Retriever:
    """Lexical retrieval over ``Chunk.embed_text`` with bm25s (Lucene BM25, k1=1.5, b=0.75).

    ``backend="auto"`` uses numba above 200k chunks when numba is installed (its ~6 s JIT
    pays off only on large corpora), plain numpy otherwise.
    """

    def __init__(self, chunks: Sequence[Chunk], tokenizer: Callable[[str], list[str]] = tokenize,
                 k1: float = 1.5, b: float = 0.75, backend: str = "auto", name: str = "bm25"):
        import bm25s

        if not chunks:
            raise ValueError("BM25Retriever needs at least one chunk")
        self.name = name
        self.tokenizer = tokenizer
        self.chunk_ids = [c.id for c in chunks]
        self._id_order = np.argsort(np.argsort(self.chunk_ids, kind="stable"))  # id rank
        if backend == "auto":
            backend = "numba" if len(chunks) > 200_000 and _has_numba() else "numpy"
        self.backend = backend
        started = time.perf_counter()
        docs = [tokenizer(c.embed_text) for c in chunks]
        vocab: dict[str, int] = {}
        ids = [[vocab.setdefault(t, len(vocab)) for t in doc] for doc in docs]
        self.vocab = vocab
        self._bm25 = bm25s.BM25(k1=k1, b=b, backend=backend)
        self._bm25.index(bm25s.tokenization.Tokenized(ids=ids, vocab=vocab), show_progress=False)
        self.build_seconds = time.perf_counter() - started

    def __repr__(self) -> str:
        return f"BM25Retriever({len(self.chunk_ids)} chunks, {len(self.vocab)} terms)"

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every chunk for ``query`` (unknown terms contribute nothing)."""
        ids = [self.vocab[t] for t in self.tokenizer(query) if t in self.vocab]
        if not ids:
            return np.zeros(len(self.chunk_ids), dtype=np.float32)
        return np.asarray(self._bm25.get_scores(ids), dtype=np.float32)

    def search(self, query: str, k: int) -> list[Hit]:
        scores = self.scores(query)
        k = min(k, len(scores))
        if k <= 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        # widen to every chunk tied with the k-th score so ties break by chunk id (descending,
        # the one tie rule: see workbench.retrieval.base), not by index
        cutoff = scores[top].min()
        pool = np.flatnonzero(scores >= cutoff)
        ranked = pool[np.lexsort((-self._id_order[pool], -scores[pool]))][:k]
        return [Hit(self.chunk_ids[i], float(scores[i]), r, self.name)
                for r, i in enumerate(ranked, start=1)]


def _has_numba() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True
