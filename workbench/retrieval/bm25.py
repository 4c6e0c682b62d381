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

import math
import re
import time
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence, Sized
from typing import Any

import numpy as np

from workbench.corpus import Chunk
from workbench.io import WorkbenchError
from workbench.ranking import id_ranks, top_k
from workbench.retrieval.base import Hit
from workbench.runtime.memo import LastBuilt
from workbench.text import CJK, HANGUL, WORD, fold, normalize_text

_TOKEN = re.compile(rf"(?P<cjk>[{CJK}]+)|(?P<hangul>[{HANGUL}]+)|{WORD}+(?:[-_.]{WORD}+)*")
_CODE_JOINER = re.compile(r"[-_.]")
_ASIAN = re.compile(rf"[{CJK}{HANGUL}]")
_WORDS = re.compile(rf"{WORD}+(?:[-_.]{WORD}+)*")

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
    if text.isascii():  # its normal form and folding are its lower case; no Asian script
        return _words(text.lower(), stopwords)
    folded = fold(normalize_text(text))
    if _ASIAN.search(folded) is None:  # alphabetic scripts only: the same rules, faster
        return _words(folded, stopwords)
    out: list[str] = []
    for match in _TOKEN.finditer(folded):
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


def _words(folded: str, stopwords: frozenset[str]) -> list[str]:
    """:func:`tokenize` of a folded text without Han, kana or Hangul: its words, a code
    (a word holding ``-``, ``_`` or ``.``: not alphanumeric) followed by its parts."""
    out: list[str] = []
    for token in _WORDS.findall(folded):
        if token not in stopwords:
            out.append(token)
            if not token.isalnum():
                out.extend(p for p in _CODE_JOINER.split(token) if p not in stopwords)
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
        vocab: defaultdict[str, int] = defaultdict()
        vocab.default_factory = vocab.__len__  # a new term takes the next id
        self._bm25 = bm25s.BM25(k1=k1, b=b, backend=backend)
        self._bm25.scores = _lucene_index(_token_ids(chunks, tokenizer, vocab), vocab, k1, b)
        vocab.default_factory = None  # built: an unknown term is a KeyError, as in a dict
        self.vocab: dict[str, int] = vocab
        self._bm25.vocab_dict = self.vocab
        self._bm25.nonoccurrence_array = None  # the lucene variant has none
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


#: Chunks whose token ids are counted together while the index is built: the memory of a
#: build is the index plus one block's tokens, never a token list per chunk.
BLOCK = 50_000


def _token_ids(chunks: Sequence[Chunk], tokenizer: Callable[[str], list[str]],
               vocab: defaultdict[str, int]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Blocks of :data:`BLOCK` chunks as (token ids one chunk after another, int32; tokens
    per chunk), the ids read from ``vocab``, which gives a term it lacks the next id (ids
    in order of first appearance)."""
    for at in range(0, len(chunks), BLOCK):
        flat = array("i")
        lengths = array("q")
        for chunk in chunks[at:at + BLOCK]:
            tokens = tokenizer(chunk.embed_text)
            lengths.append(len(tokens))
            flat.extend(map(vocab.__getitem__, tokens))
        yield np.frombuffer(flat, np.int32), np.frombuffer(lengths, np.int64)


def _lucene_index(blocks: Iterator[tuple[np.ndarray, np.ndarray]], vocab: Sized,
                  k1: float, b: float) -> dict[str, Any]:
    """bm25s's index (``scores``: the Lucene BM25 score of each term in each chunk, a CSC
    matrix by term) from blocks of token ids, in arrays: each block is reduced to its
    (term, chunk, frequency) triples, then every score is computed as bm25s computes it
    (float64, stored float32) and placed by term. ``vocab`` (the terms) is read after the
    blocks, which fill it."""
    triples, lengths = [], []
    done = 0
    for ids, length in blocks:
        n = len(length)
        key = ids.astype(np.int64) * n + np.repeat(np.arange(n, dtype=np.int64), length)
        key.sort()
        first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if key.size else key[:0]
        tf = np.diff(np.r_[first, key.size]).astype(np.uint16 if n and int(
            length.max()) < 65_536 else np.uint32)
        pairs = key[first]
        triples.append(((pairs // n).astype(np.int32), (pairs % n + done).astype(np.int32),
                        tf))
        lengths.append(length)
        done += n
        del key, first, pairs
    terms = max(len(vocab), 1)
    dl = np.concatenate(lengths) if lengths else np.zeros(0, np.int64)
    df = np.zeros(terms, np.int64)
    for term, _, _ in triples:
        df += np.bincount(term, minlength=terms)
    idf = np.array([math.log(1 + (done - f + 0.5) / (f + 0.5)) for f in df.tolist()],
                   np.float32)  # math.log per term, as bm25s
    avg = dl.mean() if done else np.float64(0.0)
    indptr = np.zeros(terms + 1, np.int64)
    np.cumsum(df, out=indptr[1:])
    data = np.empty(int(indptr[-1]), np.float32)
    indices = np.empty(int(indptr[-1]), np.int32)
    cursor = indptr[:-1].copy()
    while triples:  # blocks in chunk order, so each term's chunks stay ascending
        term, doc, tf = triples.pop(0)
        counts = np.bincount(term, minlength=terms)
        run = np.repeat(np.cumsum(counts) - counts, counts)  # where each term's run starts
        at = cursor[term] + (np.arange(term.size) - run)
        cursor += counts
        tf64 = tf.astype(np.float64)
        data[at] = idf[term].astype(np.float64) * (
            tf64 / (k1 * ((1 - b) + b * dl[doc] / avg) + tf64))
        indices[at] = doc
    return {"data": data, "indices": indices, "indptr": indptr, "num_docs": done}


def _has_numba() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


#: The BM25 of the last two chunkings (:func:`bm25_for`).
_BUILT: LastBuilt[BM25Retriever] = LastBuilt(keep=2)


def bm25_for(chunks: Sequence[Chunk]) -> BM25Retriever:
    """BM25 at its defaults over ``chunks``, built once per chunking in this process: a later
    call with the same chunk ids and texts (another labeller over the same corpus) gets the
    same retriever (read-only once built). The last two chunkings are kept."""
    return _BUILT.get(((c.id, c.embed_text) for c in chunks), lambda: BM25Retriever(chunks))

