"""Text: token counters (see :mod:`workbench.text.tokens`)."""

from __future__ import annotations

from workbench.text.tokens import (
    COUNTER_NAMES,
    CharCounter,
    Cl100kCounter,
    HFTokenizerCounter,
    TokenCounter,
    get_counter,
    minilm_tokenizer_path,
)

__all__ = ["COUNTER_NAMES", "CharCounter", "Cl100kCounter", "HFTokenizerCounter",
           "TokenCounter", "get_counter", "minilm_tokenizer_path"]
