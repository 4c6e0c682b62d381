"""The realism scorer: a person's 1-5 scores by click or from Python, and its static form."""

from __future__ import annotations

import pytest

from tests.conftest import HANDBOOK
from workbench.chunking import RecursiveChunker, chunk_corpus
from workbench.corpus import UNRESTRICTED, load_folder
from workbench.golden import GoldenItem
from workbench.synthetic import CopyingQuestionWriter, generate_synthetic, sample_chunks
from workbench.widgets import RealismScorer, realism_scorer_html


def test_realism_scorer_widget():
    docs = load_folder(HANDBOOK / "docs")
    chunks = chunk_corpus(RecursiveChunker(size=600), docs)
    targets = sample_chunks(chunks, 25, docs, seed=3, user_groups=UNRESTRICTED)
    made = generate_synthetic(CopyingQuestionWriter(), targets, docs, user_groups=UNRESTRICTED)
    items = list(made.items[:3])
    assert len(items) == 3
    scorer = RealismScorer(items, documents=docs, user_groups=UNRESTRICTED)
    assert scorer.scores == {} and "0 of 3" in scorer.progress.value
    scorer.set_score(items[0].qid, 4)
    scorer.buttons[items[1].qid].value = 2  # a click
    assert scorer.scores == {items[0].qid: 4, items[1].qid: 2}
    assert "2 of 3" in scorer.progress.value
    with pytest.raises(ValueError):
        scorer.set_score(items[2].qid, 0)
    html = scorer.to_html()
    assert "<script" not in html and items[0].question.split()[0] in html


def test_realism_scorer_html_escapes():
    item = GoldenItem("x", "<script>alert(1)</script>?", relevant_chunk_ids=("c",))
    assert "<script>" not in realism_scorer_html([item], {"x": 3})
