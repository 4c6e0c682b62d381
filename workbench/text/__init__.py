"""Text: what every step needs to read text the same way.

Owns the one normal form of loaded text (:func:`normalize_text`: NFC, invisible characters
removed; :func:`nfc` alone for queries) and the neutralising of bidi controls in HTML views
(:func:`neutralise_bidi`, both in :mod:`~workbench.text.normalize`), the character classes of
the writing systems that tokenisers treat apart (CJK, Hangul, alphabetic words) and the
folding tokenisers compare under (:func:`fold`, :mod:`~workbench.text.scripts`), language
detection from scripts (:func:`detect_languages`, :mod:`~workbench.text.languages`)
and the token counters that measure chunk budgets and prompt sizes (:func:`get_counter`,
:mod:`~workbench.text.tokens`).

Layer: the lowest with :mod:`workbench.io`; imports nothing else from the package.
"""

from __future__ import annotations

from workbench.text.languages import LANGUAGE_NAMES, detect_language, detect_languages
from workbench.text.normalize import (
    BIDI_CONTROLS,
    INVISIBLE,
    escape_html,
    frame_html,
    neutralise_bidi,
    nfc,
    normalize_text,
)
from workbench.text.scripts import CJK, CJK_CHAR, HAN, HANGUL, KANA, WORD, fold
from workbench.text.tokens import (
    COUNTER_NAMES,
    CharCounter,
    Cl100kCounter,
    HFTokenizerCounter,
    TokenCounter,
    get_counter,
    minilm_tokenizer_path,
)

__all__ = ["BIDI_CONTROLS", "CJK", "CJK_CHAR", "COUNTER_NAMES", "HAN", "HANGUL", "INVISIBLE",
           "KANA", "LANGUAGE_NAMES", "WORD", "CharCounter", "Cl100kCounter",
           "HFTokenizerCounter", "TokenCounter", "detect_language", "detect_languages",
           "escape_html", "fold", "frame_html", "get_counter", "minilm_tokenizer_path",
           "neutralise_bidi", "nfc",
           "normalize_text"]
