"""Which languages a collection is written in, from its scripts (and, for Vietnamese, its
diacritics): enough to pick an encoder that can read it, without a language model.

:func:`detect_language` names the language of one text:

* ``"zh"`` Chinese (Han), ``"ja"`` Japanese (Han with kana, or kana), ``"ko"`` Korean (Hangul);
* ``"vi"`` Vietnamese: Latin words of which at least a fifth carry a letter only Vietnamese
  uses (ă đ ơ ư ĩ ũ, and the letters of Unicode's Vietnamese block such as ạ ả ấ ệ ợ);
* ``"latin"`` any other Latin-script text (English, German, French, ... cannot be told apart
  by script);
* ``"cyrillic"``, ``"greek"``, ``"arabic"``, ``"hebrew"``, ``"devanagari"``, ``"thai"``: by
  script; ``""`` for a text without letters.

The unit counted is a word: one Han or kana character, one run of letters otherwise.
:func:`detect_languages` gives the share of each language in a collection, each text
weighted by its words, over an evenly spaced sample.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from workbench.text.scripts import HAN, HANGUL, KANA, fold

__all__ = ["LANGUAGE_NAMES", "VIETNAMESE_LETTERS", "detect_language", "detect_languages"]

#: Readable names of the codes :func:`detect_language` returns.
LANGUAGE_NAMES = {"zh": "Chinese", "ja": "Japanese", "ko": "Korean", "vi": "Vietnamese",
                  "latin": "Latin-script (English or another)", "cyrillic": "Cyrillic-script",
                  "greek": "Greek", "arabic": "Arabic-script", "hebrew": "Hebrew",
                  "devanagari": "Devanagari-script", "thai": "Thai"}
#: Lower-case letters only Vietnamese uses among Latin-script languages.
VIETNAMESE_LETTERS = "ăđơưĩũ" + "".join(chr(c) for c in range(0x1EA1, 0x1EFA, 2))
_SCRIPTS = {  # script -> character class body
    "latin": "A-Za-z\u00c0-\u024f\u1e00-\u1eff",
    "cyrillic": "\u0400-\u052f",
    "greek": "\u0370-\u03ff\u1f00-\u1fff",
    "arabic": "\u0600-\u06ff\u0750-\u077f",
    "hebrew": "\u0590-\u05ff",
    "devanagari": "\u0900-\u097f",
    "thai": "\u0e00-\u0e7f",
    "hangul": HANGUL,
}
_UNIT = re.compile("|".join([rf"(?P<han>[{HAN}])", rf"(?P<kana>[{KANA}])",
                             *(rf"(?P<{name}>[{body}]+)" for name, body in _SCRIPTS.items())]))
_VIETNAMESE = re.compile(f"[{VIETNAMESE_LETTERS}]")
_VIETNAMESE_SHARE = 0.2
_KANA_SHARE = 0.1


def detect_language(text: str) -> str:
    """The language code of ``text`` (see the module docstring), by its most frequent script
    counted in words."""
    return _language_and_words(text)[0]


def detect_languages(texts: Sequence[str], sample: int = 2000) -> dict[str, float]:
    """Share of each language in ``texts``, each text weighted by its words (at most
    ``sample`` texts, evenly spaced), largest first; texts without letters are left out."""
    step = max(1, len(texts) // sample) if texts else 1
    weights: Counter[str] = Counter()
    for text in texts[::step]:
        language, words = _language_and_words(text)
        if language:
            weights[language] += words
    total = sum(weights.values())
    return {lang: w / total for lang, w in weights.most_common()} if total else {}


def _language_and_words(text: str) -> tuple[str, int]:
    units: Counter[str] = Counter()
    vietnamese = 0
    for match in _UNIT.finditer(fold(text)):
        script = match.lastgroup or ""
        units[script] += 1
        if script == "latin" and _VIETNAMESE.search(match.group(0)):
            vietnamese += 1
    words = sum(units.values())
    if not words:
        return "", 0
    kana = units.pop("kana", 0)
    cjk = units.pop("han", 0) + kana
    if cjk:
        units["ja" if kana >= _KANA_SHARE * cjk else "zh"] = cjk
    script = max(sorted(units), key=lambda s: units[s])
    if script == "hangul":
        return "ko", words
    if script == "latin" and vietnamese >= _VIETNAMESE_SHARE * units["latin"]:
        return "vi", words
    return script, words
