"""Synthetic questions: located facts, distractors, rejections, the cache, target sampling."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.corpus import UNRESTRICTED, Chunk, Document, ReaderRequired
from workbench.generation import ChatReply, GenerationCache, must_mention
from workbench.golden import GoldenSet
from workbench.retrieval import BM25Retriever
from workbench.synthetic.measures import fooled_by
from workbench.synthetic.questions import (
    CopyingQuestionWriter,
    find_distractors,
    generate_synthetic,
    sample_chunks,
)


class Scripted:
    """A chat model replying from a list (an exception is raised as the model would)."""

    model_id = "scripted"

    def __init__(self, replies):
        self.replies = list(replies)
        self.calls = 0

    def chat(self, messages, max_tokens=None):
        self.calls += 1
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply if isinstance(reply, ChatReply) else ChatReply(reply)


def test_items_are_located_evidence_with_distractors_that_lack_the_answer(book, made, tmp_path):
    docs, chunks, _ = book
    targets, run = made
    by_id = {c.id: c for c in chunks}
    assert run.items and {i.extra["kind"] for i in run.items} == {"easy", "hard"}
    # every target gives an easy item or an easy rejection; a hard one is tried only once
    # the fact was located
    def outcomes(kind):
        return sorted([i.extra["target_chunk"] for i in run.items if i.extra["kind"] == kind]
                      + [r.chunk_id for r in run.rejected if r.kind == kind])
    assert outcomes("easy") == sorted(t.id for t in targets)
    located = {i.extra["target_chunk"] for i in run.items} | {
        r.chunk_id for r in run.rejected if "gives the answer away" in r.reason}
    assert outcomes("hard") == sorted(located)
    for item in run.items:
        ev = item.evidence[0]
        target = by_id[item.extra["target_chunk"]]
        assert item.source == "synthetic" and item.category == f"synthetic-{item.extra['kind']}"
        assert docs[ev.doc_id].text[ev.start:ev.end] == ev.text
        assert target.doc_id == ev.doc_id and target.start <= ev.start < ev.end <= target.end
        answer = item.answer_must_mention[0]
        # "mentions" is the grader's rule: an answer quoting the text would pass
        assert must_mention(ev.text, [answer]) and not must_mention(item.question, [answer])
        for d in item.extra["distractors"]:
            assert d["chunk_id"] != target.id and d["found_by"] == "bm25"
            assert not must_mention(by_id[d["chunk_id"]].text, [answer])
        assert bool(item.extra["distractors"]) == (item.extra["kind"] == "hard")
        assert item.extra["prompt_version"]
        assert item.extra["model_id"] == "copying-question-writer-v1"
    # they are golden items like hand-labelled ones: valid, and saved and loaded unchanged
    golden = GoldenSet(run.items)
    assert golden.problems(docs) == []
    golden.save(tmp_path / "syn.jsonl")
    again = GoldenSet.load(tmp_path / "syn.jsonl")
    assert [i.to_json() for i in again] == [i.to_json() for i in run.items]
    # counts add up
    counts = run.counts().set_index("kind")
    assert counts["generated"].sum() == len(run.items)
    assert counts["rejected"].sum() == len(run.rejected)


def _doc(text: str) -> tuple[dict[str, Document], Chunk]:
    doc = Document("d", text)
    return {"d": doc}, Chunk("d#0", "d", 0, len(text), text=text)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="abcdefgh ", min_size=1, max_size=8), min_size=6, max_size=20),
       st.data())
def test_a_quote_with_other_whitespace_locates_at_the_same_offsets(words, data):
    words = [w.strip() or "x" for w in words]
    text = "Lead. " + " ".join(words) + " 42 units."
    docs, chunk = _doc(text)
    i = data.draw(st.integers(0, len(words) - 3))
    quote = " ".join(words[i:]) + " 42 units."
    spaced = quote.replace(" ", data.draw(st.sampled_from([" ", "  ", "\n", " \t "])))
    replies = [json.dumps({"fact": q, "answer": "42 units", "question": "how many?"})
               for q in (quote, spaced)]  # JSON carries a quote's line breaks
    runs = [generate_synthetic(Scripted([r]), [chunk], docs,
                               user_groups=UNRESTRICTED) for r in replies]
    assert all(len(r.items) == 1 for r in runs), [r.rejected for r in runs]
    spans = [(r.items[0].evidence[0].start, r.items[0].evidence[0].end) for r in runs]
    assert spans[0] == spans[1] and text[spans[0][0]:spans[0][1]] == quote


def test_unusable_replies_are_rejected_with_the_reason_and_never_abort(book):
    docs, chunk = _doc("Refunds are paid within 14 days. Exchanges are free of charge.")
    bad = [RuntimeError("connection reset"), ChatReply(error="HTTP 500"), "no idea",
           "FACT: Refunds are paid within 30 days.\nANSWER: 30 days\nQUESTION: when?",
           "FACT: Refunds are paid within 14 days.\nANSWER: 30 days\nQUESTION: when?",
           "FACT: Refunds are paid within 14 days.\nANSWER: 14 days\nQUESTION: is it 14 days?",
           '{"fact": "Refunds are paid within 14 days.", "answer": "14 days", '
           '"question": "how fast are refunds paid?"}']
    run = generate_synthetic(Scripted(bad), [chunk] * len(bad), docs, user_groups=UNRESTRICTED)
    reasons = [r.reason for r in run.rejected]
    assert len(reasons) == 6 and len(run.items) == 1
    assert "RuntimeError: connection reset" in reasons[0] and "HTTP 500" in reasons[1]
    assert "no FACT and ANSWER" in reasons[2] and "not in the chunk" in reasons[3]
    assert "not in the quoted fact" in reasons[4] and "gives the answer away" in reasons[5]
    assert run.items[0].question == "how fast are refunds paid?"


def test_generation_is_cached_and_resumes(book, tmp_path):
    docs, chunks, bm25 = book
    targets = sample_chunks(chunks, 4, docs, seed=5, user_groups=UNRESTRICTED)
    cache = GenerationCache(tmp_path / "gen")
    first = generate_synthetic(CopyingQuestionWriter(), targets[:2], docs, chunks=chunks,
                               distractors=[("bm25", bm25)], cache=cache, user_groups=UNRESTRICTED)
    resumed = generate_synthetic(CopyingQuestionWriter(), targets, docs, chunks=chunks,
                                 distractors=[("bm25", bm25)], cache=cache,
                                 user_groups=UNRESTRICTED)
    assert first.calls > 0 and first.cached == 0
    assert resumed.cached == first.calls and resumed.calls > 0
    again = generate_synthetic(CopyingQuestionWriter(), targets, docs, chunks=chunks,
                               distractors=[("bm25", bm25)], cache=cache, user_groups=UNRESTRICTED)
    assert again.calls == 0 and [i.to_json() for i in again.items] == [
        i.to_json() for i in resumed.items]


def test_sample_skips_superseded_and_documents_its_readers_may_not_read(book):
    docs, chunks, _ = book
    picked = sample_chunks(chunks, 10_000, docs, user_groups=[])  # a user in no group
    assert picked and all(docs[c.doc_id].is_current and (not docs[c.doc_id].acl
                                                         or "all" in docs[c.doc_id].acl)
                          for c in picked)
    assert {"procurement", "expenses-travel-2024"}.isdisjoint(c.doc_id for c in picked)
    every = sample_chunks(chunks, 10_000, docs, user_groups=UNRESTRICTED)
    assert all(docs[c.doc_id].is_current for c in every) and len(every) > len(picked)
    assert sample_chunks(chunks, 5, docs, seed=1, user_groups=[]) == sample_chunks(
        chunks, 5, docs, seed=1, user_groups=[])
    with pytest.raises(ReaderRequired, match=r"sample_chunks: .* declares access"):
        sample_chunks(chunks, 5, docs)


@pytest.mark.slow
def test_the_real_offline_model_yields_items_or_reasons(book):
    pytest.importorskip("transformers")
    from workbench.generation import LocalGenerator, smollm2_gguf_path

    smollm2_gguf_path()
    docs, chunks, bm25 = book
    targets = sample_chunks(chunks, 2, docs, seed=11, user_groups=UNRESTRICTED)
    model = LocalGenerator(max_new_tokens=64)
    run = generate_synthetic(model, targets, docs, chunks=chunks, distractors=[("bm25", bm25)],
                             user_groups=UNRESTRICTED)
    assert run.calls >= len(targets)
    assert {r.chunk_id for r in run.rejected if r.kind == "easy"} | {
        i.extra["target_chunk"] for i in run.items if i.extra["kind"] == "easy"} == {
        t.id for t in targets}
    assert all(r.reason for r in run.rejected)
    for item in run.items:
        ev = item.evidence[0]
        assert docs[ev.doc_id].text[ev.start:ev.end] == ev.text
        assert item.extra["model_id"] == model.model_id


def test_dense_neighbours_are_distractors_and_fooled_by_names_them(book):
    from workbench.evaluation import Run
    from workbench.retrieval import DenseRetriever

    docs, chunks, bm25 = book
    by_id = {c.id: c for c in chunks}
    dense = DenseRetriever(chunks, progress=False)
    targets = sample_chunks(chunks, 6, docs, seed=2, user_groups=UNRESTRICTED)
    run = generate_synthetic(CopyingQuestionWriter(), targets, docs, chunks=chunks,
                             distractors=[("bm25", bm25), ("dense", dense)],
                             user_groups=UNRESTRICTED)
    hard = [i for i in run.items if i.extra["kind"] == "hard"]
    found = [d for i in hard for d in i.extra["distractors"]]
    assert hard and {d["found_by"] for d in found} == {"bm25", "dense"}
    for item in hard:
        assert not any(must_mention(by_id[d["chunk_id"]].text, item.answer_must_mention)
                       for d in item.extra["distractors"])
    searched = Run.from_retriever(bm25, hard, k=5)
    table = fooled_by(searched, hard, k=5).set_index("qid")
    for item in hard:
        mine = {d["chunk_id"] for d in item.extra["distractors"]}
        top = [h.chunk_id for h in searched.hits[item.qid] if h.rank <= 5]
        assert table.loc[item.qid, "fooled"] == [c for c in top if c in mine]
        assert (table.loc[item.qid, "first_rank"] > 0) == bool(set(top) & mine)
    assert fooled_by(searched, [i for i in run.items if i.extra["kind"] == "easy"]).empty


def test_a_neighbour_mentioning_the_answer_is_no_distractor():
    target = Chunk("a#0", "a", 0, 40, text="Refunds are paid within 14 days of return.")
    near = [Chunk("b#0", "b", 0, 40, text="Exchanges are paid within 14 days, always."),
            Chunk("c#0", "c", 0, 40, text="Refunds for 114 days old items are paid late."),
            Chunk("a#1", "a", 20, 60, text="within 14 days of return. Other text here.")]
    bm25 = BM25Retriever([target, *near])
    found = find_distractors(target, "14 days", [("bm25", bm25)],
                             {c.id: c for c in [target, *near]}, n=5, user_groups=UNRESTRICTED)
    # b mentions the answer, a#1 overlaps the target; "114 days" is another number
    assert [d["chunk_id"] for d in found] == ["c#0"]
