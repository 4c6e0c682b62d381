"""What a process keeps built for the last corpora it worked on, found by their content.

:class:`LastBuilt` keys a value by the ids and texts it was built from (in order; a digest
of the texts and of their lengths, not a copy), so another call on the same content (a second
labeller over the same corpus) gets the value built the first time, and a changed text or id
builds anew. Only the last few contents are kept: a notebook that moves on lets them go.
"""

from __future__ import annotations

import hashlib
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable
from itertools import chain
from typing import Generic, TypeVar

__all__ = ["LastBuilt"]

V = TypeVar("V")
#: Texts hashed together (a block's copy is all the key ever holds at once).
_BLOCK = 4096


class LastBuilt(Generic[V]):
    """Values built from ``(id, text)`` pairs, kept for the last ``keep`` contents."""

    def __init__(self, keep: int = 2):
        self.keep = keep
        self._built: OrderedDict[bytes, V] = OrderedDict()

    def get(self, pairs: Iterable[tuple[str, str]], build: Callable[[], V]) -> V:
        """The value built for these pairs in this process, else ``build()`` (kept)."""
        parts = list(chain.from_iterable(pairs))
        # the texts one after another and each one's length: no two different lists share
        # both; hashed a block at a time, so no copy of every text is made
        texts = hashlib.blake2b()
        for at in range(0, len(parts), _BLOCK):
            texts.update("".join(parts[at:at + _BLOCK]).encode("utf-8", "surrogatepass"))
        key = texts.digest() + hashlib.blake2b(array("q", map(len, parts)).tobytes()).digest()
        if key not in self._built:
            self._built[key] = build()
            while len(self._built) > self.keep:
                self._built.popitem(last=False)
        self._built.move_to_end(key)
        return self._built[key]
