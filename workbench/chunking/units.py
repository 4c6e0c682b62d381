"""Text units of a document, as exact ``(start, end)`` offsets: fixed windows, paragraphs,
sentences, words and lines, and markdown structure (headings, section paths, blocks).

These are the building blocks of the chunkers (and of new ones): every function takes the
whole document text and returns half-open code-point spans into it, so a chunk cut from them
is always an exact slice. The ``*_units(text, start, end)`` functions are
:data:`~workbench.chunking.packing.Splitter` s: they cut ``[start, end)`` into trimmed,
non-blank units, in order.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass

from workbench.io import WorkbenchError

__all__ = ["Block", "Heading", "heading_at", "is_blank", "line_spans", "line_units",
           "markdown_blocks", "markdown_headings", "paragraph_units", "section_path_at",
           "section_paths", "sentence_spans", "sentence_units", "trim_span", "window_spans",
           "word_units"]

# --------------------------------------------------------------------------- windows


def window_spans(n_tokens: int, size: int, overlap: int = 0) -> list[tuple[int, int]]:
    """Fixed windows over ``n_tokens`` units: ``[(start, end), ...]``, end exclusive.

    Windows are ``size`` long and step by ``size - overlap``; the last one is clipped to
    ``n_tokens`` and no window starts once one has reached the end. ``n_tokens == 0`` gives
    no windows.
    """
    if size < 1:
        raise WorkbenchError(f"window size must be >= 1, got {size}")
    if not 0 <= overlap < size:
        raise WorkbenchError(f"overlap must satisfy 0 <= overlap < size ({size}), got {overlap}")
    if n_tokens < 0:
        raise WorkbenchError(f"n_tokens must be >= 0, got {n_tokens}")
    spans: list[tuple[int, int]] = []
    start = 0
    while start < n_tokens:
        spans.append((start, min(start + size, n_tokens)))
        if start + size >= n_tokens:
            break
        start += size - overlap
    return spans


# --------------------------------------------------------------------------- text units


def trim_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink ``[start, end)`` past leading and trailing whitespace."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def is_blank(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is empty or whitespace only."""
    s, e = trim_span(text, start, end)
    return s >= e


def line_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """``(start, end)`` of each line in ``text[start:end]``, without its newline."""
    end = len(text) if end is None else end
    out = []
    pos = start
    while pos < end:
        nl = text.find("\n", pos, end)
        stop = end if nl < 0 else nl
        out.append((pos, stop))
        pos = stop + 1
    return out


def _trimmed_between(text: str, cuts: Sequence[int], start: int, end: int) -> list[tuple[int, int]]:
    """The non-blank pieces of ``[start, end)`` cut at ``cuts`` (sorted positions)."""
    bounds = [start, *[c for c in cuts if start < c < end], end]
    out = []
    for a, b in itertools.pairwise(bounds):
        s, e = trim_span(text, a, b)
        if s < e:
            out.append((s, e))
    return out


_PARA_BREAK = re.compile(r"\n\s*\n")
_WORD = re.compile(r"\S+")
# Sentence ends: . ! ? … (Latin, Vietnamese) before whitespace, possibly closed by quotes or
# brackets; CJK full-width 。！？； with no space needed; and every line break.
_SENT_END = re.compile(
    r"[.!?…]+[\"'”’»)\]]*(?=\s)"
    r"|[。！？；]+[\"'”’」』）)]*"
    r"|\n"
)


def paragraph_units(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The paragraphs of ``[start, end)``: cut at blank lines, trimmed."""
    cuts: list[int] = []
    for m in _PARA_BREAK.finditer(text, start, end):
        cuts.extend((m.start(), m.end()))
    return _trimmed_between(text, cuts, start, end)


def sentence_units(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The sentences of ``[start, end)``, trimmed (sentence ends as in :func:`sentence_spans`)."""
    cuts = [m.end() for m in _SENT_END.finditer(text, start, end)]
    return _trimmed_between(text, cuts, start, end)


def word_units(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The whitespace-separated words of ``[start, end)``."""
    return [m.span() for m in _WORD.finditer(text, start, end)]


def line_units(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The non-blank lines of ``[start, end)``, each trimmed of surrounding whitespace."""
    trimmed = (trim_span(text, a, b) for a, b in line_spans(text, start, end))
    return [(s, e) for s, e in trimmed if s < e]


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Sentence ``(start, end)`` spans of ``text``, trimmed of surrounding whitespace.

    A sentence ends at ``. ! ? …`` followed by whitespace (closing quotes and brackets stay
    with it), right after a CJK ``。！？；``, and at every line break.
    """
    return sentence_units(text, 0, len(text))


# --------------------------------------------------------------------------- markdown


@dataclass(frozen=True)
class Heading:
    """An ATX heading line ``[start, end)`` of ``level`` 1-6 and its ``title``."""

    start: int
    end: int
    level: int
    title: str


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_ATX_CLOSE = re.compile(r"(?:^|[ \t]+)#+$")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")


def _fence_close(text: str, lines: list[tuple[int, int]], i: int) -> int:
    """Index of the line closing the fence opened at line ``i`` (last line if unclosed)."""
    opening = _FENCE.match(text[lines[i][0] : lines[i][1]])
    assert opening is not None
    marker = opening.group(1)
    for j in range(i + 1, len(lines)):
        m = _FENCE.match(text[lines[j][0] : lines[j][1]])
        if (
            m
            and m.group(1)[0] == marker[0]
            and len(m.group(1)) >= len(marker)
            and not text[lines[j][0] + m.end() : lines[j][1]].strip()
        ):
            return j
    return len(lines) - 1


def heading_at(text: str, start: int, end: int) -> Heading | None:
    """The heading on the line ``[start, end)``, or None when it is not one."""
    m = _ATX.match(text[start:end])
    if not m:
        return None
    title = _ATX_CLOSE.sub("", (m.group(2) or "").strip()).strip()
    return Heading(start, end, len(m.group(1)), title)


def markdown_headings(text: str) -> list[Heading]:
    """ATX headings (``#`` to ``######`` lines) of ``text``, skipping fenced code blocks."""
    lines = line_spans(text)
    out = []
    i = 0
    while i < len(lines):
        s, e = lines[i]
        if _FENCE.match(text[s:e]):
            i = _fence_close(text, lines, i) + 1
            continue
        heading = heading_at(text, s, e)
        if heading:
            out.append(heading)
        i += 1
    return out


def section_paths(headings: Sequence[Heading]) -> list[list[str]]:
    """The section path (h1 down) in force right after each heading."""
    stack: list[Heading] = []
    out = []
    for h in headings:
        while stack and stack[-1].level >= h.level:
            stack.pop()
        stack.append(h)
        out.append([x.title for x in stack])
    return out


def section_path_at(text: str, pos: int) -> list[str]:
    """Heading titles (h1 down) of the section holding position ``pos`` of ``text``."""
    headings = markdown_headings(text)
    i = bisect.bisect_right([h.start for h in headings], pos)
    return section_paths(headings)[i - 1] if i else []


@dataclass(frozen=True)
class Block:
    """A markdown block ``[start, end)``: ``kind`` is heading | code | table | para; headings
    carry their ``level`` and ``title``."""

    kind: str  # heading | code | table | para
    start: int
    end: int
    level: int = 0
    _: KW_ONLY
    title: str = ""


def _table_starts(text: str, lines: list[tuple[int, int]], i: int) -> bool:
    if i + 1 >= len(lines):
        return False
    s, e = lines[i]
    s2, e2 = lines[i + 1]
    return "|" in text[s:e] and "|" in text[s2:e2] and bool(_TABLE_SEP.match(text[s2:e2]))


def markdown_blocks(text: str) -> list[Block]:
    """Headings, fenced code blocks, pipe tables and paragraphs, in order."""
    lines = line_spans(text)
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        s, e = lines[i]
        if is_blank(text, s, e):
            i += 1
            continue
        if _FENCE.match(text[s:e]):
            j = _fence_close(text, lines, i)
            blocks.append(Block("code", s, lines[j][1]))
            i = j + 1
            continue
        heading = heading_at(text, s, e)
        if heading:
            blocks.append(Block("heading", s, e, heading.level, title=heading.title))
            i += 1
            continue
        if _table_starts(text, lines, i):
            j = i + 2
            while j < len(lines) and "|" in text[lines[j][0] : lines[j][1]]:
                if is_blank(text, *lines[j]):
                    break
                j += 1
            blocks.append(Block("table", s, lines[j - 1][1]))
            i = j
            continue
        j = i + 1
        while j < len(lines):
            ls, le = lines[j]
            if (
                is_blank(text, ls, le)
                or _FENCE.match(text[ls:le])
                or heading_at(text, ls, le)
                or _table_starts(text, lines, j)
            ):
                break
            j += 1
        blocks.append(Block("para", s, lines[j - 1][1]))
        i = j
    return blocks
