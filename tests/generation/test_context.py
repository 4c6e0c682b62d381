"""Context assembly: ACL and version filters before the prompt, dedup, budget, labels,
citation mapping."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.corpus import UNRESTRICTED, Chunk, Document, admit
from workbench.corpus.access import can_read
from workbench.generation.context import (
    RESTRICTED,
    AssembledContext,
    approx_tokens,
    assemble_context,
    context_from_passages,
    resolve_citations,
)
from workbench.retrieval.base import Hit

GROUPS = ["finance", "managers", "it-security", "hr", "engineering"]


def make_chunks(doc: Document, size: int = 40) -> list[Chunk]:
    """A tiny offset-exact fixed-window chunker (independent of workbench.chunking)."""
    out = []
    for n, start in enumerate(range(0, len(doc.text), size)):
        end = min(len(doc.text), start + size)
        out.append(Chunk(f"{doc.id}#{n}", doc.id, start, end, text=doc.text[start:end]))
    return out


def doc(doc_id: str, text: str, acl=None, status: str = "current", **meta) -> Document:
    metadata = {"status": status, **meta}
    if acl is not None:
        metadata["acl"] = acl
    return admit(doc_id, text, doc_id.title(), metadata)


def test_can_read_rules():
    assert can_read(None, ["finance"])  # unrestricted evaluation view
    assert can_read([], [])  # empty ACL: everyone
    assert can_read([], ["all"])
    assert can_read(["finance"], ["finance", "managers"])
    assert not can_read(["hr"], ["finance", "managers"])
    assert not can_read([], ["finance"])
    assert can_read(["x"], "all")
    # one rule: names are trimmed and case-folded on both sides; one name is one group
    assert can_read([" Finance "], ["FINANCE"]) and can_read("finance", "Finance")
    assert not can_read("engineering", ["e", "n", "g"])  # never read letter by letter
    for bad in (False, 0, "", "  ", None, 5, True, [5], ["ok", ""], {"x": 1}):
        if bad is None:
            continue  # None is "no ACL" for can_read; a header's `acl: null` is refused at load
        with pytest.raises(ValueError, match="field 'acl'"):
            can_read(["finance"], bad)
    with pytest.raises(ValueError, match="field 'acl'"):
        admit("d", "x", "", {"acl": []})  # an empty list is no rule
    with pytest.raises(ValueError, match="one door"):
        Document("d", "x", metadata={"acl": ["finance"]})  # access only through the door


acl_strategy = st.one_of(st.none(), st.just("ALL "), st.just(["all"]),
                         st.lists(st.sampled_from(GROUPS), min_size=1, max_size=3, unique=True))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(acls=st.lists(acl_strategy, min_size=1, max_size=6),
       user=st.lists(st.sampled_from(GROUPS), max_size=3, unique=True),
       picks=st.lists(st.integers(min_value=0, max_value=200), min_size=1, max_size=25),
       budget=st.one_of(st.none(), st.integers(min_value=0, max_value=120)))
def test_acl_never_leaks(acls, user, picks, budget):
    docs = [doc(f"d{i}", f"SECRET{i:02d} " + "lorem ipsum dolor sit amet " * 3 + f"END{i:02d}",
                acl) for i, acl in enumerate(acls)]
    chunks = [c for d in docs for c in make_chunks(d, 30)]
    hits = [Hit(chunks[p % len(chunks)].id, 1.0, r + 1) for r, p in enumerate(picks)]
    ctx = assemble_context(hits, chunks, docs, user_groups=user, budget_tokens=budget)
    by_doc = {d.id: d for d in docs}
    forbidden = [c for c in chunks if not can_read(user, by_doc[c.doc_id].acl)]
    rendered = ctx.render()
    record = json.dumps(ctx.to_record())
    everything = rendered + record + repr(ctx) + json.dumps(ctx.dropped)
    for p in ctx.passages:
        assert can_read(user, by_doc[p.doc_id].acl)
    for c in forbidden:
        assert c.id not in ctx.chunk_ids
        assert c.id not in everything
        # a forbidden chunk's text never appears (its unique marker, where it holds one)
        for marker in ("SECRET", "END"):
            tag = f"{marker}{int(c.doc_id[1:]):02d}"
            if tag in c.text:
                assert tag not in everything
    assert all(cid == RESTRICTED for cid, why in ctx.dropped if why == "acl")
    assert [p.label for p in ctx.passages] == [f"P{i}" for i in range(1, len(ctx) + 1)]
    if budget is not None:
        assert ctx.tokens_used <= budget


def test_acl_on_handbook(handbook):
    docs, _ = handbook
    chunks = [c for d in docs.values() for c in make_chunks(d, 400)]
    procurement = [c for c in chunks if c.doc_id == "procurement"]
    runbook = [c for c in chunks if c.doc_id == "security-incident-runbook"]
    hits = [c.id for c in procurement + runbook + chunks[:5]]
    outsider = assemble_context(hits, chunks, docs, user_groups=["engineering"])
    assert not {c.doc_id for c in procurement + runbook} & {p.doc_id for p in outsider.passages}
    assert all("procurement" not in str(x) for x in outsider.to_record()["dropped"])
    assert len(outsider.dropped_by("acl")) == len(procurement) + len(runbook)
    finance = assemble_context(hits, chunks, docs, user_groups=["finance"])
    assert {p.doc_id for p in finance.passages} >= {"procurement"}
    assert "security-incident-runbook" not in {p.doc_id for p in finance.passages}


def test_unknown_document_fails_closed():
    d = doc("known", "some text here", acl=None)
    stray = Chunk("ghost#0", "ghost", 0, 5, text="boo!!")
    ctx = assemble_context(["known#0", "ghost#0"], [*make_chunks(d), stray], [d], user_groups=[])
    assert ctx.chunk_ids == ("known#0",)
    assert ctx.dropped == ((RESTRICTED, "acl"),)
    # the unrestricted view cannot check its version either: dropped, and said why
    open_view = assemble_context(["ghost#0"], [stray], [d], user_groups=UNRESTRICTED)
    assert open_view.chunk_ids == () and open_view.dropped == (("ghost#0", "unknown_document"),)


def test_documents_are_required_so_version_and_access_are_checked():
    old = doc("v1", "old rule: 30 days", status="superseded")
    with pytest.raises(ValueError, match="needs documents="):
        assemble_context(["v1#0"], make_chunks(old), user_groups=UNRESTRICTED)
    assert assemble_context(["v1#0"], make_chunks(old), [old],
                            user_groups=UNRESTRICTED).dropped_by("superseded") == [
        "v1#0"]


def test_chunk_level_acl():
    d = doc("mixed", "public words and private words", acl=["all"])
    public = Chunk("mixed#0", "mixed", 0, 12, text=d.text[:12])
    private = Chunk("mixed#1", "mixed", 13, 30, text=d.text[13:30], metadata={"acl": ["hr"]})
    ctx = assemble_context(["mixed#0", "mixed#1"], [public, private], [d], user_groups=["x"])
    assert ctx.chunk_ids == ("mixed#0",)


def test_superseded_versions_are_dropped(handbook):
    docs, _ = handbook
    chunks = [c for d in docs.values() for c in make_chunks(d, 500)]
    old = [c.id for c in chunks if c.doc_id in ("expenses-travel-2024", "policy-refunds-2023")]
    new = [c.id for c in chunks if c.doc_id == "expenses-travel"][:2]
    ctx = assemble_context(old + new, chunks, docs, user_groups=UNRESTRICTED)
    assert set(ctx.chunk_ids) == set(new)
    assert sorted(ctx.dropped_by("superseded")) == sorted(old)
    kept = assemble_context(old + new, chunks, docs, include_superseded=True,
                            user_groups=UNRESTRICTED)
    assert set(kept.chunk_ids) == set(old + new)


def test_superseded_by_alone_marks_old_version():
    d = doc("v1", "old rule: 30 days", superseded_by="v2")
    ctx = assemble_context(["v1#0"], make_chunks(d), [d], user_groups=UNRESTRICTED)
    assert ctx.chunk_ids == () and ctx.dropped == (("v1#0", "superseded"),)


def test_dedup_by_id_and_text():
    a = doc("a", "the same words", acl=None)
    b = doc("b", "the  same\nwords", acl=None)
    c = doc("c", "different", acl=None)
    chunks = [*make_chunks(a), *make_chunks(b), *make_chunks(c)]
    ctx = assemble_context(["a#0", "a#0", "b#0", "c#0"], chunks, [a, b, c],
                           user_groups=UNRESTRICTED)
    assert ctx.chunk_ids == ("a#0", "c#0")
    assert ctx.dropped == (("a#0", "duplicate"), ("b#0", "duplicate"))
    assert ctx.labels == {"P1": "a#0", "P2": "c#0"}


def test_budget_drops_whole_passages_and_records_final_context():
    docs = [doc("big", "x" * 200, acl=None), doc("mid", "y" * 60, acl=None),
            doc("small", "z" * 10, acl=None)]
    chunks = [c for d in docs for c in make_chunks(d, 1000)]
    count = len  # one token per character, to make the arithmetic visible
    sizes = {c.id: count(f"[P1] {c.doc_id.title()}\n{c.text}") for c in chunks}
    budget = sizes["mid#0"] + sizes["small#0"]
    ctx = assemble_context(["mid#0", "big#0", "small#0"], chunks, docs, budget_tokens=budget,
                           count_tokens=count, user_groups=UNRESTRICTED)
    assert ctx.chunk_ids == ("mid#0", "small#0")  # big dropped whole, small still fits
    assert ctx.dropped == (("big#0", "budget"),)
    assert ctx.labels == {"P1": "mid#0", "P2": "small#0"}
    assert ctx.tokens_used == budget
    record = ctx.to_record()
    assert [p["chunk_id"] for p in record["passages"]] == ["mid#0", "small#0"]
    assert record["dropped"] == [["big#0", "budget"]]
    assert "x" * 50 not in ctx.render()
    zero = assemble_context(["mid#0"], chunks, docs, budget_tokens=0, count_tokens=count,
                            user_groups=UNRESTRICTED)
    assert zero.passages == () and zero.dropped == (("mid#0", "budget"),)


def test_budget_accepts_counter_objects_and_rejects_junk():
    class Counter:
        def count(self, text: str) -> int:
            return 1

    d = doc("a", "hello world", acl=None)
    ctx = assemble_context(["a#0"], make_chunks(d), [d], budget_tokens=1, count_tokens=Counter(),
                           user_groups=UNRESTRICTED)
    assert ctx.tokens_used == 1
    with pytest.raises(ValueError, match="count_tokens"):
        assemble_context(["a#0"], make_chunks(d), [d], budget_tokens=1, count_tokens=3,
                         user_groups=UNRESTRICTED)
    with pytest.raises(ValueError, match="not among the given chunks"):
        assemble_context(["nope#0"], make_chunks(d), [d], user_groups=UNRESTRICTED)


def test_render_labels_and_titles():
    a, b = doc("alpha", "First fact.", acl=None), doc("beta", "Second fact.", acl=None)
    ctx = assemble_context(["beta#0", "alpha#0"], [*make_chunks(a), *make_chunks(b)], [a, b],
                           user_groups=UNRESTRICTED)
    assert ctx.render() == "[P1] Beta\nSecond fact.\n\n[P2] Alpha\nFirst fact."


def test_resolve_citations_maps_and_rejects_unknown():
    ctx = context_from_passages([("a#0", "a", "one"), ("b#1", "b", "two"), ("c#2", "c", "three")])
    check = resolve_citations("Refunds take 30 days [P2]. Also [P1, P3] and [p2][P9] (P4).", ctx)
    assert check.labels == ("P2", "P1", "P3", "P9", "P4")
    assert check.chunk_ids == ("b#1", "a#0", "c#2")
    assert check.unknown == ("P9", "P4")
    assert not check.ok
    assert resolve_citations("no citations here, P1 unbracketed", ctx).labels == ()
    assert resolve_citations("[P1]", AssembledContext()).unknown == ("P1",)


def test_approx_tokens_counts_cjk_and_words():
    assert approx_tokens("") == 0
    assert approx_tokens("退款10天") >= 3
    assert approx_tokens("one two three") == 4
