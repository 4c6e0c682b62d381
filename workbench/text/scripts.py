"""Writing systems that need their own tokenisation: the one definition of the CJK character
class. Han ideographs and kana are written without spaces between words, so BM25 turns their
runs into character n-grams, grading counts each character as a token, and the token
estimate of context assembly counts each one as a token. Everyone builds on :data:`CJK`.
"""

from __future__ import annotations

import re

__all__ = ["CJK", "CJK_CHAR", "CJK_RUN"]

#: The body of a regex character class (use inside ``[...]``): Hiragana and Katakana
#: (U+3040-U+30FF), CJK Unified Ideographs Extension A (U+3400-U+4DBF), CJK Unified
#: Ideographs (U+4E00-U+9FFF) and CJK Compatibility Ideographs (U+F900-U+FAFF).
CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
#: One CJK character.
CJK_CHAR = re.compile(rf"[{CJK}]")
#: A run of CJK characters.
CJK_RUN = re.compile(rf"[{CJK}]+")
