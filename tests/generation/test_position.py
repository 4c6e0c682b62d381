"""Lost in the middle: gold placement, the experiment, loaders and the figure."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.generation import Answer, ExtractiveReader
from workbench.generation.context import AssembledContext, Passage
from workbench.generation.nq_open import load_nq_open, load_reference_curves
from workbench.generation.position import (
    PositionItem,
    default_positions,
    handbook_position_items,
    place_gold,
    position_experiment,
)
from workbench.widgets.position_plot import PositionPlot, position_figure


def passage(cid: str, text: str) -> Passage:
    return Passage("", cid, cid.split("#")[0], text)


class Recorder:
    """Records every context it is asked with; passes when the gold passage is first."""

    model_id = "recorder"
    prompt_version = "rec-v1"

    def __init__(self):
        self.seen: list[tuple[str, AssembledContext]] = []

    def generate(self, question, context):
        self.seen.append((question, context))
        first = context.passages[0].text if context.passages else ""
        return Answer(first, (), self.model_id, self.prompt_version)


def items(n=4, distractors=6):
    out = []
    for i in range(n):
        out.append(PositionItem(
            f"q{i}", f"question {i}?", passage(f"gold{i}#0", f"the answer is ANSWER{i}"),
            tuple(passage(f"noise{i}-{j}#0", f"noise {i} {j}") for j in range(distractors)),
            answers=(f"ANSWER{i}",), match="any", category="test"))
    return out


def test_default_positions():
    assert default_positions(1) == [0]
    assert default_positions(5) == [0, 1, 2, 3, 4]
    assert default_positions(10) == [0, 4, 9]
    assert default_positions(20) == [0, 4, 9, 14, 19]
    assert default_positions(30) == [0, 4, 9, 14, 19, 24, 29]
    with pytest.raises(ValueError):
        default_positions(0)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(min_value=0, max_value=12), data=st.data())
def test_place_gold_exact(n, data):
    gold = passage("gold#0", "G")
    ds = [passage(f"d{i}#0", f"D{i}") for i in range(n)]
    pos = data.draw(st.integers(min_value=0, max_value=n))
    placed = place_gold(gold, ds, pos)
    assert placed[pos] is gold and len(placed) == n + 1
    assert [p for p in placed if p is not gold] == ds  # distractor order kept
    with pytest.raises(ValueError):
        place_gold(gold, ds, n + 1)


def test_experiment_places_gold_exactly_where_asked():
    rec = Recorder()
    result = position_experiment(rec, items(), n_positions=5)
    assert len(rec.seen) == 4 * 5 and result.positions == (0, 1, 2, 3, 4)
    for (question, ctx), row in zip(rec.seen, result.frame.itertuples(), strict=True):
        assert len(ctx.passages) == 5
        gold = ctx.passages[row.position]
        assert gold.chunk_id == row.gold_id == f"gold{question.split()[1][0]}#0"
        assert gold.label == f"P{row.position + 1}" == row.gold_label
        assert sum(p.chunk_id.startswith("gold") for p in ctx.passages) == 1
        others = [p.chunk_id for p in ctx.passages if p is not gold]
        assert others == sorted(others, key=lambda c: int(c.split("-")[1].split("#")[0]))
    summary = result.summary().set_index("position")
    assert summary.loc[0, "accuracy"] == 1.0 and summary.loc[3, "accuracy"] == 0.0
    assert (summary["n"] == 4).all() and list(summary["rank"]) == [1, 2, 3, 4, 5]
    # 4 of 4 is no certainty: the exact interval reaches down to 0.40, and n < 10 is marked
    assert summary.loc[0, "ci_low"] == pytest.approx(0.3976, abs=1e-4)
    assert summary.loc[0, "ci_high"] == 1.0 and summary["small_n"].all()


def test_experiment_custom_positions_and_distractor_sources():
    rec = Recorder()
    result = position_experiment(rec, items(3, distractors=1), n_positions=4, positions=[0, 3],
                                 distractors="own")
    # each item has 1 own distractor: topped up from other questions' gold passages
    for _, ctx in rec.seen:
        assert len(ctx.passages) == 4
    assert result.skipped == () and set(result.frame["position"]) == {0, 3}
    rec2 = Recorder()
    position_experiment(rec2, items(3, distractors=0), n_positions=3, distractors="others")
    for _question, ctx in rec2.seen:
        ids = [p.chunk_id for p in ctx.passages]
        assert all(i.startswith("gold") for i in ids) and len(set(ids)) == 3
    too_few = position_experiment(Recorder(), items(2, distractors=0), n_positions=5)
    assert too_few.skipped == ("q0", "q1") and too_few.frame.empty
    with pytest.raises(ValueError):
        position_experiment(Recorder(), items(), n_positions=3, positions=[3])
    with pytest.raises(ValueError):
        position_experiment(Recorder(), items(), n_positions=3, distractors="random")


def test_distractors_never_contain_the_answer():
    tricky = items(2, distractors=3)
    leaky = PositionItem("q9", "question 9?", passage("gold9#0", "ANSWER9 here"),
                         (passage("leak#0", "also ANSWER9"), *tricky[0].distractors),
                         answers=("ANSWER9",), match="any")
    rec = Recorder()
    position_experiment(rec, [leaky, *tricky], n_positions=3)
    for question, ctx in rec.seen:
        if question == "question 9?":
            assert "leak#0" not in ctx.chunk_ids


def test_extractive_control_is_flat_and_closed_book():
    # gold and distractor sentences tie on question terms: only the tie-break decides
    tied = [PositionItem(f"t{i}", f"when is pickup {i}", passage(f"g{i}#0", f"Pickup {i} is at 9."),
                         (passage(f"n{i}#0", f"Pickup {i} is at noon."),), answers=("9",),
                         match="any")
            for i in range(3)]
    blind = position_experiment(ExtractiveReader(position_blind=True), tied, n_positions=2,
                                closed_book=True)
    assert blind.summary()["accuracy"].nunique() == 1  # position-blind: a flat curve
    assert blind.closed_book_accuracy() == 0.0
    ranked = position_experiment(ExtractiveReader(), tied, n_positions=2)
    assert list(ranked.summary()["accuracy"]) == [1.0, 0.0]  # ties go to the first passage


def test_handbook_items(handbook):
    from workbench.chunking import FixedChunker, chunk_corpus
    from workbench.generation.grading import must_mention
    from workbench.retrieval.bm25 import BM25Retriever

    docs, golden = handbook
    chunks = chunk_corpus(FixedChunker(size=800, overlap=100), docs)
    hb = handbook_position_items(BM25Retriever(chunks), golden, chunks, docs, n_distractors=4,
                                 user_groups=["engineering"])
    assert len(hb) > 30
    restricted = {"procurement", "security-incident-runbook", "expenses-travel-2024",
                  "policy-refunds-2023"}
    for it in hb:
        assert must_mention(it.gold.text, it.answers)
        assert it.match == "all"
        for d in it.distractors:
            assert not must_mention(d.text, it.answers)
            assert d.doc_id not in restricted
        assert it.gold.doc_id not in restricted
    assert not {"q023", "q032"} & {it.qid for it in hb}  # procurement-only answers


def test_nq_open_loader_and_reference(datasets):
    folder = datasets / "lost_in_the_middle"
    if not (folder / "qa_data" / "nq-open-oracle.jsonl.gz").exists():
        pytest.skip("nq-open-oracle.jsonl.gz not in the shared datasets")
    nq = load_nq_open(folder, limit=5, n_distractors=9, pool=60)
    assert len(nq) == 5
    for it in nq:
        assert it.passes(it.gold.text)
        assert len(it.distractors) == 9
        assert not any(it.passes(d.text) for d in it.distractors)
    ref = load_reference_curves(folder)
    assert ref["n_documents"] == 20
    assert set(ref["curves"]["longchat-13b-16k"]) == {0, 4, 9, 14, 19}
    assert ref["curves"]["longchat-13b-16k"][0] == pytest.approx(0.6858757062146893)


def test_loader_skips_cleanly_when_absent(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_nq_open(tmp_path / "nowhere")


def test_position_figure_static_and_widget():
    result = position_experiment(Recorder(), items(), n_positions=5, closed_book=True)
    fig = position_figure(result)
    assert len(fig.data) == 1 and list(fig.data[0].x) == [1, 2, 3, 4, 5]
    assert fig.data[0].error_y.array is not None
    ref = {"curves": {"published-model": {0: 0.7, 4: 0.5, 9: 0.55, 14: 0.5, 19: 0.6}},
           "n_documents": 20, "source": "a <b>source</b>"}
    both = position_figure(result, ref)
    assert len(both.data) == 2 and both.data[1].line.dash == "dash"
    assert list(both.data[1].x) == [1, 5, 10, 15, 20]
    assert "&lt;b&gt;" in "".join(a.text for a in both.layout.annotations)
    # titles fit their half-width panel (two short lines); the source is never cut
    long_source = "Liu et al. 2023, Lost in the Middle: How Language Models Use Long " * 4
    wide = position_figure(result, {**ref, "source": long_source}, title="a long title")
    panels = [a.text for a in wide.layout.annotations if a.text.startswith(("This", "Pub"))]
    assert len(panels) == 2 and all(max(map(len, t.split("<br>"))) <= 45 for t in panels)
    note = next(a.text for a in wide.layout.annotations if "Liu" in a.text)
    assert note.replace("<br>", " ").split() == long_source.split()
    plain = position_figure(result, {"mine": {0: 0.5, 1: 0.4}})
    assert len(plain.data) == 2
    view = PositionPlot(result, ref)
    html = view.select(0)
    assert view.selected_position == 0 and "q0" in html
    evil = position_experiment(Recorder(), [PositionItem(
        "<script>", "q?", passage("g#0", "<script>x</script>"), (), answers=("x",))],
        n_positions=1)
    assert "<script>" not in PositionPlot(evil).select(0)


def test_handbook_items_respect_chunk_level_acl(handbook):
    """A chunk restricted by its own ``metadata["acl"]`` inside a public document is neither a
    gold passage nor a distractor for a user outside that group."""
    from dataclasses import replace

    from workbench.chunking import FixedChunker, chunk_corpus
    from workbench.retrieval.bm25 import BM25Retriever

    docs, golden = handbook
    chunks = chunk_corpus(FixedChunker(size=800, overlap=100), docs)
    open_items = handbook_position_items(BM25Retriever(chunks), golden, chunks, docs,
                                         n_distractors=4, user_groups=["engineering"])
    used = {p.chunk_id for it in open_items for p in (it.gold, *it.distractors)}
    assert used
    locked = [replace(c, metadata={**c.metadata, "acl": ["legal"]}) if c.id in used else c
              for c in chunks]
    hb = handbook_position_items(BM25Retriever(locked), golden, locked, docs, n_distractors=4,
                                 user_groups=["engineering"])
    assert not used & {p.chunk_id for it in hb for p in (it.gold, *it.distractors)}
    allowed = handbook_position_items(BM25Retriever(locked), golden, locked, docs,
                                      n_distractors=4, user_groups=["engineering", "legal"])
    assert used & {p.chunk_id for it in allowed for p in (it.gold, *it.distractors)}
