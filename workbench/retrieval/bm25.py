"""BM25 over chunks (bm25s), with tokenisation that works for English, Vietnamese, Chinese,
Japanese and Korean.

Scoring is Okapi BM25 (Robertson and Zaragoza, "The probabilistic relevance framework: BM25
and beyond", Foundations and Trends in IR 3(4), 2009) as bm25s computes it (Lù, "BM25S:
orders of magnitude faster lexical search via eager sparse scoring", 2024; its default
"lucene" variant: idf = ln(1 + (N - df + 0.5) / (df + 0.5)), k1 = 1.5, b = 0.75).

Tokenisation (change it by passing ``tokenizer=`` any ``str -> list[str]``): the load-time
normal form (:func:`~workbench.text.normalize_text`, so a query typed or pasted with a
zero-width space reads as the loaded text does), NFKC and case folding
(:func:`~workbench.text.fold`: full-width ``ＡＰＩ２０２４`` reads as ``api2024``), then by
script (:mod:`workbench.text.scripts`):

* runs of Han and kana become character unigrams and bigrams (no segmenter needed);
  the unigrams of Chinese question words and particles (什 么 哪 谁 吗 呢) are dropped, as
  English question words are, while the bigrams that hold them (什么, 哪吒) are kept;
* a Hangul word is kept whole and also gives its syllable bigrams, so ``서울`` matches
  ``서울에서`` (a word with its particle);
* a word of an alphabetic script is kept whole (Vietnamese syllables keep their diacritics);
  codes joined by ``-``, ``_`` or ``.`` (``ERR-4031``, ``v2.1``) are kept whole and also split
  into their parts; a small English stop list is dropped.

The stop list (:data:`STOPWORDS`: English words and the Chinese characters above) is a
parameter. Measured on CMRC 2018 (``benchmarks/bench_bm25_chinese.py``), dropping the
Chinese question characters raised MRR@5 from 0.977 to 0.984 on dev, and from 0.983 to 0.987
on the trial split that was held out while choosing them.

A word never runs across a change of script: ``2024年的退款政策`` is ``2024`` then the Han run,
``API的速率`` is ``api`` then the Han run.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from itertools import chain

import numpy as np

from workbench.corpus import Chunk
from workbench.io import WorkbenchError
from workbench.ranking import id_ranks, top_k
from workbench.retrieval.base import Hit
from workbench.text import CJK, HANGUL, WORD, fold, normalize_text

_TOKEN = re.compile(rf"(?P<cjk>[{CJK}]+)|(?P<hangul>[{HANGUL}]+)|{WORD}+(?:[-_.]{WORD}+)*")
_CODE_JOINER = re.compile(r"[-_.]")

ENGLISH_STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "could", "do", "does", "for",
    "from", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my",
    "of", "on", "or", "our", "should", "so", "than", "that", "the", "their", "them", "then",
    "there", "these", "they", "this", "to", "was", "we", "were", "what", "when", "where",
    "which", "who", "why", "will", "with", "would", "you", "your"
})
#: Chinese question words and particles, dropped as unigrams (their bigrams are kept).
CHINESE_STOPWORDS = frozenset("什么哪谁吗呢")
#: The default stop list of :func:`tokenize`.
STOPWORDS = ENGLISH_STOPWORDS | CHINESE_STOPWORDS


def tokenize(text: str, stopwords: frozenset[str] = STOPWORDS) -> list[str]:
    """The default BM25 tokeniser (see the module docstring)."""
    out: list[str] = []
    for match in _TOKEN.finditer(fold(normalize_text(text))):
        token = match.group(0)
        if match.group("cjk"):
            out.extend(c for c in token if c not in stopwords)
            out.extend(_bigrams(token))
        elif match.group("hangul"):
            out.append(token)
            if len(token) > 2:
                out.extend(_bigrams(token))
        elif token not in stopwords:
            out.append(token)
            parts = _CODE_JOINER.split(token)
            if len(parts) > 1:
                out.extend(p for p in parts if p not in stopwords)
    return out


def _bigrams(run: str) -> list[str]:
    return [run[i : i + 2] for i in range(len(run) - 1)]


class BM25Retriever:
    """Lexical retrieval over ``Chunk.embed_text`` with bm25s (Lucene BM25, k1=1.5, b=0.75).

    ``backend="auto"`` uses numba above 200k chunks when numba is installed (its ~6 s JIT
    pays off only on large corpora), plain numpy otherwise.
    """

    def __init__(self, chunks: Sequence[Chunk], *, tokenizer: Callable[[str], list[str]] = tokenize,
                 k1: float = 1.5, b: float = 0.75, backend: str = "auto", name: str = "bm25"):
        import bm25s

        if not chunks:
            raise WorkbenchError("BM25Retriever needs at least one chunk")
        self.name = name
        self.tokenizer = tokenizer
        self.chunk_ids = [c.id for c in chunks]
        self._id_rank = id_ranks(self.chunk_ids)  # for the tie rule (workbench.ranking)
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
        ranked = top_k(self.chunk_ids, scores, k, id_rank=self._id_rank)
        return [Hit(self.chunk_ids[i], float(scores[i]), r, self.name)
                for r, i in enumerate(ranked, start=1)]


def _has_numba() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


_BUILT: OrderedDict[bytes, BM25Retriever] = OrderedDict()
_KEEP = 2  # chunkings whose BM25 stays built


def bm25_for(chunks: Sequence[Chunk]) -> BM25Retriever:
    """BM25 at its defaults over ``chunks``, built once per chunking in this process: a later
    call with the same chunk ids and texts (another labeller over the same corpus) gets the
    same retriever (read-only once built). The last two chunkings are kept."""
    key = hashlib.blake2b("\x00".join(chain.from_iterable(
        (c.id, c.embed_text) for c in chunks)).encode("utf-8", "surrogatepass")).digest()
    if key not in _BUILT:
        _BUILT[key] = BM25Retriever(chunks)
        while len(_BUILT) > _KEEP:
            _BUILT.popitem(last=False)
    _BUILT.move_to_end(key)
    return _BUILT[key]

