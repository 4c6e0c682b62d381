"""The access rule against a brute-force statement of it, over generated ACLs and users:
a user reads a document when it has no ACL, its ACL names ``all`` (or ``public``), or one of
the user's groups (case-folded, trimmed); a chunk when its document and its own ACL both
allow it, and never a chunk of an unknown document (fail closed). ``user_groups=None`` (the
unrestricted view) reads everything."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.corpus import Chunk, admit
from workbench.corpus.access import can_read, can_read_chunk

GROUPS = ["hr", "Finance", " legal ", "all", "public"]
ACL = st.one_of(st.none(), st.lists(st.sampled_from(GROUPS), min_size=1, max_size=3))
USER = st.one_of(st.none(), st.lists(st.sampled_from(["hr", "FINANCE", "legal", "ops"]),
                                     max_size=3))


def _allows(user: list[str], acl: list[str] | None) -> bool:
    if acl is None:
        return True
    names = {g.strip().casefold() for g in acl}
    return bool(names & {"all", "public"}) or bool(names & {g.casefold() for g in user})


@settings(max_examples=300)
@given(USER, ACL, ACL, st.booleans())
def test_a_chunk_is_read_by_the_rule(user, doc_acl, chunk_acl, known):
    doc = admit("d", "Some text.", "", {} if doc_acl is None else {"acl": doc_acl})
    chunk = Chunk("d#0", "d", 0, 4, text="Some",
                  metadata={} if chunk_acl is None else {"acl": chunk_acl})
    got = can_read_chunk(user, chunk, doc if known else None)
    if user is None:
        assert got
        return
    assert can_read(user, doc_acl) == _allows(user, doc_acl)
    assert got == (known and _allows(user, doc_acl) and _allows(user, chunk_acl))
