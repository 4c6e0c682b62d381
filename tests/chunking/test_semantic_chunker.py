"""Semantic chunking: chunk invariants, cuts only at sentence ends and breakpoints, the
breakpoint rules (metamorphic: a lower percentile never cuts less), through the embedding
cache with the packaged MiniLM model."""

from __future__ import annotations

import hashlib
import itertools
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from tests.chunking.test_chunking import FAST, check_invariants, documents
from workbench.chunking import parse_chunker
from workbench.chunking.semantic import SemanticChunker, breakpoints
from workbench.chunking.units import sentence_units
from workbench.corpus import Document


def bag_of_words(texts: Sequence[str]) -> np.ndarray:
    """A deterministic embedder: hashed word counts (enough to make topics differ)."""
    out = np.zeros((len(texts), 64))
    for i, t in enumerate(texts):
        for w in t.lower().split():
            out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % 64] += 1
    return out


@FAST
@given(doc=documents(), size=st.integers(1, 300),
       rule=st.sampled_from(["percentile", "stdev", "gradient"]), window=st.integers(0, 2))
def test_semantic_chunks_hold_the_invariants_and_cut_at_sentence_ends(
        doc: Document, size: int, rule: str, window: int) -> None:
    chunker = SemanticChunker(size, rule, 0, window).using(bag_of_words)
    chunks = chunker.chunk(doc)
    check_invariants(doc, chunker, chunks)
    ends = {b for _, b in sentence_units(doc.text, 0, len(doc.text))}
    for a, b in itertools.pairwise(chunks):
        if a.metadata["group"] != b.metadata["group"]:
            assert a.end in ends, "a group ends at a sentence end"
            assert b.metadata["group"] == a.metadata["group"] + 1


@FAST
@given(d=st.lists(st.floats(0, 2), max_size=30), lo=st.floats(0, 100), hi=st.floats(0, 100))
def test_lower_percentile_never_cuts_less(d: list[float], lo: float, hi: float) -> None:
    lo, hi = min(lo, hi), max(lo, hi)
    for rule in ("percentile", "gradient"):
        assert set(breakpoints(d, rule, hi)) <= set(breakpoints(d, rule, lo))
    assert set(breakpoints(d, "stdev", hi / 10)) <= set(breakpoints(d, "stdev", lo / 10))


def test_stdev_rule_finds_the_one_drop() -> None:
    d = [0.1] * 20 + [0.9] + [0.1] * 20
    assert breakpoints(d, "stdev", 3.0) == [20]
    assert breakpoints([0.3] * 5, "percentile", 50) == []


def test_spec_round_trip_and_missing_embedder() -> None:
    chunker = parse_chunker("semantic:size=300,rule=stdev,amount=2.5,window=0")
    assert parse_chunker(chunker.label) == chunker == chunker.using(bag_of_words)
    with pytest.raises(ValueError, match="needs an embedder"):
        chunker.chunk(Document("d", "One. Two."))
    with pytest.raises(ValueError, match="rule must be one of"):
        parse_chunker("semantic:rule=magic")


def test_topic_shift_with_minilm_through_the_cache(tmp_path: Path) -> None:
    from workbench.retrieval import get_encoder
    from workbench.retrieval.cache import EmbeddingCache

    encoder = get_encoder("minilm")
    cache = EmbeddingCache(tmp_path)
    chunker = SemanticChunker(1000, "percentile", 50, 0).using(
        lambda texts: cache.embed(encoder, texts, progress=False))
    cats = "Cats are small furry pets. Cats purr when they are happy. A kitten is a young cat."
    bonds = ("The bond market fell sharply today. Investors sold government bonds. "
             "Interest rates on bonds rose.")
    doc = Document("d", f"{cats} {bonds}")
    chunks = chunker.chunk(doc)
    assert any(c.end == len(cats) for c in chunks), [c.text for c in chunks]
    assert cache.stats.embedded == 6
    chunker.chunk(doc)
    assert cache.stats.embedded == 0 and cache.stats.reused == 6
