"""Building blocks of extracted text, shared by the PDF, HTML and DOCX readers.

:class:`TextBuilder` lays out blocks (paragraphs, ``#`` headings, lines of a table or a
list) and records each heading's offset; :func:`dehyphenate` resolves words broken at line
ends (marked :data:`BREAK`); :func:`warning` and :func:`page_list` format the warnings that
:mod:`~workbench.corpus.extract` documents. Each piece is put in the load-time normal form
(:func:`~workbench.text.normalize_text`: NFC, invisible characters removed) before it is
appended, so the recorded offsets are offsets into the final ``Document.text``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from workbench.text import WORD, normalize_text

__all__ = ["BREAK", "TextBuilder", "Vocabulary", "dehyphenate", "page_list", "warning"]

BREAK = "\ufffe"  # a line-end hyphen awaiting the join-or-keep decision (pdfium's own marker)


class TextBuilder:
    """Builds a document text from blocks (paragraphs, headings, table rows) while recording
    each heading's offset. Blocks are separated by a blank line; ``line()`` adds a line to the
    current block (table rows, list items)."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.headings: list[dict[str, Any]] = []
        self._open = False

    def _write(self, text: str) -> None:
        self.parts.append(text)
        self.length += len(text)

    def _separate(self, sep: str) -> None:
        if self.length:
            self._write(sep)

    def block(self, text: str) -> None:
        text = normalize_text(text).strip()
        if text:
            self._separate("\n\n")
            self._write(text)
            self._open = False

    def line(self, text: str) -> None:
        text = normalize_text(text).strip()
        if text:
            self._separate("\n" if self._open else "\n\n")
            self._write(text)
            self._open = True

    def end_lines(self) -> None:
        self._open = False

    def heading(self, text: str, level: int) -> None:
        text = " ".join(normalize_text(text).split())
        if text:
            level = min(max(level, 1), 6)
            self._separate("\n\n")
            self.headings.append({"start": self.length, "level": level, "text": text})
            self._write("#" * level + " " + text)
            self._open = False

    @property
    def text(self) -> str:
        return "".join(self.parts)


_BROKEN = re.compile(rf"(\w+(?:-\w+)*){BREAK}\n?(\w+)")
_WORD = re.compile(r"\w+(?:-\w+)*")
_ALPHABETIC = re.compile(WORD)


class Vocabulary:
    """The words of a document that :func:`dehyphenate` decides by: those written plain and
    those written with a hyphen (lower-cased; the broken fragments left out). Counted once
    per document, then used for each of its pages."""

    __slots__ = ("hyphenated", "plain")

    def __init__(self, text: str):
        words = _WORD.findall(_BROKEN.sub(" ", text))
        self.plain = frozenset(w.lower() for w in words if "-" not in w)
        self.hyphenated = frozenset(w.lower() for w in words if "-" in w)


def dehyphenate(text: str, vocabulary: Vocabulary | None = None) -> tuple[str, int, int]:
    """Resolve the line-end breaks marked with ``BREAK`` in ``text``: join ``requ|est`` into
    "request", keep ``trade|in`` as "trade-in". Returns the text, the joined and the kept count.

    The rule needs no dictionary: keep the hyphen when the document writes ``a-b`` elsewhere;
    join when it writes ``ab`` elsewhere (also inside a compound: well-estab|lished); keep it
    when ``b`` starts upper-case (Not-Cosmetic), either part is a number, either part is not
    in an alphabetic script (Hangul, Han, kana: those scripts are not hyphenated at line
    ends), both halves are words of the document (follow-up, architecture-dependent), or
    the broken word already has a hyphen and one half is a word (state-of-the|art);
    otherwise join (evalu|ation). ``a`` is the part after the broken word's last hyphen.
    The words are ``vocabulary`` (default: those of ``text``; pass the whole document's
    :class:`Vocabulary` when fixing one page). A join can change the normal form (a Hangul
    syllable and a trailing jamo compose), so fixed text is put back in it."""
    words = vocabulary if vocabulary is not None else Vocabulary(text)
    plain, hyphenated = words.plain, words.hyphenated
    written = plain | hyphenated
    counts = [0, 0]

    def fix(m: re.Match[str]) -> str:
        a, b = m.group(1), m.group(2)
        last = a.rsplit("-", 1)[-1]
        halves = (last.lower() in plain, b.lower() in plain)
        keep = (f"{a}-{b}".lower() in hyphenated or (
            (a + b).lower() not in written and (
                b[:1].isupper() or last.isdigit() or b.isdigit()
                or not (_ALPHABETIC.fullmatch(a[-1]) and _ALPHABETIC.fullmatch(b[0]))
                or all(halves) or ("-" in a and any(halves)))))
        counts[bool(keep)] += 1
        return f"{a}-{b}" if keep else a + b

    fixed = _BROKEN.sub(fix, text)
    fixed = fixed.replace(BREAK + "\n", "-\n").replace(BREAK, "-")
    return normalize_text(fixed), counts[0], counts[1]


def warning(kind: str, message: str, pages: Sequence[int] = ()) -> dict[str, Any]:
    """One warning as stored in ``metadata["extraction"]["warnings"]``."""
    return {"kind": kind, "pages": list(pages), "message": message}


def page_list(pages: Sequence[int]) -> str:
    """``[1, 2, 3, 7]`` -> "1-3, 7"."""
    runs: list[list[int]] = []
    for p in sorted(set(pages)):
        if runs and p == runs[-1][-1] + 1:
            runs[-1].append(p)
        else:
            runs.append([p])
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)
