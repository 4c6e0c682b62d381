
from tests.conftest import ROOT
from workbench.chunking import FixedChunker
from workbench.chunking import split_spans as cut_spans
from workbench.corpus import Document, Span
from workbench.widgets.chunk_preview import (
    ChunkPreview,
    ChunkPreviewPair,
    chunk_preview_html,
)

HOSTILE = Document("h", "Intro. <script>window.__pwned=1</script> <img src=x onerror=alert(1)> "
                   "Refunds take 30 days. Business customers get 60 days. " * 3)


def test_cut_spans_and_count_in_summary():
    doc = Document("d", "abcdefghijklmnopqrstuvwxyz" * 4)
    chunks = FixedChunker(size=20, overlap=0).chunk(doc)
    inside, across = Span("d", 2, 8), Span("d", 15, 25)
    assert cut_spans(chunks, [inside, across]) == [across]
    html = chunk_preview_html(doc, chunks, [inside, across])
    assert "1 of 2 answer spans are cut" in html
    assert 'class="wb-c0 wb-gold"' in html and "wb-cut" in html
    overlapping = FixedChunker(size=20, overlap=10).chunk(doc)
    assert cut_spans(overlapping, [across]) == []
    assert "wb-ov" in chunk_preview_html(doc, overlapping)
    # no span in the document: say why there is nothing to count, never "0 of 0"
    empty = chunk_preview_html(doc, chunks, [])
    assert "0 of 0" not in empty and "no golden answer span lies in this document" in empty


def test_text_is_escaped_and_marks_every_chunk():
    chunks = FixedChunker(size=60, overlap=0).chunk(HOSTILE)
    html = chunk_preview_html(HOSTILE, chunks)
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;" in html and "onerror" in html  # shown as text
    assert html.count('class="wb-mark"') == len(chunks)


def test_bidi_controls_cannot_reorder_what_the_preview_shows():
    """The Trojan-Source trick: a right-to-left override in a document, its title or a chunk
    id is shown as [U+202E], never written raw into the HTML (as the report and viewer do)."""
    doc = Document("h\u202eq", "Refunds take 30 days.\u202e syad 06 \u2066x\u2069 end.", "T\u202e")
    chunks = FixedChunker(size=20, overlap=0).chunk(doc)
    html = chunk_preview_html(doc, chunks, label="fixed\u202e")
    assert not set(html) & set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
    assert "[U+202E]" in html and "[U+2066]" in html


def test_widget_controls_rechunk_and_selection_is_readable():
    p = ChunkPreview(HOSTILE, [Span("h", 80, 100)], size=100, overlap=0)
    before = len(p.chunks)
    assert p.spec == "fixed:size=100,unit=chars,overlap=0"
    p.size.value = 50
    assert len(p.chunks) > before and "size=50" in p.view.value
    p.chunk_select.value = p.chunks[2].id
    assert p.selected_chunk_id == "h#2" and "wb-sel" in p.view.value
    p.kind.value = "sentence"
    assert p.spec.startswith("sentence:") and p.selected_chunk_id in {None, "h#2"}
    p.unit.value = "tokens"
    assert all(c.doc_id == "h" for c in p.chunks)


def test_pair_shares_document():
    docs = [HOSTILE, Document("other", "Another document. " * 20)]
    pair = ChunkPreviewPair(docs)
    pair.left.doc_select.value = "other"
    assert pair.right.document.id == "other"
    assert pair.left.spec != pair.right.spec


def test_overlap_says_when_it_does_nothing_and_controls_wrap():
    p = ChunkPreview(HOSTILE, size=100, overlap=25)
    assert not p.overlap.disabled and "overlap=25" in p.spec
    p.kind.value = "markdown"  # markdown takes no overlap: the slider says so, the spec agrees
    assert p.overlap.disabled and "n/a" in p.overlap.description and "overlap" not in p.spec
    p.kind.value = "recursive"
    assert not p.overlap.disabled and "overlap=25" in p.spec
    pair = ChunkPreviewPair([HOSTILE])
    for row in pair.left.children[:2]:
        assert row.layout.flex_flow == "row wrap"
        assert all(c.layout.min_width for c in row.children)  # wraps, never a dot


def test_a_conversation_shows_its_turns_and_speakers(tmp_path):
    from workbench.corpus import load_corpus

    root = ROOT / "data" / "content_types" / "tickets"
    corpus = load_corpus(root / "tickets.jsonl")
    doc = corpus.documents[0]
    p = ChunkPreview(doc, kind="conversation", size=300)
    marks = [m for m in p.view.value.split('class="wb-mark"')[1:]]
    assert marks and all(" turn" in m.split("</span>")[0] for m in marks)
    speakers = {s for c in p.chunks for s in c.metadata["speakers"]}
    assert speakers and all(s in p.view.value for s in speakers)


def test_the_preview_offers_the_semantic_chunker(tmp_path):
    from workbench.retrieval import EmbeddingCache

    doc = Document("d", "Cats purr. A kitten is a young cat. Bonds fell today. Rates rose.")
    p = ChunkPreview(doc, kind="semantic", size=1000, cache=EmbeddingCache(tmp_path))
    assert p.spec.startswith("semantic:") and p.chunks and p.overlap.disabled


def test_the_preview_offers_every_kind_the_spec_parser_knows_that_one_size_sets(tmp_path):
    """The preview asks the parser for its kinds: each offered kind chunks a document through
    the spec the preview writes, and only the kinds with no size or two are left out."""
    from workbench.chunking import CHUNKER_KINDS, parse_chunker
    from workbench.retrieval import EmbeddingCache
    from workbench.widgets.chunk_preview import KINDS

    assert set(CHUNKER_KINDS) - set(KINDS) == {"document", "parent"}
    assert set(KINDS) <= set(CHUNKER_KINDS)
    doc = Document("d", "# Refunds\n\nRefunds take 30 days. Business customers get 60 days.\n")
    cache = EmbeddingCache(tmp_path)
    for kind in KINDS:
        p = ChunkPreview(doc, kind=kind, size=300, cache=cache)
        assert p.spec.startswith(f"{kind}:") and p.chunks, kind
        if kind != "semantic":  # the semantic chunker needs its encoder (attached by the cache)
            assert parse_chunker(p.spec).chunk(doc) == p.chunks, kind
