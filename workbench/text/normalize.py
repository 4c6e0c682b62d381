"""The one Unicode normal form: every text the workbench loads (documents, questions, quotes,
ids) is NFC-normalised, so character offsets (code points) mean the same everywhere."""

from __future__ import annotations

import unicodedata

__all__ = ["nfc"]


def nfc(text: str) -> str:
    """Unicode NFC normalisation (the one normal form used everywhere)."""
    return unicodedata.normalize("NFC", text)
