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
from tests.conftest import ROOT
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


def test_a_spec_string_runs_where_the_others_do(tmp_path: Path) -> None:
    """``with_embedder`` (what chunks / eval / sweeps / the pipeline / the preview call) gives
    a spec-built semantic chunker its named encoder through the cache, nested too."""
    from workbench.chunking import ContextualHeader, FixedChunker, ParentChildChunker
    from workbench.retrieval import get_encoder, with_embedder
    from workbench.retrieval.cache import EmbeddingCache

    cache = EmbeddingCache(tmp_path)
    spec = "semantic:size=1000,rule=percentile,amount=50,window=0"
    chunker = with_embedder(spec, cache)
    assert chunker.label.endswith("encoder=minilm,unit=chars")
    assert parse_chunker(chunker.label) == chunker
    encoder = get_encoder("minilm")
    direct = SemanticChunker(1000, "percentile", 50, 0).using(
        lambda texts: cache.embed(encoder, texts, progress=False))
    doc = Document("d", "Cats purr. A kitten is a young cat. Bonds fell today. Rates rose.")
    assert [(c.start, c.end) for c in chunker.chunk(doc)] == [
        (c.start, c.end) for c in direct.chunk(doc)]
    assert cache.stats.embedded == 0  # the second pass reused every sentence
    for nested in (f"{spec},header=true", f"parent:parent=({spec}),child=200"):
        built = with_embedder(nested, cache)
        assert isinstance(built, ContextualHeader | ParentChildChunker)
        assert built.chunk(doc) and parse_chunker(built.label) == parse_chunker(nested)
    fixed = FixedChunker(100, 0)
    assert with_embedder(fixed) is fixed  # embeds nothing: as it was
    mine = direct
    assert with_embedder(mine, cache) is mine  # an attached embedder is kept
    with pytest.raises(ValueError, match="encoder must be an encoder name"):
        SemanticChunker(encoder="a=b")


def test_the_cli_chunks_command_takes_a_semantic_spec(tmp_path: Path, capsys) -> None:
    import json

    from workbench.cli import main

    root = ROOT / "data" / "content_types" / "glossary"
    assert main(["chunks", "--corpus", str(root), "--golden",
                 str(root / "golden.jsonl"), "--chunker", "semantic:size=300",
                 "--chunker", "fixed:size=300,overlap=0", "--json", "--cache",
                 str(tmp_path)]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["chunker"] for r in rows] == ["semantic:size=300", "fixed:size=300,overlap=0"]
    assert rows[0]["chunks"] > 1


def test_a_sweep_and_the_pipeline_run_a_semantic_spec(tmp_path: Path) -> None:
    """The same semantic spec scores the same in a sweep and in the one pipeline."""
    from concurrent.futures import ThreadPoolExecutor

    from workbench.corpus import load_folder
    from workbench.evaluation.pipeline import run_pipeline
    from workbench.golden import GoldenSet
    from workbench.retrieval.cache import EmbeddingCache
    from workbench.sweep import run_sweep

    root = ROOT / "data" / "content_types" / "glossary"
    corpus, golden = load_folder(root), GoldenSet.load(root / "golden.jsonl")
    spec = "semantic:size=300,rule=percentile,amount=80,window=0"
    with ThreadPoolExecutor(1) as pool:
        result = run_sweep({"chunker": [spec], "retriever": "bm25"}, golden, corpus,
                           cache=tmp_path, progress=False, executor=pool)
    (config,) = result.config_table.index
    pipeline = result.pipeline(config)
    assert pipeline.chunker is not None and pipeline.chunker.startswith("semantic:")
    ev = run_pipeline(pipeline, corpus, golden, cache=EmbeddingCache(tmp_path)).evaluation
    want = result.frame[result.frame["system"] == config].groupby("metric")["value"].mean()
    got = ev.summary().set_index("metric")["mean"]
    assert got.sort_index().to_dict() == pytest.approx(want.sort_index().to_dict())
