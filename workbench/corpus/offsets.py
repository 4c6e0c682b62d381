"""Normal forms with a map back to the original code points, and offsets into raw files.

:func:`normal_form` is the form the locator's normalised match compares (NFC, NFKC character
by character, zero-width characters and soft hyphens removed, each whitespace run one space,
ends stripped) together with, per character, the span of original text it came from, so a
match maps back exactly. :class:`RawOffsets` maps offsets into a raw file (BOM, front matter,
CRLF, invisible characters, non-NFC text) to offsets into the document text loaded from it;
:func:`~workbench.corpus.locate.raw_texts` finds the raw file of each document of a folder. Used by
:mod:`~workbench.corpus.locate`.
"""

from __future__ import annotations

import re
import unicodedata

import numpy as np

from workbench.io import WorkbenchError
from workbench.text import INVISIBLE

__all__ = ["FENCE", "MAX_CANDIDATES", "PROBLEMS", "LocateError", "Normalised", "RawOffsets",
           "find_spans", "matching_form", "normal_form", "occurrences"]

PROBLEMS = ("missing", "ambiguous", "unknown_document", "bad_offsets", "empty", "front_matter")
#: What the normalised match removes: the loader's invisible characters and the zero-width
#: (non-)joiners, which the loader keeps.
_ZERO_WIDTH = (*map(ord, INVISIBLE), 0x200C, 0x200D)
_INVISIBLE_CODES = np.array([ord(c) for c in INVISIBLE], dtype=np.uint32)
_WS_TABLE = np.zeros(0x3001, dtype=bool)
_WS_TABLE[[c for c in range(0x3001) if chr(c).isspace()]] = True
FENCE = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)


class LocateError(WorkbenchError):
    """A hit that cannot be located; ``kind`` is one of ``PROBLEMS``."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


def _codes(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)


def _from_codes(codes: np.ndarray) -> str:
    return codes.astype(np.uint32).tobytes().decode("utf-32-le")


def _nfc(text: str, positions: np.ndarray | None = None) -> tuple[str, np.ndarray, np.ndarray]:
    """NFC with, per output character, the ``[start, end)`` (in ``positions``, default the
    indices) of the segment it came from: a starter and the combining marks after it."""
    base = positions if positions is not None else np.arange(len(text), dtype=np.int64)
    parts: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    seg = 0
    for i in range(1, len(text) + 1):
        if i < len(text) and unicodedata.combining(text[i]):
            continue
        out = unicodedata.normalize("NFC", text[seg:i])
        parts.append(out)
        starts.extend([int(base[seg])] * len(out))
        ends.extend([int(base[i - 1]) + 1] * len(out))
        seg = i
    return "".join(parts), np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64)


def normal_form(text: str) -> tuple[str, np.ndarray, np.ndarray]:
    """The normalised text (:func:`matching_form`) and, per normalised character, the
    ``[start, end)`` of the original characters it came from."""
    first = np.arange(len(text), dtype=np.int64)
    last = first + 1
    if not unicodedata.is_normalized("NFC", text):
        text, first, last = _nfc(text)
    codes = _codes(text)
    if not unicodedata.is_normalized("NFKC", text):
        changed = {c: unicodedata.normalize("NFKC", c) for c in set(text) if ord(c) > 0x7F}
        changed = {c: r for c, r in changed.items() if r != c}
        if changed:
            bad = np.isin(codes, np.array([ord(c) for c in changed], dtype=np.uint32))
            lengths = np.ones(len(codes), dtype=np.int64)
            where = np.flatnonzero(bad)
            lengths[where] = [len(changed[chr(codes[i])]) for i in where]
            offsets = np.cumsum(lengths) - lengths
            expanded = np.repeat(codes, lengths)
            for i in where:
                rep = changed[chr(codes[i])]
                if rep:
                    expanded[offsets[i]: offsets[i] + len(rep)] = _codes(rep)
            codes = expanded
            first, last = np.repeat(first, lengths), np.repeat(last, lengths)
    keep = ~np.isin(codes, np.array(_ZERO_WIDTH, dtype=np.uint32))
    codes, first, last = codes[keep], first[keep], last[keep]
    space = np.zeros(len(codes), dtype=bool)
    low = codes < len(_WS_TABLE)
    space[low] = _WS_TABLE[codes[low]]
    run_head = ~space | np.r_[True, ~space[:-1]]
    codes, first, last, space = codes[run_head], first[run_head], last[run_head], space[run_head]
    solid = np.flatnonzero(~space)
    if not len(solid):
        return "", first[:0], last[:0]
    lo, hi = int(solid[0]), int(solid[-1]) + 1
    codes = np.where(space[lo:hi], 32, codes[lo:hi])
    return _from_codes(codes), first[lo:hi], last[lo:hi]


def matching_form(text: str) -> str:
    """The form the normalised match compares: NFC, then NFKC character by character,
    zero-width characters and soft hyphens
    removed, each run of whitespace one space, leading and trailing whitespace stripped."""
    return normal_form(text)[0]


class Normalised:
    """A document's normal form with the map back to its code points."""

    __slots__ = ("first", "last", "text")

    def __init__(self, text: str):
        self.text, self.first, self.last = normal_form(text)

    def span(self, i: int, j: int) -> tuple[int, int]:
        """Original ``[start, end)`` of normalised ``[i, j)`` (j > i)."""
        return int(self.first[i]), int(self.last[j - 1])


class RawOffsets:
    """Maps offsets into a raw file to offsets into the document text loaded from it.

    The loader strips the front matter, turns CRLF into LF and puts the text in the normal
    form (:func:`~workbench.text.normalize_text`: :data:`~workbench.text.INVISIBLE`
    characters, a UTF-8 BOM among them, removed, then NFC); the body is found as the end of
    the raw text so changed (or, failing that, as its only occurrence). ``body_start`` is
    where the body begins in the raw file."""

    def __init__(self, raw: str, body: str, doc_id: str = ""):
        self.doc_id = doc_id
        self._raw_length = len(raw)
        positions: np.ndarray | None = None
        text = raw
        if "\r\n" in text or any(c in text for c in INVISIBLE):
            codes = _codes(text).copy()
            keep = ~np.isin(codes, _INVISIBLE_CODES)
            crlf = np.flatnonzero((codes[:-1] == 13) & (codes[1:] == 10))
            codes[crlf] = 10  # a CRLF becomes the LF at the CR's position
            keep[crlf + 1] = False
            positions = np.flatnonzero(keep)
            text = _from_codes(codes[keep])
        if not unicodedata.is_normalized("NFC", text):
            text, positions, _ = _nfc(text, positions)
        if text.endswith(body):
            offset = len(text) - len(body)
        else:
            offset = text.find(body)
            if offset < 0 or text.find(body, offset + 1) >= 0:
                raise LocateError("bad_offsets", f"document {doc_id!r}: its text is not found "
                                  "once in the raw file given for it: give the file it was "
                                  "loaded from")
        self._offset = offset
        self._positions = positions
        self.body_start = self.to_raw(0)
        self._length = len(body)

    def to_raw(self, body_offset: int) -> int:
        """The raw offset of a body offset."""
        i = self._offset + body_offset
        if self._positions is None:
            return i
        return int(self._positions[i]) if i < len(self._positions) else self._raw_length

    def to_body(self, raw_offset: int) -> int:
        """The body offset of a raw offset, clipped to ``[0, len(body)]`` (front matter maps
        to 0)."""
        i = raw_offset if self._positions is None else int(
            np.searchsorted(self._positions, raw_offset))
        return min(max(i - self._offset, 0), self._length)


MAX_CANDIDATES = 5


def occurrences(haystack: str, needle: str, limit: int = MAX_CANDIDATES + 1) -> list[int]:
    """Start offsets of ``needle`` in ``haystack`` (overlapping ones too), at most ``limit``."""
    found: list[int] = []
    at = haystack.find(needle)
    while at >= 0 and len(found) < limit:
        found.append(at)
        at = haystack.find(needle, at + 1)
    return found


def find_spans(text: str, needle: str, norm: Normalised | None = None,
               limit: int = MAX_CANDIDATES + 1) -> tuple[str, list[tuple[int, int]]]:
    """Where ``needle`` occurs in ``text``: exactly, else after both sides are normalised
    (:func:`matching_form`: each whitespace run one space, NFKC, invisibles dropped), mapped back
    to code points of ``text``. Returns ``("exact" | "normalised", spans)`` (at most
    ``limit``), or ``("", [])``. The one matching rule of hit texts and quoted evidence;
    ``norm`` is ``Normalised(text)`` when the caller keeps one."""
    found = occurrences(text, needle, limit)
    if found:
        return "exact", [(s, s + len(needle)) for s in found]
    normal = matching_form(needle)
    if not normal:
        raise LocateError("empty", "the text holds no characters after normalisation")
    norm = norm if norm is not None else Normalised(text)
    spans = [norm.span(i, i + len(normal)) for i in occurrences(norm.text, normal, limit)]
    return ("normalised", spans) if spans else ("", [])
