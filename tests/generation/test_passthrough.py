"""The production prompt as it was (assembly="passthrough"): the hits in order, no version
filter, no dedup, no budget; access control still applies."""

from __future__ import annotations

import pytest

from workbench.corpus import UNRESTRICTED, Chunk, Document, admit
from workbench.generation import approx_tokens, assemble_context, passthrough_context
from workbench.retrieval import Hit

DOCS = [Document("refunds", "Refunds within 30 days.", "Refund Policy"),
        Document("refunds-2023", "Refunds within 45 days.", "Refund Policy 2023",
                 {"status": "superseded", "superseded_by": "refunds"}),
        admit("payroll", "Salaries are paid monthly.", "Payroll", {"acl": ["finance"]})]
CHUNKS = [Chunk("u-new", "refunds", 0, 23, text=DOCS[0].text),
          Chunk("u-old", "refunds-2023", 0, 23, text=DOCS[1].text),
          Chunk("u-pay", "payroll", 0, 26, text=DOCS[2].text)]


def test_passthrough_keeps_every_hit_in_order():
    hits = ["u-old", "u-new", "u-new"]
    one = approx_tokens("[P1] Refund Policy\nRefunds within 30 days.")
    ours = assemble_context(hits, CHUNKS, DOCS, budget_tokens=one, user_groups=UNRESTRICTED)
    theirs = assemble_context(hits, CHUNKS, DOCS, budget_tokens=one, assembly="passthrough",
                              user_groups=UNRESTRICTED)
    assert ours.chunk_ids == ("u-new",)
    assert ours.dropped == (("u-old", "superseded"), ("u-new", "duplicate"))
    assert theirs.chunk_ids == ("u-old", "u-new", "u-new") and theirs.dropped == ()
    assert [p.label for p in theirs.passages] == ["P1", "P2", "P3"]
    assert theirs.params["assembly"] == "passthrough"
    assert theirs.tokens_used > one  # no budget was applied, and the count says so


def test_access_control_is_not_a_filter_passthrough_drops():
    theirs = passthrough_context(["u-pay", "u-new"], CHUNKS, DOCS, user_groups=["support"])
    assert theirs.chunk_ids == ("u-new",) and theirs.dropped == (("<restricted>", "acl"),)
    assert "Salaries" not in theirs.render()


def test_hits_that_carry_their_chunk_need_no_chunk_list():
    hit = Hit("u-new", 1.0, 1, "prod", chunk=CHUNKS[0])
    rendered = passthrough_context([hit], {}, DOCS, user_groups=UNRESTRICTED).render()
    assert rendered == "[P1] Refund Policy\nRefunds within 30 days."
    with pytest.raises(ValueError, match="not among the given chunks"):
        passthrough_context(["nope"], CHUNKS, DOCS, user_groups=UNRESTRICTED)
    with pytest.raises(ValueError, match="assembly must be one of"):
        assemble_context(["u-new"], CHUNKS, DOCS, assembly="raw", user_groups=UNRESTRICTED)


@pytest.mark.parametrize("assembly", ["workbench", "passthrough"])
def test_both_assemblies_read_the_users_groups_one_way(assembly):
    """A single group name is one group, never its letters, and names are case-folded; the
    params record the groups as read, whichever assembly built the prompt."""
    for groups in ("Finance", [" FINANCE "], {"finance"}):
        context = assemble_context(["u-pay"], CHUNKS, DOCS, user_groups=groups,
                                   assembly=assembly)
        assert context.chunk_ids == ("u-pay",), groups
        assert context.params["user_groups"] == ["finance"]
    denied = assemble_context(["u-pay"], CHUNKS, DOCS, user_groups="fin", assembly=assembly)
    assert denied.chunk_ids == () and denied.dropped == (("<restricted>", "acl"),)
