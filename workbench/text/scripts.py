"""Writing systems that need their own tokenisation: the one definition of each character
class that tokenisers build on.

* :data:`CJK` (Han ideographs and Japanese kana) is written without spaces between words, so
  BM25 turns its runs into character unigrams and bigrams, grading counts each character as
  a token, and the token estimate of context assembly counts each one as a token.
* :data:`HANGUL` (Korean) is written with spaces between words, but particles attach to the
  word they follow, so BM25 keeps a Hangul word whole and adds its syllable bigrams.
* :data:`WORD` is everything else that makes words (letters and digits of alphabetic
  scripts: Latin, Vietnamese, Cyrillic, Greek, ...). It excludes CJK and Hangul, so a word run
  stops where Han begins: ``2024年`` is ``2024`` then ``年``, ``API的`` is ``API`` then ``的``.

Full-width forms (``ＡＰＩ``, ``２０２４``) and half-width katakana are folded by NFKC
(:func:`fold`) before these classes are applied.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["CJK", "CJK_CHAR", "HAN", "HANGUL", "KANA", "WORD", "fold"]

#: Han ideographs (regex class body, use inside ``[...]``): the iteration mark 々, ideographic
#: zero 〇 and Hangzhou numerals, CJK Unified Ideographs and Extension A, Compatibility
#: Ideographs, and the supplementary-plane extensions B onwards (U+20000-U+323AF).
HAN = (
    "\u3005\u3007\u3021-\u3029\u3038-\u303b\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\U00020000-\U000323af"
)
#: Japanese kana: Hiragana (with its iteration marks), Katakana (with the prolonged-sound
#: mark ー), Katakana Phonetic Extensions and half-width Katakana. The middle dot ・ is
#: punctuation, not kana.
KANA = "\u3041-\u3096\u309d-\u309f\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff\uff66-\uff9d"
#: Korean: Hangul syllables, the Jamo blocks and half-width Jamo.
HANGUL = "\u1100-\u11ff\u3131-\u318e\ua960-\ua97c\uac00-\ud7a3\ud7b0-\ud7fb\uffa0-\uffdc"
#: Han and kana: the scripts tokenised one character at a time.
CJK = HAN + KANA
#: One letter or digit of an alphabetic script: a word character that is not an underscore,
#: CJK or Hangul (a complete regex class; ``WORD + "+"`` is a word run).
WORD = rf"[^\W_{CJK}{HANGUL}]"
#: One CJK character.
CJK_CHAR = re.compile(rf"[{CJK}]")


def fold(text: str) -> str:
    """NFKC and case folding: what tokenisers compare (``ＡＰＩ`` and ``api`` are one word).
    Not for stored text or offsets, which stay NFC (:func:`~workbench.text.nfc`)."""
    return unicodedata.normalize("NFKC", text).casefold()
