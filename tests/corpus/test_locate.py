"""Locating production chunks in documents: exact, normalised, front matter, raw offsets;
ambiguous and missing hits are reported, never guessed; located offsets round-trip."""

from __future__ import annotations

import itertools
import unicodedata

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.conftest import HANDBOOK
from workbench.corpus import Document, load_folder
from workbench.corpus.locate import LocateError, Locator, RawOffsets, matching_form, raw_texts

TEXT = ("Refunds are paid within 30 days.\n\nThe  item must be unused.\tKeep the receipt.\n"
        "Caf\u00e9 staff ﬁle returns. Refunds are paid within 30 days.\n")


def locator(text: str = TEXT) -> Locator:
    return Locator([Document("d", text), Document("e", "Another document, other words.")])


def test_exact_match_is_the_first_rule():
    loc = locator().locate("The  item must be unused.", "d")
    assert (loc.how, TEXT[loc.start:loc.end]) == ("exact", "The  item must be unused.")


def test_a_repeated_text_is_ambiguous_and_names_where_it_occurs():
    with pytest.raises(LocateError, match=r"occurs 2 times .* \(at 0, 102\)") as err:
        locator().locate("Refunds are paid within 30 days.", "d")
    assert err.value.kind == "ambiguous"


def test_an_offset_hint_resolves_ambiguity_only_when_it_points_at_an_occurrence():
    loc = locator().locate("Refunds are paid within 30 days.", "d", start=102)
    assert (loc.start, loc.how) == (102, "offsets")
    with pytest.raises(LocateError, match="occurs 2 times"):
        locator().locate("Refunds are paid within 30 days.", "d", start=5)


@pytest.mark.parametrize("hit", [
    "The item must be unused. Keep the receipt.",          # whitespace collapsed
    "The\u00a0 item must\nbe unused.  Keep the\u200b receipt.",  # nbsp, newline, zero width
    unicodedata.normalize("NFD", "Café staff file returns."),  # NFD and an unligatured fi
])
def test_whitespace_and_unicode_differences_are_matched_after_normalisation(hit):
    loc = locator().locate(hit, "d")
    assert loc.how == "normalised"
    assert matching_form(TEXT[loc.start:loc.end]) == matching_form(hit)
    assert not TEXT[loc.start].isspace() and not TEXT[loc.end - 1].isspace()


def test_missing_text_and_unknown_documents_are_errors_naming_them():
    with pytest.raises(LocateError, match="not found in document 'd'") as err:
        locator().locate("Exchanges need the original packaging.", "d")
    assert err.value.kind == "missing"
    with pytest.raises(LocateError) as err:  # aligns as well with both sentences: no guess
        locator().locate("Refunds are paid within 45 days.", "d")
    assert err.value.kind == "ambiguous"
    with pytest.raises(LocateError, match="'nope' is not in the corpus") as err:
        locator().locate("x", "nope")
    assert err.value.kind == "unknown_document"
    for bad in ("", "  \n"):
        with pytest.raises(LocateError, match="empty"):
            locator().locate(bad, "d")


def test_offsets_alone_are_offsets_into_the_document_text_and_are_checked():
    assert locator().locate(doc_id="d", start=0, end=7).start == 0
    for start, end in [(-1, 3), (5, 5), (0, len(TEXT) + 1)]:
        with pytest.raises(LocateError, match="not a non-empty range") as err:
            locator().locate(doc_id="d", start=start, end=end)
        assert err.value.kind == "bad_offsets"
    with pytest.raises(LocateError, match="integers"):
        locator().locate(doc_id="d", start="0", end=3)  # type: ignore[arg-type]


def test_without_a_document_id_the_text_is_searched_in_the_whole_corpus():
    loc = locator().locate("other words")
    assert (loc.doc_id, loc.start) == ("e", 18)
    with pytest.raises(LocateError, match="more than once in the corpus"):
        locator().locate("Refunds are paid")
    assert locator().locate("The item must be unused.").how == "normalised"


# ------------------------------------------------------------------ raw files and front matter

def test_a_chunk_of_the_raw_file_that_starts_with_the_front_matter_starts_the_body():
    corpus = load_folder(HANDBOOK / "docs")
    raw = (HANDBOOK / "docs" / "policy-refunds.md").read_text(encoding="utf-8")
    body = corpus["policy-refunds"].text
    loc = Locator(corpus).locate(raw[:500], "policy-refunds")
    assert loc.how == "front_matter" and loc.start == 0
    assert body[loc.start:loc.end] == raw[raw.index("\n---\n") + 5:500]
    # a chunk that starts inside the header (overlap) is located the same way
    assert Locator(corpus).locate(raw[40:300], "policy-refunds").start == 0
    # a chunk of header only holds no document text
    with pytest.raises(LocateError):
        Locator(corpus).locate(raw[10:60], "policy-refunds")


def test_raw_offsets_map_through_bom_crlf_front_matter_and_nfc(tmp_path):
    body = "# Café\n\nLine one.\nLine two, naïve.\n"
    raw = "\ufeff---\nid: doc\n---\n" + unicodedata.normalize("NFD", body).replace("\n", "\r\n")
    doc = Document("doc", body)  # what the loader makes of the file
    mapping = RawOffsets(raw, doc.text, "doc")
    assert mapping.to_body(0) == 0 and mapping.to_body(len(raw)) == len(body)
    assert raw[mapping.body_start:].startswith("# Cafe")
    start = raw.index("Line two")
    loc = Locator([doc], raw={"doc": raw}).locate(doc_id="doc", start=start, end=len(raw))
    assert doc.text[loc.start:loc.end] == "Line two, naïve.\n"
    assert mapping.to_raw(loc.start) == start
    end = raw.index("two")
    assert doc.text[mapping.to_body(start):mapping.to_body(end)] == "Line "
    with pytest.raises(LocateError, match="front matter") as err:
        Locator([doc], raw={"doc": raw}).locate(doc_id="doc", start=1, end=10)
    assert err.value.kind == "front_matter"
    (tmp_path / "doc.md").write_bytes(raw.encode("utf-8"))
    assert raw_texts(tmp_path, [doc]) == {"doc": raw}


def test_raw_offsets_of_a_loaded_file_with_crlf_and_front_matter(tmp_path):
    body = "# Title\n\nSome text here.\nMore text.\n"
    raw = "---\nid: doc\ntitle: T\n---\n" + body.replace("\n", "\r\n")
    (tmp_path / "doc.md").write_bytes(raw.encode("utf-8"))
    corpus = load_folder(tmp_path)
    assert corpus["doc"].text == body
    files = raw_texts(tmp_path, corpus.documents)
    start = raw.index("More")
    loc = Locator(corpus, raw=files).locate("More text.", "doc", start=start)
    assert (loc.how, corpus["doc"].text[loc.start:loc.end]) == ("offsets", "More text.")


def test_raw_texts_match_every_handbook_file_to_its_document():
    corpus = load_folder(HANDBOOK / "docs")
    found = raw_texts(HANDBOOK / "docs", corpus.documents)
    assert set(found) == set(corpus)
    for doc_id, raw in found.items():
        assert raw.endswith(corpus[doc_id].text)


def test_a_raw_file_that_does_not_hold_the_document_is_refused():
    with pytest.raises(LocateError, match="not found once in the raw file"):
        RawOffsets("something else", "the body", "d")


# ------------------------------------------------------------------ round trip (hypothesis)

ALPHABET = st.sampled_from([*"abcab  \n\t.,", "\u00a0", "\u00e9", "\ufb01", "\u0301", "\u4e2d"])


@st.composite
def chunked_document(draw):
    text = unicodedata.normalize("NFC", "".join(draw(st.lists(ALPHABET, min_size=20,
                                                              max_size=300))))
    assume(text.strip())
    cuts = sorted(set(draw(st.lists(st.integers(0, len(text)), min_size=2, max_size=12))))
    overlap = draw(st.integers(0, 5))
    spans = [(max(0, a - overlap), b) for a, b in itertools.pairwise(cuts)]
    spans = [(a, b) for a, b in spans if text[a:b].strip()]
    assume(spans)
    perturb = draw(st.sampled_from(["none", "whitespace", "nfd", "zero_width"]))
    return text, spans, perturb


def _perturbed(text: str, how: str) -> str:
    if how == "whitespace":
        return " ".join(text.split())
    if how == "nfd":
        return unicodedata.normalize("NFD", text)
    if how == "zero_width":
        return text.replace(" ", " \u200b")
    return text


def occurrences(haystack: str, needle: str) -> int:
    """Occurrences, overlapping ones included (``str.count`` skips those)."""
    return sum(haystack.startswith(needle, i) for i in range(len(haystack)))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chunked_document())
def test_located_offsets_round_trip_over_generated_chunkings(case):
    """Every chunk is located to a span whose text equals the hit text (exactly for an
    unperturbed chunk, after normalisation otherwise), or it is reported ambiguous because
    its text really occurs more than once: never missing, never a wrong span."""
    text, spans, perturb = case
    loc = Locator([Document("d", text)])
    for a, b in spans:
        hit = _perturbed(text[a:b], perturb)
        if not matching_form(hit):
            continue
        try:
            got = loc.locate(hit, "d")
        except LocateError as exc:
            assert exc.kind == "ambiguous", str(exc)
            assert occurrences(text, hit) > 1 \
                or occurrences(matching_form(text), matching_form(hit)) > 1
            continue
        assert matching_form(text[got.start:got.end]) == matching_form(hit)
        if got.how == "exact":
            assert text[got.start:got.end] == hit
            if perturb == "none" and occurrences(text, hit) == 1:
                assert (got.start, got.end) == (a, b)
        # the offsets as a hint always give back a span with the same text
        again = loc.locate(hit, "d", start=got.start)
        assert matching_form(text[again.start:again.end]) == matching_form(hit)


@settings(max_examples=100, deadline=None)
@given(chunked_document())
def test_offsets_of_the_raw_file_round_trip(case):
    text, spans, _ = case
    raw = "---\nid: d\n---\n" + text.replace("\n", "\r\n")
    mapping = RawOffsets(raw, text, "d")
    for a, b in spans:
        ra, rb = mapping.to_raw(a), mapping.to_raw(b)
        assert (mapping.to_body(ra), mapping.to_body(rb)) == (a, b)
        assert raw[ra:rb].replace("\r\n", "\n") == text[a:b]


def test_raw_offsets_and_raw_texts_follow_the_loader_through_invisible_characters(tmp_path):
    """The loader removes text.INVISIBLE characters (here a zero-width space and a soft
    hyphen); raw_texts still finds the file and RawOffsets maps around them."""
    raw = "---\nid: doc\n---\nPass\u200bword rules.\r\nSoft\u00adhyphen here.\r\n"
    (tmp_path / "doc.md").write_bytes(raw.encode("utf-8"))
    corpus = load_folder(tmp_path)
    assert corpus["doc"].text == "Password rules.\nSofthyphen here.\n"
    files = raw_texts(tmp_path, corpus.documents)
    assert files == {"doc": raw}
    mapping = RawOffsets(raw, corpus["doc"].text, "doc")
    assert raw[mapping.body_start:].startswith("Pass\u200bword")
    start = raw.index("Soft")
    assert mapping.to_body(start) == corpus["doc"].text.index("Soft")
    assert mapping.to_raw(corpus["doc"].text.index("hyphen")) == raw.index("hyphen")
    loc = Locator(corpus, raw=files).locate(doc_id="doc", start=start, end=len(raw))
    assert corpus["doc"].text[loc.start:loc.end] == "Softhyphen here.\n"


def test_a_locator_refuses_documents_with_one_id_as_a_corpus_does():
    with pytest.raises(ValueError, match="duplicate document id 'a': every document needs"):
        Locator([Document("a", "x"), Document("a", "y")])


WHITESPACE = st.text(alphabet=" \t\n\r\u00a0\u2009", min_size=1, max_size=3)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_a_quote_with_other_whitespace_locates_at_the_same_offsets(data):
    """A quote of a document with each whitespace run replaced by other whitespace (a PDF
    viewer's copy: spaces where the text breaks lines) is located at the span the exact
    quote has, by Span.locate and so by case_from_bug_report."""
    import re

    from workbench.corpus import Span
    from workbench.diagnose import case_from_bug_report

    words = data.draw(st.lists(st.text(alphabet="abcdefgh-", min_size=1, max_size=6),
                               min_size=3, max_size=12))
    seps = data.draw(st.lists(WHITESPACE, min_size=len(words) - 1, max_size=len(words) - 1))
    body, starts = "", []
    for n, w in enumerate(words):
        body += seps[n - 1] if n else ""
        starts.append(len(body))
        body += w
    doc = Document("d", "Intro line.\n\n" + body + "\n\nEnd.")
    i = data.draw(st.integers(0, len(words) - 2))
    j = data.draw(st.integers(i + 1, len(words) - 1))
    start = len("Intro line.\n\n") + starts[i]
    exact = doc.text[start:len("Intro line.\n\n") + starts[j] + len(words[j])]
    norm, needle = matching_form(doc.text), matching_form(exact)
    assume(sum(norm.startswith(needle, p) for p in range(len(norm))) == 1)  # overlaps too
    copied = re.sub(r"\s+", lambda m: data.draw(WHITESPACE), exact)
    span = Span.locate(doc, copied)
    assert (span.start, span.end) == (start, start + len(exact))
    item = case_from_bug_report("q?", [("d", copied)], corpus={"d": doc})
    assert item.evidence[0].text == exact


@pytest.mark.parametrize("hit, says", [
    ("Employees accrue 25 days of annual leave…", "first 40 of 43"),  # an appended ellipsis
    ("## Leave\n\nEmployees accrue 25 days", "the hit has '## '"),  # markdown kept
    ("Zebras migrate across the savannah", "no stretch of it occurs"),  # another document
])
def test_a_missing_text_says_what_was_tried_and_the_nearest_match(hit, says):
    doc = Document("d", "Leave\n\nEmployees accrue 25 days of annual leave per year.")
    with pytest.raises(LocateError, match="tried: exactly") as err:
        Locator([doc], align=None).locate(hit, "d")  # the markdown one aligns (see below)
    assert says in str(err.value) and "changed after it was indexed" not in str(err.value)
