"""Chunk-level access survives the adapters: a production hit whose metadata carries ``acl``
becomes a located chunk carrying it, so an outsider's prompt never holds it; a hit whose
metadata holds another access-like key is refused. With a callable and a real Chroma
collection (chromadb's default-free path: our own embedding of the texts)."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.corpus import Corpus, Document
from workbench.generation import assemble_context
from workbench.retrieval import CallableRetriever
from workbench.retrieval.production_hits import UnreadableHit

SECRET = "The finance bonus pool is 4.2 million this year."
OPEN = "The canteen opens at noon on weekdays."
CORPUS = Corpus([Document("memo", f"{SECRET} {OPEN}", "Memo")])


def _prompt(retriever, groups):
    hits = retriever.search("what is the bonus pool", 2)
    chunks = {h.chunk.id: h.chunk for h in hits}
    ctx = assemble_context(hits, chunks, CORPUS, user_groups=groups)
    return "\n".join(p.render() for p in ctx.passages), hits


def _hits(meta_secret):
    return lambda q: [{"doc_id": "memo", "text": SECRET, "metadata": meta_secret},
                      {"doc_id": "memo", "text": OPEN, "metadata": {}}]


def test_a_callable_hits_acl_is_kept_on_the_located_chunk():
    retriever = CallableRetriever(_hits({"acl": ["finance"]}), "prod", documents=CORPUS)
    prompt, hits = _prompt(retriever, ["engineering"])
    assert hits[0].chunk.metadata["acl"] == ("finance",)
    assert SECRET not in prompt and OPEN in prompt
    assert SECRET in _prompt(retriever, ["finance"])[0]  # positive control


@pytest.mark.parametrize("meta", [{"ACL": ["finance"]}, {"groups": ["finance"]},
                                  {"meta": {"acl": ["finance"]}}, {"асl": ["finance"]},
                                  {"acl": []}, {"permissions": "finance"}])
def test_an_access_like_key_that_is_not_read_is_refused(meta):
    retriever = CallableRetriever(_hits(meta), "prod", documents=CORPUS)
    with pytest.raises(UnreadableHit, match=r"acl|access"):
        retriever.search("q", 2)


def test_a_chroma_collections_acl_reaches_the_chunk(tmp_path):
    chromadb = pytest.importorskip("chromadb")
    from workbench.retrieval.adapters import from_chroma

    client = chromadb.PersistentClient(path=str(tmp_path / "db"))
    collection = client.create_collection("memo", embedding_function=None)
    collection.add(ids=["s", "o"], documents=[SECRET, OPEN],
                   embeddings=[[1.0, 0.0], [0.9, 0.1]],
                   metadatas=[{"doc_id": "memo", "acl": "finance"}, {"doc_id": "memo"}])
    retriever = from_chroma(collection, CORPUS, embed=lambda q: np.array([1.0, 0.0]))
    prompt, hits = _prompt(retriever, ["engineering"])
    assert {h.chunk.metadata.get("acl") for h in hits} == {("finance",), None}
    assert SECRET not in prompt and OPEN in prompt
    assert SECRET in _prompt(retriever, ["finance"])[0]


def test_a_400_digit_score_is_refused_in_one_line(tmp_path):
    import json

    from workbench.evaluation.run_files import read_run

    retriever = CallableRetriever(lambda q: [{"doc_id": "memo", "text": OPEN,
                                              "score": 10**400}], "prod", documents=CORPUS)
    with pytest.raises(ValueError, match="401 digits, too large"):
        retriever.search("q", 1)
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps({"qid": "q1", "hits": [{"doc_id": "memo", "text": OPEN,
                                                       "score": 10**400}]}) + "\n")
    with pytest.raises(ValueError, match=r"run\.jsonl:1, hit 1: .*401 digits"):
        read_run(path, documents=CORPUS)


def test_a_control_character_in_front_matter_is_one_line(tmp_path):
    from workbench.corpus import load_folder

    (tmp_path / "a.md").write_text("---\nacl: public\ntitle: a\x07b\n---\nbody\n")
    with pytest.raises(ValueError, match=r"a\.md:3: front matter holds character 0x0007"):
        load_folder(tmp_path)


def test_run_files_refuse_early_and_say_the_type(tmp_path, monkeypatch):
    import json

    from workbench.evaluation import run_files
    from workbench.io import reading

    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps({"qid": True, "hits": []}) + "\n")
    with pytest.raises(ValueError, match=r"field 'qid' is bool true"):
        run_files.read_run(path, documents=CORPUS)
    path.write_text(json.dumps({"qid": "q", "hits": [{"doc_id": "memo", "text": OPEN}] * 3}))
    monkeypatch.setattr(run_files, "MAX_HITS", 2)
    with pytest.raises(ValueError, match="3 hits, over the limit of 2"):
        run_files.read_run(path, documents=CORPUS)
    monkeypatch.setattr(reading, "MAX_JSONL_LINE", 50)
    with pytest.raises(ValueError, match=r"run\.jsonl:1: line of .* over the limit of 50"):
        run_files.read_run(path, documents=CORPUS)


def test_a_yaml_alias_bomb_is_one_short_line(tmp_path):
    from workbench.corpus import load_folder

    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for prev, name in zip("abcdefg", "bcdefgh", strict=True):
        lines.append(f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]")
    (tmp_path / "a.md").write_text("---\n" + "\n".join(lines) + "\nacl: *h\n---\nbody\n")
    with pytest.raises(ValueError, match="expands to over 10,000 values") as exc:
        load_folder(tmp_path)
    assert len(str(exc.value)) < 300


# ----------------------------------------------------------------------------- bare chunk ids

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.corpus.test_access_shapes import LETTERS  # noqa: E402
from workbench.corpus import Chunk  # noqa: E402

CHUNKS = [Chunk("memo#0", "memo", 0, len(SECRET), text=SECRET),
          Chunk("memo#1", "memo", len(SECRET) + 1, len(SECRET) + 1 + len(OPEN), text=OPEN)]
ACCESS_KEYS = st.one_of(
    st.sampled_from(["acl", "ACL", "acls", "groups", "Groups", "access", "permissions",
                     "permission"]),
    st.tuples(*[st.sampled_from(LETTERS[ch]) for ch in "acl"]).map("".join))
GROUPS = st.sampled_from([["finance"], "finance", ["finance", "managers"], ["FINANCE "]])
ACCESS_META = st.one_of(
    st.builds(lambda k, g: {k: g}, ACCESS_KEYS, GROUPS),
    st.builds(lambda outer, k, g: {outer: {k: g}},
              st.sampled_from(["meta", "metadata", "Metadata", "extra"]), ACCESS_KEYS, GROUPS),
    st.builds(lambda k, g: {"tags": [{k: g}]}, ACCESS_KEYS, GROUPS))


def _bare(meta):
    return lambda q: [{"chunk_id": "memo#0", "metadata": meta},
                      {"chunk_id": "memo#1", "metadata": {}}]


@settings(max_examples=120, deadline=None, derandomize=True)
@given(meta=ACCESS_META)
def test_a_bare_chunk_id_hit_carries_its_access_or_is_refused(meta):
    retriever = CallableRetriever(_bare(meta), "prod", chunks=CHUNKS)
    try:
        prompt, hits = _prompt(retriever, ["engineering"])
    except UnreadableHit as exc:
        assert "\n" not in str(exc)
        return
    assert SECRET not in prompt and OPEN in prompt, meta
    assert hits[0].chunk.metadata["acl"] and SECRET in _prompt(retriever, ["finance"])[0]


def test_a_bare_chunk_id_hit_with_acl_loads_restricted_and_a_member_sees_it():
    retriever = CallableRetriever(_bare({"acl": ["finance"]}), "prod", chunks=CHUNKS)
    prompt, hits = _prompt(retriever, ["engineering"])
    assert hits[0].chunk.metadata["acl"] == ("finance",) and SECRET not in prompt
    assert SECRET in _prompt(retriever, ["finance"])[0]
    open_retriever = CallableRetriever(_bare({}), "prod", chunks=CHUNKS)  # no access: public
    assert SECRET in _prompt(open_retriever, ["engineering"])[0]


def test_a_bare_chunk_id_with_acl_and_no_chunks_fails_closed():
    retriever = CallableRetriever(_bare({"acl": ["finance"]}), "prod")
    with pytest.raises(UnreadableHit, match=r"memo#0.*acl.*pass chunks="):
        retriever.search("q", 2)
    assert [h.chunk_id for h in CallableRetriever(_bare({}), "prod").search("q", 2)] == [
        "memo#0", "memo#1"]  # without access, ids alone still score


def test_a_bare_chunk_id_whose_acl_contradicts_its_chunk_is_refused():
    own = [Chunk(c.id, c.doc_id, c.start, c.end, text=c.text, metadata={"acl": ("hr",)})
           for c in CHUNKS]
    with pytest.raises(UnreadableHit, match="one access list"):
        CallableRetriever(_bare({"acl": ["finance"]}), "prod", chunks=own).search("q", 2)
    flip = iter([{"acl": ["finance"]}, {"acl": ["hr"]}])
    retriever = CallableRetriever(lambda q: [{"chunk_id": "memo#0", "metadata": next(flip)}],
                                  "prod", chunks=CHUNKS)
    retriever.search("q", 1)
    with pytest.raises(UnreadableHit, match="one access list"):
        retriever.search("q", 1)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(key=ACCESS_KEYS, groups=GROUPS, text=st.booleans())
def test_access_given_on_the_hit_itself_is_read_or_refused(key, groups, text):
    hit = ({"doc_id": "memo", "text": SECRET} if text else {"chunk_id": "memo#0"})
    retriever = CallableRetriever(lambda q: [{**hit, key: groups},
                                             {"chunk_id": "memo#1"} if not text else
                                             {"doc_id": "memo", "text": OPEN}],
                                  "prod", chunks=CHUNKS, documents=CORPUS)
    try:
        prompt, _ = _prompt(retriever, ["engineering"])
    except UnreadableHit:
        return
    assert SECRET not in prompt and OPEN in prompt, (key, groups)


def test_metadata_that_is_not_an_object_is_refused():
    retriever = CallableRetriever(lambda q: [{"chunk_id": "memo#0", "metadata": "acl=finance"}],
                                  "prod", chunks=CHUNKS)
    with pytest.raises(UnreadableHit, match="'metadata' is a str"):
        retriever.search("q", 1)
