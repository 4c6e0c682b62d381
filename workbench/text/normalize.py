"""The one normal form of loaded text, and making hidden characters visible in HTML.

:func:`normalize_text` is applied once, at load, to everything the workbench reads
(documents, titles, ids, questions, quotes, must-mention strings): Unicode NFC, and the
invisible characters that split a word without showing (:data:`INVISIBLE`: zero-width space
U+200B, word joiner U+2060, zero-width no-break space / BOM U+FEFF, soft hyphen U+00AD)
removed, so ``pass\\u200bword`` is the word ``password`` for BM25, grading and quotes alike.
Zero-width (non-)joiners U+200C/U+200D are kept: they change how Persian, Indic scripts and
emoji are written. Character offsets (code points) refer to the normalised text.

:func:`neutralise_bidi` replaces the bidirectional controls (U+202A-U+202E, U+2066-U+2069)
with a visible ``[U+202E]`` before text is rendered into HTML, so document text cannot
reorder what a reader sees (the "Trojan Source" trick).
"""

from __future__ import annotations

import html
import re
import unicodedata
from typing import Any

__all__ = ["BIDI_CONTROLS", "INVISIBLE", "escape_html", "frame_html", "neutralise_bidi", "nfc",
           "normalize_text"]

INVISIBLE = "\u200b\u2060\ufeff\u00ad"
BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_DROP = dict.fromkeys(map(ord, INVISIBLE))
_BIDI = re.compile(f"[{BIDI_CONTROLS}]")


def nfc(text: str) -> str:
    """Unicode NFC only (offsets into raw text keep their invisible characters); loaded text
    and BM25 queries get :func:`normalize_text`."""
    return unicodedata.normalize("NFC", text)


def normalize_text(text: str) -> str:
    """The one normal form of loaded text: NFC with :data:`INVISIBLE` characters removed."""
    return unicodedata.normalize("NFC", text.translate(_DROP))


def neutralise_bidi(text: str) -> str:
    """``text`` with each bidirectional control shown as its code point, e.g. ``[U+202E]``
    (for HTML views)."""
    return _BIDI.sub(lambda m: f"[U+{ord(m.group()):04X}]", text)


def escape_html(value: Any) -> str:
    """``str(value)`` ready for HTML text or an attribute: bidi controls made visible
    (:func:`neutralise_bidi`), then escaped (quotes included). Every HTML view (the report,
    the trace viewer, the chunk preview) writes user text through it."""
    return html.escape(neutralise_bidi(str(value)), quote=True)


def frame_html(frame: Any, **options: Any) -> str:
    """A pandas DataFrame as an HTML table, every cell, header and index label escaped as by
    :func:`escape_html` (``options`` go to ``DataFrame.to_html``; ``escape`` is always on)."""
    return neutralise_bidi(frame.to_html(**{**options, "escape": True}))
